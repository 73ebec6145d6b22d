// Reading C++ cell text without compiling it: where a trailing expression starts, whether the
// brackets are closed, which name is under the cursor, and the comment block that documents a
// name in a header. Used by xenc-kernel for execute_result, is_complete, complete and inspect.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace xenc_kernel {

/// A cell split into its statements and a final expression with no semicolon ("" if none):
/// "auto x = f();\nx + 1" -> {"auto x = f();\n", "x + 1"}.
struct CellParts {
  std::string statements;
  std::string expression;
};
CellParts split_trailing_expression(const std::string& code);
/// A cell whose last statement ends in a brace that closes at the top level, split before that
/// statement ({code, ""} if it does not end so): "int n = 2;\nstd::vector<int>{1, n}" ->
/// {"int n = 2;\n", "std::vector<int>{1, n}"}. Such a last line reads as a statement (a block or
/// a class may end in a brace); the kernel takes it as the cell's value when clang asks for a
/// ';' after it.
CellParts split_trailing_braced(const std::string& code);

/// Where the comment, string literal or character literal that starts at code[i] ends: the index
/// of its last character (a line comment's last before the '\n'); i when none starts there;
/// npos when it is left open (a block comment or raw string with no end, a quoted literal with
/// no closing quote on its line). Knows raw strings (R"x(...)x", with u8, u, U or L before the
/// R) and digit separators (the ' in 1'000 starts nothing).
std::size_t literal_end(const std::string& code, std::size_t i);

/// Blanks each `#pragma once` line of a cell (a header pasted into a cell brings one; clang 19
/// crashes on it in a cell, and a cell is no header). Returns whether it found one. A line inside
/// a comment or a raw string is text, not a directive, and stays.
bool blank_pragma_once(std::string& code);

/// The cell's code as clang's interpreter gets it. clang 19 crashes on some statements at the top
/// level (a lambda inside a block, std::thread(...).detach(), a static local), so, as cling does,
/// statements are moved into functions: each run of consecutive top-level statements becomes
///     static void __xenc_run_C_K() { STATEMENTS } static int __xenc_ran_C_K = (__xenc_run_C_K(),
///     0);
/// while declarations (variables, functions, classes, namespaces, templates, using, ...) and
/// preprocessor lines stay at the top level, where later cells see them. The initialisers run in
/// the order of the text, so statements and declarations run in the order they were written.
/// A cell with code also gets a first (on a line of its own, followed by `#line 1`) and a last
/// initialiser that call xenc_kernel_user_code(1) and (0) (see prelude.hpp): the kernel lets
/// Interrupt and crash signals jump out of the cell only between them, never while clang links the
/// cell. The compiler's line numbers are the cell's. `cell` makes the names unique (one number per
/// compiled cell).
///
/// With `shadow` (a cell that redefines what an earlier cell defined, see CellInterpreter::run),
/// each declaration also goes into a namespace of this cell's own, as cling does:
///     inline namespace __xenc_cell_C { DECLARATION }
///     namespace foo { inline namespace __xenc_cell_C { MEMBERS } }
/// so its name is the same to the cells (the namespace is inline) but its linker symbol is new.
/// Definitions of an earlier class's members (`void A::f() {...}`) stay as they are.
std::string wrap_statements(const std::string& code, int cell, bool shadow = false);

/// clang's diagnostics of a wrapped cell as the student wrote the cell: in each source snippet
/// the text wrap_statements added (and the trailing expression's show_result) is taken out, the
/// caret and ranges under it move with the text, and the column of the diagnostic's location
/// with them; the wrapper's function name (`void function '__xenc_run_3_1' should not return a
/// value`) reads "(the cell's statements)". Given the cell's own text, a snippet line that is
/// that line of the cell followed only by closing braces (a redefinition's namespace, closed after
/// the declaration's last line) becomes the cell's line. Given what the kernel compiled as each of
/// clang's inputs (`inputs`: 7 -> the code of "input_line_7"), every location "input_line_7:L:C"
/// on any line (the diagnostic's own, one without a snippet, "(lambda at input_line_7:1:69)" in a
/// message) gets the column of that line without the kernel's text; the locations of inputs not
/// given keep theirs, except a diagnostic's own, moved with its snippet. Other lines are left as
/// they are.
std::string readable_diagnostics(const std::string& text, const std::string& cell = "",
                                 const std::map<int, std::string>& inputs = {});

/// The unqualified names a cell's top-level declarations declare, read from the text: each
/// declarator's ("f" in "double f(double x) {...}", "g" in "auto g = [] {...};", "Real" in
/// "using Real = double;", "P" in "struct P {...};", "a" and "b" in "int a = 1, b;"). Not read:
/// names inside namespaces, members defined outside their class ("int Q::get() {...}"). Used to
/// shadow what a cell redefines where clang's message does not name it.
std::vector<std::string> names_declared(const std::string& code);

/// The cell without its top-level statements: its preprocessor lines and declarations.
std::string declarations_only(const std::string& code);

/// The qualified names a cell's top-level definitions define outside their class or namespace:
/// "Q::get" for "int Q::get() const {...}".
std::vector<std::string> members_defined(const std::string& code);

/// The members a cell defines outside their class ("Q::get" for "int Q::get() const {...}",
/// "Q::n" for "int Q::n = 0;"), each with its definition's text, blanks made one space.
std::map<std::string, std::string> member_definitions(const std::string& code);

/// A cell that defines again members an earlier cell defined (`members`: "Tally::total"), made
/// to run again, as a cell run twice should: a class's member is defined once, so
/// - a static data member's definition becomes an assignment of the value it gives
///   (`int Tally::total = 5;` -> `Tally::total = 5;`, `std::string Tally::s{"a"};` ->
///   `Tally::s = decltype(Tally::s){"a"};`), which every cell sees;
/// - a member function's definition, or a constant's (`const` or `constexpr` in its type), that
///   is the one in force (`in_force`, from member_definitions) is blanked, its line breaks kept.
/// `refused` names the others (a function or constant that changed, a template's member, an
/// array), left as they are.
struct MemberRerun {
  std::string code;
  std::vector<std::string> assigned, kept, refused;
};
MemberRerun rerun_member_definitions(const std::string& code, const std::set<std::string>& members,
                                     const std::map<std::string, std::string>& in_force);

/// The names of the namespaces a cell's top-level `namespace NAME {` blocks open ("std" excepted).
std::vector<std::string> namespaces_opened(const std::string& code);

/// Whether a top-level piece of a cell (a chunk ending in ';' or '}') is a statement, i.e. not a
/// declaration or a preprocessor line: "std::cout << 1;", "f(2);", "{ ... }", "for (...) ...".
bool is_statement(const std::string& chunk);

/// Jupyter's is_complete status: "complete", "incomplete" (an open bracket, string or comment)
/// or "invalid" (a closing bracket with no opening one).
std::string completeness(const std::string& code);

/// The (possibly qualified) name ending at `cursor`, e.g. "xenc::Multi" in "auto m = xenc::Multi|".
/// `start` gets the offset where its last component begins (what completion replaces).
std::string name_before(const std::string& code, std::size_t cursor, std::size_t& start);
/// The whole (possibly qualified) name around `cursor`, for inspect.
std::string name_around(const std::string& code, std::size_t cursor);

/// The comment block right above the declaration of `name`'s last component (a class, struct,
/// function or alias) in the headers under `dirs` (searched for */xenc/**.hpp), with the
/// declaration line; "" if none is found.
std::string documentation(const std::string& name, const std::vector<std::string>& dirs);

/// The names xencoder's headers under `dirs` (*/xenc/**.hpp) declare at namespace scope in
/// namespace xenc or a namespace nested in it (`ns` is "xenc" or e.g. "xenc::viz") that start
/// with `prefix`: classes, structs, enums, aliases and functions, sorted, each once. clang 19's
/// completer sees only top-level declarations of earlier cells, so qualified names such as
/// xenc::Multi are completed from the headers, where inspect finds their documentation too.
std::vector<std::string> declared_names(const std::string& ns, const std::string& prefix,
                                        const std::vector<std::string>& dirs);

}  // namespace xenc_kernel

#include "cell_text.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace xenc_kernel {
namespace {

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string trim(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Whether the ' at s[i] separates digits (1'000'000, 0xFF'FF): the token it is in begins with a
// digit, or a '.' and a digit.
bool is_digit_separator(const std::string& s, std::size_t i) {
  std::size_t b = i;
  while (b > 0 && (is_name_char(s[b - 1]) || s[b - 1] == '\'' || s[b - 1] == '.')) --b;
  if (b == i) return false;
  const char first = s[b] == '.' && b + 1 < i ? s[b + 1] : s[b];
  return std::isdigit(static_cast<unsigned char>(first));
}

// The raw string literal's closing text ")delimiter\"" when s[i] is the '"' of one (R"x(,
// u8R"(, LR"( ...), else "".
std::string raw_string_close(const std::string& s, std::size_t i) {
  if (i == 0 || s[i - 1] != 'R') return "";
  std::size_t b = i - 1;  // the R; an encoding prefix (u8, u, U, L) may stand before it
  while (b > 0 && is_name_char(s[b - 1])) --b;
  const std::string prefix = s.substr(b, i - 1 - b);
  if (prefix != "" && prefix != "u8" && prefix != "u" && prefix != "U" && prefix != "L") return "";
  const std::size_t open = s.find('(', i);
  if (open == std::string::npos || open - i - 1 > 16) return "";
  const std::string delimiter = s.substr(i + 1, open - i - 1);
  if (delimiter.find_first_of(" )\\\t\n\"") != std::string::npos) return "";
  return ")" + delimiter + "\"";
}

}  // namespace

std::size_t literal_end(const std::string& s, std::size_t i) {
  const char c = s[i];
  const char next = i + 1 < s.size() ? s[i + 1] : '\0';
  if (c == '/' && next == '/') {
    const std::size_t e = s.find('\n', i);
    return e == std::string::npos ? s.size() - 1 : e - 1;
  }
  if (c == '/' && next == '*') {
    const std::size_t e = s.find("*/", i + 2);
    return e == std::string::npos ? std::string::npos : e + 1;
  }
  if (c == '\'' && is_digit_separator(s, i)) return i;
  if (c != '"' && c != '\'') return i;
  if (c == '"') {
    const std::string close = raw_string_close(s, i);
    if (!close.empty()) {
      const std::size_t e = s.find(close, s.find('(', i));
      return e == std::string::npos ? std::string::npos : e + close.size() - 1;
    }
  }
  std::size_t j = i + 1;
  while (j < s.size() && s[j] != c && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
  return j < s.size() && s[j] == c ? j : std::string::npos;
}

namespace {

// One pass over the code outside comments, strings and character literals.
struct Scan {
  int depth = 0;                   // open ( [ { minus closed ones
  bool unclosed = false;           // ends inside a comment, string or character literal
  std::size_t statements_end = 0;  // just after the last top-level ';', '}' or preprocessor line
  bool has_code_after = false;     // code (not comments or blanks) after statements_end
  bool ends_in_brace = false;      // the last top-level terminator is a '}'
  std::size_t brace_statement_begin = 0;  // where the statement that '}' ended began
};

// Whether the expression goes on after the '}' at s[i]: `Greeter{}.f()`, `[] { ... }()` or
// `Point{} + 1` on that line, or `.f()` / `->f()` on a later one (a chained call). Otherwise a
// '}' at the top level ends a statement (a block, a function's body, a class).
bool continues_after_brace(const std::string& s, std::size_t i) {
  bool new_line = false;
  std::size_t j = i + 1;
  for (; j < s.size(); ++j) {
    if (s[j] == '\n') {
      new_line = true;
    } else if (s[j] == '/' && j + 1 < s.size() && (s[j + 1] == '/' || s[j + 1] == '*')) {
      j = literal_end(s, j);  // a comment
      if (j == std::string::npos) return false;
    } else if (!std::isspace(static_cast<unsigned char>(s[j]))) {
      break;
    }
  }
  if (j >= s.size()) return false;
  const char n = s[j], after = j + 1 < s.size() ? s[j + 1] : '\0';
  if (n == '.' || (n == '-' && after == '>')) return true;
  return !new_line && std::string("+-*/%<>=&|^?:,([").find(n) != std::string::npos;
}

Scan scan(const std::string& s) {
  Scan r;
  bool line_start = true;  // only blanks so far on this line
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const std::size_t end = literal_end(s, i);
    if (end == std::string::npos) {  // a comment, string or character literal left open
      r.unclosed = true;
      break;
    }
    if (end != i) {  // a comment, string or character literal
      if (c != '/') {
        r.has_code_after = true;
        line_start = false;
      }
      i = end;
      continue;
    }
    if (c == '#' && line_start && r.depth == 0) {  // preprocessor line, with continuations
      while (i < s.size() && !(s[i] == '\n' && s[i - 1] != '\\')) ++i;
      r.statements_end = std::min(i + 1, s.size());
      r.has_code_after = false;
      line_start = true;
      continue;
    }
    if (c == '\n') {
      line_start = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    line_start = false;
    if (c == '(' || c == '[' || c == '{') ++r.depth;
    if (c == ')' || c == ']' || c == '}') --r.depth;
    if (r.depth == 0 && (c == ';' || (c == '}' && !continues_after_brace(s, i)))) {
      r.ends_in_brace = c == '}';
      if (c == '}') r.brace_statement_begin = r.statements_end;
      r.statements_end = i + 1;
      r.has_code_after = false;
    } else {
      r.has_code_after = true;
    }
  }
  return r;
}

}  // namespace

CellParts split_trailing_expression(const std::string& code) {
  Scan r = scan(code);
  if (r.unclosed || r.depth != 0 || !r.has_code_after) return {code, ""};
  return {code.substr(0, r.statements_end), code.substr(r.statements_end)};
}

CellParts split_trailing_braced(const std::string& code) {
  Scan r = scan(code);
  if (r.unclosed || r.depth != 0 || r.has_code_after || !r.ends_in_brace) return {code, ""};
  const std::string last = code.substr(r.brace_statement_begin);
  if (trim(last).empty()) return {code, ""};
  return {code.substr(0, r.brace_statement_begin), last};
}

bool blank_pragma_once(std::string& code) {
  if (code.find("once") == std::string::npos) return false;
  bool found = false;
  bool line_start = true;  // only blanks so far on this line
  for (std::size_t i = 0; i < code.size(); ++i) {
    const std::size_t literal = literal_end(code, i);
    if (literal == std::string::npos) break;
    if (literal != i) {  // a comment, string or character literal: no line of its text
      i = literal;
      line_start = false;
      continue;
    }
    if (code[i] == '\n') line_start = true;
    if (std::isspace(static_cast<unsigned char>(code[i]))) continue;
    const bool directive = line_start && code[i] == '#';
    line_start = false;
    if (!directive) continue;
    std::size_t begin = code.rfind('\n', i);
    begin = begin == std::string::npos ? 0 : begin + 1;
    std::size_t end = code.find('\n', i);
    if (end == std::string::npos) end = code.size();
    std::istringstream line(code.substr(begin, end - begin));
    std::string hash, pragma, once, rest;
    line >> hash;
    if (hash == "#")
      line >> pragma;
    else if (hash.rfind('#', 0) == 0)
      pragma = hash.substr(1);
    line >> once;
    std::getline(line, rest);
    rest = trim(rest);
    if (pragma == "pragma" && once == "once" && (rest.empty() || rest.rfind("//", 0) == 0)) {
      code.replace(begin, end - begin, end - begin, ' ');
      found = true;
    }
    i = end - 1;  // the line's end: the next line starts there
  }
  return found;
}

std::string completeness(const std::string& code) {
  Scan r = scan(code);
  if (r.depth < 0) return "invalid";
  return r.unclosed || r.depth > 0 ? "incomplete" : "complete";
}

std::string name_before(const std::string& code, std::size_t cursor, std::size_t& start) {
  cursor = std::min(cursor, code.size());
  std::size_t i = cursor;
  while (i > 0 && is_name_char(code[i - 1])) --i;
  start = i;
  while (i >= 2 && code[i - 1] == ':' && code[i - 2] == ':') {  // qualifiers: ns::
    std::size_t j = i - 2;
    while (j > 0 && is_name_char(code[j - 1])) --j;
    if (j == i - 2) break;
    i = j;
  }
  return code.substr(i, cursor - i);
}

std::string name_around(const std::string& code, std::size_t cursor) {
  cursor = std::min(cursor, code.size());
  std::size_t end = cursor;
  while (end < code.size() && is_name_char(code[end])) ++end;
  std::size_t start = 0;
  return name_before(code, end, start);
}

namespace {
// Calls fn(path, lines) for every */xenc/**.hpp under `dirs` (xencoder's headers).
template <class F>
void for_each_header(const std::vector<std::string>& dirs, F&& fn) {
  namespace fs = std::filesystem;
  for (const auto& dir : dirs) {
    const fs::path root = fs::path(dir) / "xenc";
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    for (auto it = fs::recursive_directory_iterator(root, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec || it->path().extension() != ".hpp") continue;
      std::ifstream in(it->path());
      std::vector<std::string> lines;
      for (std::string line; std::getline(in, line);) lines.push_back(line);
      fn(it->path().string(), lines);
    }
  }
}
}  // namespace

std::string documentation(const std::string& name, const std::vector<std::string>& dirs) {
  std::string last = name.substr(name.rfind(':') == std::string::npos ? 0 : name.rfind(':') + 1);
  if (last.empty()) return "";
  // A declaration of `last`: a class or struct (not a forward declaration), an alias, or a
  // function (its name followed by '(' on a line that is not a call statement).
  const std::regex type_decl("^\\s*(class|struct)\\s+" + last + "\\b(?!\\s*;)");
  const std::regex alias_decl("^\\s*using\\s+" + last + "\\s*=");
  const std::regex function_decl("^\\s*[A-Za-z_][\\w:<>,\\s\\*&]*[\\s\\*&]" + last + "\\s*\\(");
  std::string found;
  int matches = 0;
  for_each_header(dirs, [&](const std::string& path, const std::vector<std::string>& lines) {
    for (std::size_t k = 0; k < lines.size() && matches < 4; ++k) {
      const std::string t = trim(lines[k]);
      if (t.rfind("//", 0) == 0 || t.rfind("return", 0) == 0) continue;
      if (!std::regex_search(lines[k], type_decl) && !std::regex_search(lines[k], alias_decl) &&
          !std::regex_search(lines[k], function_decl))
        continue;
      // The comment block above, skipping a template<...> line.
      std::size_t top = k;
      if (top > 0 && trim(lines[top - 1]).rfind("template", 0) == 0) --top;
      std::size_t first = top;
      while (first > 0 && trim(lines[first - 1]).rfind("//", 0) == 0) --first;
      // An undocumented class is documented by its header's opening comment (one class per
      // header, e.g. nn/multihead_attention.hpp); other undocumented matches are skipped.
      std::size_t last_line = top;
      if (first == top) {
        if (!std::regex_search(lines[k], type_decl)) continue;
        first = 0;
        while (first < lines.size() && trim(lines[first]).rfind("//", 0) != 0) ++first;
        last_line = first;
        while (last_line < lines.size() && trim(lines[last_line]).rfind("//", 0) == 0) ++last_line;
        if (first == last_line || first > 2) continue;
      }
      std::string doc;
      for (std::size_t j = first; j < last_line; ++j) {
        std::string l = trim(lines[j]);
        l.erase(0, std::min(l.find_first_not_of('/'), l.size()));  // the // or ///
        if (!l.empty() && l[0] == ' ') l.erase(0, 1);
        doc += l + "\n";
      }
      std::ostringstream entry;
      entry << trim(doc) << "\n\n    " << trim(lines[k]) << "\n\n(" << path << ":" << k + 1 << ")";
      found += (found.empty() ? "" : "\n\n----\n\n") + entry.str();
      ++matches;
    }
  });
  return found;
}

std::vector<std::string> declared_names(const std::string& ns, const std::string& prefix,
                                        const std::vector<std::string>& dirs) {
  // Which namespace each line is in: the `namespace a::b {` lines open one, a line that is only
  // "}  // namespace ..." closes it (the style of every xencoder header).
  const std::regex open_ns("^\\s*namespace\\s+([\\w:]+)\\s*\\{");
  const std::regex close_ns("^\\s*\\}\\s*//\\s*namespace");
  const std::regex type_decl(
      "^(?:template\\s*<[^>]*>\\s*)?(?:class|struct|enum(?:\\s+class)?)\\s+([A-Za-z_]\\w*)");
  const std::regex alias_decl("^(?:template\\s*<[^>]*>\\s*)?using\\s+([A-Za-z_]\\w*)\\s*=");
  const std::regex function_decl(
      "^(?:inline\\s+|constexpr\\s+|static\\s+)*[A-Za-z_][\\w:<>,\\*&]*(?:\\s+[\\w:<>,\\*&]+)*["
      "\\s\\*&]+([A-Za-z_]\\w*)\\s*\\(");
  std::set<std::string> names;
  for_each_header(dirs, [&](const std::string&, const std::vector<std::string>& lines) {
    std::vector<std::string> stack;
    for (const std::string& line : lines) {
      std::smatch m;
      if (std::regex_search(line, m, open_ns)) {
        stack.push_back(m[1]);
        continue;
      }
      if (std::regex_search(line, close_ns)) {
        if (!stack.empty()) stack.pop_back();
        continue;
      }
      // only declarations at the namespace's own level (no indentation: not class members)
      if (line.empty() || std::isspace(static_cast<unsigned char>(line[0]))) continue;
      std::string current;
      for (const auto& part : stack) current += (current.empty() ? "" : "::") + part;
      if (current != ns) continue;
      if (std::regex_search(line, m, type_decl) || std::regex_search(line, m, alias_decl) ||
          (line.rfind("return", 0) != 0 && std::regex_search(line, m, function_decl))) {
        const std::string name = m[1];
        if (name.rfind(prefix, 0) == 0 && name != "operator") names.insert(name);
      }
    }
  });
  return {names.begin(), names.end()};
}

}  // namespace xenc_kernel

// ---------------------------------------------------------------------------------------------
namespace xenc_kernel {
namespace {

// The first word of s at i (letters, digits, '_'), "" if none.
std::string word_at(const std::string& s, std::size_t i) {
  std::size_t e = i;
  while (e < s.size() && is_name_char(s[e])) ++e;
  return s.substr(i, e - i);
}

// i advanced past blanks and comments.
std::size_t skip_blank(const std::string& s, std::size_t i) {
  while (i < s.size()) {
    if (std::isspace(static_cast<unsigned char>(s[i]))) {
      ++i;
    } else if (s.compare(i, 2, "//") == 0) {
      i = s.find('\n', i);
      if (i == std::string::npos) return s.size();
    } else if (s.compare(i, 2, "/*") == 0) {
      std::size_t e = s.find("*/", i + 2);
      if (e == std::string::npos) return s.size();
      i = e + 2;
    } else {
      break;
    }
  }
  return i;
}

bool starts_class_like(const std::string& chunk) {
  std::size_t i = skip_blank(chunk, 0);
  std::string w = word_at(chunk, i);
  if (w == "template") {  // template <...> struct ...
    std::size_t j = chunk.find('<', i);
    int depth = 0;
    for (; j != std::string::npos && j < chunk.size(); ++j) {
      if (chunk[j] == '<') ++depth;
      if (chunk[j] == '>' && --depth == 0) break;
    }
    if (j == std::string::npos || j >= chunk.size()) return false;
    w = word_at(chunk, skip_blank(chunk, j + 1));
  }
  return w == "struct" || w == "class" || w == "union" || w == "enum" || w == "typedef" ||
         w == "using";
}

// One top-level piece of a cell: [begin, end) of the text.
struct Chunk {
  std::size_t begin, end;
  bool preprocessor;
};

// The cell cut into its top-level pieces: preprocessor lines, and pieces of code ending in ';'
// at depth 0, or in '}' at depth 0 when no ';', else, catch, while or operator continues them
// (a function body, a block, a loop), with the comments and blanks before each piece.
std::vector<Chunk> chunks_of(const std::string& s) {
  std::vector<Chunk> out;
  std::size_t begin = 0;
  int depth = 0;
  bool line_start = true;
  bool any_code = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const std::size_t end = literal_end(s, i);
    if (end == std::string::npos) break;  // left open: the rest is one piece
    if (end != i) {                       // a comment, string or character literal
      if (c != '/') {
        any_code = true;
        line_start = false;
      }
      i = end;
      continue;
    }
    if (c == '#' && line_start && depth == 0) {
      if (any_code) out.push_back({begin, i, false});
      std::size_t start = i;
      while (i < s.size() && !(s[i] == '\n' && s[i - 1] != '\\')) ++i;
      out.push_back({start, std::min(i + 1, s.size()), true});
      begin = std::min(i + 1, s.size());
      any_code = false;
      line_start = true;
      continue;
    }
    if (c == '\n') {
      line_start = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    line_start = false;
    any_code = true;
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (depth != 0) continue;
    if (c == ';') {
      out.push_back({begin, i + 1, false});
      begin = i + 1;
      any_code = false;
    } else if (c == '}') {
      std::size_t k = skip_blank(s, i + 1);
      const std::string w = k < s.size() ? word_at(s, k) : "";
      const char n = k < s.size() ? s[k] : '\0';
      if (n == ';') continue;  // ends at that ';'
      if (w == "else" || w == "catch" || w == "while") continue;
      if (starts_class_like(s.substr(begin, i + 1 - begin))) continue;
      if (n == '\0' || n == '#' || n == '{' || n == '}' || n == '~' || !w.empty() ||
          (n == ':' && k + 1 < s.size() && s[k + 1] == ':')) {
        out.push_back({begin, i + 1, false});
        begin = i + 1;
        any_code = false;
      }
    }
  }
  if (begin < s.size()) out.push_back({begin, s.size(), false});
  return out;
}

}  // namespace

bool is_statement(const std::string& chunk) {
  std::size_t i = skip_blank(chunk, 0);
  if (i >= chunk.size()) return false;
  const char c = chunk[i];
  if (c == '#') return false;
  if (c == '{') return true;
  const std::string w = word_at(chunk, i);
  static const std::set<std::string> statement_words = {
      "if",     "for",       "while",       "do",           "switch",     "return",
      "try",    "break",     "continue",    "goto",         "throw",      "delete",
      "new",    "this",      "static_cast", "dynamic_cast", "const_cast", "reinterpret_cast",
      "sizeof", "co_return", "co_await",    "co_yield"};
  static const std::set<std::string> declaration_words = {
      "namespace", "template",     "class",         "struct",   "union",    "enum",      "using",
      "typedef",   "extern",       "static_assert", "inline",   "static",   "constexpr", "const",
      "volatile",  "thread_local", "friend",        "virtual",  "explicit", "auto",      "typename",
      "register",  "mutable",      "decltype",      "unsigned", "signed",   "long",      "short",
      "int",       "char",         "bool",          "float",    "double",   "void",      "wchar_t",
      "char16_t",  "char32_t",     "operator",      "asm",      "alignas",  "size_t"};
  if (w.empty()) {
    if (c == ':' && i + 1 < chunk.size() && chunk[i + 1] == ':') {
      // ::name ... : read as a name below
    } else if (c == '[' && i + 1 < chunk.size() && chunk[i + 1] == '[') {
      return false;  // [[attribute]] declaration
    } else if (c == ';') {
      return false;
    } else {
      return true;  // ( * & ++ -- ! - ~ : an expression
    }
  }
  if (statement_words.count(w)) return true;
  if (declaration_words.count(w)) return false;
  // A (qualified, templated) name: `Type name ...` is a declaration, `name(...)`, `name << ...`,
  // `name = ...`, `name.f()` an expression. A definition `A::A() {...}` (no ';') is a declaration.
  std::size_t j = i;
  for (;;) {
    j = skip_blank(chunk, j);
    if (chunk.compare(j, 2, "::") == 0) j = skip_blank(chunk, j + 2);
    std::string part = word_at(chunk, j);
    if (part.empty()) break;
    j = skip_blank(chunk, j + part.size());
    if (j < chunk.size() && chunk[j] == '<' && chunk.compare(j, 2, "<<") != 0 &&
        chunk.compare(j, 2, "<=") != 0) {  // template arguments, balanced
      int depth = 0;
      std::size_t k = j;
      for (; k < chunk.size(); ++k) {
        char d = chunk[k];
        if (d == '<' || d == '(' || d == '[') ++depth;
        if (d == '>' || d == ')' || d == ']') --depth;
        if (d == ';' || d == '{') break;
        if (depth == 0) break;
      }
      if (k < chunk.size() && chunk[k] == '>')
        j = skip_blank(chunk, k + 1);
      else
        return true;  // a comparison: `a < b;`
    }
    if (chunk.compare(j, 2, "::") != 0) break;
  }
  if (j >= chunk.size()) return true;
  // after the name
  while (j < chunk.size() &&
         (chunk[j] == '*' || chunk[j] == '&' || std::isspace(static_cast<unsigned char>(chunk[j]))))
    ++j;
  if (j < chunk.size() && is_name_char(chunk[j]) &&
      !std::isdigit(static_cast<unsigned char>(chunk[j])))
    return false;  // Type name, Type* name, Type& name
  if (j < chunk.size() && chunk[j] == '(') {
    // `A::A() {}` / `A::~A() {}`: a body and no ';' at the end
    std::size_t last = chunk.find_last_not_of(" \t\r\n");
    if (last != std::string::npos && chunk[last] == '}' && word_at(chunk, i).size() &&
        chunk.find(';') > chunk.find('{'))
      return false;
  }
  return true;
}

namespace {
// The (possibly qualified) name a declaration chunk declares: the one before its first '(', '=',
// '[', '{' or ';' outside angle brackets ("A::f" in "void A::f() {", "g" in "auto g = [] {};",
// "Real" in "using Real = double;"). Class heads with a base are not read (see names_declared).
std::string declarator_name(const std::string& chunk, std::size_t* stop = nullptr) {
  std::size_t end = skip_blank(chunk, 0);  // past the comments before it
  int angle = 0;
  for (; end < chunk.size(); ++end) {
    const char c = chunk[end];
    if (c == '<') ++angle;
    if (c == '>') --angle;
    if (angle <= 0 && (c == '(' || c == '=' || c == '[' || c == '{' || c == ';')) break;
  }
  if (stop != nullptr) *stop = end;
  std::size_t b = end;
  while (b > 0 && std::isspace(static_cast<unsigned char>(chunk[b - 1]))) --b;
  std::size_t e = b;
  while (b > 0 && (is_name_char(chunk[b - 1]) || chunk[b - 1] == ':' || chunk[b - 1] == '~')) --b;
  return chunk.substr(b, e - b);
}

// The name of a class a chunk defines, "" if it defines none ("P" in "struct P : B {...};" and
// "template <class T> class P final {...};", "E" in "enum class E {...};").
std::string class_head_name(const std::string& chunk) {
  static const std::regex head(
      "^\\s*(template\\s*<[^{;]*>\\s*)?(struct|class|union|enum)\\s+(class\\s+|struct\\s+)?"
      "([A-Za-z_][A-Za-z_0-9]*)\\s*(final\\s*)?[:{]");
  std::smatch m;
  const std::string text = chunk.substr(skip_blank(chunk, 0));
  return std::regex_search(text, m, head) ? m[4].str() : std::string();
}

// The name a declaration declares is qualified (`void A::f()`, `int A::count = 0;`): a member of
// an earlier class, which a new namespace could not hold.
// The names of a variable declaration's declarators after the first, from `from` (where the
// first one's name ends): "b" and "c" in "int a = 1, b = f(2, 3), *c;". Commas inside brackets
// are not read; the names are the ones before each declarator's '=', '(', '[' or '{'.
std::vector<std::string> later_declarators(const std::string& chunk, std::size_t from) {
  std::vector<std::string> out;
  int depth = 0;
  std::size_t piece = std::string::npos;  // where the current declarator starts
  for (std::size_t i = from; i < chunk.size(); ++i) {
    const char c = chunk[i];
    const bool ends = depth == 0 && (c == ',' || c == ';');
    if (ends && piece != std::string::npos) {
      std::size_t e = piece;
      while (e < i && std::string("=([{").find(chunk[e]) == std::string::npos) ++e;
      while (e > piece && std::isspace(static_cast<unsigned char>(chunk[e - 1]))) --e;
      std::size_t b = e;
      while (b > piece && is_name_char(chunk[b - 1])) --b;
      if (b < e) out.push_back(chunk.substr(b, e - b));
    }
    if (ends) piece = c == ',' ? i + 1 : std::string::npos;
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
  }
  return out;
}

bool declares_qualified_name(const std::string& chunk) {
  return declarator_name(chunk).find("::") != std::string::npos;
}

// `namespace NAME {` at the start of a chunk: the offset just after its '{', else npos.
std::size_t namespace_body(const std::string& chunk, std::string* name = nullptr) {
  std::size_t i = skip_blank(chunk, 0);
  std::size_t k = i;
  if (word_at(chunk, k) == "inline") k = skip_blank(chunk, k + 6);
  if (word_at(chunk, k) != "namespace") return std::string::npos;
  std::size_t j = skip_blank(chunk, k + 9);
  std::string n = word_at(chunk, j);
  j = skip_blank(chunk, j + n.size());
  if (n.empty() || n == "std" || j >= chunk.size() || chunk[j] != '{') return std::string::npos;
  if (name) *name = n;
  return j + 1;
}
}  // namespace

std::vector<std::string> names_declared(const std::string& code) {
  // chunks that begin with these declare no name of their own at the top level
  static const std::set<std::string> skipped = {"namespace", "extern", "static_assert", "asm"};
  static const std::set<std::string> keywords = {"operator", "struct", "class",   "union",
                                                 "enum",     "const",  "typedef", "auto"};
  std::vector<std::string> out;
  for (const auto& c : chunks_of(code)) {
    const std::string text = code.substr(c.begin, c.end - c.begin);
    if (c.preprocessor || is_statement(text)) continue;
    const std::size_t i = skip_blank(text, 0);
    const std::string first = word_at(text, i);
    if (i >= text.size() || skipped.count(first) != 0) continue;
    // using NAME = ...; is an alias; using namespace x; and using x::y; declare no name here
    if (first == "using" && text.find('=') == std::string::npos) continue;
    std::string name = class_head_name(text);
    const bool class_key = first == "struct" || first == "class" || first == "union" ||
                           first == "enum";  // a class head read above, or a declaration of one
    std::vector<std::string> names = {name};
    std::size_t stop = 0;
    if (name.empty() && !class_key) {
      names = {declarator_name(text, &stop)};
      // a variable declaration's other declarators (not a function's parameters)
      if (stop < text.size() && text[stop] != '(') {
        const std::vector<std::string> more = later_declarators(text, stop);
        names.insert(names.end(), more.begin(), more.end());
      }
    }
    for (const std::string& n : names) {
      if (n.empty() || n.find("::") != std::string::npos || !is_name_char(n.front()) ||
          std::isdigit(static_cast<unsigned char>(n.front())) || keywords.count(n) != 0)
        continue;
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
  }
  return out;
}

std::string declarations_only(const std::string& code) {
  std::string out;
  for (const auto& c : chunks_of(code)) {
    const std::string text = code.substr(c.begin, c.end - c.begin);
    if (c.preprocessor || !is_statement(text)) out += text;
  }
  return out;
}

std::vector<std::string> members_defined(const std::string& code) {
  std::vector<std::string> out;
  for (const auto& c : chunks_of(code)) {
    const std::string text = code.substr(c.begin, c.end - c.begin);
    if (c.preprocessor || is_statement(text)) continue;
    const std::string name = declarator_name(text);
    const std::size_t colons = name.rfind("::");
    if (colons != std::string::npos && colons > 0 && colons + 2 < name.size()) out.push_back(name);
  }
  return out;
}

namespace {
// A definition's text with its comments and blanks before it taken out and each run of blanks
// made one space: two definitions that differ only so are the same.
std::string definition_text(const std::string& chunk) {
  std::string out;
  for (std::size_t i = skip_blank(chunk, 0); i < chunk.size(); ++i) {
    const bool blank = std::isspace(static_cast<unsigned char>(chunk[i]));
    if (!blank)
      out += chunk[i];
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  return trim(out);
}
}  // namespace

std::map<std::string, std::string> member_definitions(const std::string& code) {
  std::map<std::string, std::string> out;
  for (const auto& c : chunks_of(code)) {
    const std::string text = code.substr(c.begin, c.end - c.begin);
    if (c.preprocessor || is_statement(text)) continue;
    const std::string name = declarator_name(text);
    if (name.find("::") != std::string::npos) out[name] = definition_text(text);
  }
  return out;
}

MemberRerun rerun_member_definitions(const std::string& code, const std::set<std::string>& members,
                                     const std::map<std::string, std::string>& in_force) {
  MemberRerun out{code, {}, {}, {}};
  const std::vector<Chunk> chunks = chunks_of(code);
  for (auto c = chunks.rbegin(); c != chunks.rend(); ++c) {  // from the end: offsets stay valid
    const std::string text = code.substr(c->begin, c->end - c->begin);
    if (c->preprocessor || is_statement(text)) continue;
    std::size_t stop = 0;
    const std::string name = declarator_name(text, &stop);
    if (members.count(name) == 0) continue;
    const std::size_t first = skip_blank(text, 0);
    const char last = trim(text).back();
    const bool templated = word_at(text, first) == "template";
    const bool same = in_force.count(name) != 0 && in_force.at(name) == definition_text(text);
    const std::size_t at = text.rfind(name, stop);
    static const std::regex constant("\\b(const|constexpr)\\b");
    const bool data = !templated && last == ';' && stop < text.size() &&
                      std::string("=({;").find(text[stop]) != std::string::npos;
    if (data && !std::regex_search(text.substr(first, at - first), constant)) {
      // a static data member: `int Q::n = 5;` -> `Q::n = 5;`, `T Q::v{1};` -> `Q::v =
      // decltype(Q::v){1};`, `T Q::v;` -> `Q::v = decltype(Q::v){};` (line breaks kept)
      std::string assignment(std::count(text.begin() + long(first), text.begin() + long(at), '\n'),
                             '\n');
      assignment += name + " =";
      if (text[stop] == '=')
        assignment += text.substr(stop + 1);
      else
        assignment +=
            " decltype(" + name + ")" + (text[stop] == ';' ? "{}" : "") + text.substr(stop);
      out.code.replace(c->begin + first, text.size() - first, assignment);
      out.assigned.push_back(name);
    } else if ((data || last == '}') && same) {  // a constant, or a function, the same
      for (std::size_t i = c->begin + first; i < c->end; ++i)
        if (out.code[i] != '\n') out.code[i] = ' ';
      out.kept.push_back(name);
    } else {
      out.refused.push_back(name);
    }
  }
  for (auto* names : {&out.assigned, &out.kept, &out.refused})
    std::reverse(names->begin(), names->end());
  return out;
}

std::vector<std::string> namespaces_opened(const std::string& code) {
  std::vector<std::string> names;
  for (const auto& c : chunks_of(code)) {
    std::string name;
    if (!c.preprocessor &&
        namespace_body(code.substr(c.begin, c.end - c.begin), &name) != std::string::npos)
      names.push_back(name);
  }
  return names;
}

std::string wrap_statements(const std::string& code, int cell, bool shadow) {
  std::vector<Chunk> chunks = chunks_of(code);
  bool has_code = false;
  for (const auto& c : chunks)
    if (!c.preprocessor && skip_blank(code.substr(c.begin, c.end - c.begin), 0) < c.end - c.begin)
      has_code = true;
  if (!has_code) return code;
  const std::string id = std::to_string(cell);
  std::string out;
  bool in_function = false, marked = false;
  int functions = 0, declarations = 0;
  auto close_function = [&] {
    if (!in_function) return;
    const std::string name = "__xenc_run_" + id + "_" + std::to_string(functions);
    out += " } static int __xenc_ran_" + id + "_" + std::to_string(functions) + " = (" + name +
           "(), 0);";
    in_function = false;
  };
  for (const auto& c : chunks) {
    const std::string text = code.substr(c.begin, c.end - c.begin);
    const bool blank = skip_blank(text, 0) >= text.size();
    if (c.preprocessor || blank) {
      if (c.preprocessor) close_function();
      out += text;
      continue;
    }
    if (!marked) marked = true;
    // the cell's line this piece starts on, for a crash's message (xenc_kernel_line, prelude.hpp)
    const std::size_t first = c.begin + skip_blank(text, 0);
    const std::string line =
        std::to_string(1 + std::count(code.begin(), code.begin() + long(first), '\n'));
    if (is_statement(text)) {
      if (!in_function) {
        ++functions;
        out += "static void __xenc_run_" + id + "_" + std::to_string(functions) + "() { ";
        in_function = true;
      }
      out += "xenc_kernel_line = " + line + "; ";
    } else {
      close_function();
      out += "static int __xenc_line_" + id + "_" + std::to_string(++declarations) +
             " = (xenc_kernel_line = " + line + ", 0); ";
      if (shadow) {
        const std::string ns = "inline namespace __xenc_cell_" + id + " { ";
        const std::size_t body = namespace_body(text);
        const std::size_t last = text.rfind('}');
        if (body != std::string::npos && last != std::string::npos && last >= body) {
          out +=
              text.substr(0, body) + ns + text.substr(body, last - body) + " }" + text.substr(last);
          continue;
        }
        const std::string first = word_at(text, skip_blank(text, 0));
        const bool alias = first == "using" && text.find('=') != std::string::npos;
        if (first != "extern" && (first != "using" || alias) && first != "static_assert" &&
            first != "namespace" && !declares_qualified_name(text)) {
          out += ns + text + " }";
          continue;
        }
      }
    }
    out += text;
  }
  // the closing text on a line of its own: the cell may end in a // comment
  if (in_function) out += "\n";
  close_function();
  if (!marked) return out;
  // the first initialiser on a line of its own, before the cell; #line 1 numbers the cell's
  // first line 1 again
  return "static int __xenc_begin_" + id + " = xenc_kernel_user_code(1);\n#line 1\n" + out +
         "\nstatic int __xenc_end_" + id + " = xenc_kernel_user_code(0);";
}

namespace {
// What the kernel adds to a cell's lines, as clang prints it in a snippet (wrap_statements, and
// the show_result around a trailing expression: execute_request_impl).
const std::regex& kernel_text() {
  static const std::regex text(
      R"(static void __xenc_run_\d+_\d+\(\) \{ |static int __xenc_line_\d+_\d+ = )"
      R"(\(xenc_kernel_line = \d+, 0\); |xenc_kernel_line = \d+; |inline namespace )"
      R"(__xenc_cell_\d+ \{ | ?\} static int __xenc_ran_\d+_\d+ = \(__xenc_run_\d+_\d+\(\), )"
      R"(0\);|xenc_kernel::show_result\(\(\(|\), xenc_kernel::no_value\{\}\)\);)");
  return text;
}
}  // namespace

namespace {
// Lines longer than this (a cell's own output passing through) are left as they are: no regular
// expression runs over them (libstdc++'s recurses once per character of a `.*`).
constexpr std::size_t kLongestLine = 4096;
// A location in a longer line of a cell keeps clang's column (off by the few bytes the kernel
// adds).
constexpr std::size_t kLongestInputLine = 65536;

// "FILE:LINE:COLUMN: error: ..." (or warning, note, fatal error): where COLUMN's digits are,
// [begin, end); begin == end when the line is no diagnostic.
std::pair<std::size_t, std::size_t> diagnostic_column(const std::string& line) {
  const auto digit = [&](std::size_t k) {
    return std::isdigit(static_cast<unsigned char>(line[k])) != 0;
  };
  for (const char* kind : {": error: ", ": warning: ", ": note: ", ": fatal error: "}) {
    const std::size_t at = line.find(kind);
    if (at == std::string::npos) continue;
    std::size_t begin = at;
    while (begin > 0 && digit(begin - 1)) --begin;
    if (begin == at || begin < 2 || line[begin - 1] != ':') continue;
    std::size_t number = begin - 1;
    while (number > 0 && digit(number - 1)) --number;
    if (number == begin - 1 || number < 1 || line[number - 1] != ':') continue;
    return {begin, at};
  }
  return {0, 0};
}

// The number written in `digits` (spaces before it allowed), or 0 when there is none or it has
// more than 9 digits (no line or column is that long: text a cell printed).
std::size_t small_number(const std::string& digits) {
  const std::size_t first = digits.find_first_not_of(' ');
  if (first == std::string::npos) return 0;
  std::size_t value = 0, k = first;
  for (; k < digits.size() && std::isdigit(static_cast<unsigned char>(digits[k])); ++k)
    value = value * 10 + std::size_t(digits[k] - '0');
  return k == first || k - first > 9 ? 0 : value;
}

// A line of what the kernel compiled without the kernel's text: the clean line, and for each byte
// of the wrapped line (and one past its end) the byte of the clean line it became.
struct CleanLine {
  std::string text;
  std::vector<std::size_t> column;
};
CleanLine without_kernel_text(const std::string& wrapped) {
  CleanLine c;
  c.column.assign(wrapped.size() + 1, 0);
  std::size_t at = 0;
  for (auto k = std::sregex_iterator(wrapped.begin(), wrapped.end(), kernel_text());
       k != std::sregex_iterator(); ++k) {
    const std::size_t begin = std::size_t(k->position()), end = begin + k->length();
    for (; at < begin; ++at) {
      c.column[at] = c.text.size();
      c.text += wrapped[at];
    }
    for (; at < end; ++at) c.column[at] = c.text.size();
  }
  for (; at < wrapped.size(); ++at) {
    c.column[at] = c.text.size();
    c.text += wrapped[at];
  }
  c.column[wrapped.size()] = c.text.size();
  return c;
}

// Line `number` (from 1) of an input the kernel compiled, counted as clang counts it: from the
// `#line 1` that wrap_statements puts before the cell's first line, else from the start. Empty
// when there is no such line.
std::string input_line(const std::string& input, std::size_t number) {
  const std::string marker = "\n#line 1\n";
  const std::size_t body = input.find(marker);
  std::size_t begin = body == std::string::npos ? 0 : body + marker.size();
  for (std::size_t n = 1; n < number; ++n) {
    begin = input.find('\n', begin);
    if (begin == std::string::npos) return "";
    ++begin;
  }
  const std::size_t end = input.find('\n', begin);
  return input.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// The columns of one line of one input without the kernel's text, found once per call of
// readable_diagnostics: (K, L) -> byte of the wrapped line -> byte of the clean one.
using ColumnCache = std::map<std::pair<int, std::size_t>, std::vector<std::size_t>>;

// Every "input_line_K:L:C" in `line` whose input K is known gets the column C would have without
// the kernel's text (the first kMappedPerLine of them: a line a cell printed may hold many).
// Returns whether the line's own location (at its start) was one of them.
constexpr int kMappedPerLine = 8;
bool map_locations(std::string& line, const std::map<int, std::string>& inputs,
                   ColumnCache& cache) {
  static const std::string name = "input_line_";
  bool own = false;
  int mapped = 0;
  for (std::size_t at = line.find(name); at != std::string::npos && mapped < kMappedPerLine;
       at = line.find(name, at + 1)) {
    // K, L and C: at most 9 digits each (no more lines or columns than that)
    std::size_t k = at + name.size();
    std::size_t numbers[3] = {0, 0, 0}, column_at = 0, column_end = 0;
    bool ok = true;
    for (int part = 0; part < 3 && ok; ++part) {
      if (part > 0) ok = k < line.size() && line[k++] == ':';
      const std::size_t first = k;
      while (ok && k < line.size() && std::isdigit(static_cast<unsigned char>(line[k])) &&
             k - first < 9)
        numbers[part] = numbers[part] * 10 + std::size_t(line[k++] - '0');
      ok = ok && k > first &&
           (k >= line.size() || !std::isdigit(static_cast<unsigned char>(line[k])));
      if (part == 2) {
        column_at = first;
        column_end = k;
      }
    }
    const auto input = inputs.find(int(numbers[0]));
    if (!ok || input == inputs.end() || numbers[1] == 0 || numbers[2] == 0) continue;
    ++mapped;
    const auto key = std::make_pair(input->first, numbers[1]);
    auto known = cache.find(key);
    if (known == cache.end()) {
      const std::string wrapped = input_line(input->second, numbers[1]);
      known = cache
                  .emplace(key, wrapped.size() > kLongestInputLine
                                    ? std::vector<std::size_t>()
                                    : without_kernel_text(wrapped).column)
                  .first;
    }
    const std::vector<std::size_t>& columns = known->second;
    if (numbers[2] > columns.size()) continue;  // (a line too long to map has none)
    line.replace(column_at, column_end - column_at, std::to_string(columns[numbers[2] - 1] + 1));
    own = own || at == 0;
  }
  return own;
}

// "   12 | text": the length of "   12 | ", or 0 when the line is no snippet.
std::size_t snippet_prefix(const std::string& line) {
  std::size_t k = line.find_first_not_of(' ');
  if (k == std::string::npos || !std::isdigit(static_cast<unsigned char>(line[k]))) return 0;
  while (k < line.size() && std::isdigit(static_cast<unsigned char>(line[k]))) ++k;
  return line.compare(k, 3, " | ") == 0 ? k + 3 : 0;
}

// "      | ^~~": the length of "      | ", or 0.
std::size_t marks_prefix(const std::string& line) {
  const std::size_t k = line.find_first_not_of(' ');
  return k != std::string::npos && k > 0 && line.compare(k, 2, "| ") == 0 ? k + 2 : 0;
}
}  // namespace

std::string readable_diagnostics(const std::string& text, const std::string& cell,
                                 const std::map<int, std::string>& inputs) {
  static const std::regex wrapper_name(R"('__xenc_run_\d+_\d+')");
  std::vector<std::string> lines, cell_lines;
  std::istringstream in(text), cell_in(cell);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (std::string line; std::getline(cell_in, line);) cell_lines.push_back(line);
  std::size_t last_header = lines.size();  // the diagnostic the next snippet belongs to
  bool header_mapped = false;  // its location's column is already the cell's (map_locations)
  ColumnCache cache;
  std::vector<std::size_t> column;  // the last snippet: byte of clang's line -> of ours
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string& line = lines[i];
    if (line.size() > kLongestLine) {
      column.clear();
      last_header = lines.size();
      continue;
    }
    const std::size_t code_at = snippet_prefix(line), marks_at = marks_prefix(line);
    const bool own_mapped = code_at == 0 && marks_at == 0 && map_locations(line, inputs, cache);
    if (const auto [begin, end] = diagnostic_column(line); begin != end) {
      if (line.find("'__xenc_run_") != std::string::npos)
        line = std::regex_replace(line, wrapper_name, "'(the cell's statements)'");
      last_header = i;
      header_mapped = own_mapped;
      column.clear();
    } else if (last_header < lines.size() && code_at > 0) {
      const std::string prefix = line.substr(0, code_at);
      CleanLine cleaned = without_kernel_text(line.substr(code_at));
      std::string& clean = cleaned.text;
      column = std::move(cleaned.column);
      // the cell's own line, and after it only the braces that close the kernel's namespace
      const std::size_t number = small_number(prefix);
      if (number >= 1 && number <= cell_lines.size()) {
        const std::string& own = cell_lines[number - 1];
        if (clean.size() > own.size() && clean.compare(0, own.size(), own) == 0 &&
            clean.find_first_not_of(" }", own.size()) == std::string::npos) {
          clean.resize(own.size());
          for (auto& c : column) c = std::min(c, own.size());
        }
      }
      line = prefix + clean;
      // the location's column, on the diagnostic's own line (unless map_locations moved it)
      if (header_mapped) continue;
      std::string& said = lines[last_header];
      const auto [begin, end] = diagnostic_column(said);
      const std::size_t c = small_number(said.substr(begin, end - begin));
      if (c >= 1 && c <= column.size())
        said.replace(begin, end - begin, std::to_string(column[c - 1] + 1));
    } else if (!column.empty() && marks_at > 0) {
      const std::string prefix = line.substr(0, marks_at), under = line.substr(marks_at);
      std::string moved;
      for (std::size_t j = 0; j < under.size(); ++j) {
        if (under[j] == ' ') continue;
        const std::size_t to =
            j < column.size() ? column[j] : column.back() + (j - column.size() + 1);
        if (moved.size() <= to) moved.resize(to + 1, ' ');
        if (moved[to] == ' ' || under[j] == '^') moved[to] = under[j];
      }
      line = prefix + moved;
    } else {
      column.clear();
    }
  }
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

}  // namespace xenc_kernel

// xenc-kernel's interpreter: the Jupyter side (xeus::xinterpreter) of a kernel whose cells run in
// clang's incremental C++ interpreter (clang::Interpreter, the one clang-repl is built on).
//
// One execute request = one cell:
//   1. its stdout and stderr (fd 1 and 2, so std::cout and printf alike) go to in-memory files;
//   2. the cell is compiled (clang::Interpreter::Parse); a compile error becomes an `error` reply
//      whose traceback is the compiler's message;
//   3. the compiled cell runs (clang::Interpreter::Execute) with SIGINT unblocked: Jupyter's
//      Interrupt jumps back here (siglongjmp) and the cell ends with a KeyboardInterrupt error;
//   4. a C++ exception escaping the cell becomes an `error` reply (ename = its type,
//      evalue = what()); the kernel carries on;
//   5. the captured text is sent as `stream` messages while the cell runs (every 0.1 s, whole
//      lines, from a second thread: StreamForwarder) and when it ends, in order with the figures
//      and tables that the cell shows (xcpp::display, see include/xcpp/xdisplay.hpp);
//   6. an expression ending the cell (no semicolon) is shown as the `execute_result`.
// A crash in a cell's code (SIGSEGV, SIGBUS, SIGFPE, SIGILL, abort) becomes an error reply and the
// kernel lives on; a crash while clang links a cell ends the kernel, after an error that says so.
// A thread a cell started that crashes or calls exit() ends alone, and the cell's error (or, once
// the cell ended, the next cell's stderr) says what it did; the kernel lives on.
// Every cell is compiled first in a forked copy: a cell that does not compile changes nothing.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <xeus/xinterpreter.hpp>

#include "cell_output.hpp"

namespace clang {
class DeclContext;
class Interpreter;
class NamedDecl;
}  // namespace clang

namespace xenc_kernel {

class CellInterpreter : public xeus::xinterpreter {
 public:
  /// compiler_args: extra clang arguments (-I<dir> for xencoder and its dependencies).
  explicit CellInterpreter(std::vector<std::string> compiler_args);
  ~CellInterpreter() override;

  /// Called by the cells' display hook (xenc_kernel_publish, see cell_interpreter.cpp): sends
  /// the text captured so far, then the bundle as display_data or as the execute_result.
  void publish_bundle(const nl::json& bundle, bool is_result);
  /// Called when a cell's code reads std::cin or C's stdin and finds nothing left: sends what the
  /// cell printed so far, then asks the notebook for a line (Jupyter's input_request) and waits.
  /// Returns the line with its newline, or "" when there is none to have (see the .cpp).
  std::string ask_for_input();

 private:
  void configure_impl() override;
  nl::json execute_request_impl(int execution_counter, const std::string& code, bool silent,
                                bool store_history, nl::json user_expressions,
                                bool allow_stdin) override;
  nl::json complete_request_impl(const std::string& code, int cursor_pos) override;
  nl::json inspect_request_impl(const std::string& code, int cursor_pos, int detail_level) override;
  nl::json is_complete_request_impl(const std::string& code) override;
  nl::json kernel_info_request_impl() override;
  void shutdown_request_impl() override;

  /// A new clang::Interpreter with our arguments (the main one, or a throwaway for completion).
  std::unique_ptr<clang::Interpreter> make_clang_interpreter(
      const std::vector<std::string>& extra_args = {});
  /// clang's completions of the end of `line` (names earlier cells declared), from a forked child.
  std::vector<std::string> clang_completions(const std::string& line);
  /// The -I directories of the interpreter's arguments (xencoder's headers among them).
  std::vector<std::string> include_dirs() const;
  /// What a redefining cell replaces: names, at the top level and in these namespaces.
  struct Shadow {
    std::vector<std::string> names, namespaces;
    std::set<clang::NamedDecl*> keep;  // earlier overloads the cell does not redefine
    bool report_keep = false;          // trial_compile: find them (see the .cpp)
  };
  /// The names among `names` declared twice (one entity) at the top level or in `namespaces`.
  std::vector<std::string> conflicts(const std::vector<std::string>& names,
                                     const std::vector<std::string>& namespaces);
  /// Whether `qualified` ("Q", "geo::Pt") names a class the interpreter knows.
  bool is_class(const std::string& qualified);
  /// Takes the earlier declarations of shadow's names out of name lookup, but for shadow.keep (see
  /// the .cpp); returns them, each with the scope it was found in.
  using Hidden = std::vector<std::pair<clang::DeclContext*, clang::NamedDecl*>>;
  Hidden hide_earlier(const Shadow& shadow);
  /// Compiles code in a forked copy of the kernel (after hide_earlier(*shadow) there, if given):
  /// null if it compiles, else the error reply. With shadow->report_keep, it adds to shadow->keep
  /// the earlier overloads the code did not define again.
  nl::json trial_compile(const std::string& code, Shadow* shadow = nullptr);
  /// Compiles (first in a forked copy) and runs one piece of code; with shadow, hides the earlier
  /// declarations first. Returns null on success, else the error reply.
  nl::json run(const std::string& code, Shadow* shadow = nullptr);
  /// After `failed` (the cell's first compile error or crash): the cell compiled again as one
  /// that replaces what earlier cells defined, if it redefines any. Null on success, else the
  /// error reply.
  nl::json replace_earlier(const std::string& cell, const nl::json& failed);
  /// Sends the captured stdout and stderr as stream messages (whole_lines: see OutputCapture).
  /// The caller holds publish_mutex_.
  void send_streams(bool whole_lines);

  std::vector<std::string> compiler_args_;
  std::unique_ptr<clang::Interpreter> clang_;
  OutputCapture capture_;
  std::mutex publish_mutex_;   // one sender at a time: the cell's thread or the forwarder's
  StreamForwarder forwarder_;  // sends whole lines while a compiled cell runs
  int execution_count_ = 0;
  int cells_compiled_ = 0;            // numbers the wrapped cells' functions (wrap_statements)
  bool truncation_reported_ = false;  // this cell's "output truncated" note was sent
  bool allow_stdin_ = false;          // this cell's request lets the kernel ask for input
  bool earlier_uses_failed_ = false;  // trial_compile: an earlier cell's use of the cell's
                                      // template did not compile (instantiate_earlier_uses)
  std::vector<std::string> shadowed_names_;  // names a cell has redefined (hide_earlier)
  std::set<std::string> declared_before_;    // names the cells that ran declared (names_declared)
  std::map<std::string, std::string> members_in_force_;  // member functions defined outside their
                                                         // class: the text of the definition
                                                         // that ran (member_functions_defined)
  // what hide_earlier took out of lookup, each with its scope (conflicts)
  Hidden hidden_;
};

}  // namespace xenc_kernel

#include "cell_interpreter.hpp"

#include <cxxabi.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <typeinfo>

#include <clang/Frontend/CompilerInstance.h>
#include <clang/Interpreter/CodeCompletion.h>
#include <clang/Interpreter/Interpreter.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>
#include <xeus/xhelper.hpp>

#include "cell_text.hpp"

namespace {

// The interpreter whose cell is running: the display hook below publishes through it.
xenc_kernel::CellInterpreter* g_kernel = nullptr;

// Interrupt: while a compiled cell runs, SIGINT (Jupyter's Interrupt) jumps back to the
// execute loop. At all other times SIGINT is blocked (main.cpp), so it cannot stop the kernel
// halfway through a Jupyter message or a compilation.
sigjmp_buf g_interrupt_target;

void on_interrupt(int) { siglongjmp(g_interrupt_target, 1); }

// Drops a SIGINT that arrived while no cell was running (an Interrupt of an idle kernel).
void discard_pending_interrupt() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  timespec zero{0, 0};
  while (sigtimedwait(&set, nullptr, &zero) == SIGINT) {
  }
}

void set_interrupt_blocked(bool blocked) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  pthread_sigmask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &set, nullptr);
}

std::string demangled(const char* name) {
  int status = 0;
  char* s = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string r = status == 0 && s ? s : name;
  std::free(s);
  return r;
}

// The compiler's message without clang's "In file included from <<< inputs >>>" lines.
std::string compiler_message(const std::string& stderr_text) {
  std::istringstream in(stderr_text);
  std::string line, out;
  while (std::getline(in, line))
    if (line.find("<<< inputs >>>") == std::string::npos) out += line + "\n";
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

nl::json error_reply(const std::string& ename, const std::string& evalue,
                     const std::vector<std::string>& traceback) {
  // (xeus 2.4's create_error_reply swaps ename and evalue: built here instead)
  return {{"status", "error"}, {"ename", ename}, {"evalue", evalue}, {"traceback", traceback}};
}

}  // namespace

// The display hook the cells call (declared in include/xcpp/xdisplay.hpp; found by the JIT in
// this executable, linked with -rdynamic). `bundle_json` is a MIME bundle as JSON text.
// Jupyter's Interrupt waits until the bundle is sent: jumping out halfway would leave the
// publishing lock held and a message half sent.
extern "C" __attribute__((visibility("default"))) void xenc_kernel_publish(const char* bundle_json,
                                                                           int is_result) {
  struct InterruptBlocked {
    sigset_t previous;
    InterruptBlocked() {
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, SIGINT);
      pthread_sigmask(SIG_BLOCK, &set, &previous);
    }
    ~InterruptBlocked() { pthread_sigmask(SIG_SETMASK, &previous, nullptr); }
  } blocked;
  if (g_kernel != nullptr) g_kernel->publish_bundle(nl::json::parse(bundle_json), is_result != 0);
}

namespace xenc_kernel {

// ---------------------------------------------------------------------------------------------
CellInterpreter::CellInterpreter(std::vector<std::string> compiler_args)
    : compiler_args_(std::move(compiler_args)) {
  xeus::register_interpreter(this);
}

CellInterpreter::~CellInterpreter() { g_kernel = nullptr; }

std::unique_ptr<clang::Interpreter> CellInterpreter::make_clang_interpreter(
    const std::vector<std::string>& extra_args) {
  std::vector<const char*> args;
  for (const auto& a : compiler_args_) args.push_back(a.c_str());
  for (const auto& a : extra_args) args.push_back(a.c_str());
  clang::IncrementalCompilerBuilder builder;
  builder.SetCompilerArgs(args);
  auto compiler = builder.CreateCpp();
  if (!compiler) throw std::runtime_error("clang: " + llvm::toString(compiler.takeError()));
  auto interpreter = clang::Interpreter::create(std::move(*compiler));
  if (!interpreter) throw std::runtime_error("clang: " + llvm::toString(interpreter.takeError()));
  return std::move(*interpreter);
}

void CellInterpreter::configure_impl() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  clang_ = make_clang_interpreter();
  g_kernel = this;
  // The hidden first cell: the display hook and the execute_result printer.
  capture_.start();
  nl::json failed = run("#include <xenc_kernel/prelude.hpp>\n");
  std::string err = capture_.take_stderr();
  capture_.take_stdout();
  capture_.stop();
  if (!failed.is_null()) throw std::runtime_error("xenc-kernel: the prelude failed:\n" + err);
}

void CellInterpreter::send_streams(bool whole_lines) {
  std::string out = capture_.take_stdout(whole_lines);
  std::string err = compiler_message(capture_.take_stderr(whole_lines));
  if (!out.empty()) publish_stream("stdout", out);
  if (!err.empty()) publish_stream("stderr", err);
}

void CellInterpreter::publish_bundle(const nl::json& bundle, bool is_result) {
  std::lock_guard<std::mutex> lock(publish_mutex_);
  send_streams(false);  // the text printed before the bundle comes before it
  if (is_result)
    publish_execution_result(execution_count_, bundle, nl::json::object());
  else
    display_data(bundle, nl::json::object(), nl::json::object());
}

// Compiles, then runs, one piece of code. Returns null on success, else the error reply (whose
// traceback holds the compiler's message, taken from the captured stderr).
nl::json CellInterpreter::run(const std::string& code) {
  auto compiled = clang_->Parse(code);  // clang::Interpreter::Parse: compile to a unit of IR
  if (!compiled) {
    std::string what = llvm::toString(compiled.takeError());  // "Parsing failed."
    std::vector<std::string> trace = lines_of(compiler_message(capture_.take_stderr()));
    std::string first_error = what;
    for (const auto& l : trace)
      if (l.find("error:") != std::string::npos) {
        first_error = l.substr(l.find("error:") + 7);
        break;
      }
    return error_reply("CompileError", first_error,
                       trace.empty() ? std::vector<std::string>{what} : trace);
  }
  clang::PartialTranslationUnit& unit = *compiled;
  // Run it (clang::Interpreter::Execute: JIT-link the unit, run its statements and
  // initialisers) with SIGINT unblocked; Interrupt lands back at sigsetjmp, mask restored.
  // Meanwhile the forwarder sends the whole lines it printed so far (started while SIGINT is
  // still blocked, so its thread never takes the Interrupt).
  forwarder_.start([this] {
    std::lock_guard<std::mutex> lock(publish_mutex_);
    send_streams(true);
  });
  volatile bool interrupted = false;
  std::string exception_type, exception_what;
  llvm::Error failure = llvm::Error::success();
  if (sigsetjmp(g_interrupt_target, 1) == 0) {
    discard_pending_interrupt();
    struct sigaction action{};
    action.sa_handler = on_interrupt;
    sigaction(SIGINT, &action, nullptr);
    set_interrupt_blocked(false);
    try {
      failure = clang_->Execute(unit);
    } catch (const std::exception& e) {
      exception_type = demangled(typeid(e).name());
      exception_what = e.what();
    } catch (...) {
      exception_type = "unknown C++ exception";
    }
    set_interrupt_blocked(true);
  } else {
    interrupted = true;
  }
  forwarder_.stop();
  if (interrupted) {
    std::fflush(nullptr);
    return error_reply("KeyboardInterrupt", "the cell was interrupted",
                       {"KeyboardInterrupt: the cell was interrupted"});
  }
  if (failure) {
    std::string what = llvm::toString(std::move(failure));
    std::vector<std::string> trace = lines_of(compiler_message(capture_.take_stderr()));
    trace.push_back(what);
    return error_reply("ExecutionError", what, trace);
  }
  if (!exception_type.empty())
    return error_reply(exception_type, exception_what, {exception_type + ": " + exception_what});
  return nullptr;
}

nl::json CellInterpreter::execute_request_impl(int execution_counter, const std::string& code,
                                               bool /*silent*/, bool /*store_history*/,
                                               nl::json /*user_expressions*/,
                                               bool /*allow_stdin*/) {
  execution_count_ = execution_counter;
  g_kernel = this;
  // A final expression without a semicolon is shown as the execute_result: it runs as
  //   xenc_kernel::show_result(((EXPRESSION), xenc_kernel::no_value{}));
  // where the comma yields no_value for a void expression (nothing shown).
  CellParts parts = split_trailing_expression(code);
  capture_.start();
  nl::json failed;
  if (!parts.statements.empty() &&
      parts.statements.find_first_not_of(" \t\r\n") != std::string::npos)
    failed = run(parts.statements);
  if (failed.is_null() && !parts.expression.empty())
    failed =
        run("xenc_kernel::show_result(((" + parts.expression + "\n), xenc_kernel::no_value{}));");
  {
    std::lock_guard<std::mutex> lock(publish_mutex_);
    send_streams(false);
  }
  capture_.stop();

  if (!failed.is_null()) {
    publish_execution_error(failed["ename"], failed["evalue"], failed["traceback"]);
    return failed;
  }
  return xeus::create_successful_reply();
}

// Tab: the names that complete the one before the cursor. A name qualified by xenc
// (xenc::Multi) is completed from the declarations in xencoder's headers (declared_names), where
// inspect finds the documentation too; any other name by clang's own completer.
nl::json CellInterpreter::complete_request_impl(const std::string& code, int cursor_pos) {
  const std::size_t cursor =
      std::min(static_cast<std::size_t>(std::max(cursor_pos, 0)), code.size());
  std::size_t start = cursor;  // where the last component of the name begins
  const std::string qualified = name_before(code, cursor, start);
  const std::string prefix = code.substr(start, cursor - start);
  const std::size_t colons = qualified.rfind("::");
  std::vector<std::string> candidates;
  if (colons != std::string::npos && qualified.rfind("xenc", 0) == 0) {
    candidates = declared_names(qualified.substr(0, colons), prefix, include_dirs());
  } else {
    const std::size_t newline = code.rfind('\n', cursor == 0 ? 0 : cursor - 1);
    const std::size_t line_begin =
        newline == std::string::npos || newline >= cursor ? 0 : newline + 1;
    candidates = clang_completions(code.substr(line_begin, cursor - line_begin));
  }
  nl::json matches = nl::json::array();
  for (const auto& c : candidates)
    if (!c.empty() && c.rfind(prefix, 0) == 0) matches.push_back(c);
  return xeus::create_complete_reply(matches, static_cast<int>(start), cursor_pos);
}

// clang::ReplCodeCompleter, as clang-repl runs it: a throwaway interpreter parses the line, seeing
// the main one's top-level declarations. It runs in a forked child, which keeps the main
// interpreter out of harm's way: clang 19's completer can leave its diagnostics failed (then
// every cell fails with "Parsing failed.") or crash (it does when given the earlier cells'
// headers with -include). A crashed child gives no matches; the kernel carries on.
std::vector<std::string> CellInterpreter::clang_completions(const std::string& line) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return {};
  pid_t child = fork();
  if (child == 0) {  // the child: complete, write one match per line to the pipe, exit
    close(pipe_fds[0]);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    std::string out;
    try {
      auto scratch = make_clang_interpreter();
      std::vector<std::string> results;
      clang::ReplCodeCompleter completer;
      completer.codeComplete(const_cast<clang::CompilerInstance*>(scratch->getCompilerInstance()),
                             line, 1, static_cast<unsigned>(line.size()) + 1,
                             clang_->getCompilerInstance(), results);
      for (const auto& r : results) out += r + "\n";
    } catch (...) {
    }
    for (std::size_t done = 0; done < out.size();) {
      ssize_t n = write(pipe_fds[1], out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string text;
  char buffer[4096];
  pollfd p{pipe_fds[0], POLLIN, 0};
  while (child > 0 && poll(&p, 1, 20000) > 0) {  // at most 20 s without news
    ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);
  if (child > 0) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
  }
  return lines_of(text);
}

// Shift+Tab: the comment block above the declaration of the name under the cursor, from
// xencoder's headers.
nl::json CellInterpreter::inspect_request_impl(const std::string& code, int cursor_pos,
                                               int /*detail_level*/) {
  std::string name = name_around(code, static_cast<std::size_t>(std::max(cursor_pos, 0)));
  std::string doc = name.empty() ? "" : documentation(name, include_dirs());
  if (doc.empty()) return xeus::create_inspect_reply(false);
  return xeus::create_inspect_reply(true, {{"text/plain", name + "\n\n" + doc}});
}

std::vector<std::string> CellInterpreter::include_dirs() const {
  std::vector<std::string> dirs;
  for (const auto& a : compiler_args_)
    if (a.rfind("-I", 0) == 0) dirs.push_back(a.substr(2));
  return dirs;
}

nl::json CellInterpreter::is_complete_request_impl(const std::string& code) {
  std::string status = completeness(code);
  return xeus::create_is_complete_reply(status, status == "incomplete" ? "    " : "");
}

nl::json CellInterpreter::kernel_info_request_impl() {
  return xeus::create_info_reply("5.3", "xenc-kernel", "1.0",
                                 /*language*/ "c++", "17", "text/x-c++src", ".cpp",
                                 /*pygments_lexer*/ "c++", /*codemirror_mode*/ "text/x-c++src",
                                 /*nbconvert_exporter*/ "",
                                 "xenc-kernel: C++17 in clang 19's incremental interpreter; the "
                                 "notebooks' first cell loads xencoder");
}

void CellInterpreter::shutdown_request_impl() { g_kernel = nullptr; }

}  // namespace xenc_kernel

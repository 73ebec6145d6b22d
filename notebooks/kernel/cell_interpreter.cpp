#include "cell_interpreter.hpp"

#include <cxxabi.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio_ext.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <threads.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <typeinfo>
#include <utility>
#include <vector>

#include <clang/AST/ASTContext.h>
#include <clang/AST/DeclCXX.h>
#include <clang/AST/DeclContextInternals.h>
#include <clang/Basic/OperatorKinds.h>
#include <clang/Basic/SourceManager.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Interpreter/CodeCompletion.h>
#include <clang/Interpreter/Interpreter.h>
#include <clang/Sema/Scope.h>
#include <clang/Sema/Sema.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/IndirectionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>
#include <xeus/xhelper.hpp>

#include "cell_text.hpp"
#include "kernel_server.hpp"

namespace {

// The interpreter whose cell is running: the display hook below publishes through it.
xenc_kernel::CellInterpreter* g_kernel = nullptr;

// Interrupt and crashes. While a compiled cell runs, SIGINT (Jupyter's Interrupt) and the crash
// signals jump back to the execute loop (siglongjmp to g_cell_target, with the signal's number).
// At all other times SIGINT is blocked (main.cpp), so it cannot stop the kernel halfway through a
// Jupyter message or a compilation, and a crash ends the kernel.
//
// Within a cell's run (clang::Interpreter::Execute), clang first links the cell, then runs its
// initialisers. Jumping out while clang links leaves the JIT's locks held: the next cell hangs
// (the hang after an Interrupt). So the cell's first and last initialiser (wrap_statements) call
// xenc_kernel_user_code, which marks the stretch where the cell's own code runs: an Interrupt that
// arrives outside it waits for the cell's code to start; a crash outside it is a fault in the
// kernel's compiler, after which the kernel ends (its state cannot be trusted).
sigjmp_buf g_cell_target;
pthread_t g_cell_thread;
pid_t g_kernel_pid = 0;
volatile sig_atomic_t g_in_user_code = 0;
volatile sig_atomic_t g_interrupt_pending = 0;
volatile sig_atomic_t g_unsafe_fault = 0;
// The address a SIGSEGV or SIGBUS of the cells' thread touched (see reserved_variable_at).
void* volatile g_fault_address = nullptr;

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// exit(), _Exit(), _exit() and quick_exit() in a cell's code (the JIT links the cells' calls of
// them to the functions below, see configure_impl): on the cell's thread, in the cell's code, they
// jump back to the execute loop with kExitJump, the status in g_exit_status. Anywhere else (a
// process the cell forked, a thread it started) they do what they say.
constexpr int kExitJump = 1 << 16;  // above every signal number
volatile sig_atomic_t g_exit_status = 0;
const char* g_exit_call = "exit";  // which of them

// Threads a cell started. A crash in one (a fault; abort(), as after an exception it did not catch;
// exit() in the cells' code) would end the kernel, and every cell's state with it. Instead only
// that thread ends (end_this_thread), at once, so a join() of it returns. The cell's thread goes
// on to the cell's end, whose reply is the error that says what the thread did (a thread that
// ends between cells is told in the next cell's stderr). The cell's thread is never jumped out of
// what it was doing: it could hold a lock there (the JIT's, malloc's) that a later cell would
// wait on for ever.
// Which threads are the cells': those their code started, through std::thread (and std::async)
// or pthread_create, which the JIT links to the kernel's own (cell_start_thread,
// cell_pthread_create; they set t_started_by_cell). Every other thread is the kernel's or a
// library's (xeus's, ZeroMQ's, the output forwarder, OpenBLAS's workers, xencoder's pool): a
// crash in one of them ends the kernel, as before, rather than leave a library waiting for ever
// on a worker that ended.
volatile sig_atomic_t g_cell_running = 0;  // between a cell's Execute and its return
thread_local bool t_started_by_cell = false;
// What std::terminate was called for, on this thread (on_terminate), for the abort that follows.
thread_local char t_terminate_what[512];
// The first ended thread that was not reported yet: claimed by the thread that ends first.
struct ThreadStop {
  int sig = 0;                 // the signal, or 0 for an exit call
  const char* exit_call = "";  // "exit", "_Exit", ...
  int exit_status = 0;
  char terminate_what[512] = "";  // t_terminate_what of that thread
};
ThreadStop g_thread_stop;
std::atomic<bool> g_thread_stop_claimed{false}, g_thread_stop_written{false};
std::atomic<int> g_threads_stopped{0};  // ended since the last report

// A thread the cells started ends here (from a signal handler, or an exit call): it records what
// happened, if it is the first, and ends. Only this thread, with the raw exit system call: no
// clean-up by glibc or C++, which could crash again or wait on a lock the thread holds. The
// kernel clears the thread's id as it ends, which is what pthread_join waits for.
[[noreturn]] void end_this_thread(int sig, const char* exit_call, int exit_status) {
  if (!g_thread_stop_claimed.exchange(true)) {
    g_thread_stop.sig = sig;
    g_thread_stop.exit_call = exit_call;
    g_thread_stop.exit_status = exit_status;
    std::memcpy(g_thread_stop.terminate_what, t_terminate_what, sizeof t_terminate_what);
    g_thread_stop_written.store(true);
  }
  g_threads_stopped.fetch_add(1);
  for (;;) syscall(SYS_exit, 0);
}

void on_signal(int sig, siginfo_t* info, void*) {
  const bool in_kernel = getpid() == g_kernel_pid;
  if ((sig == SIGSEGV || sig == SIGBUS) && info != nullptr) g_fault_address = info->si_addr;
  if (in_kernel && !pthread_equal(pthread_self(), g_cell_thread)) {
    if (sig == SIGINT) {  // landed on a thread the cell started
      pthread_kill(g_cell_thread, SIGINT);
      return;
    }
    if (t_started_by_cell) end_this_thread(sig, "", 0);
  }
  if (!in_kernel || !pthread_equal(pthread_self(), g_cell_thread) ||
      (!g_cell_running && sig != SIGINT)) {
    // a crash in the kernel's own code, or in a process the cell forked: the default action
    signal(sig, SIG_DFL);
    if (sig == SIGINT || sig == SIGABRT) raise(sig);
    return;  // a fault happens again, now with the default action
  }
  if (sig == SIGINT && !g_in_user_code) {
    g_interrupt_pending = 1;  // taken when the cell's code starts (xenc_kernel_user_code)
    return;
  }
  if (sig != SIGINT && !g_in_user_code) g_unsafe_fault = 1;
  siglongjmp(g_cell_target, sig);
}

void set_interrupt_blocked(bool blocked) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  pthread_sigmask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &set, nullptr);
}

// The handlers: on from the kernel's start (configure_impl) to its end; back to the default action
// in a throwaway copy (trial_compile).
void set_cell_handlers(bool on) {
  struct sigaction action{};
  sigemptyset(&action.sa_mask);
  if (on) {
    action.sa_sigaction = on_signal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;  // own stack: a stack overflow is caught too
  } else {
    action.sa_handler = SIG_DFL;
  }
  for (int sig : kCrashSignals) sigaction(sig, &action, nullptr);
  if (on) sigaction(SIGINT, &action, nullptr);
}

// The cells' thread, and each thread a cell starts (cell_start_thread), handles its signals on a
// stack of its own (a stack overflow leaves none), given back when the thread ends.
void ensure_signal_stack() {
  struct SignalStack {
    std::vector<char> memory = std::vector<char>(1 << 16);
    SignalStack() {
      stack_t stack{};
      stack.ss_sp = memory.data();
      stack.ss_size = memory.size();
      sigaltstack(&stack, nullptr);
    }
    ~SignalStack() {
      stack_t off{};
      off.ss_flags = SS_DISABLE;
      sigaltstack(&off, nullptr);
    }
  };
  static thread_local SignalStack stack;
  (void)stack;
}

// What a crash signal means, in one line a student can act on.
std::string signal_meaning(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "segmentation fault: the cell used memory it does not own (a null or dangling "
             "pointer, an index past the end, or endless recursion that overflowed the stack)";
    case SIGBUS:
      return "bus error: the cell used an address with no memory behind it (a misaligned "
             "pointer, or a mapped file read past its end)";
    case SIGFPE:
      return "arithmetic error: an integer division or remainder by zero (or INT_MIN / -1)";
    case SIGILL:
      return "illegal instruction: the processor met an instruction it cannot run (often a "
             "function that ends without its return, or __builtin_trap)";
    case SIGABRT:
      return "abort: the cell, or a library it called, called abort() (a failed assert, or "
             "std::terminate after an exception nobody caught)";
    default:
      return "signal " + std::to_string(sig);
  }
}

std::string demangled(const char* name) {
  int status = 0;
  char* s = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string r = status == 0 && s ? s : name;
  std::free(s);
  return r;
}

// Inside a catch (...): the type of what was thrown, and its value where it is one a beginner
// throws instead of an exception class (`throw 42;`, `throw "bad shape";`): "int 42",
// "char const* \"bad shape\"".
std::string thrown_non_exception() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  std::string said = type != nullptr ? demangled(type->name()) : std::string("unknown type");
  try {
    throw;
  } catch (const char* text) {
    said += text != nullptr ? " \"" + std::string(text) + "\"" : std::string(" nullptr");
  } catch (const std::string& text) {
    said = "std::string \"" + text + "\"";
  } catch (long long v) {
    said += " " + std::to_string(v);
  } catch (long v) {
    said += " " + std::to_string(v);
  } catch (int v) {
    said += " " + std::to_string(v);
  } catch (unsigned v) {
    said += " " + std::to_string(v);
  } catch (unsigned long v) {
    said += " " + std::to_string(v);
  } catch (char v) {
    said += std::string(" '") + v + "'";
  } catch (bool v) {
    said += v ? " true" : " false";
  } catch (double v) {
    std::ostringstream text;
    text << v;
    said += " " + text.str();
  } catch (...) {
  }
  return said;
}

// std::terminate (an exception nobody caught; a std::thread destroyed while joinable): what it
// was called for, kept for the report of the abort() that follows.
[[noreturn]] void on_terminate() {
  std::string what =
      "std::terminate, called with no exception in flight (as when a std::thread object is "
      "destroyed while its thread was neither joined nor detached: call join() before it goes "
      "out of scope)";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = "std::terminate, after an exception nobody caught: " + demangled(typeid(x).name()) +
             ": " + x.what();
    } catch (...) {
      what = "std::terminate, after an exception nobody caught: " + thrown_non_exception();
    }
  }
  std::snprintf(t_terminate_what, sizeof t_terminate_what, "%s", what.c_str());
  std::abort();
}

// The threads the cells started that ended since the last report (end_this_thread): what
// the first did, as an error's name, a one-line summary, details and advice. Empty summary: none.
struct ThreadStopReport {
  std::string ename, summary;
  std::vector<std::string> details;
  std::string advice;
};
ThreadStopReport take_thread_stops() {
  ThreadStopReport r;
  const int stopped = g_threads_stopped.exchange(0);
  if (stopped == 0) return r;
  // (a second thread may count itself before the first has written what it did)
  for (int i = 0; i < 1000 && !g_thread_stop_written.load(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const ThreadStop first = g_thread_stop;
  g_thread_stop_written.store(false);
  g_thread_stop_claimed.store(false);
  const std::string which = "a thread that a cell started";
  if (first.sig == 0) {
    const std::string call = first.exit_call + ("(" + std::to_string(first.exit_status) + ")");
    r.ename = "SystemExit";
    r.summary = which + " called " + call;
    r.details.push_back("In a notebook, " + std::string(first.exit_call) +
                        " would end the kernel and lose what every cell defined, so the kernel "
                        "ended only that thread.");
    r.advice = "End the thread by returning from its function instead, and run the cell again.";
  } else {
    r.ename = std::string("SIG") + sigabbrev_np(first.sig);
    r.summary = which + " crashed: " + signal_meaning(first.sig);
    if (first.sig == SIGABRT && first.terminate_what[0] != '\0')
      r.details.push_back(std::string("It was ") + first.terminate_what + ".");
    r.details.push_back(
        "That would have ended the kernel and lost what every cell defined, so the kernel "
        "ended only that thread.");
    r.advice = first.terminate_what[0] != '\0' &&
                       std::strstr(first.terminate_what, "exception nobody caught") != nullptr
                   ? "Catch the exception inside the thread's function (try { ... } catch (const "
                     "std::exception& e) { ... }), or fix what throws it, and run the cell again."
                   : "Fix the code that thread runs, and run the cell again.";
  }
  if (stopped > 1)
    r.details.push_back(std::to_string(stopped) +
                        " threads ended so; this is what the first one did.");
  return r;
}

// The cell that runs now, as the student wrote it (execute_request_impl), for compiler_message.
std::string g_cell_source;

// What the kernel gave clang to compile, by the number clang named it with ("input_line_7"):
// recorded before each compile (note_input), for compiler_message.
std::map<int, std::string> g_inputs;

// The number of the last input clang made a buffer of ("input_line_N" in its source manager:
// one per Parse, made before it parses, so a failed one counts too), or -1.
int last_input_number(const clang::Interpreter& interpreter) {
  const clang::SourceManager& sm = interpreter.getCompilerInstance()->getSourceManager();
  for (unsigned i = sm.local_sloc_entry_size(); i-- > 0;) {
    const clang::SrcMgr::SLocEntry& e = sm.getLocalSLocEntry(i);
    if (!e.isFile() || e.getFile().getContentCache().OrigEntry) continue;  // a file on disk
    const auto buffer = e.getFile().getContentCache().getBufferIfLoaded();
    llvm::StringRef name = buffer ? buffer->getBufferIdentifier() : llvm::StringRef();
    int number = 0;
    if (name.consume_front("input_line_") && !name.getAsInteger(10, number)) return number;
  }
  return -1;
}

// The code the next Parse compiles, under the name it will have (clang counts its inputs). The
// oldest are forgotten beyond 16 MiB of them (their locations keep clang's columns).
void note_input(const clang::Interpreter& interpreter, const std::string& code) {
  static std::size_t bytes = 0;
  std::string& kept = g_inputs[last_input_number(interpreter) + 1];
  bytes = bytes - kept.size() + code.size();
  kept = code;
  while (bytes > (std::size_t(16) << 20) && g_inputs.size() > 1) {
    bytes -= g_inputs.begin()->second.size();
    g_inputs.erase(g_inputs.begin());
  }
}

// The compiler's message without clang's "In file included from <<< inputs >>>" lines, its
// snippets and locations as the student wrote the cell (readable_diagnostics).
std::string compiler_message(const std::string& stderr_text) {
  std::istringstream in(stderr_text);
  std::string line, out;
  while (std::getline(in, line))
    if (line.find("<<< inputs >>>") == std::string::npos) out += line + "\n";
  return xenc_kernel::readable_diagnostics(out, g_cell_source, g_inputs);
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

namespace xenc_kernel {
// Thrown by a call of a function that cells declared and no cell has defined yet.
class function_not_defined : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};
}  // namespace xenc_kernel

namespace {
// A function a cell declares, and uses before any cell defines it ("int later(int);", then a
// function that calls it; the body in a later cell): the JIT would refuse the whole cell
// ("Symbols not found"), and clang 19 then fails every later cell too, until a restart. Instead
// each such function links to a stub of its own (an indirect jump: ORC's IndirectStubsManager),
// made by a generator on a JITDylib of the kernel's that the JIT searches after every other. Until
// a cell defines the function the stub throws function_not_defined, naming it; once one does
// (looked for as each cell's code starts: link_defined_functions) it jumps to that definition.
// Only C++ functions (mangled names that demangle to a function); a variable declared and
// defined nowhere still fails to link, as before.
// A C++ function's mangled name (a variable's, a vtable's or a C function's is not).
bool is_cpp_function_name(llvm::StringRef name) {
  llvm::ItaniumPartialDemangler parts;
  return name.starts_with("_Z") && !parts.partialDemangle(name.str().c_str()) && parts.isFunction();
}

constexpr std::size_t kNamedStubs = 256;  // stubs that name their function; later ones share one
struct UndefinedFunctions {
  std::mutex mutex;
  llvm::orc::LLJIT* jit = nullptr;
  std::unique_ptr<llvm::orc::IndirectStubsManager> stubs;
  llvm::orc::JITDylib* library = nullptr;      // the stubs', searched after every other
  std::vector<std::string> pending;            // mangled names whose stub still throws
  std::array<std::string, kNamedStubs> names;  // a stub's function, demangled
  std::size_t named = 0;
};
UndefinedFunctions g_undefined;

[[noreturn]] void throw_not_defined(const std::string& function) {
  throw xenc_kernel::function_not_defined(
      function + " was called, but no cell has defined it: a cell declared it only");
}
template <std::size_t I>
void not_defined_yet() {
  throw_not_defined(g_undefined.names[I]);
}
void not_defined_yet_unnamed() { throw_not_defined("a function"); }
template <std::size_t... I>
constexpr std::array<void (*)(), sizeof...(I)> not_defined_handlers(std::index_sequence<I...>) {
  return {&not_defined_yet<I>...};
}
constexpr auto kNotDefinedHandlers = not_defined_handlers(std::make_index_sequence<kNamedStubs>());

class StubUndefinedFunctions : public llvm::orc::DefinitionGenerator {
  llvm::Error tryToGenerate(llvm::orc::LookupState&, llvm::orc::LookupKind, llvm::orc::JITDylib& jd,
                            llvm::orc::JITDylibLookupFlags,
                            const llvm::orc::SymbolLookupSet& wanted) override {
    llvm::orc::SymbolMap made;
    std::lock_guard<std::mutex> lock(g_undefined.mutex);
    for (const auto& [name, flags] : wanted) {
      // a weak reference is asked whether it exists (and gets null): no stub
      if (flags == llvm::orc::SymbolLookupFlags::WeaklyReferencedSymbol) continue;
      const std::string mangled = (*name).str();
      if (!is_cpp_function_name(mangled)) continue;
      void (*handler)() = not_defined_yet_unnamed;
      if (g_undefined.named < kNamedStubs) {
        g_undefined.names[g_undefined.named] = demangled(mangled.c_str());
        handler = kNotDefinedHandlers[g_undefined.named++];
      }
      const auto exported = llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable;
      if (auto err = g_undefined.stubs->createStub(
              mangled, llvm::orc::ExecutorAddr::fromPtr(handler), exported))
        return err;
      made[name] = g_undefined.stubs->findStub(mangled, true);
      g_undefined.pending.push_back(mangled);
    }
    return made.empty() ? llvm::Error::success()
                        : jd.define(llvm::orc::absoluteSymbols(std::move(made)));
  }
};

void stub_undefined_functions(llvm::orc::LLJIT& jit) {
  auto builder = llvm::orc::createLocalIndirectStubsManagerBuilder(jit.getTargetTriple());
  if (!builder) return;  // no stubs for this CPU: such a cell fails to link, as before
  g_undefined.stubs = builder();
  g_undefined.jit = &jit;
  llvm::orc::JITDylib& stubs =
      jit.getExecutionSession().createBareJITDylib("<xenc-kernel: functions not defined yet>");
  stubs.addGenerator(std::make_unique<StubUndefinedFunctions>());
  g_undefined.library = &stubs;
  jit.getMainJITDylib().addToLinkOrder(stubs);
}

// The stubs whose function a cell has now defined jump to it.
void link_defined_functions() {
  std::lock_guard<std::mutex> lock(g_undefined.mutex);
  if (g_undefined.pending.empty()) return;
  llvm::orc::ExecutionSession& session = g_undefined.jit->getExecutionSession();
  const llvm::orc::JITDylibSearchOrder main_only = {
      {&g_undefined.jit->getMainJITDylib(),
       llvm::orc::JITDylibLookupFlags::MatchExportedSymbolsOnly}};
  std::vector<std::string> still;
  for (const std::string& name : g_undefined.pending) {
    auto found = session.lookup(main_only, session.intern(name));
    if (!found) {
      llvm::consumeError(found.takeError());
      still.push_back(name);
    } else if (auto err = g_undefined.stubs->updatePointer(name, found->getAddress())) {
      llvm::consumeError(std::move(err));
      still.push_back(name);
    }
  }
  g_undefined.pending = std::move(still);
}
}  // namespace

// A variable a cell uses and no cell has defined (`extern int n;`; a class's static data member,
// declared in its class, used in a function of that cell): a function can link to a stub, a
// variable cannot, and the cell was refused, class and all. Each such variable gets pages of its
// own, mapped with no access, which the JIT links it to (on the stubs' library). Read or written
// before a cell defines it, it faults: the cell's SIGSEGV names it (reserved_variable_at). The
// cell that defines it (`int Counter::count = 0;`) opens the pages and its code puts the value
// there (define_reserved_variables), and every cell sees that one variable.
struct ReservedVariable {
  void* address = nullptr;
  std::size_t mapped = 0;
  bool defined = false;
};
std::map<std::string, ReservedVariable> g_reserved;  // by linker name
constexpr std::size_t kMaxReserved = 4096;

// Reserves `name` (`bytes` long): false if it cannot (too many, or no memory).
bool reserve_variable(const std::string& name, std::size_t bytes) {
  if (g_reserved.count(name) != 0) return true;
  if (g_reserved.size() >= kMaxReserved || g_undefined.library == nullptr) return false;
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t mapped = std::max<std::size_t>(1, (bytes + page - 1) / page) * page;
  void* address = mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (address == MAP_FAILED) return false;
  llvm::orc::ExecutionSession& session = g_undefined.jit->getExecutionSession();
  llvm::orc::SymbolMap symbol;
  symbol[session.intern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                  llvm::JITSymbolFlags::Exported};
  if (auto err = g_undefined.library->define(llvm::orc::absoluteSymbols(std::move(symbol)))) {
    llvm::consumeError(std::move(err));
    munmap(address, mapped);
    return false;
  }
  g_reserved[name] = {address, mapped, false};
  return true;
}

// The module's definitions of reserved variables become declarations of them; a constructor of
// the module's, run before its others, copies each one's initial value into its pages, which open
// now. (A dynamic initialiser, as a std::string's, runs after it, on those pages.)
void define_reserved_variables(llvm::Module& module) {
  if (g_reserved.empty()) return;
  std::vector<llvm::GlobalVariable*> defined;
  for (llvm::GlobalVariable& g : module.globals())
    if (!g.isDeclaration() && g_reserved.count(g.getName().str()) != 0) defined.push_back(&g);
  if (defined.empty()) return;
  llvm::LLVMContext& context = module.getContext();
  llvm::Function* set =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context), false),
                             llvm::GlobalValue::InternalLinkage, "xenc.reserved.set", module);
  llvm::IRBuilder<> code(llvm::BasicBlock::Create(context, "entry", set));
  for (llvm::GlobalVariable* g : defined) {
    ReservedVariable& r = g_reserved[g->getName().str()];
    mprotect(r.address, r.mapped, PROT_READ | PROT_WRITE);
    r.defined = true;
    const std::uint64_t bytes =
        module.getDataLayout().getTypeAllocSize(g->getValueType()).getFixedValue();
    if (g->getInitializer()->isNullValue()) {  // (zeros: no copy of them in the module)
      code.CreateMemSet(g, code.getInt8(0), bytes, g->getAlign());
    } else {
      auto* initial = new llvm::GlobalVariable(module, g->getValueType(), true,
                                               llvm::GlobalValue::PrivateLinkage,
                                               g->getInitializer(), "xenc.reserved.initial");
      code.CreateMemCpy(g, g->getAlign(), initial, initial->getAlign(), bytes);
    }
    g->setInitializer(nullptr);
    g->setComdat(nullptr);
    g->setLinkage(llvm::GlobalValue::ExternalLinkage);
  }
  code.CreateRetVoid();
  llvm::appendToGlobalCtors(module, set, 0);
}

// The reserved variable, still undefined, whose pages hold `address` (demangled), or "".
std::string reserved_variable_at(const void* address) {
  const auto* a = static_cast<const char*>(address);
  for (const auto& [name, r] : g_reserved) {
    const auto* begin = static_cast<const char*>(r.address);
    if (r.defined || a < begin || a >= begin + r.mapped) continue;
    std::string shown = demangled(name.c_str());
    for (std::size_t tag; (tag = shown.find("[abi:cxx11]")) != std::string::npos;)
      shown.erase(tag, 11);
    return shown;
  }
  return "";
}

// The line of the cell that runs now (0: none yet): set by the cell's code (prelude.hpp).
extern "C" {
__attribute__((visibility("default"))) volatile int xenc_kernel_line = 0;
}

// Called by each cell's first (entering 1) and last (entering 0) initialiser: see g_cell_target.
// A process the cell forked also reaches the last one: it ends there, before it could return into
// the kernel's loop and answer Jupyter in its place.
extern "C" __attribute__((visibility("default"))) int xenc_kernel_user_code(int entering) {
  if (getpid() != g_kernel_pid) {
    if (entering) return 0;
    std::cout.flush();
    std::fflush(nullptr);
    _exit(0);
  }
  if (entering) link_defined_functions();
  g_in_user_code = entering;
  if (entering && g_interrupt_pending) {
    g_interrupt_pending = 0;
    siglongjmp(g_cell_target, SIGINT);
  }
  if (!entering) g_interrupt_pending = 0;
  return 0;
}

namespace {
// A thread_local variable of a library the kernel loaded (libstdc++'s std::__once_call, which
// std::call_once, std::async and std::promise use), in a cell's code. clang's JIT compiles
// thread_local as emulated TLS, so the cell would look for a __emutls_v.<name> that nothing
// defines ("Symbols not found"), and had it found one, its storage would not be the library's.
// So each access (llvm.threadlocal.address) becomes a call of cell_tls_address, which asks the
// dynamic linker for the calling thread's copy (dlsym gives that for a TLS symbol). Variables the
// dynamic linker does not know (a cell's own thread_local) stay emulated, as before. (The same
// gap is llvm/llvm-project#190625; CppInterOp's #1103 rewrites the IR the same way.)
constexpr char kTlsAddress[] = "xenc_kernel_tls_address";
void* cell_tls_address(const char* name) { return dlsym(RTLD_DEFAULT, name); }

void use_native_tls(llvm::Module& module) {
  std::vector<llvm::GlobalVariable*> native;
  for (llvm::GlobalVariable& g : module.globals())
    if (g.isThreadLocal() && g.isDeclaration() && dlsym(RTLD_DEFAULT, g.getName().str().c_str()))
      native.push_back(&g);
  if (native.empty()) return;
  llvm::LLVMContext& context = module.getContext();
  llvm::PointerType* ptr = llvm::PointerType::getUnqual(context);
  llvm::FunctionCallee address =
      module.getOrInsertFunction(kTlsAddress, llvm::FunctionType::get(ptr, {ptr}, false));
  for (llvm::GlobalVariable* g : native) {
    llvm::Constant* name = nullptr;
    std::vector<llvm::IntrinsicInst*> accesses;
    for (llvm::User* user : g->users())
      if (auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(user))
        if (call->getIntrinsicID() == llvm::Intrinsic::threadlocal_address)
          accesses.push_back(call);
    for (llvm::IntrinsicInst* call : accesses) {
      llvm::IRBuilder<> at(call);
      if (name == nullptr) name = at.CreateGlobalStringPtr(g->getName(), "xenc.tls.name");
      call->replaceAllUsesWith(at.CreateCall(address, {name}));
      call->eraseFromParent();
    }
    if (g->use_empty()) g->eraseFromParent();
  }
}
}  // namespace

namespace {
// std::thread in a cell's code (and std::async's threads): the JIT links the cells' calls of
// libstdc++'s std::thread::_M_start_thread to cell_start_thread, a function of the same ABI (the
// Itanium ABI's: the std::thread, then the unique_ptr by address, destroyed by the caller). It
// starts the thread as libstdc++ does, and gives it a stack for its signal handler first, so that
// a stack overflow in the thread ends that thread alone (end_this_thread), not the kernel.
constexpr char kStartThread[] =
    "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE";
void cell_start_thread(std::thread* self, std::unique_ptr<std::thread::_State> state, void (*)()) {
  pthread_t id{};
  const int error = pthread_create(
      &id, nullptr,
      [](void* p) -> void* {
        const std::unique_ptr<std::thread::_State> run(static_cast<std::thread::_State*>(p));
        t_started_by_cell = true;
        ensure_signal_stack();
        run->_M_run();
        return nullptr;
      },
      state.get());
  if (error != 0) throw std::system_error(error, std::generic_category(), "std::thread");
  state.release();
  static_assert(sizeof(std::thread) == sizeof(pthread_t), "std::thread holds its pthread_t");
  std::memcpy(static_cast<void*>(self), &id, sizeof id);
}

// pthread_create called by a cell's code (C-style threads): linked here too, for the same signal
// stack. The thread runs the cell's function on it and returns what that returns.
struct CellThreadStart {
  void* (*start)(void*);
  void* arg;
};
int cell_pthread_create(pthread_t* id, const pthread_attr_t* attr, void* (*start)(void*),
                        void* arg) {
  auto run = std::unique_ptr<CellThreadStart>(new (std::nothrow) CellThreadStart{start, arg});
  if (!run) return EAGAIN;
  const int error = pthread_create(
      id, attr,
      [](void* p) -> void* {
        const CellThreadStart run =
            *std::unique_ptr<CellThreadStart>(static_cast<CellThreadStart*>(p));
        t_started_by_cell = true;
        ensure_signal_stack();
        return run.start(run.arg);
      },
      run.get());
  if (error == 0) run.release();
  return error;
}

// C11's thrd_create (<threads.h>): linked here too, a pthread_create of the cell's (above) whose
// start returns the C11 start's int, which thrd_join reads back from the thread's pthread result,
// as glibc's own thrd_create arranges.
struct CellC11Start {
  thrd_start_t start;
  void* arg;
};
int cell_thrd_create(thrd_t* id, thrd_start_t start, void* arg) {
  auto run = std::unique_ptr<CellC11Start>(new (std::nothrow) CellC11Start{start, arg});
  if (!run) return thrd_nomem;
  const int error = cell_pthread_create(
      id, nullptr,
      [](void* p) -> void* {
        const CellC11Start run = *std::unique_ptr<CellC11Start>(static_cast<CellC11Start*>(p));
        return reinterpret_cast<void*>(static_cast<std::intptr_t>(run.start(run.arg)));
      },
      run.get());
  if (error != 0) return error == ENOMEM ? thrd_nomem : thrd_error;  // as glibc maps them
  run.release();
  return thrd_success;
}
}  // namespace

namespace {
// The cell's own exit (see kExitJump): jumps back to the execute loop, or returns.
void exit_from_cell(const char* call, int status) {
  if (getpid() != g_kernel_pid) return;
  if (!pthread_equal(pthread_self(), g_cell_thread)) end_this_thread(0, call, status);
  if (!g_in_user_code) return;
  g_exit_status = status;
  g_exit_call = call;
  siglongjmp(g_cell_target, kExitJump);
}
[[noreturn]] void cell_exit(int status) {
  exit_from_cell("exit", status);
  std::exit(status);
}
[[noreturn]] void cell_quick_exit(int status) {
  exit_from_cell("quick_exit", status);
  std::quick_exit(status);
}
// _Exit and _exit, told apart by name only
constexpr char kExitC[] = "_Exit", kExitPosix[] = "_exit";
template <const char* Name>
[[noreturn]] void cell_immediate_exit(int status) {
  exit_from_cell(Name, status);
  std::fflush(nullptr);  // the forked copy's output, as xenc_kernel_user_code
  _exit(status);
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
  // the cap on one cell's output: XENC_KERNEL_OUTPUT_MB (default 4)
  if (const char* v = std::getenv("XENC_KERNEL_OUTPUT_MB")) {
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(v, &end, 10);
    if (end != v && *end == '\0' && mb > 0 && mb < (1ull << 20))
      capture_.set_limit(static_cast<std::size_t>(mb) << 20);
    else
      std::cerr << "xenc-kernel: XENC_KERNEL_OUTPUT_MB is '" << v
                << "', expected a number of MB > 0; using 4\n";
  }
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

namespace {
// std::cin and C's stdin (scanf, getchar, fgets) in a cell. The kernel's own fd 0 has nothing to
// read, so a cell's `std::cin >> x` found the end of the input at once, with no word said. Now a
// read that finds nothing left asks the notebook for a line, as Python's input() does: the box
// under the cell, whose line (with its newline) is what the cell reads next; an empty answer is
// the end of the input. Each cell starts with nothing left over from the last, and with the end
// of the input forgotten (begin_cell_input). There is no line to have, and the read finds
// the end of the input, with a note in the cell's stderr saying why, when: the notebook did not
// allow input for this request (nbclient and nbconvert send allow_stdin false); the read
// is in a thread the cell started (only the cell's own thread may talk to the notebook); or the
// cell has ended.
bool g_input_note_given = false;

std::string notebook_line() {
  if (g_kernel == nullptr || getpid() != g_kernel_pid) return "";
  return g_kernel->ask_for_input();
}

class NotebookInput : public std::streambuf {
 public:
  void discard() { setg(nullptr, nullptr, nullptr); }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    line_ = notebook_line();
    if (line_.empty()) return traits_type::eof();
    setg(line_.data(), line_.data(), line_.data() + line_.size());
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::string line_;
};
NotebookInput g_cin_buffer;

std::string g_stdin_left;  // C's stdin: the part of the last line its buffer has not taken
ssize_t read_stdin(void*, char* buffer, std::size_t size) {
  if (g_stdin_left.empty()) g_stdin_left = notebook_line();
  const std::size_t n = std::min(size, g_stdin_left.size());
  std::memcpy(buffer, g_stdin_left.data(), n);
  g_stdin_left.erase(0, n);
  return static_cast<ssize_t>(n);
}

// At a cell's start: nothing left over from the last cell, and no end of input remembered.
void begin_cell_input() {
  g_input_note_given = false;
  g_cin_buffer.discard();
  std::cin.clear();
  g_stdin_left.clear();
  __fpurge(stdin);
  clearerr(stdin);
}

void input_note(const std::string& why, const std::string& instead) {
  if (g_input_note_given) return;
  g_input_note_given = true;
  std::fprintf(stderr,
               "[xenc-kernel] The cell read from std::cin (or stdin), but %s, so the read found "
               "the end of the input (std::cin's fail() is true, scanf returns EOF). %s\n",
               why.c_str(), instead.c_str());
}
}  // namespace

void CellInterpreter::configure_impl() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  clang_ = make_clang_interpreter();
  // a cell's exit() ends the cell, not the kernel (kExitJump), and its std::thread,
  // pthread_create and thrd_create give the thread a signal stack (cell_start_thread,
  // cell_pthread_create, cell_thrd_create): the
  // cells' calls link to ours, defined in the JIT's own library,
  // which it searches before this process's symbols
  auto jit = clang_->getExecutionEngine();
  if (!jit) throw std::runtime_error("clang: " + llvm::toString(jit.takeError()));
  llvm::orc::SymbolMap ours;
  const auto flags = llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable;
  for (const auto& [name, fn] : {std::pair<const char*, void (*)(int)>{"exit", cell_exit},
                                 {kExitC, cell_immediate_exit<kExitC>},
                                 {kExitPosix, cell_immediate_exit<kExitPosix>},
                                 {"quick_exit", cell_quick_exit}})
    ours[jit->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn), flags};
  ours[jit->mangleAndIntern(kTlsAddress)] = {llvm::orc::ExecutorAddr::fromPtr(&cell_tls_address),
                                             flags};
  ours[jit->mangleAndIntern(kStartThread)] = {llvm::orc::ExecutorAddr::fromPtr(&cell_start_thread),
                                              flags};
  ours[jit->mangleAndIntern("pthread_create")] = {
      llvm::orc::ExecutorAddr::fromPtr(&cell_pthread_create), flags};
  ours[jit->mangleAndIntern("thrd_create")] = {llvm::orc::ExecutorAddr::fromPtr(&cell_thrd_create),
                                               flags};
  if (auto err = jit->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(ours))))
    throw std::runtime_error("clang: " + llvm::toString(std::move(err)));
  stub_undefined_functions(*jit);
  g_kernel = this;
  // From now on a crash in a cell's code, or in a thread the cells started, ends the cell or that
  // thread, not the kernel (on_signal); on_terminate names the exception that nobody caught.
  g_kernel_pid = getpid();
  set_cell_handlers(true);
  std::set_terminate(on_terminate);
  // std::cin and C's stdin ask the notebook for input (NotebookInput, read_stdin)
  std::cin.rdbuf(&g_cin_buffer);
  if (FILE* notebook_stdin = fopencookie(nullptr, "r", {read_stdin, nullptr, nullptr, nullptr}))
    stdin = notebook_stdin;
  if (kernel_server() != nullptr)
    kernel_server()->set_input_cancelled([] { return g_interrupt_pending != 0; });
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
  if (capture_.truncated() && !truncation_reported_) {
    truncation_reported_ = true;
    const std::size_t mb = capture_.limit() >> 20;
    publish_stream("stderr", "\n[output truncated after " + std::to_string(mb) +
                                 " MB: the rest of this cell's output is dropped. Print less, or "
                                 "start Jupyter with XENC_KERNEL_OUTPUT_MB set higher]\n");
  }
}

std::string CellInterpreter::ask_for_input() {
  if (!pthread_equal(pthread_self(), g_cell_thread) || !g_cell_running) {
    input_note(
        "only the cell's own thread can ask the notebook for input, while the cell runs "
        "(not a thread it started, nor after it ended)",
        "Read the input in the cell's own code, and pass it to the thread.");
    return "";
  }
  if (!allow_stdin_ || kernel_server() == nullptr) {
    input_note(
        "the notebook did not allow input for this cell (as when it runs under nbconvert "
        "or a script)",
        "Give the value in the cell instead.");
    return "";
  }
  // what the cell printed so far (a prompt without its newline too) comes before the box
  std::cout.flush();
  std::fflush(nullptr);
  {
    std::lock_guard<std::mutex> lock(publish_mutex_);
    send_streams(false);
  }
  // An Interrupt while the notebook's answer is awaited must not jump out of ZeroMQ's wait: it is
  // held (as outside the cell's code) and ends the wait (InputCancelled), then lands here.
  const sig_atomic_t in_user_code = g_in_user_code;
  g_in_user_code = 0;
  std::string value;
  bool answered = false;
  register_input_handler([&](const std::string& v) {
    value = v;
    answered = true;
  });
  try {
    input_request("", false);
  } catch (const InputCancelled&) {
  }
  register_input_handler(nullptr);
  g_in_user_code = in_user_code;
  if (g_interrupt_pending) {
    g_interrupt_pending = 0;
    siglongjmp(g_cell_target, SIGINT);
  }
  // an empty answer (Enter in an empty box) is the end of the input, as Ctrl-D at a terminal: it
  // ends a loop that reads until the input ends (while (std::cin >> x))
  return answered && !value.empty() ? value + "\n" : "";
}

void CellInterpreter::publish_bundle(const nl::json& bundle, bool is_result) {
  std::lock_guard<std::mutex> lock(publish_mutex_);
  send_streams(false);  // the text printed before the bundle comes before it
  if (is_result)
    publish_execution_result(execution_count_, bundle, nl::json::object());
  else
    display_data(bundle, nl::json::object(), nl::json::object());
}

namespace {
// What to do when clang could not link a cell: "Symbols not found: [ _Z1fv ]" is a function or
// variable declared but defined nowhere. The names are demangled (f()).
std::string linking_advice(const std::string& what) {
  std::string names;
  const std::regex symbol("(_Z[A-Za-z0-9_]+)");
  for (auto m = std::sregex_iterator(what.begin(), what.end(), symbol); m != std::sregex_iterator();
       ++m)
    names += (names.empty() ? "" : ", ") + demangled(m->str().c_str());
  // clang 19 keeps the unit it failed to link, and looks up its initialisers again with every
  // later cell, which then fails too ("Failed to materialize symbols")
  const std::string restart =
      " clang cannot link later cells after a cell it failed to link: run Kernel > Restart, then "
      "the cells above this one.";
  // a symbol an earlier cell defined (an explicit specialization of a function template, run
  // again after its template): the JIT refuses the unit, and later cells link as before
  if (what.find("Duplicate definition of symbol") != std::string::npos)
    return "An earlier cell already defined " + names +
           ", and the JIT keeps one definition of each, so this cell did not run; what earlier "
           "cells defined is still there. To change it, put it in one cell with what it belongs "
           "to (the template of a specialization) and run that cell.";
  if (what.find("Symbols not found") == std::string::npos)
    return "clang could not link the cell, so it did not run (if an earlier cell failed to link, "
           "every later one fails too)." +
           restart;
  return "The cell uses " + (names.empty() ? std::string("a function or variable") : names) +
         ", declared but defined nowhere: define it (in this cell or one above), or include the "
         "header that does." +
         restart;
}

// The error reply for a cell that did not compile: clang's message (from its stderr text), the
// first error as evalue, and what to do.
nl::json compile_error_reply(const std::string& stderr_text, const std::string& what) {
  std::vector<std::string> trace = lines_of(compiler_message(stderr_text));
  std::string first_error = what;
  for (const auto& l : trace)
    if (l.find("error:") != std::string::npos) {
      first_error = l.substr(l.find("error:") + 7);
      break;
    }
  if (trace.empty()) trace.push_back(what);
  // `return 0;` pasted from a main(): the statements run in a function of the kernel's
  if (first_error.find("'(the cell's statements)' should not return a value") != std::string::npos)
    trace.push_back(
        "A cell's statements are not inside a function of yours, so a return with a value has "
        "nothing to return to: remove the return (a cell ends after its last line), or put the "
        "code in a function and call it.");
  trace.push_back(
      "The cell did not compile, so it changed nothing: what earlier cells defined is "
      "still there. Fix the line the error names and run the cell again.");
  return error_reply("CompileError", first_error, trace);
}

// A compile error "redefinition of 'add1<int>'": an explicit specialization an earlier cell
// defined. It belongs to its template, which holds one definition of it, so it cannot be replaced
// alone; with its template, in one cell, both are (the template is replaced, and the cell's
// specialization is the new template's). The error then says so.
void add_specialization_hint(nl::json& failed) {
  if (failed.is_null() || failed["ename"] != "CompileError") return;
  static const std::regex redefined(R"(redefinition of '(([A-Za-z_][A-Za-z_0-9:]*)<[^']*>)')");
  std::smatch m;
  const std::string evalue = failed["evalue"].get<std::string>();
  if (!std::regex_search(evalue, m, redefined)) return;
  nl::json& trace = failed["traceback"];
  trace.insert(trace.end() - 1,
               m[1].str() + " is a specialization of " + m[2].str() +
                   " that an earlier cell defined, and a template holds one definition of each "
                   "specialization. Put it in one cell with the template " +
                   m[2].str() + " and run that cell: both are then replaced.");
}
}  // namespace

namespace {
// The clang name of `name`: an identifier ("f"), or an operator ("operator<<").
clang::DeclarationName declaration_name(clang::ASTContext& context, const std::string& name) {
  if (name.rfind("operator", 0) == 0 && name.size() > 8 &&
      !std::isalnum(static_cast<unsigned char>(name[8])) && name[8] != '_') {
    std::string symbol = name.substr(8);
    symbol.erase(std::remove(symbol.begin(), symbol.end(), ' '), symbol.end());
    for (int k = clang::OO_None + 1; k < clang::NUM_OVERLOADED_OPERATORS; ++k) {
      const auto op = static_cast<clang::OverloadedOperatorKind>(k);
      if (symbol == clang::getOperatorSpelling(op))
        return context.DeclarationNames.getCXXOperatorName(op);
    }
  }
  return clang::DeclarationName(&context.Idents.get(name));
}

// The top level and the top-level namespaces named `namespaces` (each of their blocks).
std::vector<clang::DeclContext*> scopes_of(clang::ASTContext& context,
                                           const std::vector<std::string>& namespaces) {
  clang::TranslationUnitDecl* tu = context.getTranslationUnitDecl();
  std::vector<clang::DeclContext*> scopes = {tu};
  for (const auto& ns : namespaces)
    for (clang::NamedDecl* d : tu->lookup(clang::DeclarationName(&context.Idents.get(ns))))
      if (auto* n = llvm::dyn_cast<clang::NamespaceDecl>(d)) scopes.push_back(n);
  return scopes;
}

// What makes two declarations of one name in one scope the same entity (or a clash): a
// function's parameter types (not its return type: two functions that differ only in it cannot
// both be declared, and the linker's name of a function is made of its parameters); any other
// declaration is one entity per name.
std::string entity_key(const clang::NamedDecl* d) {
  const clang::FunctionDecl* f = llvm::dyn_cast<clang::FunctionDecl>(d);
  std::string key = "function (";
  if (const auto* t = llvm::dyn_cast<clang::FunctionTemplateDecl>(d)) {
    f = t->getTemplatedDecl();
    key = "template (";
  }
  if (f == nullptr) return "entity";
  for (const clang::ParmVarDecl* p : f->parameters())
    key += p->getType().getCanonicalType().getAsString() + ", ";
  if (const auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(f))
    key += m->getMethodQualifiers().getAsString();
  return key + ")";
}

void remove_from_lookup(clang::DeclContext* context, clang::NamedDecl* decl) {
  clang::StoredDeclsMap* map = context->getPrimaryContext()->getLookupPtr();
  if (map == nullptr) return;
  auto entry = map->find(decl->getDeclName());
  if (entry == map->end()) return;
  entry->second.remove(decl);
  if (entry->second.isNull()) map->erase(entry);
}
}  // namespace

// Shadowing (as cling's): the declarations of `shadow.names` that earlier cells made, at the top
// level and in the namespaces `shadow.namespaces`, are taken out of name lookup, so the cell's
// new ones (in a namespace of the cell's own, see wrap_statements) are the ones later cells see.
// The earlier ones stay compiled: code compiled before keeps calling them. Overloads in
// `shadow.keep` stay (see trial_compile). Returns what it hid, with the scope it was found in.
CellInterpreter::Hidden CellInterpreter::hide_earlier(const Shadow& shadow) {
  Hidden hidden;
  clang::CompilerInstance& ci =
      *const_cast<clang::CompilerInstance*>(clang_->getCompilerInstance());
  clang::Sema& sema = ci.getSema();
  clang::ASTContext& context = ci.getASTContext();
  for (clang::DeclContext* scope : scopes_of(context, shadow.namespaces))
    for (const auto& name : shadow.names) {
      const clang::DeclarationName id = declaration_name(context, name);
      auto found = scope->lookup(id);
      std::vector<clang::NamedDecl*> decls(found.begin(), found.end());
      for (clang::NamedDecl* d : decls) {
        if (shadow.keep.count(d) != 0) continue;
        hidden.emplace_back(scope, d);
        remove_from_lookup(scope, d);
        for (clang::DeclContext* c = d->getDeclContext(); c != nullptr && c != scope;
             c = c->getParent())
          remove_from_lookup(c, d);
        bool on_chain = false;
        for (auto it = sema.IdResolver.begin(id); it != sema.IdResolver.end(); ++it)
          on_chain = on_chain || *it == d;
        if (on_chain) sema.IdResolver.RemoveDecl(d);
        if (sema.TUScope != nullptr) sema.TUScope->RemoveDecl(d);
      }
    }
  return hidden;
}

// The names among `names` that now have two declarations of one entity in `scope` (two variables
// or classes, or two functions of one type): a cell redefined a name an earlier cell's shadowing
// had moved into a namespace of its own, where clang does not call it a redefinition.
std::vector<std::string> CellInterpreter::conflicts(const std::vector<std::string>& names,
                                                    const std::vector<std::string>& namespaces) {
  clang::ASTContext& context =
      const_cast<clang::CompilerInstance*>(clang_->getCompilerInstance())->getASTContext();
  const std::vector<clang::DeclContext*> scopes = scopes_of(context, namespaces);
  std::vector<std::string> out;
  for (const auto& name : names)
    for (clang::DeclContext* scope : scopes) {
      std::set<std::string> keys;
      bool twice = false;
      for (clang::NamedDecl* d : scope->lookup(declaration_name(context, name))) {
        twice = twice || !keys.insert(entity_key(d)).second;
        // a declaration in the scope itself (not a cell's namespace) of an entity hidden there:
        // a second definition of one linker symbol, which clang cannot see
        for (const auto& [where, old] : hidden_)
          twice = twice ||
                  (where == scope && old != d && d->getDeclContext()->getRedeclContext() == scope &&
                   old->getDeclContext()->getRedeclContext() == scope &&
                   old->getDeclName() == d->getDeclName() && entity_key(old) == entity_key(d));
      }
      if (twice) {
        out.push_back(name);
        break;
      }
    }
  return out;
}

// Whether `qualified` ("Q", "geo::Pt") names a class in the interpreter (else a namespace, or
// nothing it knows).
bool CellInterpreter::is_class(const std::string& qualified) {
  clang::ASTContext& context =
      const_cast<clang::CompilerInstance*>(clang_->getCompilerInstance())->getASTContext();
  clang::DeclContext* scope = context.getTranslationUnitDecl();
  clang::NamedDecl* found = nullptr;
  for (std::size_t begin = 0; scope != nullptr && begin <= qualified.size();) {
    std::size_t end = qualified.find("::", begin);
    if (end == std::string::npos) end = qualified.size();
    const std::string part = qualified.substr(begin, end - begin);
    const auto result = scope->lookup(clang::DeclarationName(&context.Idents.get(part)));
    found = result.empty() ? nullptr : result.front();
    scope = found == nullptr ? nullptr : llvm::dyn_cast<clang::DeclContext>(found);
    begin = end + 2;
  }
  return found != nullptr && llvm::isa<clang::RecordDecl>(found);
}

namespace {
// What a compiled cell uses that nothing defines, by name: a variable, or a function that is no
// C++ function (extern "C"). The JIT would refuse the cell and then every later one
// ("Symbols not found"), until a restart. (A C++ function links to a stub instead:
// stub_undefined_functions.) Asked in the throwaway copy, before the cell reaches the kernel.
std::vector<std::string> defined_nowhere(
    const clang::Interpreter& interpreter, const llvm::Module& module,
    std::vector<std::pair<std::string, std::size_t>>& variables) {
  std::vector<std::string> names;
  const auto check = [&](const llvm::GlobalValue& g) {
    if (!g.isDeclaration() || g.hasExternalWeakLinkage() || g.isThreadLocal()) return;
    const llvm::StringRef name = g.getName();
    if (name.empty() || name.starts_with("llvm.")) return;
    if (llvm::isa<llvm::Function>(g) && is_cpp_function_name(name)) return;  // a stub's
    auto found = interpreter.getSymbolAddress(name);
    if (found) return;
    llvm::consumeError(found.takeError());
    // what the JIT's own library defines hidden, which the cell links to all the same (ORC's
    // atexit, as glibc's lives in libc_nonshared.a, which no process exports)
    if (g_undefined.jit != nullptr) {
      llvm::orc::ExecutionSession& session = g_undefined.jit->getExecutionSession();
      auto hidden = session.lookup(
          {{&g_undefined.jit->getMainJITDylib(), llvm::orc::JITDylibLookupFlags::MatchAllSymbols}},
          session.intern(name));
      if (hidden) return;
      llvm::consumeError(hidden.takeError());
    }
    // a variable, but no vtable, typeinfo or guard: reserved (reserve_variable)
    if (const auto* v = llvm::dyn_cast<llvm::GlobalVariable>(&g);
        v != nullptr && !name.starts_with("_ZT") && !name.starts_with("_ZGV")) {
      variables.emplace_back(
          name.str(), module.getDataLayout().getTypeAllocSize(v->getValueType()).getFixedValue());
      return;
    }
    names.push_back(name.str());
  };
  for (const llvm::Function& f : module.functions()) check(f);
  for (const llvm::GlobalVariable& v : module.globals()) check(v);
  return names;
}
}  // namespace

namespace {
// What cells define with internal linkage (`static int n = 0;` at the top level, a static
// function, an anonymous namespace's variable; and the static locals of such functions): clang 19
// emits such a definition again in each later cell that uses it, as a new copy. A later cell
// then read `n` as first initialised, not as the earlier cells left it. So the first cell's
// copy becomes the only one: its symbols are made visible to the JIT (external; functions
// linkonce), and in a later cell's module the variable becomes a declaration of it, without the
// dynamic initialisation that would run again (its __cxx_global_var_init), and the function a
// linkonce copy that the JIT drops for the first one. Every C++ name (_Z...) of internal
// linkage: _ZL (a static name), _ZN12_GLOBAL__N_ (an anonymous namespace), _ZZL and _ZGVZL (a
// static function's static local and its guard), a redefinition's (in the kernel's inline
// namespace), a lambda's at the top level (clang numbers them $_0, $_1, ... across the cells);
// not the kernel's wrappers around the cell.
std::set<std::string> g_internal_defined;  // the variables a linked cell defined first

bool shared_internal_name(llvm::StringRef name) {
  if (!name.starts_with("_Z")) return false;
  for (const char* wrapper :
       {"__xenc_begin_", "__xenc_end_", "__xenc_run_", "__xenc_ran_", "__xenc_line_"})
    if (name.contains(wrapper)) return false;
  return true;
}

// Returns the variables this module defines first (to note once it linked).
std::vector<std::string> share_internal_definitions(llvm::Module& module) {
  std::vector<std::string> first;
  std::set<llvm::Function*> reinitialisers;
  for (llvm::GlobalVariable& g : module.globals()) {
    if (!g.hasInternalLinkage() || !shared_internal_name(g.getName())) continue;
    if (g_internal_defined.count(g.getName().str()) == 0) {
      g.setLinkage(llvm::GlobalValue::ExternalLinkage);
      first.push_back(g.getName().str());
      continue;
    }
    for (llvm::User* user : g.users())
      if (auto* i = llvm::dyn_cast<llvm::Instruction>(user))
        if (i->getFunction()->getName().starts_with("__cxx_global_var_init"))
          reinitialisers.insert(i->getFunction());
    g.setInitializer(nullptr);
    g.setLinkage(llvm::GlobalValue::ExternalLinkage);
  }
  for (llvm::Function& f : module.functions()) {
    if (f.isDeclaration() || !f.hasInternalLinkage() || !shared_internal_name(f.getName()))
      continue;
    f.setLinkage(llvm::GlobalValue::LinkOnceODRLinkage);  // the first cell's copy stays
  }
  // an earlier cell's variable is initialised once, there
  for (llvm::Function* f : reinitialisers) {
    f->deleteBody();
    f->setLinkage(llvm::GlobalValue::InternalLinkage);
    llvm::IRBuilder<>(llvm::BasicBlock::Create(module.getContext(), "entry", f)).CreateRetVoid();
  }
  return first;
}
}  // namespace

namespace {
// What earlier cells used of a template that this cell defines: `template <class T> T tw(T);`
// then `int use(int x) { return tw(x); }` in one cell, tw's body in a later one, as in a C++
// file. clang instantiates tw<int> at the end of the cell that used it, where it had no body, and
// never tries again, so tw<int> would stay a stub that throws (stub_undefined_functions) also
// after the body came; a static data member of a class template, or a variable template's
// instance (`template <class T> extern T pi;` used as pi<double>), stayed a variable no cell
// defined (reserve_variable). The uses that clang marked used and left without a definition: of
// the function and variable templates the cell defines, and of the members of class templates it
// defines out of their class (functions, member templates, static data members).
struct Uninstantiated {
  std::vector<clang::FunctionDecl*> functions;
  std::vector<clang::VarDecl*> variables;  // variable templates' instances, class templates'
                                           // static data members
};

// The specialisations of the class template whose member `d` is (none if it is no such member).
std::vector<clang::ClassTemplateSpecializationDecl*> owner_specializations(const clang::Decl* d) {
  const auto* record = llvm::dyn_cast<clang::CXXRecordDecl>(d->getDeclContext());
  const clang::ClassTemplateDecl* owner =
      record != nullptr ? record->getDescribedClassTemplate() : nullptr;
  if (owner == nullptr) return {};
  return {owner->specializations().begin(), owner->specializations().end()};
}

void collect_uninstantiated(clang::DeclContext* context, Uninstantiated& out) {
  const auto take = [&out](clang::FunctionDecl* f) {
    if (f->getTemplateSpecializationKind() == clang::TSK_ImplicitInstantiation &&
        f->isUsed(false) && !f->isDefined())
      out.functions.push_back(f);
  };
  const auto same = [](const clang::Decl* a, const clang::Decl* b) {
    return a != nullptr && b != nullptr && a->getCanonicalDecl() == b->getCanonicalDecl();
  };
  for (clang::Decl* d : context->decls()) {
    if (auto* inner = llvm::dyn_cast<clang::NamespaceDecl>(d)) {
      collect_uninstantiated(inner, out);
    } else if (auto* block = llvm::dyn_cast<clang::LinkageSpecDecl>(d)) {
      collect_uninstantiated(block, out);
    } else if (auto* t = llvm::dyn_cast<clang::FunctionTemplateDecl>(d)) {
      if (!t->isThisDeclarationADefinition()) continue;
      for (clang::FunctionDecl* f : t->specializations()) take(f);
      // a member template of a class template: its copy in each of the class's specialisations
      for (clang::ClassTemplateSpecializationDecl* c : owner_specializations(t))
        for (clang::Decl* member : c->decls())
          if (auto* copy = llvm::dyn_cast<clang::FunctionTemplateDecl>(member);
              copy != nullptr && same(copy->getInstantiatedFromMemberTemplate(), t))
            for (clang::FunctionDecl* f : copy->specializations()) take(f);
    } else if (auto* t = llvm::dyn_cast<clang::VarTemplateDecl>(d)) {
      if (t->getTemplatedDecl()->isThisDeclarationADefinition() != clang::VarDecl::Definition)
        continue;
      for (clang::VarTemplateSpecializationDecl* v : t->specializations())
        if (v->getTemplateSpecializationKind() == clang::TSK_ImplicitInstantiation &&
            v->isUsed(false) && v->getDefinition() == nullptr)
          out.variables.push_back(v);
    } else if (auto* m = llvm::dyn_cast<clang::CXXMethodDecl>(d)) {
      if (!m->doesThisDeclarationHaveABody()) continue;
      for (clang::ClassTemplateSpecializationDecl* c : owner_specializations(m))
        for (clang::CXXMethodDecl* member : c->methods())
          if (same(member->getInstantiatedFromMemberFunction(), m)) take(member);
    } else if (auto* v = llvm::dyn_cast<clang::VarDecl>(d)) {
      if (!v->isStaticDataMember() ||
          v->isThisDeclarationADefinition() != clang::VarDecl::Definition)
        continue;
      for (clang::ClassTemplateSpecializationDecl* c : owner_specializations(v))
        for (clang::Decl* member : c->decls())
          if (auto* copy = llvm::dyn_cast<clang::VarDecl>(member);
              copy != nullptr && same(copy->getInstantiatedFromStaticDataMember(), v) &&
              copy->getTemplateSpecializationKind() == clang::TSK_ImplicitInstantiation &&
              copy->isUsed(false) && copy->getDefinition() == nullptr)
            out.variables.push_back(copy);
    }
  }
}

// Instantiates those uses as explicit instantiations (as `template int tw<int>(int);` would: the
// code of each is emitted, not deferred to a later use), compiled as a unit of their own. Returns
// it, or null if there were none. Clang's errors in them fail the unit (trial_compile shows them).
llvm::Expected<clang::PartialTranslationUnit*> instantiate_earlier_uses(
    clang::Interpreter& interpreter, clang::PartialTranslationUnit& cell) {
  Uninstantiated uses;
  if (cell.TUPart != nullptr) collect_uninstantiated(cell.TUPart, uses);
  if (uses.functions.empty() && uses.variables.empty()) return nullptr;
  clang::Sema& sema =
      const_cast<clang::CompilerInstance*>(interpreter.getCompilerInstance())->getSema();
  for (clang::FunctionDecl* f : uses.functions) {
    const clang::SourceLocation at = f->getPointOfInstantiation();
    f->setTemplateSpecializationKind(clang::TSK_ExplicitInstantiationDefinition, at);
    sema.InstantiateFunctionDefinition(at, f, /*Recursive=*/true, /*DefinitionRequired=*/false,
                                       /*AtEndOfTU=*/true);
  }
  for (clang::VarDecl* v : uses.variables) {
    const clang::SourceLocation at = v->getPointOfInstantiation();
    v->setTemplateSpecializationKind(clang::TSK_ExplicitInstantiationDefinition, at);
    sema.InstantiateVariableDefinition(at, v, /*Recursive=*/true, /*DefinitionRequired=*/false,
                                       /*AtEndOfTU=*/true);
  }
  auto unit = interpreter.Parse("");  // the code they made, as a unit of its own
  if (!unit) return unit.takeError();
  return &*unit;
}
}  // namespace

namespace {
// What the trial copy wrote after `marker` ("\x03undefined "), one line each.
std::vector<std::string> marked_lines(const std::string& text, const std::string& marker) {
  std::vector<std::string> lines;
  for (std::size_t at = text.find(marker); at != std::string::npos;
       at = text.find(marker, at + 1)) {
    const std::size_t begin = at + marker.size(), end = text.find('\n', begin);
    lines.push_back(text.substr(begin, end == std::string::npos ? end : end - begin));
  }
  return lines;
}

// A cell's last expression as the statement that shows its value (see prelude.hpp).
std::string showing(const std::string& expression) {
  return "xenc_kernel::show_result(((" + expression + "\n), xenc_kernel::no_value{}));";
}
}  // namespace

// Compiles `code` in a forked copy of the kernel (a complete copy of the interpreter), which then
// ends. clang 19 undoes a cell that fails to compile imperfectly: an error in a cell that
// redeclares `f` removed the earlier, working `f`. Compiled in the copy first, a cell that fails
// never reaches the real interpreter. Returns null if it compiles, else the error reply.
nl::json CellInterpreter::trial_compile(const std::string& code, Shadow* shadow) {
  earlier_uses_failed_ = false;
  note_input(*clang_, code);  // the copy's Parse has the number the kernel's next one will have
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return nullptr;  // no trial: compile for real
  std::cout.flush();
  std::fflush(nullptr);
  pid_t child = fork();
  if (child < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return nullptr;
  }
  if (child == 0) {  // the copy: compile, write clang's messages to the pipe, exit 0 if it compiled
    close(pipe_fds[0]);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(pipe_fds[1], 2);
    set_cell_handlers(false);
    bool ok = false;
    try {
      Hidden hidden;
      if (shadow != nullptr) hidden = hide_earlier(*shadow);
      auto compiled = clang_->Parse(code);
      ok = static_cast<bool>(compiled);
      if (!ok) llvm::consumeError(compiled.takeError());
      if (ok) {  // clang's errors in what earlier cells used of the cell's templates: exit 3
        auto uses = instantiate_earlier_uses(*clang_, *compiled);
        if (!uses) {
          llvm::consumeError(uses.takeError());
          _exit(3);
        }
      }
      // an earlier overload of a name the cell redefined, of a type the cell did not define: it
      // stays (the copy's pointers are the kernel's: the copy is a fork)
      if (ok && shadow != nullptr && shadow->report_keep)
        for (const auto& [scope, d] : hidden) {
          if (entity_key(d) == "entity") continue;
          bool redefined = false;
          for (clang::NamedDecl* now : scope->lookup(d->getDeclName()))
            redefined = redefined || entity_key(now) == entity_key(d);
          if (!redefined) std::fprintf(stderr, "\x02keeps %p\n", static_cast<void*>(d));
        }
      // what the cell uses and nothing defines: tell the kernel (a line on the pipe)
      if (ok && compiled->TheModule) {
        std::vector<std::pair<std::string, std::size_t>> variables;
        for (const std::string& name : defined_nowhere(*clang_, *compiled->TheModule, variables))
          std::fprintf(stderr, "\x03undefined %s\n", name.c_str());
        for (const auto& [name, bytes] : variables)
          std::fprintf(stderr, "\x05reserve %zu %s\n", bytes, name.c_str());
      }
      // a name shadowed before, now declared twice: tell the kernel (a line on the pipe)
      if (ok && shadow == nullptr)
        for (const auto& name : conflicts(shadowed_names_, namespaces_opened(code)))
          std::fprintf(stderr, "\x01redeclares %s\n", name.c_str());
    } catch (...) {
    }
    _exit(ok ? 0 : 1);
  }
  close(pipe_fds[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && shadow != nullptr && shadow->report_keep) {
    const std::regex keeps("\x02keeps (0x[0-9a-f]+)");
    for (auto m = std::sregex_iterator(text.begin(), text.end(), keeps);
         m != std::sregex_iterator(); ++m)
      shadow->keep.insert(
          reinterpret_cast<clang::NamedDecl*>(std::stoull((*m)[1].str(), nullptr, 16)));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    // what nothing defines, and the variables to reserve (past kMaxReserved, undefined too)
    std::vector<std::string> missing = marked_lines(text, "\x03undefined ");
    for (const std::string& line : marked_lines(text, "\x05reserve ")) {
      const std::size_t space = line.find(' ');
      if (space == std::string::npos) continue;
      const std::string name = line.substr(space + 1);
      if (!reserve_variable(name, std::stoull(line.substr(0, space)))) missing.push_back(name);
    }
    std::string undefined;
    bool scoped = false;  // a name with a scope (_ZN...)
    for (const std::string& name : missing) {
      undefined += (undefined.empty() ? "" : ", ") + demangled(name.c_str());
      scoped = scoped || name.rfind("_ZN", 0) == 0;
    }
    if (!undefined.empty()) {
      std::vector<std::string> trace = {
          "LinkError: the cell uses " + undefined +
              ", declared but defined nowhere (no cell above defines it, and no library the "
              "kernel loaded does).",
          "The cell did not run, so it changed nothing: what earlier cells defined is still "
          "there. Define it in this cell or one above (a variable: `int name = 0;` without "
          "`extern`), or include the header that does, and run the cell again."};
      // a class's static data member, declared in its class and used: its definition goes in
      // the same cell (the cell that declares the class is refused, class and all)
      if (scoped)
        trace.push_back(
            "If it is a class's static data member (static int count; in the class): that is "
            "only a declaration, and C++ wants one definition outside the class. Put it in the "
            "cell that defines "
            "the class, after the class (int Counter::count = 0;), or declare the member static "
            "inline int count = 0; inside the class (C++17), which needs nothing more.");
      // a class whose virtual function is declared and defined nowhere has no vtable: C++
      // emits it beside the first such function's body (the key function)
      if (undefined.find("vtable for ") != std::string::npos ||
          undefined.find("typeinfo for ") != std::string::npos)
        trace.push_back(
            "A vtable or typeinfo is made where the class's first virtual function that is not "
            "defined inside the class gets its body: define every virtual function of the "
            "class (inside it, or in the same cell), or make it pure (= 0).");
      return error_reply("LinkError", undefined + ": declared, but defined nowhere", trace);
    }
    const std::regex redeclares("\x01redeclares ([^\n]+)");
    std::vector<std::string> names;
    for (auto m = std::sregex_iterator(text.begin(), text.end(), redeclares);
         m != std::sregex_iterator(); ++m)
      names.push_back((*m)[1]);
    if (names.empty()) return nullptr;
    // as clang's own message would say, so that the cell is shadowed (execute_request_impl)
    std::vector<std::string> trace;
    for (const auto& n : names) trace.push_back("redefinition of '" + n + "'");
    return error_reply("CompileError", trace.front(), trace);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
    earlier_uses_failed_ = true;  // not a redefinition: replace_earlier leaves it
    nl::json reply = compile_error_reply(text, "the cell did not compile");
    reply["traceback"].insert(
        reply["traceback"].end() - 1,
        "The cell gives a body to a template that an earlier cell used while it had none (the "
        "note \"requested here\" says where, and for which types). Now that it has a body, "
        "clang compiles that use, and the body does not compile for those types.");
    return reply;
  }
  if (WIFEXITED(status)) return compile_error_reply(text, "the cell did not compile");
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  const std::string name =
      sig ? sigabbrev_np(sig) ? std::string("SIG") + sigabbrev_np(sig) : "a signal" : "?";
  // clang 19 can crash undoing a cell with an error (one that also defines a lambda variable):
  // the error it found first is the student's to fix
  if (compiler_message(text).find(": error: ") != std::string::npos) {
    nl::json reply = compile_error_reply(text, "the cell did not compile");
    reply["traceback"].insert(reply["traceback"].end() - 1,
                              "(clang then crashed (" + name +
                                  ") in a throwaway copy of the kernel, undoing the cell; the "
                                  "kernel is intact.)");
    return reply;
  }
  return error_reply(
      "CompilerCrash", "clang crashed compiling this cell (" + name + ")",
      {"clang crashed compiling this cell (" + name +
           "), in a throwaway copy of the kernel: nothing changed, the kernel and what earlier "
           "cells defined are intact.",
       "Rewrite the statement it stumbles on (for example, move it into a function) and run the "
       "cell again."});
}

// Compiles (first in a throwaway copy, see trial_compile), then runs, one piece of code. Returns
// null on success, else the error reply.
nl::json CellInterpreter::run(const std::string& code, Shadow* shadow) {
  nl::json trial = trial_compile(code, shadow);
  // with the earlier overloads it keeps, the cell may not compile (a call now ambiguous): then
  // without them
  if (!trial.is_null() && shadow != nullptr && !shadow->keep.empty()) {
    shadow->keep.clear();
    trial = trial_compile(code, shadow);
  }
  if (!trial.is_null()) return trial;
  if (shadow != nullptr) {
    const auto hidden = hide_earlier(*shadow);
    hidden_.insert(hidden_.end(), hidden.begin(), hidden.end());
  }
  note_input(*clang_, code);
  auto compiled = clang_->Parse(code);  // clang::Interpreter::Parse: compile to a unit of IR
  if (!compiled) {
    std::string what = llvm::toString(compiled.takeError());  // "Parsing failed."
    return compile_error_reply(capture_.take_stderr(), what);
  }
  clang::PartialTranslationUnit& unit = *compiled;
  auto instantiated = instantiate_earlier_uses(*clang_, unit);
  if (!instantiated)  // (trial_compile found no error in them)
    return compile_error_reply(capture_.take_stderr(), llvm::toString(instantiated.takeError()));
  // atexit (ORC's own: glibc's is in no shared library) runs its function when the JIT ends
  // with the kernel, not when the cell ends
  if (unit.TheModule)
    for (const char* name : {"atexit", "at_quick_exit"})
      if (const llvm::Function* f = unit.TheModule->getFunction(name); f && !f->use_empty())
        std::fprintf(stderr,
                     "[xenc-kernel] %s: the function runs when the kernel shuts down (Kernel > "
                     "Shut Down, or Restart), not when this cell ends; its output is not shown.\n",
                     name);
  std::vector<std::string> defined_first;
  for (clang::PartialTranslationUnit* part : {*instantiated, &unit})
    if (part != nullptr && part->TheModule) {
      use_native_tls(*part->TheModule);
      define_reserved_variables(*part->TheModule);
      const auto first = share_internal_definitions(*part->TheModule);
      defined_first.insert(defined_first.end(), first.begin(), first.end());
    }
  // Run it (clang::Interpreter::Execute: JIT-link the unit, run its statements and
  // initialisers) with SIGINT unblocked and the crash signals caught (see g_cell_target); they
  // land back at sigsetjmp, mask restored. Meanwhile the forwarder sends the whole lines it
  // printed so far (started while SIGINT is still blocked, so its thread never takes the
  // Interrupt).
  // A thread that ends while the cell runs is said at once (the cell's error says more at its
  // end): a cell waiting for that thread's result (a future's get()) would wait for ever.
  forwarder_.start(
      [this, said = false]() mutable {
        std::lock_guard<std::mutex> lock(publish_mutex_);
        send_streams(true);
        if (said || g_threads_stopped.load() == 0) return;
        said = true;
        publish_stream("stderr",
                       "[xenc-kernel] A thread that a cell started has crashed or called exit(), "
                       "and the kernel ended it; the cell's error will say what it did. If the "
                       "cell waits for that thread's result (a future's get()), it waits for "
                       "ever: use Interrupt.\n");
      },
      [this] { capture_.enforce_limit(); });
  ensure_signal_stack();
  g_cell_thread = pthread_self();
  g_kernel_pid = getpid();
  g_in_user_code = 0;
  g_interrupt_pending = 0;
  g_unsafe_fault = 0;
  g_fault_address = nullptr;
  t_terminate_what[0] = '\0';
  xenc_kernel_line = 0;
  std::string exception_type, exception_what;
  llvm::Error failure = llvm::Error::success();
  const int signal_number = sigsetjmp(g_cell_target, 1);
  if (signal_number == 0) {
    // (an Interrupt that arrived while the cell compiled is still pending: it lands now, and
    // ends the cell when its code starts)
    g_cell_running = 1;
    set_interrupt_blocked(false);
    try {
      // the earlier cells' uses of the cell's templates first: they link, and run nothing
      if (*instantiated != nullptr) failure = clang_->Execute(**instantiated);
      if (!failure) failure = clang_->Execute(unit);
    } catch (const std::exception& e) {
      exception_type = demangled(typeid(e).name());
      exception_what = e.what();
    } catch (...) {
      exception_type = "ThrownValue";
      exception_what = thrown_non_exception() + ", thrown and not caught";
    }
    set_interrupt_blocked(true);
  }
  g_cell_running = 0;              // the handlers stay: a thread the cells started may still crash
  if (getpid() != g_kernel_pid) {  // a process the cell forked, ended by an exception
    std::cout.flush();
    std::fflush(nullptr);
    _exit(1);
  }
  g_in_user_code = 0;
  g_interrupt_pending = 0;
  forwarder_.stop();
  // the cell linked (it ran, or crashed or was interrupted as it ran): what it defined first is
  // the one copy from now on (share_internal_definitions)
  if (!failure) g_internal_defined.insert(defined_first.begin(), defined_first.end());
  // the line of the cell that ran last (each statement and declaration sets it): where a crash or
  // an Interrupt happened, as far as the kernel can tell without the cell's debug information
  const int line = xenc_kernel_line;
  const std::string at_line = line > 0 ? " at line " + std::to_string(line) +
                                             " of the cell (in that line, or in a "
                                             "function it called)"
                                       : "";
  if (signal_number == SIGINT) {
    std::fflush(nullptr);
    return error_reply("KeyboardInterrupt", "the cell was interrupted" + at_line,
                       {"KeyboardInterrupt: the cell was interrupted" + at_line + ".",
                        "What it did before the Interrupt stays done; the kernel is ready for "
                        "the next cell. If the cell runs too long, make it do less (fewer "
                        "steps, smaller tensors) and run it again."});
  }
  if (signal_number == kExitJump) {
    std::fflush(nullptr);
    const std::string call = g_exit_call + ("(" + std::to_string(g_exit_status) + ")");
    return error_reply(
        "SystemExit", "the cell called " + call + at_line,
        {"SystemExit: the cell called " + call + at_line + ".",
         "In a notebook, " + std::string(g_exit_call) +
             " would end the kernel and lose what every cell defined, so it ended "
             "only this cell: nothing after the call ran, and what earlier cells defined is still "
             "there.",
         "To start again from nothing, use Kernel > Restart."});
  }
  if (signal_number != 0) {
    std::fflush(nullptr);
    const std::string name = std::string("SIG") + sigabbrev_np(signal_number);
    if (g_unsafe_fault) {
      // not in the cell's code: in clang, linking the cell. Say so, then end the kernel.
      std::thread([] {
        std::this_thread::sleep_for(std::chrono::seconds(2));
        std::_Exit(70);
      }).detach();
      return error_reply(name, signal_meaning(signal_number) + ", inside the kernel's compiler",
                         {name + ": " + signal_meaning(signal_number),
                          "It happened while clang linked the cell, not in the cell's own code: "
                          "the kernel's state cannot be trusted, so the kernel ends now.",
                          "Run Kernel > Restart, then the cells above this one."});
    }
    // a variable no cell has defined yet (reserve_variable)
    if (const std::string variable =
            signal_number == SIGSEGV ? reserved_variable_at(g_fault_address) : std::string();
        !variable.empty())
      return error_reply(
          "VariableNotDefined", variable + " was used, but no cell has defined it" + at_line,
          {"VariableNotDefined: " + variable +
               " was used, but no cell has defined it: a cell declared it only.",
           "It was used" + (at_line.empty() ? " in the cell" : at_line) +
               "; the cell ran up to there.",
           "Define it in a cell (a class's static data member after its class: int "
           "Counter::count = 0;, or static inline in the class) and run that cell, then this one "
           "again; the kernel lives on, with what earlier cells defined."});
    std::vector<std::string> trace = {name + ": " + signal_meaning(signal_number)};
    if (signal_number == SIGABRT && t_terminate_what[0] != '\0')
      trace.push_back(std::string("It was ") + t_terminate_what + ".");
    trace.insert(trace.end(),
                 {"It happened" + (at_line.empty() ? " in the cell" : at_line) + ".",
                  "The cell stopped there; the kernel lives on, with what earlier cells "
                  "defined. What this cell changed before the crash stays changed.",
                  "Fix that line (or the function it calls) and run the cell again."});
    return error_reply(name, signal_meaning(signal_number) + at_line, trace);
  }
  if (failure) {
    std::string what = llvm::toString(std::move(failure));
    const std::string messages = compiler_message(capture_.take_stderr());
    std::vector<std::string> trace = lines_of(messages);
    trace.push_back(what);
    trace.push_back(linking_advice(messages + what));
    return error_reply("ExecutionError", what, trace);
  }
  if (!exception_type.empty()) {
    std::vector<std::string> trace = {exception_type + ": " + exception_what};
    if (!at_line.empty()) trace.push_back("It was thrown" + at_line + ".");
    if (exception_type == "ThrownValue")
      trace.push_back(
          "The cell threw a value that is not a std::exception (it has no what()), and nothing "
          "caught it. Throw an exception with a message instead (throw std::runtime_error(\"what "
          "went wrong\");, "
          "from <stdexcept>), or catch the value where it is thrown; the kernel lives on, with "
          "what earlier cells defined.");
    else if (exception_type == "xenc_kernel::function_not_defined")
      trace.push_back(
          "The cell ran up to that call. Give the function its body in a cell and run that "
          "cell (or include the header that defines it), then run this cell again; the kernel "
          "lives on, with what earlier cells defined.");
    else if (exception_type == "std::bad_alloc")
      trace.push_back(
          "The cell asked for more memory than the kernel may use (XENC_KERNEL_MEMORY_MIB, or "
          "three quarters of the machine's memory). The kernel lives on. Use smaller tensors, "
          "or start Jupyter with XENC_KERNEL_MEMORY_MIB set higher, and run the cell again.");
    else
      trace.push_back(
          "The exception ended the cell; the kernel is ready for the next one. Read its "
          "message, fix the call it names (its arguments' shapes or values), and run the cell "
          "again.");
    return error_reply(exception_type, exception_what, trace);
  }
  return nullptr;
}

nl::json CellInterpreter::execute_request_impl(int execution_counter, const std::string& code,
                                               bool /*silent*/, bool /*store_history*/,
                                               nl::json /*user_expressions*/, bool allow_stdin) {
  execution_count_ = execution_counter;
  // a cell that waited behind one that failed: it does not run (see kernel_server.hpp)
  if (kernel_server() != nullptr && kernel_server()->queued_behind_error()) {
    nl::json not_run = error_reply(
        "CellNotRun", "the cell did not run: a cell before it failed or was interrupted",
        {"This cell was waiting to run behind a cell that failed or was interrupted, so it did "
         "not run (Run All stops at the first error).",
         "Fix that cell, run it, then run this one again."});
    publish_execution_error(not_run["ename"], not_run["evalue"], not_run["traceback"]);
    return not_run;
  }
  g_kernel = this;
  allow_stdin_ = allow_stdin;
  g_cell_source = code;
  begin_cell_input();
  // a thread an earlier cell started, stopped after that cell ended: said before this cell runs
  if (ThreadStopReport stopped = take_thread_stops(); !stopped.summary.empty()) {
    std::string text = "[xenc-kernel] After the last cell ended, " + stopped.summary + ".";
    for (const auto& line : stopped.details) text += " " + line;
    publish_stream("stderr", text + " " + stopped.advice + " The kernel lives on.\n");
  }
  // A final expression without a semicolon is shown as the execute_result: it runs as
  //   xenc_kernel::show_result(((EXPRESSION), xenc_kernel::no_value{}));
  // where the comma yields no_value for a void expression (nothing shown).
  // The statements move into functions (wrap_statements), the expression with them, on its own
  // lines: the compiler's line numbers are the cell's.
  std::string source = code;
  if (blank_pragma_once(source))
    publish_stream("stderr",
                   "[xenc-kernel] The cell's #pragma once was skipped: it means \"include this "
                   "header once\", and a cell is no header (each run compiles it again, and "
                   "replaces what it defined).\n");
  CellParts parts = split_trailing_expression(source);
  std::string cell = parts.statements;
  if (!parts.expression.empty()) cell += showing(parts.expression);
  // (an Interrupt of the idle kernel, sent before the kernel took this cell, was dropped when
  // the kernel took it: KernelServer::serve_once)
  capture_.start();
  truncation_reported_ = false;
  nl::json failed;
  if (cell.find_first_not_of(" \t\r\n") != std::string::npos)
    failed = run(wrap_statements(cell, ++cells_compiled_));
  // a last line that ends in a brace (`std::vector<int>{1, 2}`) read as a statement, and clang
  // asks for its ';': the cell again, with that line as its value (if that fails too, the first
  // error stands; neither run changed anything)
  if (parts.expression.empty() && !failed.is_null() && failed["ename"] == "CompileError" &&
      failed["evalue"].get<std::string>().rfind("expected ';' after expression", 0) == 0) {
    const CellParts braced = split_trailing_braced(source);
    if (!braced.expression.empty()) {
      const nl::json again =
          run(wrap_statements(braced.statements + showing(braced.expression), ++cells_compiled_));
      if (again.is_null() || again["ename"] != "CompileError") {
        failed = again;
        cell = braced.statements + braced.expression + ";";  // what ran, for names_declared
      }
    }
  }
  if (!failed.is_null()) failed = replace_earlier(cell, failed);
  add_specialization_hint(failed);
  // a cell that compiled declared its names, even where it then failed
  if (failed.is_null() || (failed["ename"] != "CompileError" &&
                           failed["ename"] != "CompilerCrash" && failed["ename"] != "CellNotRun")) {
    const std::vector<std::string> names = names_declared(cell);
    declared_before_.insert(names.begin(), names.end());
    for (const auto& [member, text] : member_definitions(cell))
      members_in_force_.insert_or_assign(member, text);
    // a whole program pasted into a cell: its main() is defined, and nothing calls it
    if (failed.is_null() && std::find(names.begin(), names.end(), "main") != names.end())
      publish_stream("stderr",
                     "[xenc-kernel] This cell defined main(), which a notebook never calls: a "
                     "cell's statements run by themselves, in order. To run it, write main(); "
                     "in a cell below, or put its statements in a cell of their own.\n");
  }
  // a thread the cell (or an earlier one) started ended while it ran: the cell's error says so,
  // above the cell's own error if it has one
  if (ThreadStopReport stopped = take_thread_stops(); !stopped.summary.empty()) {
    std::vector<std::string> trace = {stopped.ename + ": " + stopped.summary + "."};
    trace.insert(trace.end(), stopped.details.begin(), stopped.details.end());
    trace.push_back("The cell went on without it" +
                    std::string(failed.is_null() ? " to its end" : ", until its own error below") +
                    "; the kernel lives on, with what earlier cells defined.");
    trace.push_back(stopped.advice);
    if (!failed.is_null()) {
      trace.push_back("");
      for (const auto& line : failed["traceback"]) trace.push_back(line.get<std::string>());
    }
    failed = error_reply(stopped.ename, stopped.summary, trace);
  }
  {
    std::lock_guard<std::mutex> lock(publish_mutex_);
    send_streams(false);
  }
  capture_.stop();

  if (!failed.is_null()) {
    publish_execution_error(failed["ename"], failed["evalue"], failed["traceback"]);
    // the requests sent before this reply wait behind the failed cell (kernel_server.hpp)
    if (kernel_server() != nullptr) kernel_server()->hold_queued_requests();
    return failed;
  }
  return xeus::create_successful_reply();
}

// A cell that redefines what earlier cells defined failed to compile ("redefinition of 'f'"; it
// changed nothing): compiled again with its declarations in a namespace of its own and the
// earlier ones hidden (hide_earlier), it replaces them. Returns null if it then compiled and ran,
// else the error reply to give.
nl::json CellInterpreter::replace_earlier(const std::string& cell, const nl::json& failed) {
  if (failed["ename"] != "CompileError" && failed["ename"] != "CompilerCrash") return failed;
  if (earlier_uses_failed_) return failed;  // the cell's template, for an earlier cell's types
  const bool crashed = failed["ename"] == "CompilerCrash";
  std::set<std::string> names;
  // a name, or an operator ("redefinition of 'operator<<'")
  const std::regex redefinition(
      "redefinition of '([A-Za-z_][A-Za-z_0-9]*|operator[^A-Za-z_0-9'][^']*)'");
  // a call of a name shadowed before, made ambiguous by the cell's own new definition
  const std::regex ambiguous("(call to|reference to) '([A-Za-z_][A-Za-z_0-9]*)' is ambiguous");
  for (const auto& line : failed["traceback"]) {
    const std::string text = line.get<std::string>();
    for (auto m = std::sregex_iterator(text.begin(), text.end(), redefinition);
         m != std::sregex_iterator(); ++m)
      names.insert((*m)[1]);
    std::smatch m;
    if (std::regex_search(text, m, ambiguous) &&
        std::find(shadowed_names_.begin(), shadowed_names_.end(), m[2].str()) !=
            shadowed_names_.end())
      names.insert(m[2]);
  }
  // where clang's message names nothing (a function's new return type, an alias's new type) or
  // clang crashed (it does on a redefined class, and on a lambda variable defined again): the
  // names the cell declares that earlier cells declared
  const bool by_text = names.empty();
  if (by_text)
    for (const auto& n : names_declared(cell))
      if (declared_before_.count(n) != 0) names.insert(n);
  if (names.empty()) return failed;
  Shadow shadow;
  shadow.names.assign(names.begin(), names.end());
  shadow.namespaces = namespaces_opened(cell);
  shadowed_names_.insert(shadowed_names_.end(), names.begin(), names.end());
  // the earlier overloads of these names that the cell does not define again (other parameter
  // types) stay: found by compiling the cell's declarations alone, with all of them hidden
  const int id = ++cells_compiled_;
  shadow.report_keep = true;
  trial_compile(wrap_statements(declarations_only(cell), id, true), &shadow);
  shadow.report_keep = false;
  nl::json again = run(wrap_statements(cell, id, true), &shadow);
  // a cell whose error was not a redefinition: its own first message, without the namespace
  if (!again.is_null() && by_text && !crashed) return failed;
  if (again.is_null() || again["ename"] != "CompileError") return again;
  // a member defined outside its class, again: it belongs to the class an earlier cell defined,
  // which holds one definition of it; a class defined again is a new class, whose member this
  // cell can then define
  const std::string said = again["traceback"].dump();
  // the cell run again as it was (or with new values of static data members): the same member
  // functions are kept, the data members assigned their values (rerun_member_definitions)
  std::set<std::string> redefined;
  for (const std::string& member : members_defined(cell)) {
    const std::string name = member.substr(member.rfind("::") + 2);
    if (names.count(name) != 0 && said.find("redefinition of '" + name + "'") != std::string::npos)
      redefined.insert(member);
  }
  const MemberRerun rerun = rerun_member_definitions(cell, redefined, members_in_force_);
  if (!redefined.empty() && rerun.refused.empty()) {
    nl::json third = run(wrap_statements(rerun.code, ++cells_compiled_, true), &shadow);
    if (third.is_null() || third["ename"] != "CompileError") {
      const auto listed = [](const std::vector<std::string>& names) {
        std::string text;
        for (std::size_t i = 0; i < names.size(); ++i)
          text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
        return text;
      };
      std::vector<std::string> said_now;
      if (!rerun.assigned.empty())
        said_now.push_back("this cell assigned " + listed(rerun.assigned) +
                           (rerun.assigned.size() == 1 ? " the value its definition gives"
                                                       : " the values their definitions give") +
                           ", which every cell sees");
      if (!rerun.kept.empty())
        said_now.push_back(listed(rerun.kept) + (rerun.kept.size() == 1 ? " is" : " are") +
                           " the same as before, and kept");
      const std::string note =
          "[xenc-kernel] An earlier cell defined these members, and a "
          "class's member is defined once: " +
          said_now.front() + (said_now.size() == 2 ? "; " + said_now.back() : "") + ".\n";
      std::fputs(note.c_str(), stderr);
      return third;
    }
  }
  for (const std::string& member : members_defined(cell)) {
    const std::size_t colons = member.rfind("::");
    const std::string owner = member.substr(0, colons), name = member.substr(colons + 2);
    if (names.count(name) == 0 || said.find("redefinition of '" + name + "'") == std::string::npos)
      continue;
    nl::json& trace = again["traceback"];
    if (is_class(owner))
      trace.insert(trace.end() - 1,
                   member +
                       " was defined by an earlier cell, and a member of a class is defined "
                       "once. Run the cell that defines " +
                       owner + " again (that makes a new " + owner +
                       "), then this one; or define " + name + " inside " + owner + ".");
    else
      trace.insert(trace.end() - 1,
                   member +
                       " was defined by an earlier cell. A definition written inside its "
                       "namespace replaces the earlier one: write it as namespace " +
                       owner + " { ... } and run the cell again.");
    break;
  }
  return again;
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

void CellInterpreter::shutdown_request_impl() {
  g_kernel = nullptr;
  // What C++ runs as a program ends: the cells' atexit functions and their globals' destructors.
  // The JIT keeps them (ORC's atexit), and KernelServer ends the process with std::exit, which
  // runs only the process's own.
  try {
    auto jit = clang_->getExecutionEngine();
    if (!jit) {
      llvm::consumeError(jit.takeError());
      return;
    }
    if (auto err = jit->deinitialize(jit->getMainJITDylib())) llvm::consumeError(std::move(err));
  } catch (...) {
  }
}

}  // namespace xenc_kernel

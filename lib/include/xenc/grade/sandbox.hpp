// Running untrusted code (a student's exercise, its compile and its link) in a sandbox, with
// limits.
//
// Each child gets its own process group, limits on memory (RLIMIT_AS), processor time
// (RLIMIT_CPU), file size (RLIMIT_FSIZE) and no core file; stdout and stderr go to a captured
// buffer, stdin is /dev/null, a clean environment, and no descriptor the grader inherited. When
// Box::namespaces is set and bubblewrap (bwrap) can start, the child also runs in new user, PID,
// network, IPC, UTS and mount namespaces (--die-with-parent, --new-session): it sees, read-only,
// /usr and the paths of Box::read_only, writes only Box::scratch (unless Box::scratch_read_only)
// and an empty /tmp of at most Limits::file_mib (/dev and the hidden folders are read-only: no
// memory-backed folder without a size), has no network, at most Limits::processes processes, and
// when the run ends its PID namespace ends with every process it started, setsid or not. Started
// by root, the child drops to the user nobody first (the kernel exempts root from the process
// limit). Where bwrap cannot start, namespaces_unavailable() says why, and the child runs with the
// limits and a Landlock ruleset (Linux 5.13) instead: it reads /usr, the loader's files in /etc, a
// few devices, its /proc/self and Box::read_only (Box::hidden left out), writes only Box::scratch
// (unless Box::scratch_read_only; TMPDIR points there), and makes no TCP connection (Landlock ABI
// 4) nor signals another process (ABI 6). Where Landlock is missing too, sandbox_caveats() says so.
//
// Box::one_process (a student's program): a seccomp filter, with namespaces or without, refuses
// every way to memory outside the child's one address space: another process (fork, vfork, clone
// without CLONE_THREAD; its threads share the address space that Limits::memory_mib bounds),
// memory files and shared segments (memfd_create, shmget), new namespaces (unshare, setns), and
// other processes' signals and memory (kill, tkill, ptrace, process_vm_*, pidfd_*; without
// namespaces, a tgkill that is not its own), no socket (without namespaces, the network is the
// machine's, and Landlock lets a connect() to a named local socket through), and the child may
// hold at most kOneProcessFiles descriptors (each pipe or socket holds kernel buffers). So all it
// can hold is Limits::memory_mib of address space, Limits::file_mib in /tmp and those buffers.
// Without the filter 20 processes of 400 MiB each, 3 GiB of memory files, 2 GiB of detached
// shared segments and 3 GiB in /tmp, /dev or the scratch folder all fitted in a 512 MiB limit
// (test_grade_runner's OneProcess tests; grade.hostile).
//
// A Session is a child with the call channel of xenc/grade/wire.hpp: the grader sends calls on
// the child's descriptor 3 and reads answers on its descriptor 4. Nothing here throws for what
// the child does: crashes, hangs and limits are reported in the Outcome.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "xenc/grade/wire.hpp"

namespace xenc::grade {

/// The limits of one child process.
struct Limits {
  double time_seconds = 10.0;    ///< wall-clock limit (the CPU limit is this, rounded up, + 1 s)
  std::size_t memory_mib = 512;  ///< address-space limit (RLIMIT_AS)
  std::size_t output_bytes = 16384;  ///< captured stdout + stderr kept (the rest is read, dropped)
  std::size_t processes = 32;  ///< processes (and threads) inside the sandbox (namespaces only)
  std::size_t file_mib =
      256;  ///< the largest file it may write (RLIMIT_FSIZE); also what its /tmp holds
};

/// The descriptors a Box::one_process child may hold (RLIMIT_NOFILE).
inline constexpr std::size_t kOneProcessFiles = 64;

/// Where a child may look and write.
struct Box {
  bool namespaces = false;             ///< run in bubblewrap's namespaces (when it can start)
  std::vector<std::string> read_only;  ///< bound read-only at the same path
  std::string scratch;                 ///< the one folder it may write (its working directory)
  bool scratch_read_only = false;      ///< scratch is bound read-only: it writes only /tmp
  /// the program is a student's: one process, its threads, its address space (the seccomp
  /// filter above; x86-64 and arm64, elsewhere seccomp_unavailable() says so)
  bool one_process = false;
  /// paths it cannot read though they are under /usr or read_only: a folder is seen empty, a
  /// file cannot be opened (/dev/null bound over it, on a nodev mount; without namespaces, no
  /// Landlock rule reaches it)
  std::vector<std::string> hidden;
};

/// Empty when bwrap starts here (tried once per process); else one line saying why not.
const std::string& namespaces_unavailable();
/// Empty where Box::one_process has its seccomp filter (x86-64, arm64); else one line saying why
/// not.
const std::string& seccomp_unavailable();
/// The lines on what the sandbox lacks here, each "Sandbox: ...\n" (empty where it has
/// everything): in grade's report and xenc-grade-all's output, never silently.
std::string sandbox_caveats();

/// What happened to the child.
struct Outcome {
  bool started = false;  ///< false: fork or exec failed (see failure)
  bool exited = false;   ///< exited normally, with exit_code
  int exit_code = 0;
  int signal = 0;               ///< the signal that ended it (0 if none)
  bool timed_out = false;       ///< killed at the wall-clock limit
  double seconds = 0.0;         ///< wall-clock time
  double cpu_seconds = 0.0;     ///< CPU time (user + system) of it and the children it waited for
  bool sandboxed = false;       ///< ran in bubblewrap's namespaces
  bool answered = false;        ///< (a Session) every call was answered and the child then ended
  bool broke_protocol = false;  ///< (a Session) the child sent something that is not an answer
  std::string output;           ///< captured stdout + stderr (at most Limits::output_bytes)
  bool output_truncated = false;
  std::string failure;  ///< why it could not start
};

/// Runs program with args (argv[0] is program) under limits, in box, until it ends. The
/// environment is PATH, HOME (the scratch folder or /tmp), LANG and env_extra ("NAME=value").
Outcome run_isolated(const std::string& program, const std::vector<std::string>& args,
                     const Limits& limits, const std::vector<std::string>& env_extra = {},
                     const Box& box = {});

/// A child that answers calls (xenc/grade/wire.hpp). The wall-clock limit counts from the start.
class Session : public wire::Caller {
 public:
  Session(const std::string& program, const std::vector<std::string>& args, const Limits& limits,
          const std::vector<std::string>& env_extra, const Box& box);
  ~Session() override;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  /// Sends one call, returns the answer. Throws wire::WireError when the child has ended, ran
  /// out of time or sent something that is not an answer (then it is killed).
  std::string call(const std::string& request) override;
  /// Closes the channel, waits for the child to end (until the wall-clock limit), kills what is
  /// left and returns what happened.
  Outcome finish();

  struct State;  ///< (internal; run_isolated shares it)

 private:
  State* s_;
};

/// Runs `body` in a forked child of this process (a copy of it: no exec), under `limits`: the
/// address space this process already maps plus limits.memory_mib, the CPU time, the wall clock
/// (then SIGKILL), no core file. `body` writes its answer to the descriptor it is given; what it
/// wrote (at most wire::kMaxMessage bytes) is returned in `answer`. The child ends with _exit once
/// body returns, and its crash signals have their default action, so it never returns into the
/// caller's code (a notebook kernel's loop). Outcome::answered: body returned and the child exited
/// with 0. For checks run in the caller's own process (xenc/grade/exercises.hpp's
/// set_check_isolation): a student's crash or hang then costs only that check.
Outcome run_forked(const std::function<void(int answer_fd)>& body, const Limits& limits,
                   std::string& answer);

/// "SIGSEGV (segmentation fault)" for a signal number.
std::string signal_name(int signal);

/// One sentence for a Session's Outcome that does not count: "crashed with SIGSEGV (segmentation
/// fault)", "exceeded the time limit of 2 s", "exceeded the memory limit of 64 MiB", "ended with
/// code 0 before answering every call". Empty when it answered every call and exited with 0.
std::string describe_outcome(const Outcome& o, const Limits& limits);

}  // namespace xenc::grade

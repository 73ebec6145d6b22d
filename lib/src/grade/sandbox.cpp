// Children in a sandbox: fork, limits, captured output, bubblewrap's namespaces when it starts,
// the call channel of a Session, and a SIGKILL at the wall-clock limit. Linux.
#include "xenc/grade/sandbox.hpp"

#include "landlock.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

// Box::one_process's seccomp filter: Linux on x86-64 and arm64 (elsewhere, as in the WebAssembly
// build, seccomp_unavailable() says there is none)
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define XENC_GRADE_SECCOMP 1
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

namespace xenc::grade {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// The user a child started by root runs as (nobody): the kernel exempts root from RLIMIT_NPROC.
constexpr uid_t kNobody = 65534;

// Reads what is available on fd into out (keeping at most `keep` bytes); false at end of file.
bool drain(int fd, std::string& out, std::size_t keep, bool& truncated) {
  char buf[4096];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  const std::size_t room = out.size() < keep ? keep - out.size() : 0;
  out.append(buf, std::min<std::size_t>(room, std::size_t(n)));
  if (std::size_t(n) > room) truncated = true;
  return true;
}

// The seccomp filter of a Box::one_process child (sandbox.hpp): classic BPF over the system
// call's architecture, number and, for clone, its flags. Another architecture's calls (i386's
// int 0x80, x32's numbers) end the process; the refused calls fail with EPERM, and clone3 with
// ENOSYS, so that glibc's thread start falls back to clone, whose flags the filter can read.
#ifdef XENC_GRADE_SECCOMP
#if defined(__x86_64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#else
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#endif
constexpr bool kHaveFilter = true;
using Instruction = sock_filter;
#else
constexpr bool kHaveFilter = false;
struct Instruction {
  std::uint32_t k;
};
#endif

// The filter's code, and where it holds the child's own process ID (npos: nowhere).
struct Filter {
  std::vector<Instruction> code;
  std::size_t own_pid_at = std::string::npos;
};

// own_pid_only (the child without namespaces, where the grader and other students' runs are in
// its PID namespace): tgkill only to its own process, whose ID the child writes at own_pid_at.
Filter one_process_filter([[maybe_unused]] bool own_pid_only) {
  Filter filter;
#ifdef XENC_GRADE_SECCOMP
  std::vector<sock_filter>& f = filter.code;
  auto stmt = [&](std::uint16_t code, std::uint32_t k) { f.push_back(BPF_STMT(code, k)); };
  auto jump = [&](std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
    f.push_back(BPF_JUMP(code, k, jt, jf));
  };
  const std::uint32_t eperm = SECCOMP_RET_ERRNO | EPERM, enosys = SECCOMP_RET_ERRNO | ENOSYS;
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
  jump(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
#if defined(__x86_64__)
  jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);  // x32's calls: __X32_SYSCALL_BIT
  stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
#endif
  auto refuse = [&](long nr, std::uint32_t action) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, std::uint32_t(nr), 0, 1);
    stmt(BPF_RET | BPF_K, action);
  };
  // the jumps to the final ALLOW, whose offsets are set once it is placed
  std::vector<std::size_t> to_allow;
  auto jump_to_allow = [&](std::uint32_t k) {
    to_allow.push_back(f.size());
    jump(BPF_JMP | BPF_JEQ | BPF_K, k, 0, 0);
  };
  // another process, and memory in no address space
#ifdef SYS_fork
  refuse(SYS_fork, eperm);
#endif
#ifdef SYS_vfork
  refuse(SYS_vfork, eperm);
#endif
  refuse(SYS_clone3, enosys);
  refuse(SYS_memfd_create, eperm);
  refuse(SYS_shmget, eperm);
  refuse(SYS_unshare, eperm);
  refuse(SYS_setns, eperm);
  // other processes: signals (raise and abort use tgkill) and their memory
  for (long nr : {long(SYS_kill), long(SYS_tkill), long(SYS_rt_sigqueueinfo), long(SYS_pidfd_open),
                  long(SYS_pidfd_send_signal), long(SYS_ptrace), long(SYS_process_vm_readv),
                  long(SYS_process_vm_writev)})
    refuse(nr, eperm);
  if (own_pid_only) {
    refuse(SYS_rt_tgsigqueueinfo, eperm);
    // tgkill(tgid, ...) with tgid its own (exec_child sets it), else EPERM; another call goes
    // on to the next check
    jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_tgkill, 0, 3);
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args));
    filter.own_pid_at = f.size();
    jump_to_allow(0);
    stmt(BPF_RET | BPF_K, eperm);
  }
  // no socket: without namespaces the network is the machine's, and Landlock does not stop a
  // connect() to a named local socket outside the box (socketpair, its own pair, still works)
  refuse(SYS_socket, eperm);
  // clone: allowed with CLONE_THREAD (a thread), refused without (a process); the flags are the
  // first argument on both architectures, in its low 32 bits (little-endian)
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3);
  stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args));
  jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0);
  stmt(BPF_RET | BPF_K, eperm);
  for (std::size_t at : to_allow) f[at].jt = std::uint8_t(f.size() - at - 1);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
#endif
  return filter;
}

// Loads the filter into this process (async-signal-safe: a child between fork and exec).
bool load_filter(const Filter& filter) {
#ifdef XENC_GRADE_SECCOMP
  const sock_fprog program{static_cast<unsigned short>(filter.code.size()),
                           const_cast<sock_filter*>(filter.code.data())};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
#else
  (void)filter;
  return false;
#endif
}

// Closes every descriptor from `first` to `last` (both included). Async-signal-safe.
void close_fds(int first, int last) {
  if (first > last) return;
#if defined(__linux__) && defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
  if (::close_range(unsigned(first), unsigned(last), 0) == 0) return;
#endif
  for (int fd = first; fd <= last; ++fd) ::close(fd);
}

// The descriptor bwrap reads a Box::one_process child's filter from (--seccomp).
constexpr int kFilterFd = 5;

// bwrap's arguments up to the program: namespaces, the read-only system, the box, and the
// process limit set inside (prlimit), where it counts the sandbox's processes only; filtered:
// bwrap loads the filter from kFilterFd.
std::vector<std::string> bwrap_args(const Box& box, const Limits& limits, bool filtered) {
  std::vector<std::string> a = {"/usr/bin/bwrap",
                                "--unshare-all",
                                "--unshare-user",
                                "--die-with-parent",
                                "--new-session",
                                "--cap-drop",
                                "ALL",
                                "--ro-bind",
                                "/usr",
                                "/usr"};
  for (const char* d : {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"}) {
    std::error_code ec;
    if (fs::is_symlink(d, ec))
      a.insert(a.end(), {"--symlink", fs::read_symlink(d, ec).string(), d});
    else if (fs::is_directory(d, ec))
      a.insert(a.end(), {"--ro-bind", d, d});
  }
  // what the dynamic loader and the compiler drivers read in /etc; nothing else of it
  for (const char* p :
       {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives"})
    a.insert(a.end(), {"--ro-bind-try", p, p});
  // /dev and /tmp are memory (tmpfs): /dev read-only (its devices still open), /tmp sized
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev", "--size",
                     std::to_string(limits.file_mib << 20), "--tmpfs", "/tmp"});
  for (const std::string& p : box.read_only) a.insert(a.end(), {"--ro-bind", p, p});
  // hidden: an empty read-only folder over a folder; /dev/null over a file (bwrap's binds are
  // nodev, so it cannot even be opened)
  for (const std::string& p : box.hidden) {
    std::error_code ec;
    if (fs::is_directory(p, ec))
      a.insert(a.end(), {"--tmpfs", p, "--remount-ro", p});
    else if (fs::exists(p, ec))
      a.insert(a.end(), {"--ro-bind", "/dev/null", p});
  }
  if (!box.scratch.empty())
    a.insert(a.end(), {box.scratch_read_only ? "--ro-bind" : "--bind", box.scratch, box.scratch,
                       "--chdir", box.scratch});
  if (filtered) a.insert(a.end(), {"--seccomp", std::to_string(kFilterFd)});
  a.insert(a.end(),
           {"--", "/usr/bin/prlimit", "--nproc=" + std::to_string(limits.processes), "--"});
  return a;
}

// A descriptor closed with its owner (in the parent: the child's copy closes at exec).
struct OwnedFd {
  int fd = -1;
  OwnedFd() = default;
  OwnedFd(OwnedFd&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
  OwnedFd& operator=(OwnedFd&& o) noexcept {
    std::swap(fd, o.fd);
    return *this;
  }
  ~OwnedFd() {
    if (fd >= 0) ::close(fd);
  }
};

// Everything a child needs, prepared before fork (the child may not allocate).
struct Plan {
  std::vector<std::string> args, env;
  std::vector<char*> argv, envp;
  std::string scratch;
  bool drop_root = false;
  bool nproc = false;  // set RLIMIT_NPROC before exec (the fallback, as nobody)
  int max_fd = 1 << 20;
  bool one_process = false;  // RLIMIT_NOFILE kOneProcessFiles, and the filter:
  Filter filter;             // given to bwrap on kFilterFd (namespaces) or
  bool load_filter = false;  // loaded by the child itself before exec (without)
  OwnedFd landlock;          // without namespaces: the box's files (landlock.hpp), or none
  std::string failure;       // why the child cannot start (its ruleset could not be made)
};

Plan make_plan(const std::string& program, const std::vector<std::string>& args,
               const Limits& limits, const std::vector<std::string>& env_extra, const Box& box,
               bool sandboxed, bool channel) {
  Plan p;
  p.one_process = box.one_process;
  if (box.one_process && seccomp_unavailable().empty()) {
    p.filter = one_process_filter(!sandboxed);
    p.load_filter = !sandboxed && !p.filter.code.empty();
  }
  if (sandboxed) p.args = bwrap_args(box, limits, !p.filter.code.empty());
  // a box that asked for namespaces, without them: Landlock keeps it to the box's files; the
  // compiler's temporary files then go to its folder (the machine's /tmp is not in the box)
  const bool landlocked = box.namespaces && !sandboxed && detail::landlock_unavailable().empty();
  if (landlocked) p.landlock.fd = detail::landlock_ruleset(box, p.failure);
  p.args.push_back(program);
  p.args.insert(p.args.end(), args.begin() + (args.empty() ? 0 : 1), args.end());
  p.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
           "HOME=" + (box.scratch.empty() ? std::string("/tmp") : box.scratch)};
  if (landlocked && !box.scratch.empty() && !box.scratch_read_only)
    p.env.push_back("TMPDIR=" + box.scratch);
  if (channel) p.env.push_back("XENC_GRADE_SERVE=1");
  for (const std::string& e : env_extra) p.env.push_back(e);
  for (std::string& a : p.args) p.argv.push_back(a.data());
  p.argv.push_back(nullptr);
  for (std::string& e : p.env) p.envp.push_back(e.data());
  p.envp.push_back(nullptr);
  p.scratch = box.scratch;
  // a box with namespaces asked for holds untrusted code: as nobody, with a process limit even
  // where bwrap cannot start (for nobody, RLIMIT_NPROC counts nobody's processes only)
  p.drop_root = ::geteuid() == 0 && box.namespaces;
  p.nproc = !sandboxed && p.drop_root;
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY &&
      files.rlim_cur < rlim_t(1) << 30)
    p.max_fd = int(files.rlim_cur) - 1;
  return p;
}

// In a child (async-signal-safe): the address space, the CPU time (this, then SIGKILL a second
// later), no core file, the largest file. Returns the CPU limit in seconds.
rlim_t set_limits(const Limits& limits, rlim_t address_space) {
  const rlimit as{address_space, address_space};
  ::setrlimit(RLIMIT_AS, &as);
  const rlim_t cpu = rlim_t(std::ceil(limits.time_seconds)) + 1;
  const rlimit cpu_limit{cpu, cpu + 1};
  ::setrlimit(RLIMIT_CPU, &cpu_limit);
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  const rlim_t fsize = rlim_t(limits.file_mib) * 1024 * 1024;
  const rlimit file_limit{fsize, fsize};
  ::setrlimit(RLIMIT_FSIZE, &file_limit);
  return cpu;
}

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_child(Plan& p, const Limits& limits, int out_fd, int calls_fd,
                             int answers_fd, int filter_fd = -1) {
  ::setpgid(0, 0);  // its own process group: the parent's SIGKILL reaches grandchildren too
  set_limits(limits, rlim_t(limits.memory_mib) * 1024 * 1024);
  if (p.nproc) {
    const rlimit procs{rlim_t(limits.processes), rlim_t(limits.processes)};
    ::setrlimit(RLIMIT_NPROC, &procs);
  }
  if (p.drop_root) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0)
      ::_exit(126);
  }
  if (p.landlock.fd >= 0 && !detail::landlock_restrict(p.landlock.fd)) {
    const char msg[] = "xenc grade sandbox: Landlock could not restrict the child\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(126);
  }
  // the descriptors it keeps: /dev/null, the capture pipe (1, 2), the channel (3, 4), bwrap's
  // filter (5)
  const int out_hi = ::fcntl(out_fd, F_DUPFD, 10);
  const int calls_hi = calls_fd >= 0 ? ::fcntl(calls_fd, F_DUPFD, 10) : -1;
  const int answers_hi = answers_fd >= 0 ? ::fcntl(answers_fd, F_DUPFD, 10) : -1;
  const int filter_hi = filter_fd >= 0 ? ::fcntl(filter_fd, F_DUPFD, 10) : -1;
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);
  ::dup2(out_hi, 1);
  ::dup2(out_hi, 2);
  if (calls_hi >= 0) ::dup2(calls_hi, wire::kCallsFd), ::dup2(answers_hi, wire::kAnswersFd);
  if (filter_hi >= 0) ::dup2(filter_hi, kFilterFd);
  if (calls_hi < 0) close_fds(3, 4);
  if (filter_hi < 0) close_fds(kFilterFd, kFilterFd);
  close_fds(kFilterFd + 1, p.max_fd);
  if (p.one_process) {
    const rlimit files{rlim_t(kOneProcessFiles), rlim_t(kOneProcessFiles)};
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  if (p.load_filter && p.filter.own_pid_at != std::string::npos)
    p.filter.code[p.filter.own_pid_at].k = std::uint32_t(::getpid());  // this copy is the child's
  if (p.load_filter && !load_filter(p.filter)) {
    const char msg[] = "xenc grade sandbox: the seccomp filter could not be loaded\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(126);
  }
  if (!p.scratch.empty() && ::chdir(p.scratch.c_str()) != 0) ::_exit(126);
  ::execve(p.argv[0], p.argv.data(), p.envp.data());
  const char msg[] = "xenc grade sandbox: exec failed\n";
  (void)!::write(2, msg, sizeof msg - 1);
  ::_exit(127);
}

}  // namespace

const std::string& namespaces_unavailable() {
  // read at each call: a test turns the namespaces off and on again
  static const std::string off = "namespaces turned off (XENC_GRADE_NO_NAMESPACES is set)";
  if (std::getenv("XENC_GRADE_NO_NAMESPACES") != nullptr) return off;
  static const std::string why = [] {
    if (::access("/usr/bin/bwrap", X_OK) != 0)
      return std::string("bubblewrap (/usr/bin/bwrap) is not installed");
    Limits probe;
    probe.time_seconds = 20;
    Box box;
    box.namespaces = true;
    Plan p = make_plan("/usr/bin/true", {"/usr/bin/true"}, probe, {}, box, true, false);
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return std::string("pipe failed");
    const pid_t pid = ::fork();
    if (pid < 0) return std::string("fork failed");
    if (pid == 0) exec_child(p, probe, out[1], -1, -1);
    ::close(out[1]);
    std::string text;
    bool truncated = false;
    while (drain(out[0], text, 4096, truncated)) {
    }
    ::close(out[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::string();
    const std::string line = text.substr(0, text.find('\n'));
    return "bubblewrap cannot start here" + (line.empty() ? std::string() : " (" + line + ")");
  }();
  return why;
}

const std::string& seccomp_unavailable() {
  static const std::string why = [] {
    const std::string without =
        ": a student's program may start processes up to the process limit, and hold memory "
        "outside its address space";
    if (!kHaveFilter)
      return "no seccomp filter for this architecture (x86-64 and arm64 only)" + without;
    // tried once in a child: a kernel without seccomp filters, or a container that forbids them
    Filter filter = one_process_filter(true);
    const pid_t pid = ::fork();
    if (pid < 0) return std::string("fork failed");
    if (pid == 0) {
      filter.code[filter.own_pid_at].k = std::uint32_t(::getpid());
      ::_exit(load_filter(filter) ? 0 : 1);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::string();
    return "this kernel refuses a seccomp filter" + without;
  }();
  return why;
}

std::string sandbox_caveats() {
  std::string lines;
  if (!namespaces_unavailable().empty()) {
    const bool landlock = detail::landlock_unavailable().empty();
    lines += "Sandbox: " + namespaces_unavailable() + "; each exercise ran in a process with " +
             (landlock ? "limits and Landlock's file rules" : "limits") + ", without namespaces.\n";
    if (!landlock)
      lines += "Sandbox: " + detail::landlock_unavailable() +
               ": without namespaces, an exercise read and wrote what its user may.\n";
  }
  if (!seccomp_unavailable().empty()) lines += "Sandbox: " + seccomp_unavailable() + ".\n";
  return lines;
}

std::string signal_name(int s) {
  switch (s) {
    case SIGSEGV:
      return "SIGSEGV (segmentation fault: a read or write outside the memory of a tensor?)";
    case SIGABRT:
      return "SIGABRT (abort: an assert, std::terminate or an uncaught exception)";
    case SIGFPE:
      return "SIGFPE (arithmetic exception: an integer division by zero?)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGKILL:
      return "SIGKILL (killed)";
    case SIGXCPU:
      return "SIGXCPU (CPU time limit)";
    default:
      return "signal " + std::to_string(s) + " (" + strsignal(s) + ")";
  }
}

// ---- a running child ---------------------------------------------------------------------------

struct Session::State {
  Limits limits;
  Outcome o;
  pid_t pid = -1;
  int out = -1, calls = -1, answers = -1;
  Clock::time_point start, deadline;
  bool out_open = false, exited = false, gone = false;
  int status = 0;

  void start_child(const std::string& program, const std::vector<std::string>& args,
                   const std::vector<std::string>& env_extra, const Box& box, bool channel) {
    o.sandboxed = box.namespaces && namespaces_unavailable().empty();
    Plan p = make_plan(program, args, limits, env_extra, box, o.sandboxed, channel);
    if (!p.failure.empty()) {
      o.failure = "its sandbox could not be prepared: " + p.failure, gone = true;
      return;
    }
    int out_pipe[2], calls_pipe[2] = {-1, -1}, answers_pipe[2] = {-1, -1};
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
      o.failure = "pipe failed", gone = true;
      return;
    }
    if (channel && (::pipe2(calls_pipe, O_CLOEXEC) != 0 || ::pipe2(answers_pipe, O_CLOEXEC) != 0)) {
      o.failure = "pipe failed", gone = true;
      return;
    }
    // bwrap reads the filter from a pipe: written whole here (a few hundred bytes, less than a
    // pipe holds), its write end closed
    int filter_fd = -1;
    if (o.sandboxed && !p.filter.code.empty()) {
      int fp[2];
      const std::size_t bytes = p.filter.code.size() * sizeof(Instruction);
      if (::pipe2(fp, O_CLOEXEC) != 0) {
        o.failure = "pipe failed", gone = true;
        return;
      }
      const bool written =
          ::write(fp[1], p.filter.code.data(), bytes) == static_cast<ssize_t>(bytes);
      ::close(fp[1]);
      if (!written) {
        ::close(fp[0]);
        o.failure = "could not write the seccomp filter", gone = true;
        return;
      }
      filter_fd = fp[0];
    }
    start = Clock::now();
    deadline = start + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(limits.time_seconds));
    pid = ::fork();
    if (pid < 0) {
      o.failure = std::string("fork failed: ") + std::strerror(errno), gone = true;
      for (int fd : {out_pipe[0], out_pipe[1], calls_pipe[0], calls_pipe[1], answers_pipe[0],
                     answers_pipe[1]})
        if (fd >= 0) ::close(fd);
      return;
    }
    if (pid == 0) exec_child(p, limits, out_pipe[1], calls_pipe[0], answers_pipe[1], filter_fd);
    if (filter_fd >= 0) ::close(filter_fd);
    o.started = true;
    ::setpgid(pid, pid);  // also here, so that the kill below cannot race the child's own call
    ::close(out_pipe[1]);
    out = out_pipe[0], out_open = true;
    if (channel) {
      ::close(calls_pipe[0]);
      ::close(answers_pipe[1]);
      calls = calls_pipe[1], answers = answers_pipe[0];
      ::fcntl(calls, F_SETFL, O_NONBLOCK);
      ::signal(SIGPIPE, SIG_IGN);  // a child that closed its end: write fails with EPIPE instead
    }
  }

  // Whether the child has exited (reaped once).
  bool reap(bool block) {
    if (exited || pid < 0) return true;
    rusage usage{};
    const pid_t r = ::wait4(pid, &status, block ? 0 : WNOHANG, &usage);
    if (r == pid) {
      exited = true;
      o.cpu_seconds = double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                      1e-6 * double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    }
    return exited;
  }

  void kill_all() {
    if (pid > 0) ::kill(-pid, SIGKILL);
  }

  void time_out() {
    o.timed_out = true;
    gone = true;
    kill_all();
  }

  // Waits until fd is ready for `events` (reading the captured output meanwhile); false at the
  // deadline (then the child is killed).
  bool wait_for(int fd, short events) {
    for (;;) {
      const auto now = Clock::now();
      if (now >= deadline) {
        time_out();
        return false;
      }
      const int ms = int(std::chrono::duration<double, std::milli>(deadline - now).count()) + 1;
      pollfd fds[2] = {{fd, events, 0}, {out_open ? out : -1, POLLIN, 0}};
      const int ready = ::poll(fds, 2, std::min(ms, 100));
      if (ready < 0 && errno != EINTR) return false;
      if (ready <= 0) continue;
      if (fds[1].revents) out_open = drain(out, o.output, limits.output_bytes, o.output_truncated);
      if (fds[0].revents) return true;
    }
  }

  bool send(const char* p, std::size_t n) {
    while (n > 0) {
      if (!wait_for(calls, POLLOUT)) return false;
      const ssize_t k = ::write(calls, p, n);
      if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (k <= 0) return false;
      p += k, n -= std::size_t(k);
    }
    return true;
  }

  bool receive(char* p, std::size_t n) {
    while (n > 0) {
      if (!wait_for(answers, POLLIN)) return false;
      const ssize_t k = ::read(answers, p, n);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) return false;
      p += k, n -= std::size_t(k);
    }
    return true;
  }

  // Closes the channel, reads the output until the child has exited (or the deadline), kills the
  // rest of its process group (with namespaces: its whole PID namespace is gone with it).
  Outcome finish() {
    if (calls >= 0) ::close(calls), calls = -1;
    if (answers >= 0) ::close(answers), answers = -1;
    if (pid > 0) {
      while (!reap(false)) {
        if (Clock::now() >= deadline) {
          if (!o.timed_out) o.timed_out = true;
          kill_all();
          break;
        }
        pollfd f{out_open ? out : -1, POLLIN, 0};
        if (::poll(&f, 1, 20) > 0 && f.revents)
          out_open = drain(out, o.output, limits.output_bytes, o.output_truncated);
      }
      reap(true);
      kill_all();  // grandchildren left in its process group, if any
      // what is already in the pipe; a process that escaped the group may hold it open
      if (out_open) {
        ::fcntl(out, F_SETFL, O_NONBLOCK);
        char buf[4096];
        for (ssize_t k; (k = ::read(out, buf, sizeof buf)) > 0;) {
          const std::size_t room =
              o.output.size() < limits.output_bytes ? limits.output_bytes - o.output.size() : 0;
          o.output.append(buf, std::min<std::size_t>(room, std::size_t(k)));
          if (std::size_t(k) > room) o.output_truncated = true;
        }
      }
      o.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      if (WIFEXITED(status)) o.exited = true, o.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
      // bwrap reports a child killed by signal s as exit code 128 + s
      if (o.sandboxed && o.exited && o.exit_code > 128 && o.exit_code < 128 + 65)
        o.signal = o.exit_code - 128, o.exited = false, o.exit_code = 0;
    }
    if (out >= 0) ::close(out), out = -1;
    pid = -1;
    return o;
  }
};

Session::Session(const std::string& program, const std::vector<std::string>& args,
                 const Limits& limits, const std::vector<std::string>& env_extra, const Box& box)
    : s_(new State) {
  s_->limits = limits;
  s_->start_child(program, args, env_extra, box, true);
}

Session::~Session() {
  if (s_->pid > 0) {
    s_->kill_all();
    s_->finish();
  }
  delete s_;
}

std::string Session::call(const std::string& request) {
  State& s = *s_;
  if (s.gone) throw wire::WireError("the program has ended");
  const std::uint64_t n = request.size();
  std::string answer;
  if (s.send(reinterpret_cast<const char*>(&n), sizeof n) && s.send(request.data(), n)) {
    std::uint64_t len = 0;
    if (s.receive(reinterpret_cast<char*>(&len), sizeof len)) {
      if (len > wire::kMaxMessage) {
        s.o.broke_protocol = true, s.gone = true;
        s.kill_all();
        throw wire::WireError("the program sent an answer longer than a message");
      }
      answer.resize(len);
      if (s.receive(answer.data(), len)) return answer;
    }
  }
  s.gone = true;
  throw wire::WireError("the program ended before answering");
}

Outcome Session::finish() {
  Outcome o = s_->finish();
  o.answered = !s_->gone;
  return o;
}

namespace {

// The bytes this process maps now (/proc/self/statm's first field, in pages); 0 when unknown.
rlim_t mapped_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long pages = 0;
  const int n = std::fscanf(f, "%llu", &pages);
  std::fclose(f);
  return n == 1 ? rlim_t(pages) * rlim_t(::sysconf(_SC_PAGESIZE)) : 0;
}

// In the forked child: the limits, the default action for crash signals, then body, then _exit.
[[noreturn]] void forked_child(const std::function<void(int)>& body, const Limits& limits,
                               rlim_t address_space, int answer_fd) {
  ::setpgid(0, 0);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGINT, SIGALRM})
    ::signal(sig, SIG_DFL);
  const rlim_t cpu = set_limits(limits, address_space);
  ::alarm(unsigned(cpu) + 1);  // ends it even if the parent stopped waiting (an Interrupt)
  int code = 0;
  try {
    body(answer_fd);
  } catch (...) {
    code = 3;  // body answers for the student's exceptions; this is its own failure
  }
  ::close(answer_fd);
  std::fflush(nullptr);
  ::_exit(code);
}

}  // namespace

Outcome run_forked(const std::function<void(int answer_fd)>& body, const Limits& limits,
                   std::string& answer) {
  answer.clear();
  Session::State s;
  s.limits = limits;
  const rlim_t address_space = mapped_bytes() + rlim_t(limits.memory_mib) * 1024 * 1024;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    s.o.failure = std::string("pipe failed: ") + std::strerror(errno);
    return s.o;
  }
  std::fflush(nullptr);  // what the caller buffered is not written twice
  s.start = Clock::now();
  s.deadline = s.start + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(limits.time_seconds));
  s.pid = ::fork();
  if (s.pid < 0) {
    s.o.failure = std::string("fork failed: ") + std::strerror(errno);
    ::close(pipe_fds[0]), ::close(pipe_fds[1]);
    return s.o;
  }
  if (s.pid == 0) {
    ::close(pipe_fds[0]);
    forked_child(body, limits, address_space, pipe_fds[1]);
  }
  s.o.started = true;
  ::setpgid(s.pid, s.pid);
  ::close(pipe_fds[1]);
  s.answers = pipe_fds[0];
  bool complete = false;
  char buf[65536];
  while (s.wait_for(s.answers, POLLIN)) {
    const ssize_t k = ::read(s.answers, buf, sizeof buf);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      complete = k == 0;
      break;
    }
    if (answer.size() + std::size_t(k) > wire::kMaxMessage) {
      s.o.broke_protocol = true;
      s.kill_all();
      break;
    }
    answer.append(buf, std::size_t(k));
  }
  Outcome o = s.finish();
  o.answered = complete && !o.broke_protocol && o.exited && o.exit_code == 0;
  return o;
}

Outcome run_isolated(const std::string& program, const std::vector<std::string>& args,
                     const Limits& limits, const std::vector<std::string>& env_extra,
                     const Box& box) {
  Session::State s;
  s.limits = limits;
  s.start_child(program, args, env_extra, box, false);
  if (!s.o.started) return s.o;
  return s.finish();
}

std::string describe_outcome(const Outcome& o, const Limits& limits) {
  auto num = [](double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  if (!o.started) return "could not be started: " + o.failure;
  // (killed for it: before the signal)
  if (o.broke_protocol) return "sent the grader something that is not an answer";
  if (o.timed_out)
    return "exceeded the time limit of " + num(limits.time_seconds) +
           " s (an infinite loop?) and was killed";
  const bool out_of_memory = o.output.find("std::bad_alloc") != std::string::npos;
  // the CPU limit sends SIGXCPU, then SIGKILL a second later; a SIGKILL before the child had
  // used that much CPU time came from outside (a user, the machine's out-of-memory killer)
  const double cpu_limit = std::ceil(limits.time_seconds) + 1;
  if (o.signal == SIGXCPU ||
      (o.signal == SIGKILL && !out_of_memory && o.cpu_seconds >= cpu_limit - 0.5))
    return "exceeded the CPU time limit of " + num(cpu_limit) + " s and was killed";
  if (o.signal == SIGKILL && !out_of_memory)
    return "was killed (SIGKILL) from outside, within its limits (by a user, or the machine's "
           "out-of-memory killer)";
  if (out_of_memory && (o.signal != 0 || (o.exited && o.exit_code != 0)))
    return "exceeded the memory limit of " + std::to_string(limits.memory_mib) +
           " MiB (std::bad_alloc) and stopped";
  if (o.signal != 0) return "crashed with " + signal_name(o.signal);
  if (!o.answered)
    return "ended with code " + std::to_string(o.exit_code) +
           " before answering every call (did the code call exit() or std::quick_exit?)";
  if (o.exit_code != 0) return "exited with code " + std::to_string(o.exit_code);
  return "";
}

}  // namespace xenc::grade

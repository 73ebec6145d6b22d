// One child process per exercise: fork, limits, captured output, a private verdict pipe, and a
// SIGKILL at the wall-clock limit. POSIX only (Linux, macOS).
#include "xenc/grade/sandbox.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace xenc::grade {

namespace {

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

// Closes every descriptor from `first` to `last` (both included); close_range where the kernel
// has it, else one close per number. Async-signal-safe.
void close_fds(int first, int last) {
  if (first > last) return;
#if defined(__linux__) && defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
  if (::close_range(unsigned(first), unsigned(last), 0) == 0) return;
#endif
  for (int fd = first; fd <= last; ++fd) ::close(fd);
}

// In the child, between fork and exec: limits, descriptors, then exec. Only async-signal-safe
// calls (no allocation): everything it needs was prepared before fork. The child keeps stdin
// (/dev/null), stdout and stderr (the capture pipe) and the verdict pipe, and nothing else the
// grader inherited from whoever started it (a terminal, a log, a results file being written).
[[noreturn]] void exec_child(const char* program, char* const* argv, char* const* envp, int out_fd,
                             int verdict_fd, int max_fd, const Limits& limits) {
  ::setpgid(0, 0);  // its own process group: the parent's SIGKILL reaches grandchildren too
  const rlim_t bytes = rlim_t(limits.memory_mib) * 1024 * 1024;
  const rlimit as{bytes, bytes};
  ::setrlimit(RLIMIT_AS, &as);
  const rlim_t cpu = rlim_t(std::ceil(limits.time_seconds)) + 1;
  const rlimit cpu_limit{cpu, cpu + 1};
  ::setrlimit(RLIMIT_CPU, &cpu_limit);
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);
  ::dup2(out_fd, 1);
  ::dup2(out_fd, 2);
  close_fds(3, verdict_fd - 1);
  close_fds(verdict_fd + 1, max_fd);
  ::execve(program, argv, envp);
  const char msg[] = "xenc grade sandbox: exec failed\n";
  (void)!::write(2, msg, sizeof msg - 1);
  ::_exit(127);
}

}  // namespace

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

Outcome run_isolated(const std::string& program, const std::vector<std::string>& args,
                     const Limits& limits, const std::vector<std::string>& env_extra) {
  Outcome o;
  int out_pipe[2], verdict_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return o.failure = "pipe failed", o;
  if (::pipe(verdict_pipe) != 0) {  // no O_CLOEXEC: the child inherits the write end
    ::close(out_pipe[0]), ::close(out_pipe[1]);
    return o.failure = "pipe failed", o;
  }
  ::fcntl(verdict_pipe[0], F_SETFD, FD_CLOEXEC);

  // argv and envp built before fork (the child may not allocate)
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "XENC_GRADE_VERDICT_FD=", 22) != 0) env.emplace_back(*e);
  env.push_back("XENC_GRADE_VERDICT_FD=" + std::to_string(verdict_pipe[1]));
  for (const std::string& e : env_extra) env.push_back(e);
  std::vector<char*> argv, envp;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  // the highest descriptor number the child may hold, for closing the inherited ones
  rlimit files{};
  const int max_fd = ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY &&
                             files.rlim_cur < rlim_t(1) << 30
                         ? int(files.rlim_cur) - 1
                         : (1 << 20);

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {out_pipe[0], out_pipe[1], verdict_pipe[0], verdict_pipe[1]}) ::close(fd);
    return o.failure = std::string("fork failed: ") + std::strerror(errno), o;
  }
  if (pid == 0)
    exec_child(program.c_str(), argv.data(), envp.data(), out_pipe[1], verdict_pipe[1], max_fd,
               limits);
  o.started = true;
  ::setpgid(pid, pid);  // also here, so that the kill below cannot race the child's own call
  ::close(out_pipe[1]);
  ::close(verdict_pipe[1]);

  // Read both pipes until both close, or until the wall-clock limit.
  const auto deadline = start + std::chrono::duration<double>(limits.time_seconds);
  bool out_open = true, verdict_open = true, verdict_truncated = false;
  while (out_open || verdict_open) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      o.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    const int wait_ms = int(std::chrono::duration<double, std::milli>(deadline - now).count()) + 1;
    pollfd fds[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0},
                     {verdict_open ? verdict_pipe[0] : -1, POLLIN, 0}};
    const int ready = ::poll(fds, 2, wait_ms);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (fds[0].revents)
      out_open = drain(out_pipe[0], o.output, limits.output_bytes, o.output_truncated);
    if (fds[1].revents)
      verdict_open = drain(verdict_pipe[0], o.verdict, std::size_t(1) << 26, verdict_truncated);
  }
  ::close(out_pipe[0]);
  ::close(verdict_pipe[0]);

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::kill(-pid, SIGKILL);  // grandchildren the student started, if any
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) o.exited = true, o.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  return o;
}

std::string describe_outcome(const Outcome& o, const Limits& limits) {
  auto num = [](double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  if (!o.started) return "could not be started: " + o.failure;
  if (o.timed_out)
    return "exceeded the time limit of " + num(limits.time_seconds) +
           " s (an infinite loop?) and was killed";
  const bool out_of_memory = o.output.find("std::bad_alloc") != std::string::npos;
  if (o.signal == SIGXCPU || (o.signal == SIGKILL && !out_of_memory))
    return "exceeded the CPU time limit of " + num(std::ceil(limits.time_seconds) + 1) +
           " s and was killed";
  if (out_of_memory && (o.signal != 0 || (o.exited && o.exit_code != 0)))
    return "exceeded the memory limit of " + std::to_string(limits.memory_mib) +
           " MiB (std::bad_alloc) and stopped";
  if (o.signal != 0) return "crashed with " + signal_name(o.signal);
  if (o.verdict.empty())
    return "exited with code " + std::to_string(o.exit_code) +
           " without a verdict (did the code call exit() or std::quick_exit?)";
  if (o.exit_code != 0) return "exited with code " + std::to_string(o.exit_code);
  return "";
}

}  // namespace xenc::grade

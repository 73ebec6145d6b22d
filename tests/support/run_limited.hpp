// Running a program under limits, for the tests that check what a command line costs: its
// address space capped (as `prlimit --as`), a wall-clock timeout, and the peak resident memory
// and time it took (wait4's rusage), besides its exit code, stdout and stderr.
//
//     const LimitedRun r = run_limited({XENC_APP_ENCODE, "--weights", "w.npz", ...}, dir);
//     EXPECT_LT(r.peak_rss_bytes, 256.0 * (1 << 20));
//
// A program that exceeds the cap gets std::bad_alloc (or dies), one that runs past the timeout
// is killed (timed_out): a regression fails fast instead of swapping the machine.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/run_program.hpp"

namespace xenc::test {

struct LimitedRun {
  int status = -1;         ///< exit code, -1 when killed by a signal or not started
  int signal = 0;          ///< the signal that ended it (0: it exited)
  bool timed_out = false;  ///< killed after the timeout
  double seconds = 0;      ///< wall-clock time
  double peak_rss_bytes = 0;
  std::string out, err;
};

/// Address-space cap of the tests that run command lines through their extremes: 1.5 GiB.
inline constexpr std::size_t kTestAddressSpace = std::size_t(1536) << 20;

/// Runs argv[0] with argv in `cwd`, stdout and stderr to cwd/stdout.txt and cwd/stderr.txt,
/// under RLIMIT_AS = address_space bytes, killed after timeout_s seconds.
inline LimitedRun run_limited(const std::vector<std::string>& argv, const std::string& cwd,
                              std::size_t address_space = kTestAddressSpace,
                              double timeout_s = 60) {
  LimitedRun r;
  const std::string out_file = cwd + "/stdout.txt", err_file = cwd + "/stderr.txt";
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) return r;
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(127);
    const int out = open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(127);
    const rlimit as{address_space, address_space};
    setrlimit(RLIMIT_AS, &as);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  for (;;) {
    const pid_t done = wait4(pid, &status, WNOHANG, &usage);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() - start > std::chrono::duration<double>(timeout_s)) {
      kill(pid, SIGKILL);
      wait4(pid, &status, 0, &usage);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.peak_rss_bytes = 1024.0 * double(usage.ru_maxrss);
  if (WIFEXITED(status)) r.status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.out = read_file(out_file);
  r.err = read_file(err_file);
  return r;
}

}  // namespace xenc::test

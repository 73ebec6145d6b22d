// Running untrusted code (a student's exercise) in its own process, with limits.
//
// run_isolated forks, sets the child's limits (RLIMIT_AS for memory, RLIMIT_CPU for processor
// time), sends the child's stdout and stderr into a captured buffer, and gives it one more pipe,
// the verdict channel, whose descriptor number travels in the environment variable
// XENC_GRADE_VERDICT_FD. The grading code in the child (xenc/grade/runner.hpp, child_main) reads
// and erases that variable, moves the descriptor to a number chosen at run time and writes its
// JSON verdict there; the student's code is never told where. The parent kills the child's
// process group with SIGKILL at the wall-clock limit. Nothing here throws for what the child does:
// crashes, hangs and limits are reported in the Outcome.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace xenc::grade {

/// The limits of one child process.
struct Limits {
  double time_seconds = 10.0;    ///< wall-clock limit (the CPU limit is this, rounded up, + 1 s)
  std::size_t memory_mib = 512;  ///< address-space limit (RLIMIT_AS)
  std::size_t output_bytes = 16384;  ///< captured stdout + stderr kept (the rest is read, dropped)
};

/// What happened to the child.
struct Outcome {
  bool started = false;  ///< false: fork or exec failed (see failure)
  bool exited = false;   ///< exited normally, with exit_code
  int exit_code = 0;
  int signal = 0;          ///< the signal that ended it (0 if none)
  bool timed_out = false;  ///< killed at the wall-clock limit
  double seconds = 0.0;    ///< wall-clock time
  std::string verdict;     ///< what the child wrote on the verdict channel
  std::string output;      ///< captured stdout + stderr (at most Limits::output_bytes)
  bool output_truncated = false;
  std::string failure;  ///< why it could not start
};

/// Runs program with args (argv[0] is program) under limits. env_extra ("NAME=value") is added
/// to the environment.
Outcome run_isolated(const std::string& program, const std::vector<std::string>& args,
                     const Limits& limits, const std::vector<std::string>& env_extra = {});

/// "SIGSEGV (segmentation fault)" for a signal number.
std::string signal_name(int signal);

/// One sentence for an Outcome that carries no verdict: "crashed with SIGSEGV (segmentation
/// fault)", "exceeded the time limit of 2 s", "exceeded the memory limit of 64 MiB", "exited with
/// code 0 without a verdict". Empty when the child wrote a verdict and exited with 0.
std::string describe_outcome(const Outcome& o, const Limits& limits);

}  // namespace xenc::grade

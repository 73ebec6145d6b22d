// Shared by the demo apps (included as "../common/cli.hpp"; not an app: no CMakeLists.txt here):
// --version, the option checks CLI11 does not make on its own, the resource guard (memory, output
// size and time checked against a limit before the work, the estimate from xenc/nn/cost.hpp), and
// a checked standard output.
//
// Why the checks: CLI11 2.1 reads "-1" into an unsigned option by wrapping it around to 2^64 - 1,
// and a float option takes "1e99" as inf. Every numeric option of every app therefore goes
// through whole_range (parsed as a signed 64-bit number, so "-1" is a negative number that is out
// of range) or positive_float (finite, > 0 and representable as a float).
#pragma once

#include <CLI/CLI.hpp>
#include <xenc/config.hpp>
#include <xenc/core/blas_core.hpp>
#include <xenc/nn/cost.hpp>
#include "heap_policy.hpp"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>

namespace xenc_app {

/// --version prints "<program> <XENC_VERSION>", then the BLAS, its core set (and why that one)
/// and its thread count as the program runs (xenc::blas_summary), then the heap (heap_policy.hpp),
/// and exits with status 0:
///   xenc-word-order 0.1.0
///   BLAS: OpenBLAS 0.3.21, core set Zen (OpenBLAS's choice; the CPU's best tier: AVX2), 2 threads
///   heap: glibc, fixed thresholds (blocks up to 32 MiB reused, 64 MiB kept free)
inline void add_version(CLI::App& app, const std::string& program) {
  app.set_version_flag(
      "--version",
      [program] {
        return program + " " + XENC_VERSION + "\n" + xenc::blas_summary(xenc::blas_report()) +
               "\nheap: " + heap_summary();
      },
      "print the version, the BLAS and its kernels, and exit");
}

/// A whole number in [lo, hi] (both inclusive). "-1", "2.5" and "1e3" are refused with
/// "Value ... not in range lo to hi".
inline CLI::Validator whole_range(std::int64_t lo, std::int64_t hi) { return CLI::Range(lo, hi); }

/// Adds option `name` reading into `value`, checked by each validator in turn (CLI11 runs them in
/// this order), with its default shown in --help: the one-line form of
/// `app.add_option(name, value, help)->check(a)->check(b)->capture_default_str()`.
template <class T, class... Validators>
CLI::Option* add_checked(CLI::App& app, const std::string& name, T& value, const std::string& help,
                         const Validators&... checks) {
  CLI::Option* option = app.add_option(name, value, help);
  (option->check(checks), ...);
  return option->capture_default_str();
}

/// A finite number > 0 that stays finite and non-zero as a float (at most FLT_MAX, at least the
/// smallest float): refuses 0, negatives, "inf", "nan" and 1e99 (which a float option reads as
/// inf).
inline CLI::Validator positive_float() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        double v = 0;
        const bool parsed = CLI::detail::lexical_cast(input, v);
        if (!parsed || !std::isfinite(v) || !(v > 0) || v > double(FLT_MAX) ||
            static_cast<float>(v) == 0.0f)
          return "Value " + input + " is not a finite positive float (expected 0 < value <= " +
                 std::to_string(FLT_MAX) + ")";
        return {};
      },
      "FLOAT > 0");
}

/// Bytes that an EncoderModel forward pass with a ModelTrace needs (xenc::estimate_pass_cost,
/// Pass::traced_inference, xenc/nn/cost.hpp), for callers that have the sizes only.
inline double encoder_inference_bytes(std::size_t V, std::size_t max_len, std::size_t D,
                                      std::size_t H, std::size_t F, std::size_t L, std::size_t B,
                                      std::size_t T) {
  xenc::EncoderModelConfig c;
  c.vocab_size = V;
  c.max_len = max_len;
  c.position = max_len > 0 ? xenc::PositionKind::learned : xenc::PositionKind::none;
  c.layer.d_model = D;
  c.layer.nhead = H;
  c.layer.dim_feedforward = F;
  c.num_layers = L;
  return xenc::estimate_pass_cost(c, B, T, xenc::Pass::traced_inference).peak_bytes;
}

/// The memory limit of every app that builds a model, unless --max-memory-mb changes it: 1 GiB,
/// so that no command line makes a program take more before it refuses.
constexpr std::size_t kDefaultMaxMemoryMb = 1024;

/// "1.5 GiB", "300.0 MiB".
inline std::string human_bytes(double bytes) {
  char buf[64];
  if (bytes >= 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  else
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024));
  return buf;
}

/// "0.25 s", "45 s", "12.5 min", "3.2 h", "79.0 days".
inline std::string human_seconds(double s) {
  char buf[64];
  if (s < 10)
    std::snprintf(buf, sizeof buf, "%.2g s", s);
  else if (s < 90)
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 5400)
    std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else if (s < 172800)
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  else
    std::snprintf(buf, sizeof buf, "%.1f days", s / 86400);
  return buf;
}

/// "3.2 GFLOP", "450.0 TFLOP".
inline std::string human_flops(double flops) {
  char buf[64];
  if (flops >= 1e12)
    std::snprintf(buf, sizeof buf, "%.1f TFLOP", flops / 1e12);
  else if (flops >= 1e9)
    std::snprintf(buf, sizeof buf, "%.1f GFLOP", flops / 1e9);
  else
    std::snprintf(buf, sizeof buf, "%.1f MFLOP", flops / 1e6);
  return buf;
}

/// "12.3 ms per step", "2.1 s per step".
inline std::string fmt_seconds_per_step(double s) {
  char buf[64];
  if (s < 1)
    std::snprintf(buf, sizeof buf, "%.1f ms per step", 1e3 * s);
  else
    std::snprintf(buf, sizeof buf, "%.1f s per step", s);
  return buf;
}

/// A resource the work would need beyond the program's limit (memory, output size, time):
/// thrown before anything is allocated, written or trained.
struct resource_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// --max-memory-mb MB (default 1024): the memory limit the program checks its estimate against.
inline CLI::Option* add_memory_limit(CLI::App& app, std::size_t& max_memory_mb) {
  return app
      .add_option("--max-memory-mb", max_memory_mb,
                  "refuse work whose estimated memory exceeds this (MiB)")
      ->check(whole_range(16, 1 << 24))
      ->capture_default_str();
}

/// The output limit of every program that writes files or large text, unless --max-output-mb
/// changes it: 100 MiB per file.
constexpr std::size_t kDefaultMaxOutputMb = 100;

/// --max-output-mb MB (default 100): the largest file (or standard output) the program writes.
inline CLI::Option* add_output_limit(CLI::App& app, std::size_t& max_output_mb) {
  return app
      .add_option("--max-output-mb", max_output_mb,
                  "refuse to write a file (or print output) larger than this (estimated, MiB)")
      ->check(whole_range(1, 100000))
      ->capture_default_str();
}

/// Throws resource_error unless need_bytes <= limit: "<what> needs about 4.4 GiB of memory
/// (<details>), more than the limit of 1.0 GiB (--max-memory-mb 1024)[: <advice>]".
inline void check_memory(double need_bytes, std::size_t max_memory_mb, const std::string& what,
                         const std::string& details, const std::string& advice = "") {
  const double limit = double(max_memory_mb) * 1024 * 1024;
  if (need_bytes <= limit) return;
  std::string need = human_bytes(need_bytes);
  if (need == human_bytes(limit)) {  // "1.0 GiB, more than 1.0 GiB": show the difference
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f MiB", need_bytes / (1024.0 * 1024));
    need = buf;
  }
  throw resource_error(what + " needs about " + need + " of memory (" + details +
                       "), more than the limit of " + human_bytes(limit) + " (--max-memory-mb " +
                       std::to_string(max_memory_mb) + ")" + (advice.empty() ? "" : ": " + advice));
}

/// Throws resource_error unless bytes <= max_output_mb MiB: "<what> would be about 574.1 MiB,
/// over the limit of 100 MiB per file (--max-output-mb)[: <advice>]".
inline void check_output_size(double bytes, std::size_t max_output_mb, const std::string& what,
                              const std::string& advice = "") {
  if (bytes <= double(max_output_mb) * 1024 * 1024) return;
  throw resource_error(what + " would be about " + human_bytes(bytes) + ", over the limit of " +
                       std::to_string(max_output_mb) + " MiB per file (--max-output-mb)" +
                       (advice.empty() ? "" : ": " + advice));
}

/// The arithmetic rate a time estimate assumes before anything has run: a fast 2-core machine's
/// OpenBLAS sgemm (bench/README.md: 90-220 GFLOP/s). Estimates at this rate are lower bounds
/// of the real time, so a refusal on them never stops work that would have been quick; the
/// training programs check again with the rate they measure once the first steps have run.
constexpr double kFastFlopsPerSecond = 200e9;

/// --max-minutes M (default `minutes`): the time limit of a program that trains.
inline CLI::Option* add_time_limit(CLI::App& app, double& max_minutes) {
  return app
      .add_option("--max-minutes", max_minutes,
                  "refuse work whose estimated run time exceeds this (minutes)")
      ->check(positive_float())
      ->capture_default_str();
}

/// Throws resource_error when `seconds` exceeds max_minutes: "<what> would take about 3.2 h
/// (<how>), more than the limit of 10 min (--max-minutes 10)[: <advice>]".
inline void check_time(double seconds, double max_minutes, const std::string& what,
                       const std::string& how, const std::string& advice = "") {
  if (seconds <= 60.0 * max_minutes) return;
  char limit[64];
  std::snprintf(limit, sizeof limit, "%g", max_minutes);
  throw resource_error(what + " would take about " + human_seconds(seconds) + " (" + how +
                       "), more than the limit of " + limit + " min (--max-minutes " + limit + ")" +
                       (advice.empty() ? "" : ": " + advice));
}

/// The limits a program checks its estimates against before the work, and the options that set
/// them: one record for every program, so that each names its limits the same way.
///
///     xenc_app::Guard guard;
///     xenc_app::add_guard_options(app, guard, xenc_app::kMemory | xenc_app::kOutput);
///     guard.memory(need, "this model", "D = 16, T = 5", "a shorter sentence");
struct Guard {
  std::size_t max_memory_mb = kDefaultMaxMemoryMb;  ///< --max-memory-mb
  std::size_t max_output_mb = kDefaultMaxOutputMb;  ///< --max-output-mb
  double max_minutes = 10;                          ///< --max-minutes

  /// Throws resource_error over --max-memory-mb (check_memory).
  void memory(double bytes, const std::string& what, const std::string& details,
              const std::string& advice = "") const {
    check_memory(bytes, max_memory_mb, what, details, advice);
  }
  /// Throws resource_error over --max-output-mb (check_output_size).
  void output(double bytes, const std::string& what, const std::string& advice = "") const {
    check_output_size(bytes, max_output_mb, what, advice);
  }
  /// Throws resource_error when `flops` at a fast machine's rate (kFastFlopsPerSecond, a lower
  /// bound of the real time) exceed --max-minutes (check_time).
  void time(double flops, const std::string& what, const std::string& sizes,
            const std::string& advice = "") const {
    check_time(flops / kFastFlopsPerSecond, max_minutes, what,
               human_flops(flops) + " at " + human_flops(kFastFlopsPerSecond) +
                   "/s, a fast machine's rate; " + sizes,
               advice);
  }
  /// The rate time() assumes is a lower bound of the real time, and far too low where attention's
  /// per-score work outweighs the GEMMs (small Dh, long T: xenc-encode with D = 8 on T = 100,000
  /// took 53 s where 200 GFLOP/s says 8 s). So a long single pass (T >= 4 kSamplePositions)
  /// whose lower bound is over 1/60 of --max-minutes (a second of a minute) is measured first:
  /// `sample` runs the same kind of work on a prefix of the input (kSamplePositions positions of
  /// one row, in tiles as the whole pass), `sample_flops` is its FLOPs, and the whole pass is
  /// checked against --max-minutes at the measured rate (the faster of two runs of the sample).
  /// The sample's rate errs low, so the check errs towards refusing: on the idle 2-core machine
  /// of bench/README.md, xenc-encode's T = 100,000 at D = 8 is estimated at 14-15 s and runs 7 s.
  static constexpr std::size_t kSamplePositions = 2048;
  bool worth_measuring(double flops, std::size_t T) const {
    return flops / kFastFlopsPerSecond > max_minutes && T >= 4 * kSamplePositions;
  }
  template <class Sample>
  void time_measured(double flops, double sample_flops, Sample&& sample, const std::string& what,
                     const std::string& sizes, const std::string& advice = "") const {
    // the faster of two runs: the first also pays for the thread pool's start and first touches
    double seconds = 1e300;
    for (int run = 0; run < 2; ++run) {
      const auto start = std::chrono::steady_clock::now();
      sample();
      seconds = std::min(
          seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    const double rate = sample_flops / std::max(seconds, 1e-6);
    check_time(flops / rate, max_minutes, what,
               human_flops(flops) + " at " + human_flops(rate) + "/s, measured here on its first " +
                   std::to_string(kSamplePositions) + " positions; " + sizes,
               advice);
  }
};

/// Which limits a program estimates (and so which options it takes).
enum GuardResource : unsigned { kMemory = 1, kOutput = 2, kTime = 4 };

/// Adds --max-memory-mb, --max-output-mb and --max-minutes, each when `resources` names it.
inline void add_guard_options(CLI::App& app, Guard& guard, unsigned resources) {
  if (resources & kMemory) add_memory_limit(app, guard.max_memory_mb);
  if (resources & kOutput) add_output_limit(app, guard.max_output_mb);
  if (resources & kTime) add_time_limit(app, guard.max_minutes);
}

/// Prints "<program>: error: <message>" for an exception that ends the program and returns 1.
/// The two that carry no useful text of their own are rewritten: std::bad_alloc (the estimate
/// should have refused first) and a filesystem error (its path and the system's reason).
inline int report_error(const std::string& program, const std::exception& e) {
  std::string what = e.what();
  if (dynamic_cast<const std::bad_alloc*>(&e))
    what =
        "out of memory: the machine could not give an allocation this run needed, although its "
        "estimate was within --max-memory-mb (please report the command line)";
  else if (const auto* fe = dynamic_cast<const std::filesystem::filesystem_error*>(&e)) {
    // "filesystem error: cannot create directories: Not a directory [/proc/x]" ->
    // "\"/proc/x\": cannot create directories: Not a directory"
    std::string op = fe->what();
    const std::string prefix = "filesystem error: ";
    if (op.rfind(prefix, 0) == 0) op = op.substr(prefix.size());
    if (const auto bracket = op.find(" ["); bracket != std::string::npos)
      op = op.substr(0, bracket);
    what = "\"" + fe->path1().string() + "\": " + op;
  }
  std::cerr << program << ": error: " << what << "\n";
  return 1;
}

/// Flushes stdout (both std::cout and C stdio). Returns 0, or 1 with "<program>: error: ..." on
/// stderr when a write failed (a full disk: `> /dev/full`), so a lost output is never exit 0.
inline int finish_stdout(const std::string& program) {
  std::cout.flush();
  const bool cout_ok = static_cast<bool>(std::cout);
  const bool stdio_ok = std::fflush(stdout) == 0 && !std::ferror(stdout);
  if (cout_ok && stdio_ok) return 0;
  std::cerr << program
            << ": error: writing to standard output failed (disk full or output closed?)\n";
  return 1;
}

}  // namespace xenc_app

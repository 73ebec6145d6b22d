// Shared by the training apps (xenc-train-order, xenc-extrapolate; included as
// "../common/progress.hpp"): the progress display of a training loop, and number formatting.
//
// On a terminal: one bar redrawn in place after every step (at most 10 times a second):
//     rope       [########............] epoch 2/5  step 120/300  loss 0.412  acc 88.1%  95 steps/s  ETA 2 s
// Otherwise (a pipe, a log file, a test): one plain line per epoch, never a carriage return:
//     rope: epoch 2/5, step 120/300, loss 0.4120, train acc 88.1%, held-out acc 90.2%, 95 steps/s, ETA 2 s
// Disabled (--quiet, --json): nothing at all.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace xenc_app {

/// printf-style formatting of one number: fmt("%.1f", 2.25) == "2.2".
inline std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// A share as a percentage with one decimal: pct(0.5) == "50.0%".
inline std::string pct(double v) { return fmt("%.1f%%", 100.0 * v); }

class Progress {
 public:
  using Clock = std::chrono::steady_clock;

  /// enabled: show anything at all. eval_label names the evaluation shown in the plain
  /// per-epoch lines ("held-out acc", "acc at length 16").
  explicit Progress(bool enabled, std::string eval_label = "held-out acc")
      : enabled_(enabled), tty_(enabled && isatty(fileno(stdout))), eval_label_(std::move(eval_label)) {}

  // Called after every step: a redrawn bar on a terminal, nothing otherwise (see epoch()).
  void step(const std::string& scheme, int epoch, int epochs, std::size_t step, std::size_t steps,
            double loss, double acc, double rate) {
    if (!tty_) return;
    const auto now = Clock::now();
    if (step != steps && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    const int width = 20;
    const int filled = int(double(width) * double(step) / double(steps));
    std::string bar = "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
    std::printf("\r\033[K%-10s %s epoch %d/%d  step %zu/%zu  loss %.3f  acc %s  %.0f steps/s  ETA %s",
                scheme.c_str(), bar.c_str(), epoch, epochs, step, steps, loss, pct(acc).c_str(), rate,
                eta(steps - step, rate).c_str());
    std::fflush(stdout);
  }

  // Called after every epoch: one plain line when stdout is not a terminal.
  void epoch(const std::string& scheme, int epoch, int epochs, std::size_t step, std::size_t steps,
             double loss, double acc, double eval_acc, double rate) {
    if (!enabled_ || tty_) return;
    std::printf("%s: epoch %d/%d, step %zu/%zu, loss %.4f, train acc %s, %s %s, "
                "%.0f steps/s, ETA %s\n",
                scheme.c_str(), epoch, epochs, step, steps, loss, pct(acc).c_str(), eval_label_.c_str(),
                pct(eval_acc).c_str(), rate, eta(steps - step, rate).c_str());
    std::fflush(stdout);
  }

  void done() {
    if (tty_) std::printf("\r\033[K");
    std::fflush(stdout);
  }

 private:
  static std::string eta(std::size_t left, double rate) {
    return rate > 0 ? fmt("%.0f s", double(left) / rate) : std::string("?");
  }
  bool enabled_, tty_;
  std::string eval_label_;
  Clock::time_point last_{};
};

}  // namespace xenc_app

// Shared by the training apps (xenc-train-order, xenc-extrapolate; included as
// "../common/progress.hpp"): the progress display of a training loop, and number formatting.
//
// On a terminal: one bar redrawn in place after every step (at most 10 times a second):
//     rope       [########............] epoch 2/5  step 120/300  loss 0.412  acc 88.1%  95 steps/s
//     ETA 2 s
// Otherwise (a pipe, a log file, a test): one plain line per epoch, never a carriage return:
//     rope: epoch 2/5, step 120/300, loss 0.4120, train acc 88.1%, held-out acc 90.2%, 95 steps/s,
//     ETA 2 s
// and, when an epoch is long, a line every 10 s within it, so a pipe never sits silent:
//     rope: epoch 1/5, step 40/300, loss 0.9120, 4 steps/s, ETA 65 s
// Disabled (--quiet, --json): nothing at all.
//
// With set_time_limit, every step also checks the whole run's time at the rate measured so far
// (after 50 steps or 2 s, past the first steps' warm-up): over --max-minutes it throws
// resource_error, within the first seconds of a run that would take days, instead of showing "ETA
// 79 days".
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "cli.hpp"

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
  /// plain_every: the interval of the plain lines within an epoch (not on a terminal).
  explicit Progress(bool enabled, std::string eval_label = "held-out acc",
                    std::chrono::milliseconds plain_every = std::chrono::seconds(10))
      : enabled_(enabled),
        tty_(enabled && isatty(fileno(stdout))),
        eval_label_(std::move(eval_label)),
        plain_every_(plain_every) {}

  /// The whole run: `total_steps` steps over every model, at most `max_minutes`. `advice` ends
  /// the refusal ("fewer --epochs ...").
  void set_time_limit(std::size_t total_steps, double max_minutes, std::string advice) {
    total_steps_ = total_steps;
    max_minutes_ = max_minutes;
    advice_ = std::move(advice);
  }

  // Called after every step: the time check, then a redrawn bar on a terminal, or a plain line
  // every 10 s otherwise (see epoch()).
  void step(const std::string& scheme, int epoch, int epochs, std::size_t step, std::size_t steps,
            double loss, double acc, double rate) {
    const auto now = Clock::now();
    if (run_start_ == Clock::time_point{}) run_start_ = last_ = now;
    ++steps_done_;
    const double elapsed = std::chrono::duration<double>(now - run_start_).count();
    if (total_steps_ > 0 && (steps_done_ >= 50 || elapsed >= 2)) {  // past the warm-up
      const double per_step = elapsed / double(steps_done_);
      const double left =
          per_step * double(total_steps_ > steps_done_ ? total_steps_ - steps_done_ : 0);
      check_time(elapsed + left, max_minutes_,
                 "this run of " + std::to_string(total_steps_) + " training steps",
                 "measured: " + fmt_seconds_per_step(per_step) + " over the first " +
                     std::to_string(steps_done_) + " step(s)",
                 advice_);
    }
    if (!tty_) {
      if (enabled_ && step != steps && now - last_ >= plain_every_) {
        last_ = now;
        std::printf("%s: epoch %d/%d, step %zu/%zu, loss %.4f, %.0f steps/s, ETA %s\n",
                    scheme.c_str(), epoch, epochs, step, steps, loss, rate,
                    eta(steps - step, rate).c_str());
        std::fflush(stdout);
      }
      return;
    }
    if (step != steps && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    const int width = 20;
    const int filled = int(double(width) * double(step) / double(steps));
    std::string bar = "[" + std::string(filled, '#') + std::string(width - filled, '.') + "]";
    std::printf(
        "\r\033[K%-10s %s epoch %d/%d  step %zu/%zu  loss %.3f  acc %s  %.0f steps/s  ETA %s",
        scheme.c_str(), bar.c_str(), epoch, epochs, step, steps, loss, pct(acc).c_str(), rate,
        eta(steps - step, rate).c_str());
    std::fflush(stdout);
  }

  // Called after every epoch: one plain line when stdout is not a terminal.
  void epoch(const std::string& scheme, int epoch, int epochs, std::size_t step, std::size_t steps,
             double loss, double acc, double eval_acc, double rate) {
    if (!enabled_ || tty_) return;
    last_ = Clock::now();
    std::printf(
        "%s: epoch %d/%d, step %zu/%zu, loss %.4f, train acc %s, %s %s, "
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
    if (!(rate > 0)) return "?";
    const double s = double(left) / rate;
    return s < 90 ? fmt("%.0f s", s) : human_seconds(s);
  }
  bool enabled_, tty_;
  std::string eval_label_;
  std::chrono::milliseconds plain_every_;
  Clock::time_point last_{}, run_start_{};
  std::size_t total_steps_ = 0, steps_done_ = 0;
  double max_minutes_ = 0;
  std::string advice_;
};

}  // namespace xenc_app

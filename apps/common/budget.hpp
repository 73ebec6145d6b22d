// Shared by the training apps (xenc-train-order, xenc-extrapolate; included as
// "../common/budget.hpp"): the memory and time of a whole training run, decided before the first
// model is built, from the model's configuration, the batch shapes and the number of steps
// (xenc/nn/cost.hpp), against --max-memory-mb and --max-minutes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include <xenc/nn/cost.hpp>

#include "cli.hpp"

namespace xenc_app {

/// What a training run will do, in the terms of the estimate.
struct TrainingPlan {
  xenc::EncoderModelConfig config;    ///< one model (the largest, when schemes differ)
  std::size_t num_labels = 2;         ///< C, the classifier's outputs
  std::size_t batch = 1, length = 1;  ///< a training batch [B, T] (T: the longest sequence)
  std::size_t models = 1;             ///< models trained one after another (one per scheme)
  std::size_t steps = 0;              ///< training steps per model
  std::size_t eval_batch = 1, eval_length = 1;  ///< the largest evaluation batch [B, T]
  double eval_tokens = 0;  ///< tokens evaluated per model (every evaluation pass)
};

/// The run's peak memory: a training step, plus the activations of the largest evaluation pass
/// (an evaluation between epochs runs while the optimiser's state and the modules' caches of
/// the last step are still held).
inline double plan_peak_bytes(const TrainingPlan& p) {
  const auto train =
      xenc::estimate_pass_cost(p.config, p.batch, p.length, xenc::Pass::training, p.num_labels);
  const auto eval = xenc::estimate_pass_cost(p.config, p.eval_batch, p.eval_length,
                                             xenc::Pass::inference, p.num_labels);
  return train.peak_bytes + eval.activation_bytes;
}

/// The run's floating-point operations: every training step and every evaluated token.
inline double plan_flops(const TrainingPlan& p) {
  const auto train =
      xenc::estimate_pass_cost(p.config, p.batch, p.length, xenc::Pass::training, p.num_labels);
  const auto eval = xenc::estimate_pass_cost(p.config, p.eval_batch, p.eval_length,
                                             xenc::Pass::inference, p.num_labels);
  const double eval_per_token =
      eval.flops / double(std::max<std::size_t>(1, p.eval_batch * p.eval_length));
  return double(p.models) * (double(p.steps) * train.flops + p.eval_tokens * eval_per_token);
}

/// Throws resource_error when the plan needs more memory than --max-memory-mb, or more time
/// than --max-minutes at a fast machine's rate (a lower bound of the real time: the run checks
/// again with its measured rate, see Progress::set_time_limit). `sizes` names the options.
inline void check_training_plan(const TrainingPlan& p, std::size_t max_memory_mb,
                                double max_minutes, const std::string& sizes) {
  check_memory(plan_peak_bytes(p), max_memory_mb, "training",
               sizes + "; a step on a batch [" + std::to_string(p.batch) + ", " +
                   std::to_string(p.length) + "], evaluation on [" + std::to_string(p.eval_batch) +
                   ", " + std::to_string(p.eval_length) + "]",
               "a smaller --batch-size, --d-model, --ff or --layers, shorter sequences, or a "
               "higher --max-memory-mb");
  const double flops = plan_flops(p);
  check_time(
      flops / kFastFlopsPerSecond, max_minutes,
      "training " + std::to_string(p.models) + " model(s) of " + std::to_string(p.steps) + " steps",
      human_flops(flops) + " at " + human_flops(kFastFlopsPerSecond) +
          "/s, a fast machine's rate; " + sizes,
      "fewer --epochs, a smaller model or fewer sequences, or a higher --max-minutes");
}

}  // namespace xenc_app

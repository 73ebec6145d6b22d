// Shared by the training apps (xenc-train-order, xenc-extrapolate; included as
// "../common/training.hpp"): the one training loop, fit(), one optimisation step of a per-token
// classifier, and counting the positions it gets right.
//
//     fit(model, {data, vocab}, options,
//         [&](const FitStep& s) { ... },            // after every step: progress, running loss
//         [&](int epoch, std::size_t step) { ... }); // after every epoch, in eval mode: evaluate
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "xenc/data/batching.hpp"
#include "xenc/nn/optim.hpp"
#include "xenc/nn/token_classifier.hpp"
#include "xenc/ops/cross_entropy.hpp"

namespace xenc_app {

struct StepResult {
  xenc::Tensor3 logits;  ///< [B, T, C], before the update
  float loss = 0.0f;     ///< mean cross-entropy over the labelled positions
};

/// Throws std::runtime_error when logits hold a NaN or an infinity, naming `where` and the first
/// such value's position: a diverged model (or non-finite weights) must stop the program, not
/// become an accuracy (argmax over NaN picks class 0) or a loss curve of NaN.
inline void require_finite_logits(const xenc::Tensor3& logits, const std::string& where) {
  const float* z = logits.data();
  for (std::size_t i = 0; i < logits.size(); ++i)
    if (!std::isfinite(z[i])) {
      const std::size_t C = logits.shape(2), T = logits.shape(1);
      throw std::runtime_error(
          where + ": the model's logits are not finite (" + std::to_string(z[i]) +
          " at batch row " + std::to_string(i / C / T) + ", position " + std::to_string(i / C % T) +
          ", class " + std::to_string(i % C) +
          "): the weights diverged or hold NaN/inf; try a lower --lr or a smaller --clip");
    }
}

/// zero_grad, forward (non-finite logits throw, see above), cross-entropy (kIgnoreIndex positions
/// ignored), backward, clip the gradient norm to `clip`, set the learning rate schedule(step), and
/// take the optimiser step.
inline StepResult train_step(xenc::TokenClassifier& model, xenc::AdamW& opt,
                             const xenc::WarmupCosine& schedule, std::size_t step,
                             const xenc::LabelledBatch& b, float clip) {
  StepResult r;
  opt.zero_grad();
  r.logits = model.forward(b.ids, b.padding_mask);  // [B, T, C]
  require_finite_logits(r.logits, "training step " + std::to_string(step + 1));
  r.loss = xenc::cross_entropy_forward(r.logits, b.labels, xenc::kIgnoreIndex);
  model.backward(xenc::cross_entropy_backward(r.logits, b.labels, xenc::kIgnoreIndex));
  xenc::clip_grad_norm_(opt.params(), clip);
  opt.lr = schedule(step);
  opt.step();
  return r;
}

/// Adds the labelled positions of a batch to `positions`, and those whose largest logit is the
/// label (the first one on a tie) to `correct`. logits: [B, T, C]   labels: [B, T]
/// Non-finite logits throw (require_finite_logits): an argmax over NaN is not a prediction.
inline void count_correct(const xenc::Tensor3& logits, const xenc::Index2& labels,
                          std::size_t& positions, std::size_t& correct) {
  require_finite_logits(logits, "evaluation");
  const std::size_t C = logits.shape(2);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::int64_t label = labels.data()[i];
    if (label == xenc::kIgnoreIndex) continue;
    ++positions;
    const float* z = logits.data() + C * i;
    correct += std::int64_t(std::max_element(z, z + C) - z) == label;
  }
}

/// The optimiser and the batches of fit().
struct FitOptions {
  int epochs = 6;
  std::size_t batch_size = 32, warmup = 50;  ///< warm-up steps (capped at the total)
  double lr = 3e-3, weight_decay = 0.01, clip = 1.0;
  std::uint32_t seed = 0;  ///< the shuffling: the same batches for every model
};

/// The FitOptions of an app's options (fields epochs, batch_size, warmup, lr, weight_decay,
/// clip, seed, as xenc-train-order and xenc-extrapolate name them).
template <class AppOptions>
FitOptions fit_options(const AppOptions& o) {
  FitOptions f;
  f.epochs = o.epochs;
  f.batch_size = std::size_t(o.batch_size);
  f.warmup = std::size_t(o.warmup);
  f.lr = o.lr;
  f.weight_decay = o.weight_decay;
  f.clip = o.clip;
  f.seed = o.seed;
  return f;
}

/// What fit() trains on: labelled sequences and the vocabulary that turns them into ids.
struct TrainingSet {
  const std::vector<xenc::LabelledSentence>& sequences;
  const xenc::Vocabulary& vocab;
};

/// One step as fit() reports it to on_step.
struct FitStep {
  int epoch;                        ///< 1..epochs
  std::size_t step, steps;          ///< steps taken so far (1..steps), and in all
  std::size_t in_epoch, per_epoch;  ///< steps taken in this epoch (1..per_epoch), and per epoch
  const xenc::LabelledBatch& batch;
  const StepResult& result;  ///< logits before the update, and the loss
};

/// The training loop of the apps: AdamW (betas 0.9, 0.999, eps 1e-8, decoupled weight decay),
/// a WarmupCosine schedule over every step, then for each epoch: model.train(), shuffled
/// batches, train_step, on_step(step); model.eval(), on_epoch(epoch, steps so far). The model is
/// left in eval mode. Returns the number of steps taken.
inline std::size_t fit(xenc::TokenClassifier& model, const TrainingSet& data, const FitOptions& o,
                       const std::function<void(const FitStep&)>& on_step,
                       const std::function<void(int epoch, std::size_t step)>& on_epoch) {
  const std::size_t B = o.batch_size, N = data.sequences.size();
  const std::size_t per_epoch = (N + B - 1) / B, total = per_epoch * std::size_t(o.epochs);
  xenc::AdamW opt(model.parameters(), float(o.lr), 0.9f, 0.999f, 1e-8f, float(o.weight_decay));
  const xenc::WarmupCosine schedule(float(o.lr), std::min<std::size_t>(o.warmup, total), total);
  xenc::Rng shuffle(o.seed);
  std::size_t step = 0;
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    model.train();
    std::size_t in_epoch = 0;
    for (const auto& idx : xenc::shuffled_batches(N, B, shuffle)) {
      const xenc::LabelledBatch b = xenc::make_batch(data.sequences, idx, data.vocab);
      const StepResult sr = train_step(model, opt, schedule, step, b, float(o.clip));
      ++step;
      ++in_epoch;
      if (on_step) on_step(FitStep{epoch, step, total, in_epoch, per_epoch, b, sr});
    }
    model.eval();
    if (on_epoch) on_epoch(epoch, step);
  }
  model.eval();
  return step;
}

}  // namespace xenc_app

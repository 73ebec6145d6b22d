// Shared by the training apps (xenc-train-order, xenc-extrapolate; included as
// "../common/training.hpp"): one optimisation step of a per-token classifier, and counting the
// positions it gets right.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

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
      throw std::runtime_error(where + ": the model's logits are not finite (" + std::to_string(z[i]) +
                               " at batch row " + std::to_string(i / C / T) + ", position " +
                               std::to_string(i / C % T) + ", class " + std::to_string(i % C) +
                               "): the weights diverged or hold NaN/inf; try a lower --lr or a smaller --clip");
    }
}

/// zero_grad, forward (non-finite logits throw, see above), cross-entropy (kIgnoreIndex positions ignored), backward, clip the
/// gradient norm to `clip`, set the learning rate schedule(step), and take the optimiser step.
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
inline void count_correct(const xenc::Tensor3& logits, const xenc::Index2& labels, std::size_t& positions,
                          std::size_t& correct) {
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

}  // namespace xenc_app

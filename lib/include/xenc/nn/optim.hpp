// Optimisers over a ParameterList, so that a model built with xencoder can be trained.
//
//   SGD:   v = momentum · v + g;  θ -= lr · v            (torch.optim.SGD)
//   Adam:  m = β1 m + (1-β1) g;  v = β2 v + (1-β2) g²;
//          θ -= lr · (m / (1-β1^t)) / (sqrt(v / (1-β2^t)) + eps)   (torch.optim.Adam)
//          weight_decay adds wd · θ to g (L2, as torch.optim.Adam).
//   AdamW: θ -= lr · wd · θ  first (decoupled weight decay, Loshchilov & Hutter, 2019), then
//          the Adam update above with g unchanged                        (torch.optim.AdamW)
// A parameter whose gradient is not allocated yet (no backward has reached it) is skipped, as
// PyTorch skips parameters whose .grad is None. The parameter views must outlive the optimiser
// (keep the module alive). `lr` is a public field: a schedule sets it before each step():
//
//     xenc::AdamW opt(model.parameters(), 1e-3f);
//     xenc::WarmupCosine schedule(1e-3f, /*warmup_steps=*/50, /*total_steps=*/1000);
//     for (std::size_t step = 0; step < 1000; ++step) {
//       opt.zero_grad();
//       ... forward, loss, backward ...
//       xenc::clip_grad_norm_(opt.params(), 1.0f);
//       opt.lr = schedule(step);
//       opt.step();
//     }
#pragma once

#include <cstddef>
#include <vector>

#include "xenc/core/parameter.hpp"
#include "xenc/core/tensor.hpp"

namespace xenc {

class Optimizer {
 public:
  explicit Optimizer(ParameterList params) : params_(std::move(params)) {}
  virtual ~Optimizer() = default;
  virtual void step() = 0;
  /// Sets every allocated gradient to zero (torch's zero_grad(set_to_none=False)).
  void zero_grad();
  const ParameterList& params() const { return params_; }

 protected:
  ParameterList params_;
};

class SGD : public Optimizer {
 public:
  SGD(ParameterList params, float lr, float momentum = 0.0f);
  void step() override;
  float lr, momentum;

 private:
  std::vector<Tensor1> velocity_;  ///< one per parameter, zeros before the first step
};

class Adam : public Optimizer {
 public:
  Adam(ParameterList params, float lr = 1e-3f, float beta1 = 0.9f, float beta2 = 0.999f,
       float eps = 1e-8f, float weight_decay = 0.0f);
  void step() override;
  float lr, beta1, beta2, eps, weight_decay;
  /// Number of step() calls so far (t in the bias corrections).
  std::size_t steps() const { return t_; }

 protected:
  bool decoupled_weight_decay_ = false;  ///< AdamW: θ -= lr · wd · θ instead of g += wd · θ

 private:
  std::vector<Tensor1> m_, v_;  ///< first and second moments, one per parameter
  std::size_t t_ = 0;
};

/// Adam with decoupled weight decay, torch.optim.AdamW's defaults (weight_decay 0.01).
class AdamW : public Adam {
 public:
  AdamW(ParameterList params, float lr = 1e-3f, float beta1 = 0.9f, float beta2 = 0.999f,
        float eps = 1e-8f, float weight_decay = 1e-2f);
};

/// Linear warm-up then cosine decay, a learning rate for each optimisation step (0-based):
///     step < warmup:  lr = base · (step + 1) / warmup
///     after:          lr = min + (base - min) · (1 + cos(π · p)) / 2,
///                     p = (step - warmup) / (total - warmup), clamped to [0, 1]
/// Throws config_error unless base > 0, 0 <= min <= base and warmup <= total, total > 0.
struct WarmupCosine {
  WarmupCosine(float base_lr, std::size_t warmup_steps, std::size_t total_steps,
               float min_lr = 0.0f);
  float operator()(std::size_t step) const;
  float base_lr;
  std::size_t warmup_steps, total_steps;
  float min_lr;
};

/// Scales all gradients so that their global L2 norm is at most max_norm; returns the norm
/// before clipping (torch.nn.utils.clip_grad_norm_: scale = max_norm / (norm + 1e-6) when that
/// is below 1). Unallocated gradients count as zero. Throws config_error for max_norm <= 0.
float clip_grad_norm_(const ParameterList& params, float max_norm);
/// The same (the name before the PyTorch spelling).
float clip_grad_norm(const ParameterList& params, float max_norm);

}  // namespace xenc

// SGD with momentum, Adam, AdamW, gradient-norm clipping and a warm-up + cosine schedule.
#include "xenc/nn/optim.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>

#include "xenc/core/error.hpp"
#include "xenc/ops/optim.hpp"

namespace xenc {

void Optimizer::zero_grad() {
  for (auto& p : params_)
    if (p.grad.allocated()) flat_grad(p).fill(0.0f);
}

SGD::SGD(ParameterList params, float lr, float momentum)
    : Optimizer(std::move(params)), lr(lr), momentum(momentum) {
  for (const auto& p : params_) velocity_.push_back(xt::zeros<float>({p.size()}));
}

void SGD::step() {
  for (std::size_t k = 0; k < params_.size(); ++k) {
    if (!params_[k].grad.allocated()) continue;  // no backward reached this parameter yet
    // v = momentum · v + g;  θ -= lr · v, in one pass over the elements (ops/optim.hpp)
    sgd_update(params_[k], velocity_[k], lr, momentum);
  }
}

Adam::Adam(ParameterList params, float lr, float beta1, float beta2, float eps, float weight_decay)
    : Optimizer(std::move(params)),
      lr(lr),
      beta1(beta1),
      beta2(beta2),
      eps(eps),
      weight_decay(weight_decay) {
  for (const auto& p : params_) {
    m_.push_back(xt::zeros<float>({p.size()}));
    v_.push_back(xt::zeros<float>({p.size()}));
  }
}

void Adam::step() {
  ++t_;
  AdamCoefficients c;
  c.beta1 = beta1;
  c.beta2 = beta2;
  c.eps = eps;
  // AdamW shrinks θ before the update (decoupled); Adam adds wd · θ to the gradient (L2)
  c.decay = decoupled_weight_decay_ ? 1.0f - lr * weight_decay : 1.0f;
  c.l2 = decoupled_weight_decay_ ? 0.0f : weight_decay;
  // bias corrections for the zero-initialised moments: m̂ = m / (1 - β1^t), v̂ = v / (1 - β2^t)
  const double t = static_cast<double>(t_);
  c.step_size = static_cast<float>(lr / (1.0 - std::pow(double(beta1), t)));  // scalar
  const double bias_correction2 = 1.0 - std::pow(double(beta2), t);           // scalar
  c.bias_correction2_sqrt = static_cast<float>(std::sqrt(bias_correction2));  // scalar
  // per parameter, in one pass over its elements (ops/optim.hpp):
  //   m = β1 m + (1-β1) g;  v = β2 v + (1-β2) g²;  θ -= step_size · m / (√v / √(1-β2^t) + eps)
  for (std::size_t k = 0; k < params_.size(); ++k) {
    if (!params_[k].grad.allocated()) continue;  // no backward reached this parameter yet
    adam_update(params_[k], m_[k], v_[k], c);
  }
}

AdamW::AdamW(ParameterList params, float lr, float beta1, float beta2, float eps,
             float weight_decay)
    : Adam(std::move(params), lr, beta1, beta2, eps, weight_decay) {
  decoupled_weight_decay_ = true;
}

WarmupCosine::WarmupCosine(float base_lr, std::size_t warmup_steps, std::size_t total_steps,
                           float min_lr)
    : base_lr(base_lr), warmup_steps(warmup_steps), total_steps(total_steps), min_lr(min_lr) {
  check_config(base_lr > 0.0f, "WarmupCosine",
               "base_lr is " + std::to_string(base_lr) + ", expected > 0");
  check_config(min_lr >= 0.0f && min_lr <= base_lr, "WarmupCosine",
               "min_lr is " + std::to_string(min_lr) +
                   ", expected 0 <= min_lr <= base_lr = " + std::to_string(base_lr));
  check_config(total_steps > 0 && warmup_steps <= total_steps, "WarmupCosine",
               "warmup_steps (" + std::to_string(warmup_steps) + ") and total_steps (" +
                   std::to_string(total_steps) + ") must satisfy warmup <= total, total > 0");
}

float WarmupCosine::operator()(std::size_t step) const {
  // linear warm-up: small steps while Adam's second moments are still poor estimates
  if (step < warmup_steps)
    return base_lr * static_cast<float>(step + 1) / static_cast<float>(warmup_steps);
  // cosine decay from base_lr to min_lr over the remaining steps
  const std::size_t span = std::max<std::size_t>(1, total_steps - warmup_steps);
  const double p = std::min(1.0, double(step - warmup_steps) / double(span));
  const double cosine = std::cos(M_PI * p);  // scalar
  return static_cast<float>(min_lr + (base_lr - min_lr) * 0.5 * (1.0 + cosine));
}

float clip_grad_norm_(const ParameterList& params, float max_norm) {
  check_config(max_norm > 0.0f, "clip_grad_norm_",
               "max_norm is " + std::to_string(max_norm) + ", expected > 0");
  // global L2 norm over every gradient (in double: many small squares)
  double sq = 0.0;
  for (const auto& p : params)
    if (p.grad.allocated()) {
      const auto g = xt::cast<double>(flat_grad(p));
      sq += xt::sum(g * g)();
    }
  const float norm = static_cast<float>(std::sqrt(sq));  // scalar
  // as torch: scale by max_norm / (norm + 1e-6) when that is below 1
  const float coef = max_norm / (norm + 1e-6f);
  if (coef < 1.0f)
    for (const auto& p : params)
      if (p.grad.allocated()) {
        auto g = flat_grad(p);
        xt::noalias(g) = g * coef;
      }
  return norm;
}

float clip_grad_norm(const ParameterList& params, float max_norm) {
  return clip_grad_norm_(params, max_norm);
}

}  // namespace xenc

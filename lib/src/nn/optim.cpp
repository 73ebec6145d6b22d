// SGD with momentum, Adam, and global gradient-norm clipping.
#include "xenc/nn/optim.hpp"

#include <algorithm>
#include <cmath>

namespace xenc {

void Optimizer::zero_grad() {
  for (auto& p : params_) std::fill_n(p.grad, p.size(), 0.0f);
}

SGD::SGD(ParameterList params, float lr, float momentum)
    : Optimizer(std::move(params)), lr(lr), momentum(momentum) {
  for (const auto& p : params_) velocity_.emplace_back(p.size(), 0.0f);
}

void SGD::step() {
  for (std::size_t k = 0; k < params_.size(); ++k) {
    auto& p = params_[k];
    auto& vel = velocity_[k];
    for (std::size_t i = 0; i < p.size(); ++i) {
      // v = momentum · v + g;  θ -= lr · v
      vel[i] = momentum * vel[i] + p.grad[i];
      p.value[i] -= lr * vel[i];
    }
  }
}

Adam::Adam(ParameterList params, float lr, float beta1, float beta2, float eps, float weight_decay)
    : Optimizer(std::move(params)), lr(lr), beta1(beta1), beta2(beta2), eps(eps),
      weight_decay(weight_decay) {
  for (const auto& p : params_) {
    m_.emplace_back(p.size(), 0.0f);
    v_.emplace_back(p.size(), 0.0f);
  }
}

void Adam::step() {
  ++t_;
  // bias corrections for the zero-initialised moments
  const float c1 = 1.0f - std::pow(beta1, static_cast<float>(t_));
  const float c2 = 1.0f - std::pow(beta2, static_cast<float>(t_));
  for (std::size_t k = 0; k < params_.size(); ++k) {
    auto& p = params_[k];
    for (std::size_t i = 0; i < p.size(); ++i) {
      const float g = p.grad[i] + weight_decay * p.value[i];
      m_[k][i] = beta1 * m_[k][i] + (1.0f - beta1) * g;
      v_[k][i] = beta2 * v_[k][i] + (1.0f - beta2) * g * g;
      const float mhat = m_[k][i] / c1, vhat = v_[k][i] / c2;
      p.value[i] -= lr * mhat / (std::sqrt(vhat) + eps);
    }
  }
}

float clip_grad_norm(const ParameterList& params, float max_norm) {
  double sq = 0.0;
  for (const auto& p : params)
    for (std::size_t i = 0; i < p.size(); ++i) sq += double(p.grad[i]) * p.grad[i];
  const float norm = static_cast<float>(std::sqrt(sq));
  if (norm > max_norm && norm > 0.0f) {
    const float s = max_norm / (norm + 1e-6f);
    for (const auto& p : params)
      for (std::size_t i = 0; i < p.size(); ++i) p.grad[i] *= s;
  }
  return norm;
}

}  // namespace xenc

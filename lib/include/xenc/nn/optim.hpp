// Optimisers over a ParameterList, so that a model built with xencoder can be trained.
//
//   SGD:   v = momentum · v + g;  θ -= lr · v            (torch.optim.SGD)
//   Adam:  m = β1 m + (1-β1) g;  v = β2 v + (1-β2) g²;
//          θ -= lr · (m / (1-β1^t)) / (sqrt(v / (1-β2^t)) + eps)   (torch.optim.Adam)
//          weight_decay adds wd · θ to g (L2, as torch.optim.Adam).
// The parameter views must outlive the optimiser (keep the module alive).
#pragma once

#include <cstddef>
#include <vector>

#include "xenc/core/parameter.hpp"

namespace xenc {

class Optimizer {
 public:
  explicit Optimizer(ParameterList params) : params_(std::move(params)) {}
  virtual ~Optimizer() = default;
  virtual void step() = 0;
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
  std::vector<std::vector<float>> velocity_;
};

class Adam : public Optimizer {
 public:
  Adam(ParameterList params, float lr = 1e-3f, float beta1 = 0.9f, float beta2 = 0.999f,
       float eps = 1e-8f, float weight_decay = 0.0f);
  void step() override;
  float lr, beta1, beta2, eps, weight_decay;

 private:
  std::vector<std::vector<float>> m_, v_;
  std::size_t t_ = 0;
};

/// Scales all gradients so that their global L2 norm is at most max_norm; returns the norm
/// before clipping (torch.nn.utils.clip_grad_norm_).
float clip_grad_norm(const ParameterList& params, float max_norm);

}  // namespace xenc

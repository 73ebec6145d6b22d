// Layer normalisation over the last dimension (Ba, Kiros & Hinton, 2016).
//
//     y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias     (biased variance)
//
// Args:    normalized_shape D, eps (default 1e-5)
// Params:  weight [D] (ones), bias [D] (zeros)
// Shapes:  x, y: [B, T, D]
// PyTorch: torch.nn.LayerNorm(D, eps=1e-5)
// Throws:  shape_error if x.shape[2] != D.
#pragma once

#include <cstddef>

#include "xenc/core/tensor.hpp"
#include "xenc/nn/module.hpp"
#include "xenc/ops/layer_norm.hpp"

namespace xenc {

class LayerNorm : public Module {
 public:
  explicit LayerNorm(std::size_t normalized_shape, float eps = 1e-5f);

  Tensor3 forward(const Tensor3& x);
  Tensor3 backward(const Tensor3& grad_y);

  void collect_parameters(const std::string& prefix, ParameterList& out) override;

  std::size_t normalized_shape() const { return weight.size(); }

  Tensor1 weight, weight_grad;  ///< [D]
  Tensor1 bias, bias_grad;      ///< [D]
  float eps;

 private:
  Tensor3 cache_x_;
  LayerNormCache cache_;
  bool has_cache_ = false;
};

}  // namespace xenc

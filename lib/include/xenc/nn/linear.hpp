// Linear layer module.
//
//     y = x Wᵀ + b
//
// Args:    in_features, out_features, bias (default true)
// Params:  weight [out, in], bias [out]; initialised as PyTorch does,
//          U(-1/√in, 1/√in) for both, from the given Rng.
// Shapes:  x: [B, T, in] or [N, in]   y: [B, T, out] or [N, out]
// PyTorch: torch.nn.Linear(in_features, out_features, bias)
// Throws:  shape_error if x's last dimension is not in_features.
#pragma once

#include <cstddef>
#include <cstdint>

#include "xenc/core/random.hpp"
#include "xenc/core/tensor.hpp"
#include "xenc/nn/module.hpp"

namespace xenc {

class Linear : public Module {
 public:
  Linear(std::size_t in_features, std::size_t out_features, Rng& rng, bool bias = true);
  Linear(std::size_t in_features, std::size_t out_features, bool bias = true,
         std::uint32_t seed = 0);

  Tensor3 forward(const Tensor3& x);
  Tensor2 forward(const Tensor2& x);
  Tensor3 backward(const Tensor3& grad_y);
  Tensor2 backward(const Tensor2& grad_y);

  void collect_parameters(const std::string& prefix, ParameterList& out) override;

  std::size_t in_features() const { return weight.shape(1); }
  std::size_t out_features() const { return weight.shape(0); }
  bool has_bias() const { return bias.size() > 0; }

  Tensor2 weight, weight_grad;  ///< [out, in]
  Tensor1 bias, bias_grad;      ///< [out] (empty without bias)

 private:
  template <std::size_t R>
  xt::xtensor<float, R> accumulate_backward(const xt::xtensor<float, R>& grad_y);

  Tensor2 cache_x_;  ///< the last input, flattened to [N, in]
  bool has_cache_ = false;
};

}  // namespace xenc

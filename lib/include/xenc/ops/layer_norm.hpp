// Layer normalisation over the last axis (Ba, Kiros & Hinton, 2016).
//
//     mean = Σ x / D     var = Σ (x - mean)² / D     (biased, as PyTorch)
//     rstd = 1 / sqrt(var + eps)                      (eps inside the square root)
//     x̂ = (x - mean) · rstd        y = x̂ · weight + bias
//
// Backward (per row, with g = dy · weight):
//     dx = rstd · (g - mean(g) - x̂ · mean(g · x̂))    dweight = Σ dy · x̂    dbias = Σ dy
// Shapes:  x, y: [..., D]   weight, bias: [D]   cache.mean, cache.rstd: [N] (N = rows)
// PyTorch: torch.nn.functional.layer_norm(x, (D,), weight, bias, eps)
// Throws:  shape_error if weight or bias is not [D].
// Reference: reference::layer_norm_forward / _backward (xenc/reference/ops.hpp), loop by loop.
#pragma once

#include <cstddef>

#include "xenc/core/tensor.hpp"

namespace xenc {

struct LayerNormCache {
  Tensor1 mean;  ///< [N] per-row mean
  Tensor1 rstd;  ///< [N] per-row 1 / sqrt(var + eps)
};

template <std::size_t R>
struct LayerNormGrads {
  xt::xtensor<float, R> input;  ///< x's shape
  Tensor1 weight;               ///< [D]
  Tensor1 bias;                 ///< [D]
};

template <std::size_t R>
xt::xtensor<float, R> layer_norm_forward(const xt::xtensor<float, R>& x, const Tensor1& weight,
                                         const Tensor1& bias, float eps);
/// The same, keeping each row's mean and rstd in `cache` for layer_norm_backward.
template <std::size_t R>
xt::xtensor<float, R> layer_norm_forward(const xt::xtensor<float, R>& x, const Tensor1& weight,
                                         const Tensor1& bias, float eps, LayerNormCache& cache);

template <std::size_t R>
LayerNormGrads<R> layer_norm_backward(const xt::xtensor<float, R>& grad_y,
                                      const xt::xtensor<float, R>& x, const Tensor1& weight,
                                      const LayerNormCache& cache);

}  // namespace xenc

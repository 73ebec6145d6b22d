// Linear (fully connected) layer as pure functions.
//
//     y = x Wᵀ + b
//
// Shapes:  x: [..., in] (leading dimensions are flattened to N = B·T rows)
//          W: [out, in] (PyTorch layout)   b: [out] or empty for no bias   y: [..., out]
// One GEMM on [N, in] x [in, out] through OpenBLAS; linear_naive is the loop reference.
// Backward:  dx = dy W     dW = dyᵀ x     db = Σ_rows dy
// PyTorch: torch.nn.functional.linear(x, W, b)
// Throws:  shape_error if x.shape[-1] != in or b is neither empty nor [out].
#pragma once

#include <cstddef>

#include "xenc/core/tensor.hpp"

namespace xenc {

template <std::size_t R>
struct LinearGrads {
  xt::xtensor<float, R> input;  ///< dL/dx, x's shape
  Tensor2 weight;               ///< dL/dW, [out, in]
  Tensor1 bias;                 ///< dL/db, [out] (empty when there is no bias)
};

template <std::size_t R>
xt::xtensor<float, R> linear_forward(const xt::xtensor<float, R>& x, const Tensor2& weight,
                                     const Tensor1& bias);

template <std::size_t R>
LinearGrads<R> linear_backward(const xt::xtensor<float, R>& grad_y, const xt::xtensor<float, R>& x,
                               const Tensor2& weight, bool has_bias);

template <std::size_t R>
xt::xtensor<float, R> linear_naive(const xt::xtensor<float, R>& x, const Tensor2& weight,
                                   const Tensor1& bias);

}  // namespace xenc

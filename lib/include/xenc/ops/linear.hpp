// Linear (fully connected) layer as pure functions.
//
//     y = x Wᵀ + b
//
// Shapes:  x: [..., in] (leading dimensions are flattened to N = B·T rows)
//          W: [out, in] (PyTorch layout)   b: [out] or empty for no bias   y: [..., out]
// One GEMM on [N, in] x [in, out] through OpenBLAS; the loop reference is
// reference::linear_forward / _backward (xenc/reference/ops.hpp).
// Backward:  dx = dy W     dW = dyᵀ x     db = Σ_rows dy
// PyTorch: torch.nn.functional.linear(x, W, b)
// Throws:  shape_error if x.shape[-1] != in or b is neither empty nor [out].
#pragma once

#include <cstddef>

#include "xenc/core/tensor.hpp"

namespace xenc {

/// The three gradients as one value (the coursework exercise's return type, xenc/grade).
template <std::size_t R>
struct LinearGrads {
  xt::xtensor<float, R> input;  ///< dL/dx, x's shape
  Tensor2 weight;               ///< dL/dW, [out, in]
  Tensor1 bias;                 ///< dL/db, [out] (empty when there is no bias)
};

template <std::size_t R>
xt::xtensor<float, R> linear_forward(const xt::xtensor<float, R>& x, const Tensor2& weight,
                                     const Tensor1& bias);

/// The backward, accumulating as PyTorch's autograd accumulates .grad: returns dx = dy W, and
/// ADDS dW = dyᵀ x into `weight_grad` and db = Σ_rows dy into `bias_grad` (skipped when empty).
/// The GEMM adds with beta = 1: no temporary dW, no extra pass. For the gradients alone, pass
/// zeroed buffers.
/// grad_y: [..., out] with N rows   x: [N, in] (the forward's input, leading dimensions
/// flattened)   weight, weight_grad: [out, in]   bias_grad: [out] or empty   returns [..., in]
/// Throws: shape_error naming the argument and both shapes.
template <std::size_t R>
xt::xtensor<float, R> linear_backward(const xt::xtensor<float, R>& grad_y, const Tensor2& x,
                                      const Tensor2& weight, Tensor2& weight_grad,
                                      Tensor1& bias_grad);

}  // namespace xenc

// Softmax over the last axis, numerically stable.
//
//     y_i = exp(x_i - max_j x_j) / Σ_j exp(x_j - max_j x_j)
//
// Masked entries are -inf and get probability exactly 0. A row whose every entry is -inf (a
// row the caller masked: a query whose every key is padding) gives a row of zeros: "attend to
// nothing". A row that holds NaN gives NaN everywhere, as in PyTorch: NaN is never hidden.
// Backward: dx_i = y_i (dy_i - Σ_j dy_j y_j)
// Shapes:  x, y, dy, dx: [..., C] (any rank 1 to 4)
// PyTorch: torch.softmax(x, dim=-1) (which gives NaN for an all -inf row too; we give zeros)
// Reference: reference::softmax_forward / softmax_row (xenc/reference/ops.hpp), loop by loop.
#pragma once

#include <cstddef>

#include "xenc/core/tensor.hpp"

namespace xenc {

template <std::size_t R>
xt::xtensor<float, R> softmax_forward(const xt::xtensor<float, R>& x);

template <std::size_t R>
xt::xtensor<float, R> softmax_backward(const xt::xtensor<float, R>& grad_y,
                                       const xt::xtensor<float, R>& y);

/// exp of every element in place, the exponential softmax_forward uses, written so that the
/// compiler turns the loop into SIMD code (std::exp is a library call, which blocks
/// vectorisation; the loop is kernels::exp_inplace in lib/src/kernels/rows.cpp):
///
///     x = k·ln2 + r,  k = round(x / ln2),  |r| <= ln2/2      (Cody-Waite range reduction)
///     exp(x) = 2^k · exp(r),   exp(r) ≈ Σ_{i=0..6} rⁱ / i!   (Taylor, Horner form)
///     2^k is built directly in the float's exponent bits.
///
/// Error: the Taylor remainder is at most |r|⁷/7! · e^|r| < 1.4e-7 relative; with float
/// rounding the result is within 4e-7 relative of exp(x) for -87.3 <= x <= 88.3 (checked
/// against double-precision std::exp in tests/ops/test_fast_kernels.cpp).
/// Edges: x < -87.33 (where exp(x) < FLT_MIN, the smallest normal float), including -inf,
/// gives exactly 0 (std::exp would give a subnormal below 1.2e-38); x > 88.37 gives +inf
/// (std::exp overflows from 88.72); NaN stays NaN. Softmax only needs x <= 0.
void exp_inplace(xt::xtensor<float, 1>& x);

}  // namespace xenc

// Softmax over the last axis, numerically stable.
//
//     y_i = exp(x_i - max_j x_j) / Σ_j exp(x_j - max_j x_j)
//
// Masked entries are -inf and get probability exactly 0. A row whose every entry is -inf
// gives a row of zeros (never NaN): "attend to nothing".
// Backward: dx_i = y_i (dy_i - Σ_j dy_j y_j)
// Shapes:  x, y, dy, dx: [..., C] (any rank 1 to 4)
// PyTorch: torch.softmax(x, dim=-1) (which gives NaN for an all -inf row; we give zeros)
#pragma once

#include <cstddef>

#include "xenc/core/tensor.hpp"

namespace xenc {

template <std::size_t R>
xt::xtensor<float, R> softmax_forward(const xt::xtensor<float, R>& x);

template <std::size_t R>
xt::xtensor<float, R> softmax_backward(const xt::xtensor<float, R>& grad_y,
                                       const xt::xtensor<float, R>& y);

/// The kernel: softmax of each of `rows` rows of `cols` floats, in place (row stride ld).
void softmax_rows_inplace(float* data, std::size_t rows, std::size_t cols, std::size_t ld);

/// The reference: the same with std::exp in a plain loop.
template <std::size_t R>
xt::xtensor<float, R> softmax_naive(const xt::xtensor<float, R>& x);

}  // namespace xenc

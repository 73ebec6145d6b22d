// The element-wise passes a module runs over whole tensors besides its own formula: the
// residual sum of an encoder layer, and the copy of an input a module keeps for its backward.
//
//     add_inplace(y, x):  y_i ← y_i + x_i
//     copy_of(x):         a new tensor, equal to x
//     copy_as_rows(x):    the same, as a matrix [N, C]: C is x's last dimension
// Shapes: any; y and x have the same shape.
// xtensor's own `y += x` computes y + x into a temporary of y's size and then assigns it (only
// `xt::noalias(y) += x` does not): at [2048, 512] that is a fresh 4 MiB each time, and its page
// faults cost more than the sum. add_inplace writes into y directly.
// From 2²¹ elements (kernels::kRowPassWork) both run as blocks on the thread pool. Every
// element is computed by the same instruction whatever the blocks, so the bits do not depend on
// the thread count.
// PyTorch: y.add_(x), x.clone()
// Throws: shape_error when y and x differ in shape.
#pragma once

#include <cstddef>

#include "xenc/core/tensor.hpp"

namespace xenc {

/// y += x, in y's buffer.
template <std::size_t R>
void add_inplace(xt::xtensor<float, R>& y, const xt::xtensor<float, R>& x);

/// A copy of x (x's shape, its values).
template <std::size_t R>
xt::xtensor<float, R> copy_of(const xt::xtensor<float, R>& x);

/// A copy of x as [N, C]: C = x's last dimension, N = the product of the others ([B, T, D] ->
/// [B·T, D]).
template <std::size_t R>
Tensor2 copy_as_rows(const xt::xtensor<float, R>& x);

}  // namespace xenc

// Softmax over the last axis: subtract the row max, exponentiate, normalise.
// The vectorised row loops are in the kernels layer (lib/src/kernels/rows.cpp); the std::exp
// reference is reference::softmax_forward (xenc/reference/ops.hpp).
#include "xenc/ops/softmax.hpp"

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

void exp_inplace(xt::xtensor<float, 1>& x) {
  kernels::exp_inplace(kernels::as_vector(x), x.size());
}

template <std::size_t R>
xt::xtensor<float, R> softmax_forward(const xt::xtensor<float, R>& x) {
  xt::xtensor<float, R> y = x;
  if (y.size() != 0) kernels::softmax_rows(kernels::as_matrix(y));
  return y;
}

template <std::size_t R>
xt::xtensor<float, R> softmax_backward(const xt::xtensor<float, R>& grad_y,
                                       const xt::xtensor<float, R>& y) {
  if (grad_y.shape() != y.shape())
    throw shape_error("softmax_backward: grad_y has shape " + shape_str(grad_y.shape()) +
                      ", expected y's shape " + shape_str(y.shape()));
  auto dx = xt::xtensor<float, R>::from_shape(y.shape());
  // dx_i = y_i (dy_i - Σ_j dy_j y_j), row by row
  if (y.size() != 0)
    kernels::softmax_rows_backward(kernels::as_matrix(y), kernels::as_matrix(grad_y),
                                   kernels::as_matrix(dx));
  return dx;
}

// The ranks the header promises (1 to 4), one explicit instantiation per line.
template Tensor1 softmax_forward(const Tensor1&);
template Tensor2 softmax_forward(const Tensor2&);
template Tensor3 softmax_forward(const Tensor3&);
template Tensor4 softmax_forward(const Tensor4&);
template Tensor1 softmax_backward(const Tensor1&, const Tensor1&);
template Tensor2 softmax_backward(const Tensor2&, const Tensor2&);
template Tensor3 softmax_backward(const Tensor3&, const Tensor3&);
template Tensor4 softmax_backward(const Tensor4&, const Tensor4&);

}  // namespace xenc

// Softmax over the last axis: subtract the row max, exponentiate, normalise.
// The vectorised row loops are in the kernels layer (lib/src/kernels/rows.cpp); softmax_naive
// is the std::exp reference.
#include "xenc/ops/softmax.hpp"

#include <cmath>
#include <limits>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

void exp_inplace(xt::xtensor<float, 1>& x) { kernels::exp_inplace(x.data(), x.size()); }

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

template <std::size_t R>
xt::xtensor<float, R> softmax_naive(const xt::xtensor<float, R>& x) {
  auto y = xt::xtensor<float, R>::from_shape(x.shape());
  const std::size_t cols = x.shape(R - 1);
  const std::size_t rows = cols == 0 ? 0 : x.size() / cols;
  for (std::size_t r = 0; r < rows; ++r) {
    double m = -std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < cols; ++c) m = std::fmax(m, double(x.data()[r * cols + c]));
    double sum = 0.0;
    for (std::size_t c = 0; c < cols; ++c)
      if (std::isfinite(m)) sum += std::exp(double(x.data()[r * cols + c]) - m);
    for (std::size_t c = 0; c < cols; ++c)
      y.data()[r * cols + c] =
          std::isfinite(m) ? float(std::exp(double(x.data()[r * cols + c]) - m) / sum) : 0.0f;
  }
  return y;
}

#define XENC_INSTANTIATE_SOFTMAX(R)                                                             \
  template xt::xtensor<float, R> softmax_forward<R>(const xt::xtensor<float, R>&);              \
  template xt::xtensor<float, R> softmax_backward<R>(const xt::xtensor<float, R>&,              \
                                                     const xt::xtensor<float, R>&);             \
  template xt::xtensor<float, R> softmax_naive<R>(const xt::xtensor<float, R>&);
XENC_INSTANTIATE_SOFTMAX(1)
XENC_INSTANTIATE_SOFTMAX(2)
XENC_INSTANTIATE_SOFTMAX(3)
XENC_INSTANTIATE_SOFTMAX(4)
#undef XENC_INSTANTIATE_SOFTMAX

}  // namespace xenc

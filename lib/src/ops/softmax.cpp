// Softmax over the last axis: subtract the row max, exponentiate, normalise.
#include "xenc/ops/softmax.hpp"

#include <cmath>
#include <limits>

namespace xenc {

void softmax_rows_inplace(float* data, std::size_t rows, std::size_t cols, std::size_t ld) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* row = data + r * ld;
    // The max makes every exponent <= 0, so exp never overflows.
    float m = -std::numeric_limits<float>::infinity();
    for (std::size_t c = 0; c < cols; ++c) m = row[c] > m ? row[c] : m;
    if (m == -std::numeric_limits<float>::infinity()) {
      // Every entry masked: nothing to attend to. Zeros, not 0/0 = NaN.
      for (std::size_t c = 0; c < cols; ++c) row[c] = 0.0f;
      continue;
    }
    float sum = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) {
      row[c] = std::exp(row[c] - m);  // exp(-inf) = 0 for masked entries
      sum += row[c];
    }
    const float inv = 1.0f / sum;
    for (std::size_t c = 0; c < cols; ++c) row[c] *= inv;
  }
}

template <std::size_t R>
xt::xtensor<float, R> softmax_forward(const xt::xtensor<float, R>& x) {
  xt::xtensor<float, R> y = x;
  const std::size_t cols = R == 0 ? 1 : x.shape(R - 1);
  if (cols != 0) softmax_rows_inplace(y.data(), y.size() / cols, cols, cols);
  return y;
}

template <std::size_t R>
xt::xtensor<float, R> softmax_backward(const xt::xtensor<float, R>& grad_y,
                                       const xt::xtensor<float, R>& y) {
  auto dx = xt::xtensor<float, R>::from_shape(y.shape());
  const std::size_t cols = y.shape(R - 1);
  const std::size_t rows = cols == 0 ? 0 : y.size() / cols;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* yr = y.data() + r * cols;
    const float* dyr = grad_y.data() + r * cols;
    float* dxr = dx.data() + r * cols;
    // dx_i = y_i (dy_i - Σ_j dy_j y_j)
    float dot = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) dot += dyr[c] * yr[c];
    for (std::size_t c = 0; c < cols; ++c) dxr[c] = yr[c] * (dyr[c] - dot);
  }
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

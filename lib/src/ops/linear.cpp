// Linear layer: y = x Wᵀ + b as one GEMM over all B·T rows.
#include "xenc/ops/linear.hpp"

#include <string>

#include "xenc/core/error.hpp"
#include "xenc/ops/gemm.hpp"

namespace xenc {

namespace {

// x: [..., in] viewed as [N, in]: N is the product of the leading dimensions.
template <std::size_t R>
std::size_t leading_rows(const xt::xtensor<float, R>& x) {
  std::size_t n = 1;
  for (std::size_t i = 0; i + 1 < R; ++i) n *= x.shape(i);
  return n;
}

template <std::size_t R>
void check_linear_args(const char* where, const xt::xtensor<float, R>& x, const Tensor2& w,
                       const Tensor1& b) {
  const std::size_t in = w.shape(1), out = w.shape(0);
  if (x.shape(R - 1) != in) {
    throw shape_error(std::string(where) + ": x has shape " + shape_str(x.shape()) +
                      ", expected [..., in] with in = " + std::to_string(in) +
                      " (weight has shape " + shape_str(w.shape()) + ")");
  }
  if (b.size() != 0) check_shape(where, "bias", b, {long(out)}, "[out] with out = " + std::to_string(out));
}

template <std::size_t R>
std::array<std::size_t, R> with_last(const xt::xtensor<float, R>& x, std::size_t last) {
  std::array<std::size_t, R> s;
  for (std::size_t i = 0; i < R; ++i) s[i] = x.shape(i);
  s[R - 1] = last;
  return s;
}

}  // namespace

template <std::size_t R>
xt::xtensor<float, R> linear_forward(const xt::xtensor<float, R>& x, const Tensor2& weight,
                                     const Tensor1& bias) {
  check_linear_args("linear_forward", x, weight, bias);
  const std::size_t N = leading_rows(x), in = weight.shape(1), out = weight.shape(0);
  auto y = xt::xtensor<float, R>::from_shape(with_last(x, out));
  float* yp = y.data();
  // Start from the bias broadcast over rows (beta = 1 below adds the product to it).
  if (bias.size() != 0) {
    for (std::size_t n = 0; n < N; ++n)
      for (std::size_t o = 0; o < out; ++o) yp[n * out + o] = bias(o);
  }
  // [N, in] x [in, out]: W is stored [out, in], so multiply by Wᵀ (trans_b).
  gemm(false, true, N, out, in, 1.0f, x.data(), in, weight.data(), in,
       bias.size() != 0 ? 1.0f : 0.0f, yp, out);
  return y;
}

template <std::size_t R>
LinearGrads<R> linear_backward(const xt::xtensor<float, R>& grad_y, const xt::xtensor<float, R>& x,
                               const Tensor2& weight, bool has_bias) {
  check_linear_args("linear_backward", x, weight, Tensor1());
  const std::size_t N = leading_rows(x), in = weight.shape(1), out = weight.shape(0);
  if (grad_y.shape(R - 1) != out || leading_rows(grad_y) != N) {
    throw shape_error("linear_backward: grad_y has shape " + shape_str(grad_y.shape()) +
                      ", expected " + shape_str(with_last(x, out)));
  }
  LinearGrads<R> g;
  // dx [N, in] = dy [N, out] · W [out, in]
  g.input = xt::xtensor<float, R>::from_shape(x.shape());
  gemm(false, false, N, in, out, 1.0f, grad_y.data(), out, weight.data(), in, 0.0f,
       g.input.data(), in);
  // dW [out, in] = dyᵀ [out, N] · x [N, in]
  g.weight = Tensor2::from_shape({out, in});
  gemm(true, false, out, in, N, 1.0f, grad_y.data(), out, x.data(), in, 0.0f, g.weight.data(), in);
  // db [out] = column sums of dy
  if (has_bias) {
    g.bias = xt::zeros<float>({out});
    const float* dy = grad_y.data();
    for (std::size_t n = 0; n < N; ++n)
      for (std::size_t o = 0; o < out; ++o) g.bias(o) += dy[n * out + o];
  }
  return g;
}

template <std::size_t R>
xt::xtensor<float, R> linear_naive(const xt::xtensor<float, R>& x, const Tensor2& weight,
                                   const Tensor1& bias) {
  check_linear_args("linear_naive", x, weight, bias);
  const std::size_t N = leading_rows(x), in = weight.shape(1), out = weight.shape(0);
  auto y = xt::xtensor<float, R>::from_shape(with_last(x, out));
  const float* xp = x.data();
  for (std::size_t n = 0; n < N; ++n) {
    for (std::size_t o = 0; o < out; ++o) {
      float acc = bias.size() != 0 ? bias(o) : 0.0f;
      for (std::size_t i = 0; i < in; ++i) acc += xp[n * in + i] * weight(o, i);
      y.data()[n * out + o] = acc;
    }
  }
  return y;
}

#define XENC_INSTANTIATE_LINEAR(R)                                                              \
  template xt::xtensor<float, R> linear_forward<R>(const xt::xtensor<float, R>&, const Tensor2&, \
                                                   const Tensor1&);                             \
  template LinearGrads<R> linear_backward<R>(const xt::xtensor<float, R>&,                      \
                                             const xt::xtensor<float, R>&, const Tensor2&, bool); \
  template xt::xtensor<float, R> linear_naive<R>(const xt::xtensor<float, R>&, const Tensor2&,  \
                                                 const Tensor1&);
XENC_INSTANTIATE_LINEAR(1)
XENC_INSTANTIATE_LINEAR(2)
XENC_INSTANTIATE_LINEAR(3)
#undef XENC_INSTANTIATE_LINEAR

}  // namespace xenc

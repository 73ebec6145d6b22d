// Linear layer: y = x Wᵀ + b as one GEMM over all B·T rows.
#include "xenc/ops/linear.hpp"

#include <string>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

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
  if (b.size() != 0)
    check_shape(where, "bias", b, {long(out)},
                [&] { return "[out] with out = " + std::to_string(out); });
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
  auto y = xt::xtensor<float, R>::from_shape(with_last(x, weight.shape(0)));
  // [N, in] x [in, out] plus the bias in every row: one GEMM over all N = B·T rows.
  kernels::linear_rows(kernels::as_matrix(x), kernels::as_matrix(weight),
                       bias.size() != 0 ? bias.data() : nullptr, kernels::as_matrix(y));
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
  g.input = xt::xtensor<float, R>::from_shape(x.shape());
  g.weight = Tensor2::from_shape({out, in});
  if (has_bias) g.bias = Tensor1::from_shape({out});
  // dx [N, in] = dy W;  dW [out, in] = dyᵀ x;  db [out] = column sums of dy
  kernels::linear_rows_backward(kernels::as_matrix(grad_y), kernels::as_matrix(x),
                                kernels::as_matrix(weight),
                                {kernels::as_matrix(g.input), kernels::as_matrix(g.weight),
                                 has_bias ? g.bias.data() : nullptr, false});
  return g;
}

template <std::size_t R>
xt::xtensor<float, R> linear_backward_accumulate(const xt::xtensor<float, R>& grad_y,
                                                 const Tensor2& x, const Tensor2& weight,
                                                 Tensor2& weight_grad, Tensor1& bias_grad) {
  const char* where = "linear_backward_accumulate";
  check_linear_args(where, x, weight, Tensor1());
  const std::size_t N = x.shape(0), in = weight.shape(1), out = weight.shape(0);
  if (grad_y.shape(R - 1) != out || leading_rows(grad_y) != N) {
    throw shape_error(std::string(where) + ": grad_y has shape " + shape_str(grad_y.shape()) +
                      ", expected [..., out] with out = " + std::to_string(out) + " and " +
                      std::to_string(N) + " rows (x has shape " + shape_str(x.shape()) + ")");
  }
  check_shape(where, "weight_grad", weight_grad, {long(out), long(in)},
              [&] { return "weight's shape " + shape_str(weight.shape()); });
  if (bias_grad.size() != 0)
    check_shape(where, "bias_grad", bias_grad, {long(out)},
                [&] { return "[out] with out = " + std::to_string(out); });
  auto dx = xt::xtensor<float, R>::from_shape(with_last(grad_y, in));
  // dx = dy W;  dW += dyᵀ x;  db += column sums of dy
  kernels::linear_rows_backward(kernels::as_matrix(grad_y), kernels::as_matrix(x),
                                kernels::as_matrix(weight),
                                {kernels::as_matrix(dx), kernels::as_matrix(weight_grad),
                                 bias_grad.size() != 0 ? bias_grad.data() : nullptr, true});
  return dx;
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
  template xt::xtensor<float, R> linear_backward_accumulate<R>(                                 \
      const xt::xtensor<float, R>&, const Tensor2&, const Tensor2&, Tensor2&, Tensor1&);        \
  template xt::xtensor<float, R> linear_naive<R>(const xt::xtensor<float, R>&, const Tensor2&,  \
                                                 const Tensor1&);
XENC_INSTANTIATE_LINEAR(1)
XENC_INSTANTIATE_LINEAR(2)
XENC_INSTANTIATE_LINEAR(3)
#undef XENC_INSTANTIATE_LINEAR

}  // namespace xenc

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
  kernels::linear_rows(kernels::as_matrix(x), kernels::as_matrix(weight), kernels::as_vector(bias),
                       kernels::as_matrix(y));
  return y;
}

template <std::size_t R>
xt::xtensor<float, R> linear_backward(const xt::xtensor<float, R>& grad_y, const Tensor2& x,
                                      const Tensor2& weight, Tensor2& weight_grad,
                                      Tensor1& bias_grad) {
  const char* where = "linear_backward";
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
                                 kernels::as_vector(bias_grad), true});
  return dx;
}

// The ranks the header promises (1 to 3), one explicit instantiation per line.
template Tensor1 linear_forward(const Tensor1&, const Tensor2&, const Tensor1&);
template Tensor2 linear_forward(const Tensor2&, const Tensor2&, const Tensor1&);
template Tensor3 linear_forward(const Tensor3&, const Tensor2&, const Tensor1&);
template Tensor1 linear_backward(const Tensor1&, const Tensor2&, const Tensor2&, Tensor2&,
                                 Tensor1&);
template Tensor2 linear_backward(const Tensor2&, const Tensor2&, const Tensor2&, Tensor2&,
                                 Tensor1&);
template Tensor3 linear_backward(const Tensor3&, const Tensor2&, const Tensor2&, Tensor2&,
                                 Tensor1&);

}  // namespace xenc

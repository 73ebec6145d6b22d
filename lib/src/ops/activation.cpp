// ReLU and GELU (exact erf form), forward and backward.
#include "xenc/ops/activation.hpp"

#include <cmath>
#include <utility>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

Activation parse_activation(const std::string& name) {
  if (name == "relu") return Activation::relu;
  if (name == "gelu") return Activation::gelu;
  throw config_error("parse_activation: activation is \"" + name + "\", expected \"relu\" or \"gelu\"");
}

std::string to_string(Activation a) { return a == Activation::relu ? "relu" : "gelu"; }

namespace {
constexpr float kInvSqrt2 = 0.70710678118654752f;     // 1/√2
constexpr float kInvSqrt2Pi = 0.39894228040143268f;   // 1/√(2π)
inline float gelu_grad(float x) {
  const float cdf = 0.5f * (1.0f + std::erf(x * kInvSqrt2));  // Φ(x)
  const float pdf = kInvSqrt2Pi * std::exp(-0.5f * x * x);    // φ(x)
  return cdf + x * pdf;
}
template <std::size_t R>
void check_same(const char* where, const xt::xtensor<float, R>& dy, const xt::xtensor<float, R>& x) {
  if (dy.shape() != x.shape())
    throw shape_error(std::string(where) + ": grad_y has shape " + shape_str(dy.shape()) +
                      ", expected x's shape " + shape_str(x.shape()));
}
}  // namespace

template <std::size_t R>
void activation_inplace(Activation a, xt::xtensor<float, R>& x) {
  if (a == Activation::relu)
    kernels::relu_inplace(x.data(), x.size());
  else
    kernels::gelu_inplace(x.data(), x.size());
}

template <std::size_t R>
xt::xtensor<float, R> relu_forward(const xt::xtensor<float, R>& x) {
  xt::xtensor<float, R> y = x;
  activation_inplace(Activation::relu, y);
  return y;
}

template <std::size_t R>
xt::xtensor<float, R> relu_backward(xt::xtensor<float, R> grad_y, const xt::xtensor<float, R>& x) {
  check_same("relu_backward", grad_y, x);
  // dx = dy where x > 0, else 0; in place in grad_y's buffer
  kernels::relu_backward_inplace(grad_y.data(), x.data(), x.size());
  return grad_y;
}

template <std::size_t R>
xt::xtensor<float, R> gelu_forward(const xt::xtensor<float, R>& x) {
  xt::xtensor<float, R> y = x;
  activation_inplace(Activation::gelu, y);
  return y;
}

template <std::size_t R>
xt::xtensor<float, R> gelu_backward(xt::xtensor<float, R> grad_y, const xt::xtensor<float, R>& x) {
  check_same("gelu_backward", grad_y, x);
  // dx = dy · gelu'(x), in place in grad_y's buffer
  float* g = grad_y.data();
  for (std::size_t i = 0; i < x.size(); ++i) g[i] *= gelu_grad(x.data()[i]);
  return grad_y;
}

template <std::size_t R>
xt::xtensor<float, R> activation_forward(Activation a, const xt::xtensor<float, R>& x) {
  return a == Activation::relu ? relu_forward(x) : gelu_forward(x);
}

template <std::size_t R>
xt::xtensor<float, R> activation_backward(Activation a, xt::xtensor<float, R> grad_y,
                                          const xt::xtensor<float, R>& x) {
  return a == Activation::relu ? relu_backward(std::move(grad_y), x)
                               : gelu_backward(std::move(grad_y), x);
}

#define XENC_INSTANTIATE_ACT(R)                                                                 \
  template void activation_inplace<R>(Activation, xt::xtensor<float, R>&);                      \
  template xt::xtensor<float, R> relu_forward<R>(const xt::xtensor<float, R>&);                 \
  template xt::xtensor<float, R> relu_backward<R>(xt::xtensor<float, R>,                        \
                                                  const xt::xtensor<float, R>&);                \
  template xt::xtensor<float, R> gelu_forward<R>(const xt::xtensor<float, R>&);                 \
  template xt::xtensor<float, R> gelu_backward<R>(xt::xtensor<float, R>,                        \
                                                  const xt::xtensor<float, R>&);                \
  template xt::xtensor<float, R> activation_forward<R>(Activation, const xt::xtensor<float, R>&); \
  template xt::xtensor<float, R> activation_backward<R>(Activation, xt::xtensor<float, R>,      \
                                                        const xt::xtensor<float, R>&);
XENC_INSTANTIATE_ACT(1)
XENC_INSTANTIATE_ACT(2)
XENC_INSTANTIATE_ACT(3)
XENC_INSTANTIATE_ACT(4)
#undef XENC_INSTANTIATE_ACT

}  // namespace xenc

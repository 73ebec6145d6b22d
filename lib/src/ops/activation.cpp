// ReLU and GELU (exact erf form), forward and backward.
#include "xenc/ops/activation.hpp"

#include <utility>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

Activation parse_activation(const std::string& name) {
  if (name == "relu") return Activation::relu;
  if (name == "gelu") return Activation::gelu;
  throw config_error("parse_activation: activation is \"" + name +
                     "\", expected \"relu\" or \"gelu\"");
}

std::string to_string(Activation a) { return a == Activation::relu ? "relu" : "gelu"; }

namespace {
template <std::size_t R>
void check_same(const char* where, const xt::xtensor<float, R>& dy,
                const xt::xtensor<float, R>& x) {
  if (dy.shape() != x.shape())
    throw shape_error(std::string(where) + ": grad_y has shape " + shape_str(dy.shape()) +
                      ", expected x's shape " + shape_str(x.shape()));
}
}  // namespace

template <std::size_t R>
void activation_inplace(Activation a, xt::xtensor<float, R>& x) {
  if (a == Activation::relu)
    kernels::relu_inplace(kernels::as_vector(x), x.size());
  else
    kernels::gelu_inplace(kernels::as_vector(x), x.size());
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
  kernels::relu_backward_inplace(kernels::as_vector(grad_y), kernels::as_vector(x), x.size());
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
  // dx = dy · gelu'(x), gelu'(x) = Φ(x) + x φ(x), in place in grad_y's buffer
  kernels::gelu_backward_inplace(kernels::as_vector(grad_y), kernels::as_vector(x), x.size());
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

// The ranks the header promises (1 to 4), one explicit instantiation per line.
template void activation_inplace(Activation, Tensor1&);
template void activation_inplace(Activation, Tensor2&);
template void activation_inplace(Activation, Tensor3&);
template void activation_inplace(Activation, Tensor4&);
template Tensor1 relu_forward(const Tensor1&);
template Tensor2 relu_forward(const Tensor2&);
template Tensor3 relu_forward(const Tensor3&);
template Tensor4 relu_forward(const Tensor4&);
template Tensor1 relu_backward(Tensor1, const Tensor1&);
template Tensor2 relu_backward(Tensor2, const Tensor2&);
template Tensor3 relu_backward(Tensor3, const Tensor3&);
template Tensor4 relu_backward(Tensor4, const Tensor4&);
template Tensor1 gelu_forward(const Tensor1&);
template Tensor2 gelu_forward(const Tensor2&);
template Tensor3 gelu_forward(const Tensor3&);
template Tensor4 gelu_forward(const Tensor4&);
template Tensor1 gelu_backward(Tensor1, const Tensor1&);
template Tensor2 gelu_backward(Tensor2, const Tensor2&);
template Tensor3 gelu_backward(Tensor3, const Tensor3&);
template Tensor4 gelu_backward(Tensor4, const Tensor4&);
template Tensor1 activation_forward(Activation, const Tensor1&);
template Tensor2 activation_forward(Activation, const Tensor2&);
template Tensor3 activation_forward(Activation, const Tensor3&);
template Tensor4 activation_forward(Activation, const Tensor4&);
template Tensor1 activation_backward(Activation, Tensor1, const Tensor1&);
template Tensor2 activation_backward(Activation, Tensor2, const Tensor2&);
template Tensor3 activation_backward(Activation, Tensor3, const Tensor3&);
template Tensor4 activation_backward(Activation, Tensor4, const Tensor4&);

}  // namespace xenc

// Inverted dropout: scale the kept entries in training so evaluation is the identity.
#include "xenc/ops/dropout.hpp"

#include <algorithm>
#include <string>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

template <std::size_t R>
xt::xtensor<float, R> dropout_mask(const std::array<std::size_t, R>& shape, float p, Rng& rng) {
  check_config(p >= 0.0f && p < 1.0f, "dropout_mask",
               "p is " + std::to_string(p) + ", expected 0 <= p < 1");
  // m_i = 1/(1-p) with probability 1-p, else 0
  auto m = xt::xtensor<float, R>::from_shape(shape);
  const float keep_scale = 1.0f / (1.0f - p);
  for (auto& v : m) v = rng.uniform() >= p ? keep_scale : 0.0f;
  return m;
}

template <std::size_t R>
xt::xtensor<float, R> dropout_forward(const xt::xtensor<float, R>& x, float p, bool training,
                                      Rng& rng, xt::xtensor<float, R>& mask) {
  check_config(p >= 0.0f && p < 1.0f, "dropout_forward",
               "p is " + std::to_string(p) + ", expected 0 <= p < 1");
  if (!training || p == 0.0f) {
    mask = xt::xtensor<float, R>();
    return x;
  }
  std::array<std::size_t, R> shape;
  std::copy(x.shape().begin(), x.shape().end(), shape.begin());
  mask = dropout_mask(shape, p, rng);
  xt::xtensor<float, R> y = x * mask;
  return y;
}

SeededDropout draw_dropout_seed(float p, Rng& rng) {
  check_config(p >= 0.0f && p < 1.0f, "draw_dropout_seed",
               "p is " + std::to_string(p) + ", expected 0 <= p < 1");
  const std::uint64_t high = rng.next_u32();
  return {p, (high << 32) | rng.next_u32()};
}

template <std::size_t R>
xt::xtensor<float, R> dropout_forward(const xt::xtensor<float, R>& x, const SeededDropout& dropout,
                                      bool training, xt::xtensor<float, R>& mask) {
  check_config(dropout.p >= 0.0f && dropout.p < 1.0f, "dropout_forward",
               "dropout.p is " + std::to_string(dropout.p) + ", expected 0 <= p < 1");
  if (!training || dropout.p == 0.0f) {
    mask = xt::xtensor<float, R>();
    return x;
  }
  mask = xt::xtensor<float, R>::from_shape(x.shape());
  auto y = xt::xtensor<float, R>::from_shape(x.shape());
  kernels::dropout_rows({dropout.p, dropout.seed, 0}, kernels::as_matrix(x),
                        kernels::as_matrix(mask), kernels::as_matrix(y));
  return y;
}

template <std::size_t R>
xt::xtensor<float, R> dropout_backward(xt::xtensor<float, R> grad_y,
                                       const xt::xtensor<float, R>& mask) {
  if (mask.size() == 0) return grad_y;  // evaluation mode (or p = 0): identity
  if (mask.shape() != grad_y.shape())
    throw shape_error("dropout_backward: mask has shape " + shape_str(mask.shape()) +
                      ", expected grad_y's shape " + shape_str(grad_y.shape()));
  // dx = dy ⊙ m, in place; from 2²¹ elements as blocks on the pool
  kernels::multiply_inplace(kernels::as_vector(grad_y), kernels::as_vector(mask), grad_y.size());
  return grad_y;
}

// The ranks the header promises (1 to 4), one explicit instantiation per line.
template Tensor1 dropout_mask(const std::array<std::size_t, 1>&, float, Rng&);
template Tensor2 dropout_mask(const std::array<std::size_t, 2>&, float, Rng&);
template Tensor3 dropout_mask(const std::array<std::size_t, 3>&, float, Rng&);
template Tensor4 dropout_mask(const std::array<std::size_t, 4>&, float, Rng&);
template Tensor1 dropout_forward(const Tensor1&, float, bool, Rng&, Tensor1&);
template Tensor2 dropout_forward(const Tensor2&, float, bool, Rng&, Tensor2&);
template Tensor3 dropout_forward(const Tensor3&, float, bool, Rng&, Tensor3&);
template Tensor4 dropout_forward(const Tensor4&, float, bool, Rng&, Tensor4&);
template Tensor1 dropout_forward(const Tensor1&, const SeededDropout&, bool, Tensor1&);
template Tensor2 dropout_forward(const Tensor2&, const SeededDropout&, bool, Tensor2&);
template Tensor3 dropout_forward(const Tensor3&, const SeededDropout&, bool, Tensor3&);
template Tensor4 dropout_forward(const Tensor4&, const SeededDropout&, bool, Tensor4&);
template Tensor1 dropout_backward(Tensor1, const Tensor1&);
template Tensor2 dropout_backward(Tensor2, const Tensor2&);
template Tensor3 dropout_backward(Tensor3, const Tensor3&);
template Tensor4 dropout_backward(Tensor4, const Tensor4&);

}  // namespace xenc

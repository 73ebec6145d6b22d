// Inverted dropout: scale the kept entries in training so evaluation is the identity.
#include "xenc/ops/dropout.hpp"

#include <algorithm>
#include <string>

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
                                      Rng& rng, xt::xtensor<float, R>* mask) {
  check_config(p >= 0.0f && p < 1.0f, "dropout_forward",
               "p is " + std::to_string(p) + ", expected 0 <= p < 1");
  if (!training || p == 0.0f) {
    if (mask) *mask = xt::xtensor<float, R>();
    return x;
  }
  std::array<std::size_t, R> shape;
  std::copy(x.shape().begin(), x.shape().end(), shape.begin());
  auto m = dropout_mask(shape, p, rng);
  xt::xtensor<float, R> y = x;
  for (std::size_t i = 0; i < y.size(); ++i) y.data()[i] *= m.data()[i];
  if (mask) *mask = std::move(m);
  return y;
}

template <std::size_t R>
xt::xtensor<float, R> dropout_backward(xt::xtensor<float, R> grad_y,
                                       const xt::xtensor<float, R>& mask) {
  if (mask.size() == 0) return grad_y;  // evaluation mode (or p = 0): identity
  if (mask.shape() != grad_y.shape())
    throw shape_error("dropout_backward: mask has shape " + shape_str(mask.shape()) +
                      ", expected grad_y's shape " + shape_str(grad_y.shape()));
  // dx = dy ⊙ m, in place
  for (std::size_t i = 0; i < grad_y.size(); ++i) grad_y.data()[i] *= mask.data()[i];
  return grad_y;
}

#define XENC_INSTANTIATE_DROPOUT(R)                                                             \
  template xt::xtensor<float, R> dropout_mask<R>(const std::array<std::size_t, R>&, float, Rng&); \
  template xt::xtensor<float, R> dropout_forward<R>(const xt::xtensor<float, R>&, float, bool,  \
                                                    Rng&, xt::xtensor<float, R>*);              \
  template xt::xtensor<float, R> dropout_backward<R>(xt::xtensor<float, R>,                     \
                                                     const xt::xtensor<float, R>&);
XENC_INSTANTIATE_DROPOUT(1)
XENC_INSTANTIATE_DROPOUT(2)
XENC_INSTANTIATE_DROPOUT(3)
XENC_INSTANTIATE_DROPOUT(4)
#undef XENC_INSTANTIATE_DROPOUT

}  // namespace xenc

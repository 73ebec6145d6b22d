// Dropout (Srivastava et al., 2014), inverted: kept entries are scaled by 1/(1-p) in training,
// so evaluation is the identity.
//
//     training:   m_i = (u_i >= p) / (1 - p),  u_i ~ U[0, 1)     y = x ⊙ m
//     evaluation: y = x
// Backward: dx = dy ⊙ m
// Shapes: any; the mask has x's shape (empty in evaluation).
// PyTorch: torch.nn.functional.dropout(x, p, training)
// Throws: config_error unless 0 <= p < 1.
#pragma once

#include <array>
#include <cstddef>

#include "xenc/core/random.hpp"
#include "xenc/core/tensor.hpp"

namespace xenc {

/// The mask alone: m_i = (u_i >= p) / (1 - p), drawn in order from rng (any shape).
template <std::size_t R>
xt::xtensor<float, R> dropout_mask(const std::array<std::size_t, R>& shape, float p, Rng& rng);

/// y = x ⊙ m; `mask` receives m (empty in evaluation or for p = 0), which the backward needs.
template <std::size_t R>
xt::xtensor<float, R> dropout_forward(const xt::xtensor<float, R>& x, float p, bool training,
                                      Rng& rng, xt::xtensor<float, R>& mask);

/// dx = dy ⊙ mask, in grad_y's buffer (pass std::move(g) to avoid a copy); an empty mask
/// (evaluation, or p = 0) returns grad_y as it is.
template <std::size_t R>
xt::xtensor<float, R> dropout_backward(xt::xtensor<float, R> grad_y,
                                       const xt::xtensor<float, R>& mask);

}  // namespace xenc

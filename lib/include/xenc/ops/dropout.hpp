// Dropout (Srivastava et al., 2014), inverted: kept entries are scaled by 1/(1-p) in training,
// so evaluation is the identity.
//
//     training:   m_i = (u_i >= p) / (1 - p),  u_i ~ U[0, 1)     y = x ⊙ m
//     evaluation: y = x
// Backward: dx = dy ⊙ m
// Shapes: any; the mask has x's shape (empty in evaluation).
// Two ways to draw u: in order from an Rng (dropout_mask, and the first dropout_forward), or from
// a counter-based hash of the element's position (SeededDropout: what the layers use, since it
// runs on the pool and gives the same mask on any thread count).
// PyTorch: torch.nn.functional.dropout(x, p, training)
// Throws: config_error unless 0 <= p < 1.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

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

/// Dropout drawn from a counter-based generator instead of a stream: x is read as rows of its
/// last dimension ([N, C], N the product of the others) and the factor of element (r, c) is a
/// pure function of (seed, r, c), the hash that attention's tiles draw from (stream 0):
///
///     m_rc = (u(seed, r, c) >= p) / (1 - p),   u = (h >> 8) · 2⁻²⁴,  h a 32-bit hash of
///                                                 (seed, r, c): splitmix64 per row, lowbias32
///
/// So blocks of rows are drawn on the pool, in any order, with the same mask on any thread
/// count; a module draws one seed per call from its Rng (draw_dropout_seed).
struct SeededDropout {
  float p = 0.0f;          ///< probability of dropping an element, 0 <= p < 1
  std::uint64_t seed = 0;  ///< one per call
};

/// {p, seed}, the seed two words of rng (high word first): what one seeded dropout needs.
/// Throws: config_error unless 0 <= p < 1.
SeededDropout draw_dropout_seed(float p, Rng& rng);

/// y = x ⊙ m with m drawn from `dropout` (above); `mask` receives m (empty in evaluation or for
/// p = 0), which dropout_backward needs. From 2²¹ elements as blocks of rows on the pool.
/// Throws: config_error unless 0 <= dropout.p < 1.
template <std::size_t R>
xt::xtensor<float, R> dropout_forward(const xt::xtensor<float, R>& x, const SeededDropout& dropout,
                                      bool training, xt::xtensor<float, R>& mask);

/// dx = dy ⊙ mask, in grad_y's buffer (pass std::move(g) to avoid a copy); an empty mask
/// (evaluation, or p = 0) returns grad_y as it is.
template <std::size_t R>
xt::xtensor<float, R> dropout_backward(xt::xtensor<float, R> grad_y,
                                       const xt::xtensor<float, R>& mask);

}  // namespace xenc

// RoPE and ALiBi, the two schemes that act inside attention: checks and calls (the tables are
// in lib/src/kernels/positions.cpp, the loop references in reference::rope_forward and
// reference::alibi_slopes).
#include "xenc/ops/position_in_attention.hpp"

#include <cmath>
#include <string>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

std::vector<double> rope_frequencies(std::size_t head_dim, double base) {
  check_config(head_dim > 0 && head_dim % 2 == 0, "rope",
               "head dimension Dh = d_model / nhead is " + std::to_string(head_dim) +
                   ", expected an even number > 0 (RoPE rotates column pairs)");
  return kernels::rope_frequencies(head_dim, base);
}

namespace {
// y = R(sign·p) x on every pair of every head; sign = −1 gives Rᵀ (the backward).
void rotate(Tensor3& x, std::size_t H, RopePairing pairing, double offset, double sign,
            const char* where, const std::vector<double>& positions = {}) {
  check_config(H > 0 && x.shape(2) % H == 0, where,
               "D (" + std::to_string(x.shape(2)) + ") must be divisible by nhead (" +
                   std::to_string(H) + ")");
  const std::size_t T = x.shape(1), Dh = x.shape(2) / H, half = Dh / 2;
  const std::vector<double> theta = rope_frequencies(Dh);
  if (x.size() == 0) return;
  // The table: cos and sin of (t + offset)·θ_i for every token t and pair i, [T, Dh/2], shared
  // by every sentence and head.
  Tensor2 cos_table = Tensor2::from_shape({T, half}), sin_table = Tensor2::from_shape({T, half});
  if (positions.empty()) {
    kernels::rotation_tables(theta, offset, sign, kernels::as_matrix(cos_table),
                             kernels::as_matrix(sin_table));
  } else {
    if (positions.size() != T)
      throw shape_error(std::string(where) + ": positions has " + std::to_string(positions.size()) +
                        " values, expected T = " + std::to_string(T));
    kernels::rotation_tables_at(theta, positions, sign, kernels::as_matrix(cos_table),
                                kernels::as_matrix(sin_table));
  }
  // Rows of x [B·T, D]: every head's pairs turned by its token's angles
  kernels::rotate_pairs(kernels::as_matrix(x), H,
                        {kernels::as_matrix(cos_table), kernels::as_matrix(sin_table),
                         pairing == RopePairing::interleaved});
}
}  // namespace

void rope_forward(Tensor3& x, std::size_t num_heads, RopePairing pairing, double offset) {
  rotate(x, num_heads, pairing, offset, +1.0, "rope_forward");
}

void rope_backward(Tensor3& grad, std::size_t num_heads, RopePairing pairing, double offset) {
  // R(p) is orthogonal: its transpose is the rotation by −p
  rotate(grad, num_heads, pairing, offset, -1.0, "rope_backward");
}

void rope_forward_at(Tensor3& x, std::size_t num_heads, const std::vector<double>& positions,
                     RopePairing pairing) {
  rotate(x, num_heads, pairing, 0.0, +1.0, "rope_forward_at", positions);
}

void rope_backward_at(Tensor3& grad, std::size_t num_heads, const std::vector<double>& positions,
                      RopePairing pairing) {
  rotate(grad, num_heads, pairing, 0.0, -1.0, "rope_backward_at", positions);
}

std::vector<double> alibi_slopes(std::size_t num_heads) {
  check_config(num_heads > 0, "alibi_slopes", "nhead is 0, expected > 0");
  // n = the largest power of two <= H: 2^(−8/n), ..., 2^(−8), then every other slope of the
  // sequence for 2n heads (kernels/positions.cpp; the loop reference: reference::alibi_slopes)
  return kernels::alibi_slopes(num_heads);
}

Tensor2 alibi_bias(double slope, std::size_t Tq, std::size_t Tk) {
  Tensor2 bias = Tensor2::from_shape({Tq, Tk});
  for (std::size_t i = 0; i < Tq; ++i)
    for (std::size_t j = 0; j < Tk; ++j)
      bias(i, j) = float(-slope * std::fabs(double(i) - double(j)));
  return bias;
}

}  // namespace xenc

// RoPE and ALiBi: the math of the two schemes that act inside attention.
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
  std::vector<double> theta(head_dim / 2);
  for (std::size_t i = 0; i < theta.size(); ++i)
    theta[i] = std::pow(base, -2.0 * double(i) / double(head_dim));
  return theta;
}

namespace {
// y = R(sign·p) x on every pair of every head; sign = −1 gives Rᵀ (the backward).
void rotate(Tensor3& x, std::size_t H, RopePairing pairing, double offset, double sign,
            const char* where) {
  check_config(H > 0 && x.shape(2) % H == 0, where,
               "D (" + std::to_string(x.shape(2)) + ") must be divisible by nhead (" +
                   std::to_string(H) + ")");
  const std::size_t T = x.shape(1), Dh = x.shape(2) / H, half = Dh / 2;
  const std::vector<double> theta = rope_frequencies(Dh);
  if (x.size() == 0) return;
  // The table: cos and sin of (t + offset)·θ_i for every token t and pair i, [T, Dh/2], shared
  // by every sentence and head. Angle t is angle t−1 turned by θ_i (a complex multiplication
  // in double: after t steps the error is about t·1e-16, far below float's 6e-8), so the
  // table costs Dh/2 sin/cos pairs, not T·Dh/2.
  Tensor2 cos_table = Tensor2::from_shape({T, half}), sin_table = Tensor2::from_shape({T, half});
  for (std::size_t i = 0; i < half; ++i) {
    double c = std::cos(offset * theta[i]), s = std::sin(offset * theta[i]);
    const double step_c = std::cos(theta[i]), step_s = std::sin(theta[i]);
    for (std::size_t t = 0; t < T; ++t) {
      cos_table(t, i) = float(c);
      sin_table(t, i) = float(sign * s);
      const double next_c = c * step_c - s * step_s;  // (c + i·s)·(step_c + i·step_s)
      s = s * step_c + c * step_s;
      c = next_c;
    }
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

namespace {
// 2^(−8/n), 2^(−16/n), ..., 2^(−8): the geometric sequence for n a power of two
std::vector<double> power_of_two_slopes(std::size_t n) {
  std::vector<double> m(n);
  const double start = std::pow(2.0, -8.0 / double(n));
  for (std::size_t h = 0; h < n; ++h) m[h] = std::pow(start, double(h + 1));
  return m;
}
}  // namespace

std::vector<double> alibi_slopes(std::size_t num_heads) {
  check_config(num_heads > 0, "alibi_slopes", "nhead is 0, expected > 0");
  std::size_t n = 1;  // the largest power of two <= H
  while (n * 2 <= num_heads) n *= 2;
  std::vector<double> m = power_of_two_slopes(n);
  if (n == num_heads) return m;
  // Not a power of two: the remaining H − n slopes are every other slope of the 2n sequence
  // (2^(−4/n), 2^(−12/n), ...), which fall between the first n.
  const std::vector<double> extra = power_of_two_slopes(2 * n);
  for (std::size_t i = 0; m.size() < num_heads; i += 2) m.push_back(extra[i]);
  return m;
}

Tensor2 alibi_bias(double slope, std::size_t Tq, std::size_t Tk) {
  Tensor2 bias = Tensor2::from_shape({Tq, Tk});
  for (std::size_t i = 0; i < Tq; ++i)
    for (std::size_t j = 0; j < Tk; ++j)
      bias(i, j) = float(-slope * std::fabs(double(i) - double(j)));
  return bias;
}

}  // namespace xenc

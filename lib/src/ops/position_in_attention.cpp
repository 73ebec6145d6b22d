// RoPE and ALiBi: the math of the two schemes that act inside attention.
#include "xenc/ops/position_in_attention.hpp"

#include <cmath>
#include <string>

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
  const std::size_t B = x.shape(0), T = x.shape(1), Dh = x.shape(2) / H, half = Dh / 2;
  const std::vector<double> theta = rope_frequencies(Dh);
  for (std::size_t t = 0; t < T; ++t) {
    // one (cos, sin) per pair for this position, shared by every sentence and head
    std::vector<float> c(half), s(half);
    for (std::size_t i = 0; i < half; ++i) {
      const double angle = (double(t) + offset) * theta[i];
      c[i] = float(std::cos(angle));
      s[i] = float(sign * std::sin(angle));
    }
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t i = 0; i < half; ++i) {
          // pair (a, a2): (2i, 2i+1) interleaved, (i, i + Dh/2) rotate-half
          const std::size_t a = h * Dh + (pairing == RopePairing::interleaved ? 2 * i : i);
          const std::size_t a2 = pairing == RopePairing::interleaved ? a + 1 : a + half;
          const float x0 = x(b, t, a), x1 = x(b, t, a2);
          x(b, t, a) = c[i] * x0 - s[i] * x1;
          x(b, t, a2) = s[i] * x0 + c[i] * x1;
        }
  }
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

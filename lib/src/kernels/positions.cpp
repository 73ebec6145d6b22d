// Position tables in double precision, stored as float: the sinusoidal encoding, its shift
// matrix, RoPE's frequencies and cos/sin tables, ALiBi's slopes. The loop forms of these
// formulas for reading are reference::sinusoidal_encoding, rope_forward and alibi_slopes
// (lib/src/reference/ops.cpp); these are the ones the library runs.
#include <cmath>

#include "kernels.hpp"

namespace xenc::kernels {

// ω_i = 10000^(-2i/D) = exp(-(2i/D) ln 10000)
double sinusoidal_frequency(std::size_t i, std::size_t d_model) {
  return std::exp(-(2.0 * double(i) / double(d_model)) * std::log(10000.0));
}

double sinusoidal_value(double position, std::size_t dim, std::size_t d_model) {
  // dim 2i and 2i+1 share the frequency ω_i: sin for the even one, cos for the odd one
  const double angle = position * sinusoidal_frequency(dim / 2, d_model);
  return dim % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

void sinusoidal_rows(MatView pe, std::size_t offset) {
  for (std::size_t i = 0; i < pe.cols / 2; ++i) {
    const double w = sinusoidal_frequency(i, pe.cols);
    for (std::size_t t = 0; t < pe.rows; ++t) {
      const double angle = double(offset + t) * w;
      pe(t, 2 * i) = static_cast<float>(std::sin(angle));
      pe(t, 2 * i + 1) = static_cast<float>(std::cos(angle));
    }
  }
}

void sinusoidal_shift(double k, MatView r) {
  require(r.rows == r.cols && r.cols % 2 == 0, "sinusoidal_shift", "expected an even [D, D]");
  for (std::size_t i = 0; i < r.rows; ++i)
    for (std::size_t j = 0; j < r.cols; ++j) r(i, j) = 0.0f;
  for (std::size_t i = 0; i < r.cols / 2; ++i) {
    // [sin((p+k)ω); cos((p+k)ω)] = [[cos kω, sin kω], [-sin kω, cos kω]] [sin pω; cos pω]
    const double a = k * sinusoidal_frequency(i, r.cols);
    r(2 * i, 2 * i) = static_cast<float>(std::cos(a));
    r(2 * i, 2 * i + 1) = static_cast<float>(std::sin(a));
    r(2 * i + 1, 2 * i) = static_cast<float>(-std::sin(a));
    r(2 * i + 1, 2 * i + 1) = static_cast<float>(std::cos(a));
  }
}

std::vector<double> rope_frequencies(std::size_t head_dim, double base) {
  std::vector<double> theta(head_dim / 2);
  for (std::size_t i = 0; i < theta.size(); ++i)
    theta[i] = std::pow(base, -2.0 * double(i) / double(head_dim));
  return theta;
}

void rotation_tables(const std::vector<double>& theta, double offset, double sign, MatView cos,
                     MatView sin) {
  require(cos.cols == theta.size() && sin.cols == theta.size() && sin.rows == cos.rows,
          "rotation_tables", "expected cos, sin [T, Dh/2]");
  // Angle t is angle t−1 turned by θ_i (a complex multiplication in double: after t steps the
  // error is about t·1e-16, far below float's 6e-8), so the table costs Dh/2 sin/cos pairs,
  // not T·Dh/2.
  for (std::size_t i = 0; i < theta.size(); ++i) {
    double c = std::cos(offset * theta[i]), s = std::sin(offset * theta[i]);
    const double step_c = std::cos(theta[i]), step_s = std::sin(theta[i]);
    for (std::size_t t = 0; t < cos.rows; ++t) {
      cos(t, i) = float(c);
      sin(t, i) = float(sign * s);
      const double next_c = c * step_c - s * step_s;  // (c + i·s)·(step_c + i·step_s)
      s = s * step_c + c * step_s;
      c = next_c;
    }
  }
}

void rotation_tables_at(const std::vector<double>& theta, const std::vector<double>& positions,
                        double sign, MatView cos, MatView sin) {
  require(cos.cols == theta.size() && sin.cols == theta.size() && sin.rows == cos.rows &&
              cos.rows == positions.size(),
          "rotation_tables_at", "expected cos, sin [T, Dh/2] and T positions");
  for (std::size_t t = 0; t < positions.size(); ++t)
    for (std::size_t i = 0; i < theta.size(); ++i) {
      cos(t, i) = float(std::cos(positions[t] * theta[i]));
      sin(t, i) = float(sign * std::sin(positions[t] * theta[i]));
    }
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

}  // namespace xenc::kernels

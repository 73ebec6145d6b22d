// Reference solution: RoPE of one head, interleaved pairs, the angle in double.
#include "exercises.hpp"

#include <cmath>
#include <string>

namespace assignment {

Tensor2 rope(const Tensor2& x, const std::vector<std::size_t>& positions) {
  const std::size_t T = x.shape()[0], Dh = x.shape()[1];
  // the pairs (2i, 2i+1) need an even Dh
  if (Dh == 0 || Dh % 2 != 0)
    throw xenc::config_error("rope: Dh (" + std::to_string(Dh) + ") must be even and > 0");
  Tensor2 y = Tensor2::from_shape({T, Dh});
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t i = 0; i < Dh / 2; ++i) {
      // pair i turns by a = p · θ_i, θ_i = 10000^(-2i/Dh), counter-clockwise
      const double a = double(positions[t]) * std::pow(10000.0, -2.0 * double(i) / double(Dh));
      const double c = std::cos(a), s = std::sin(a), x0 = x(t, 2 * i), x1 = x(t, 2 * i + 1);
      y(t, 2 * i) = float(x0 * c - x1 * s);
      y(t, 2 * i + 1) = float(x0 * s + x1 * c);
    }
  return y;
}

}  // namespace assignment

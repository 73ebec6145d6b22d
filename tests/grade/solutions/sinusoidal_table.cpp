// Reference solution: sinusoidal positional encoding, pair by pair, the angle in double.
#include "exercises.hpp"

#include <cmath>
#include <string>

namespace assignment {

Tensor2 sinusoidal_table(std::size_t num_positions, std::size_t d_model) {
  // the pairs (2i, 2i+1) need an even D
  if (d_model == 0 || d_model % 2 != 0)
    throw xenc::config_error("sinusoidal_table: d_model (" + std::to_string(d_model) +
                             ") must be even and > 0");
  Tensor2 pe = Tensor2::from_shape({num_positions, d_model});
  for (std::size_t p = 0; p < num_positions; ++p)
    for (std::size_t i = 0; i < d_model / 2; ++i) {
      // pair i rotates with frequency 10000^(-2i/D)
      const double angle = double(p) / std::pow(10000.0, double(2 * i) / double(d_model));
      pe(p, 2 * i) = float(std::sin(angle));
      pe(p, 2 * i + 1) = float(std::cos(angle));
    }
  return pe;
}

}  // namespace assignment

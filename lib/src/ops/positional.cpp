// Sinusoidal positional encoding, in double precision for any position.
#include "xenc/ops/positional.hpp"

#include <cmath>
#include <string>

#include "xenc/core/error.hpp"

namespace xenc {

namespace {
void check_d_model(const char* where, std::size_t d_model) {
  check_config(d_model > 0 && d_model % 2 == 0, where,
               "d_model is " + std::to_string(d_model) +
                   ", expected an even number > 0 (sin and cos fill dimension pairs (2i, 2i+1))");
}
// ω_i = 10000^(-2i/D) = exp(-(2i/D) ln 10000)
double omega(std::size_t i, std::size_t d_model) {
  return std::exp(-(2.0 * double(i) / double(d_model)) * std::log(10000.0));
}
}  // namespace

double sinusoidal_value(double position, std::size_t dim, std::size_t d_model) {
  check_d_model("sinusoidal_value", d_model);
  if (dim >= d_model)
    throw index_error("sinusoidal_value: dim is " + std::to_string(dim) +
                            ", expected dim < d_model = " + std::to_string(d_model));
  // dim 2i and 2i+1 share the frequency ω_i: sin for the even one, cos for the odd one
  const double angle = position * omega(dim / 2, d_model);
  return dim % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

Tensor2 sinusoidal_encoding(std::size_t num_positions, std::size_t d_model, std::size_t offset) {
  check_d_model("sinusoidal_encoding", d_model);
  Tensor2 pe = Tensor2::from_shape({num_positions, d_model});
  for (std::size_t i = 0; i < d_model / 2; ++i) {
    const double w = omega(i, d_model);
    for (std::size_t t = 0; t < num_positions; ++t) {
      const double angle = double(offset + t) * w;
      pe(t, 2 * i) = static_cast<float>(std::sin(angle));
      pe(t, 2 * i + 1) = static_cast<float>(std::cos(angle));
    }
  }
  return pe;
}

Tensor1 sinusoidal_frequencies(std::size_t d_model) {
  check_d_model("sinusoidal_frequencies", d_model);
  Tensor1 w = Tensor1::from_shape({d_model / 2});
  for (std::size_t i = 0; i < d_model / 2; ++i) w(i) = static_cast<float>(omega(i, d_model));
  return w;
}

Tensor2 sinusoidal_shift_matrix(double k, std::size_t d_model) {
  check_d_model("sinusoidal_shift_matrix", d_model);
  Tensor2 r = xt::zeros<float>({d_model, d_model});
  for (std::size_t i = 0; i < d_model / 2; ++i) {
    // [sin((p+k)ω); cos((p+k)ω)] = [[cos kω, sin kω], [-sin kω, cos kω]] [sin pω; cos pω]
    const double a = k * omega(i, d_model);
    r(2 * i, 2 * i) = static_cast<float>(std::cos(a));
    r(2 * i, 2 * i + 1) = static_cast<float>(std::sin(a));
    r(2 * i + 1, 2 * i) = static_cast<float>(-std::sin(a));
    r(2 * i + 1, 2 * i + 1) = static_cast<float>(std::cos(a));
  }
  return r;
}

}  // namespace xenc

// Sinusoidal positional encoding, in double precision for any position: the checks here, the
// tables in lib/src/kernels/positions.cpp, the loop reference in reference::sinusoidal_encoding.
#include "xenc/ops/positional.hpp"

#include <string>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

namespace {
void check_d_model(const char* where, std::size_t d_model) {
  check_config(d_model > 0 && d_model % 2 == 0, where,
               "d_model is " + std::to_string(d_model) +
                   ", expected an even number > 0 (sin and cos fill dimension pairs (2i, 2i+1))");
}
}  // namespace

double sinusoidal_value(double position, std::size_t dim, std::size_t d_model) {
  check_d_model("sinusoidal_value", d_model);
  if (dim >= d_model)
    throw index_error("sinusoidal_value: dim is " + std::to_string(dim) +
                      ", expected dim < d_model = " + std::to_string(d_model));
  // dim 2i and 2i+1 share the frequency ω_i: sin for the even one, cos for the odd one
  return kernels::sinusoidal_value(position, dim, d_model);
}

Tensor2 sinusoidal_encoding(std::size_t num_positions, std::size_t d_model, std::size_t offset) {
  check_d_model("sinusoidal_encoding", d_model);
  Tensor2 pe = Tensor2::from_shape({num_positions, d_model});
  // PE(offset + t, 2i) = sin((offset + t)·ω_i), PE(offset + t, 2i+1) = cos(the same angle)
  kernels::sinusoidal_rows(kernels::as_matrix(pe), offset);
  return pe;
}

Tensor1 sinusoidal_frequencies(std::size_t d_model) {
  check_d_model("sinusoidal_frequencies", d_model);
  Tensor1 w = Tensor1::from_shape({d_model / 2});
  for (std::size_t i = 0; i < d_model / 2; ++i)
    w(i) = static_cast<float>(kernels::sinusoidal_frequency(i, d_model));
  return w;
}

Tensor2 sinusoidal_shift_matrix(double k, std::size_t d_model) {
  check_d_model("sinusoidal_shift_matrix", d_model);
  Tensor2 r = Tensor2::from_shape({d_model, d_model});
  // blockdiag([[cos kω_i, sin kω_i], [-sin kω_i, cos kω_i]])
  kernels::sinusoidal_shift(k, kernels::as_matrix(r));
  return r;
}

}  // namespace xenc

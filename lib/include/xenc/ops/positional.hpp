// Sinusoidal positional encoding (Vaswani et al., 2017, section 3.5).
//
//     PE(p, 2i)   = sin(p / 10000^(2i / D))
//     PE(p, 2i+1) = cos(p / 10000^(2i / D))          for i = 0 .. D/2 - 1
//
// Dimension pair (2i, 2i+1) rotates with angular frequency ω_i = 10000^(-2i/D), so
//     PE(p + k) = R_k · PE(p),   R_k = blockdiag( [[cos kω_i, sin kω_i], [-sin kω_i, cos kω_i]] )
// and PE(p) · PE(q) = Σ_i cos((p - q) ω_i) depends only on p - q.
// Computed in double precision for any position (no maximum length), stored as float32.
// Shapes:  table: [T, D], rows are positions offset .. offset + T - 1
// Throws:  config_error if D is odd or zero (the pairs need an even D).
#pragma once

#include <cstddef>

#include "xenc/core/error.hpp"
#include "xenc/core/tensor.hpp"

namespace xenc {

/// One entry PE(position, dim), in double precision.
double sinusoidal_value(double position, std::size_t dim, std::size_t d_model);

/// The table PE(offset + t, j) for t < num_positions, j < d_model.
Tensor2 sinusoidal_encoding(std::size_t num_positions, std::size_t d_model, std::size_t offset = 0);

/// ω_i = 10000^(-2i/D) for i = 0 .. D/2 - 1.
Tensor1 sinusoidal_frequencies(std::size_t d_model);

/// R_k: the [D, D] block-diagonal rotation with PE(p + k) = R_k · PE(p), built from k alone.
Tensor2 sinusoidal_shift_matrix(double k, std::size_t d_model);

}  // namespace xenc

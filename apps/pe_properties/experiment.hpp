// xenc-pe-properties' experiment: the sinusoidal table, R_k, and the three measurements (the
// rotation's error, the similarity's deviation from f(p - q), the closest pair), after the memory
// check that refuses the run before anything is computed. Options in, a Result out; report.hpp
// turns the Result into the text and the two figures.
#pragma once

#include <cstddef>
#include <string>

#include <xenc/core/tensor.hpp>
#include <xtensor/xtensor.hpp>

#include "options.hpp"

namespace pe_properties {

struct Result {
  CommandLine options;
  xenc::Tensor1 omega;                ///< [D/2] the frequencies w_i
  xenc::Tensor2 rk;                   ///< [D, D] R_k (float)
  double rotation_error = 0;          ///< max |R_k PE(p) - PE(p+k)| over p and the dimensions
  xt::xtensor<double, 2> similarity;  ///< [T, T] PE(p) . PE(q) in double
  double offset_error = 0;            ///< max |PE(p).PE(q) - f(p - q)| over every pair
  double adjacent = 0;                ///< sqrt(sum_i 2 - 2 cos w_i), every neighbours' distance
  std::string closest;                ///< closest_pairs_text: the smallest distance and where
};

/// f(delta) = sum_i cos(delta w_i), w_i = 10000^(-2i/D): PE(p) . PE(q) for q - p = delta.
double offset_similarity(double delta, std::size_t d_model);

/// Throws std::invalid_argument for k >= positions, xenc_app::resource_error over
/// --max-memory-mb, and the library's error for an odd D.
Result run_experiment(const CommandLine& c);

}  // namespace pe_properties

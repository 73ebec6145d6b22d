#include "experiment.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <xenc/core/blas_core.hpp>
#include <xenc/ops/positional.hpp>
#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xview.hpp>

#include "closest.hpp"

namespace pe_properties {

double offset_similarity(double delta, std::size_t d_model) {
  double s = 0;
  for (std::size_t i = 0; i < d_model / 2; ++i)
    s += std::cos(delta * std::pow(10000.0, -2.0 * double(i) / double(d_model)));
  return s;
}

namespace {

// memory before anything is computed: the table [T + k, D] in float and in double, its first T
// rows and their rotation in double, the similarity matrix [T, T] in double (twice, while the
// figure is made), R_k [D, D] in float and double
void check_memory(const CommandLine& c) {
  const std::size_t T = c.positions, D = c.d_model, k = c.shift;
  const double rows = double(T + k), dd = double(D), tt = double(T);
  c.memory(12 * rows * dd + 16 * tt * dd + 16 * tt * tt + 12 * dd * dd, "this run",
           std::to_string(T) + " positions (+ k = " + std::to_string(k) +
               ") x D = " + std::to_string(D) + " in double precision, and the " +
               std::to_string(T) + " x " + std::to_string(T) + " similarity matrix",
           "fewer --positions, a smaller --d-model or --shift, or a higher --max-memory-mb");
}

}  // namespace

Result run_experiment(const CommandLine& c) {
  const std::size_t T = c.positions, D = c.d_model, k = c.shift;
  if (k >= T)
    throw std::invalid_argument("--shift is " + std::to_string(k) +
                                ", expected a whole number 0 <= k < positions (" +
                                std::to_string(T) + ")");
  check_memory(c);
  Result r;
  r.options = c;
  // the table, with k extra rows so PE(p + k) exists for every p < T
  const xenc::Tensor2 pe = xenc::sinusoidal_encoding(T + k, D);  // [T + k, D]
  r.rk = xenc::sinusoidal_shift_matrix(double(k), D);            // [D, D]
  r.omega = xenc::sinusoidal_frequencies(D);                     // [D/2]
  // the float tables in double, so the GEMMs below add up in double precision
  const xt::xtensor<double, 2> pe_d = xt::cast<double>(pe);                        // [T + k, D]
  const xt::xtensor<double, 2> rk_d = xt::cast<double>(r.rk);                      // [D, D]
  const xt::xtensor<double, 2> pe_t = xt::view(pe_d, xt::range(0, T), xt::all());  // [T, D]

  // 1. row p of PE R_kᵀ is R_k PE(p): every position in one GEMM  [T, D] x [D, D] -> [T, D]
  //    (xtensor-blas calls OpenBLAS directly: refuse a core set the CPU cannot run, as gemm does)
  xenc::require_blas_core_runs_here("pe_properties");
  const xt::xtensor<double, 2> rotated = xt::linalg::dot(pe_t, xt::transpose(rk_d));
  for (std::size_t p = 0; p < T; ++p)
    for (std::size_t a = 0; a < D; ++a)
      r.rotation_error = std::max(r.rotation_error, std::abs(rotated(p, a) - pe_d(p + k, a)));

  // 2. S(p, q) = PE(p) . PE(q) for all pairs: one GEMM  [T, D] x [D, T] -> [T, T]; f tabulated
  //    for the offsets 0 .. T-1 (f is even: f(-k) = f(k))
  r.similarity = xt::linalg::dot(pe_t, xt::transpose(pe_t));
  std::vector<double> f_table(T);
  for (std::size_t d = 0; d < T; ++d) f_table[d] = offset_similarity(double(d), D);
  for (std::size_t p = 0; p < T; ++p)
    for (std::size_t q = 0; q < T; ++q)
      r.offset_error =
          std::max(r.offset_error, std::abs(r.similarity(p, q) - f_table[p > q ? p - q : q - p]));

  // 3. distances between rows: ||PE(p) - PE(q)||² = S(p, p) + S(q, q) - 2 S(p, q); ties within
  //    the float noise measured on the adjacent pairs are reported as ties
  const auto& s = r.similarity;
  auto dist = [&](std::size_t p, std::size_t q) {
    return std::sqrt(std::max(0.0, s(p, p) + s(q, q) - 2 * s(p, q)));
  };
  double adj = 0;
  for (std::size_t i = 0; i < D / 2; ++i)
    adj += 2 - 2 * std::cos(std::pow(10000.0, -2.0 * double(i) / double(D)));
  r.adjacent = std::sqrt(adj);
  r.closest = closest_pairs_text(T, dist, r.adjacent);
  return r;
}

}  // namespace pe_properties

// pe_properties: three properties of sinusoidal positional encoding, checked numerically.
//
// 1. A shift is a rotation. Dimension pair (2i, 2i+1) turns with angular frequency
//    ω_i = 10000^(-2i/D), so for every position p
//        PE(p + k) = R_k · PE(p),   R_k = blockdiag([[cos kω_i, sin kω_i], [-sin kω_i, cos kω_i]])
//    and R_k is built from k alone. We print R_k's 2×2 blocks and the largest error over all p.
// 2. The similarity PE(p) · PE(q) = Σ_i cos((p - q) ω_i) depends only on p - q: a heatmap of the
//    [T, T] similarity matrix (constant along diagonals) and the largest deviation from f(p - q).
// 3. Positions stay distinct: the smallest distance between two rows ‖PE(p) - PE(q)‖, p ≠ q.
//    ‖PE(p+k) - PE(p)‖² = Σ_i 2 - 2 cos(kω_i) is the same for every p (R_k is a rotation).
//
// The all-pairs work is two double-precision GEMMs (xtensor-blas): R_k PE(p) for every p at once
// (PE R_kᵀ) and the similarity matrix S = PE PEᵀ; the distances come from S, f from a table of
// the T offsets. D = 4096 with 4000 positions takes seconds. The heatmap shows at most 500 x 500
// cells (every s-th position beyond that, said in the output): a cell per pair would make a
// 4000 x 4000 SVG of over 1 GiB.
//
//     xenc-pe-properties                                     # D = 16, 50 positions, k = 3
//     xenc-pe-properties --d-model 64 --positions 100 --shift 7 --svg sim.svg
#include <CLI/CLI.hpp>
#include <xenc/ops/positional.hpp>
#include <xenc/viz/svg.hpp>
#include <xtensor-blas/xlinalg.hpp>

#include "../common/cli.hpp"
#include "closest.hpp"
#include "options.hpp"
#include "ordinal.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

// The heatmap's largest side in cells (every s-th position beyond it).
constexpr std::size_t kMaxSide = 500;

int main(int argc, char** argv) {
  CLI::App app{
      "xenc-pe-properties: PE(p+k) = R_k PE(p) (a rotation), PE(p).PE(q) depends only on p - q,\n"
      "and how far apart the position vectors are, checked numerically with figures."};
  xenc_app::add_version(app, "xenc-pe-properties");
  pe_properties::CommandLine c;
  xenc_app::add_options(app, c, pe_properties::option_records());
  CLI11_PARSE(app, argc, argv);

  try {
    const std::string &svg = c.svg, &offset_svg = c.offset_svg;
    const xenc_app::Guard& guard = c;
    const std::size_t T = c.positions, D = c.d_model, k = c.shift;
    if (k >= T)
      throw std::invalid_argument("--shift is " + std::to_string(k) +
                                  ", expected a whole number 0 <= k < positions (" +
                                  std::to_string(T) + ")");
    // memory before anything is computed: the table [T + k, D] in float and in double, its first
    // T rows and their rotation in double, the similarity matrix [T, T] in double (twice, while
    // the figure is made), R_k [D, D] in float and double
    const double rows = double(T + k), dd = double(D), tt = double(T);
    guard.memory(12 * rows * dd + 16 * tt * dd + 16 * tt * tt + 12 * dd * dd, "this run",
                 std::to_string(T) + " positions (+ k = " + std::to_string(k) +
                     ") x D = " + std::to_string(D) + " in double precision, and the " +
                     std::to_string(T) + " x " + std::to_string(T) + " similarity matrix",
                 "fewer --positions, a smaller --d-model or --shift, or a higher --max-memory-mb");
    // the table, with k extra rows so PE(p + k) exists for every p < T
    const xenc::Tensor2 pe = xenc::sinusoidal_encoding(T + k, D);          // [T + k, D]
    const xenc::Tensor2 rk = xenc::sinusoidal_shift_matrix(double(k), D);  // [D, D]
    const xenc::Tensor1 omega = xenc::sinusoidal_frequencies(D);           // [D/2]
    // the float tables in double, so the GEMMs below add up in double precision
    const xt::xtensor<double, 2> pe_d = xt::cast<double>(pe);                        // [T + k, D]
    const xt::xtensor<double, 2> rk_d = xt::cast<double>(rk);                        // [D, D]
    const xt::xtensor<double, 2> pe_t = xt::view(pe_d, xt::range(0, T), xt::all());  // [T, D]

    // 1. R_k: its 2×2 blocks, then max over p and j of |(R_k PE(p))_j - PE(p + k)_j|
    std::printf("1. A shift by k = %zu is a rotation: PE(p + k) = R_k . PE(p), D = %zu\n", k, D);
    std::printf(
        "   R_k = blockdiag of 2x2 blocks [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]]:\n");
    for (std::size_t i = 0; i < D / 2; ++i) {
      if (D / 2 > 10 && i == 4) {
        std::printf("   ... (%zu more blocks)\n", D / 2 - 8);
        i = D / 2 - 4;
      }
      const std::size_t j = 2 * i;
      std::printf("   i = %3zu  w_i = %.6f   [[%9.6f %9.6f]  [%9.6f %9.6f]]\n", i, double(omega(i)),
                  double(rk(j, j)), double(rk(j, j + 1)), double(rk(j + 1, j)),
                  double(rk(j + 1, j + 1)));
    }
    // row p of PE R_kᵀ is R_k PE(p): every position in one GEMM  [T, D] x [D, D] -> [T, D]
    const xt::xtensor<double, 2> rotated = xt::linalg::dot(pe_t, xt::transpose(rk_d));
    double rot_err = 0;
    for (std::size_t p = 0; p < T; ++p)
      for (std::size_t a = 0; a < D; ++a)
        rot_err = std::max(rot_err, std::abs(rotated(p, a) - pe_d(p + k, a)));
    std::printf(
        "   max |R_k PE(p) - PE(p+k)| over p = 0..%zu and all %zu dims: %.2e\n"
        "   (float32 rounding): one matrix, built from k alone, shifts every position\n\n",
        T - 1, D, rot_err);

    // 2. S(p, q) = PE(p) . PE(q) for all pairs: one GEMM  [T, D] x [D, T] -> [T, T]
    const xt::xtensor<double, 2> sim_d = xt::linalg::dot(pe_t, xt::transpose(pe_t));
    // f(k) = sum_i cos(k w_i), tabulated for the offsets 0 .. T-1 (f is even: f(-k) = f(k))
    auto f = [&](double delta) {
      double s = 0;
      for (std::size_t i = 0; i < D / 2; ++i)
        s += std::cos(delta * std::pow(10000.0, -2.0 * double(i) / double(D)));
      return s;
    };
    std::vector<double> f_table(T);
    for (std::size_t d = 0; d < T; ++d) f_table[d] = f(double(d));
    double offset_err = 0;
    for (std::size_t p = 0; p < T; ++p)
      for (std::size_t q = 0; q < T; ++q)
        offset_err = std::max(offset_err, std::abs(sim_d(p, q) - f_table[p > q ? p - q : q - p]));
    std::printf("2. PE(p) . PE(q) = sum_i cos((p - q) w_i) = f(p - q): depends only on p - q\n");
    std::printf("   max |PE(p).PE(q) - f(p - q)| over all %zu x %zu pairs: %.2e\n", T, T,
                offset_err);
    std::printf("   f(0) = D/2 = %.4f (every pair has sin^2 + cos^2 = 1)\n  ", f(0));
    for (double d : {1.0, 2.0, 5.0, 10.0, 20.0})
      if (d < double(T)) std::printf(" f(%g) = %.4f", d, f(d));
    std::printf("\n\n");

    // 3. distances between rows: ||PE(p) - PE(q)||² = S(p, p) + S(q, q) - 2 S(p, q)
    auto dist = [&](std::size_t p, std::size_t q) {
      return std::sqrt(std::max(0.0, sim_d(p, p) + sim_d(q, q) - 2 * sim_d(p, q)));
    };
    double adj = 0;
    for (std::size_t i = 0; i < D / 2; ++i)
      adj += 2 - 2 * std::cos(std::pow(10000.0, -2.0 * double(i) / double(D)));
    // ties within the float noise measured on the adjacent pairs are reported as ties
    std::printf(
        "3. Distinct positions: the smallest distance ||PE(p) - PE(q)|| over p != q < %zu\n"
        "   is %s\n",
        T, pe_properties::closest_pairs_text(T, dist, std::sqrt(adj)).c_str());
    std::printf(
        "   ||PE(p+1) - PE(p)|| = sqrt(sum_i 2 - 2 cos w_i) = %.6f for every p (a rotation\n"
        "   keeps distances); every row has length ||PE(p)|| = sqrt(D/2) = %.4f\n",
        std::sqrt(adj), std::sqrt(double(D) / 2));

    // the heatmap: every s-th position when T > 500, so the SVG stays a few MiB
    const std::size_t stride = (T + kMaxSide - 1) / kMaxSide, shown = (T + stride - 1) / stride;
    xenc::Tensor2 sim = xenc::Tensor2::from_shape({shown, shown});
    std::vector<std::string> tick_labels;
    for (std::size_t i = 0; i < shown; ++i) {
      tick_labels.push_back(std::to_string(i * stride));
      for (std::size_t j = 0; j < shown; ++j)
        sim(i, j) = static_cast<float>(sim_d(i * stride, j * stride));
    }
    // figures: the similarity matrix and f(p - q)
    xenc::viz::HeatmapOptions h;
    h.title = "Position similarity PE(p) . PE(q), D = " + std::to_string(D);
    h.x_label = "position q";
    h.y_label = "position p";
    h.diverging = false;  // viridis: mostly positive values (f can dip below 0 for large D)
    h.colorbar_label = "PE(p) . PE(q)";
    if (stride > 1) {
      h.title += ", every " + pe_properties::ordinal(stride) + " position";
      h.x_ticks = tick_labels;
      h.y_ticks = tick_labels;
    }
    xenc::viz::write_text_file(svg, xenc::viz::heatmap_svg(sim, h));
    xenc::viz::LineSeries s{"f(p - q) = sum_i cos((p - q) w_i)", {}, {}};
    xenc::viz::LineSeries measured{"PE(0) . PE(q) (measured)", {}, {}};
    for (std::size_t d = 0; d < T; ++d) {
      s.x.push_back(double(d));
      s.y.push_back(f(double(d)));
      measured.x.push_back(double(d));
      measured.y.push_back(sim_d(0, d));
    }
    measured.dashed = true;
    xenc::viz::LinePlotOptions l;
    l.title = "Similarity depends only on the offset p - q, D = " + std::to_string(D);
    l.x_label = "offset p - q";
    l.y_label = "dot product";
    xenc::viz::write_text_file(offset_svg, xenc::viz::line_plot_svg({s, measured}, l));
    if (stride > 1)
      std::printf(
          "\nThe heatmap shows every %s position (%zu x %zu of the %zu x %zu pairs): a cell per "
          "pair\n"
          "would make an SVG of about %.0f MiB; the numbers above use every pair.\n",
          pe_properties::ordinal(stride).c_str(), shown, shown, T, T,
          75.0 * double(T) * double(T) / (1024.0 * 1024.0));
    std::printf("\nWrote %s (%zu x %zu similarity matrix) and %s\n", svg.c_str(), shown, shown,
                offset_svg.c_str());
  } catch (const std::exception& e) {
    return xenc_app::report_error("xenc-pe-properties", e);
  }
  return xenc_app::finish_stdout("xenc-pe-properties");
}

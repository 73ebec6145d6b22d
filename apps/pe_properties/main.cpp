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
//     pe_properties                                          # D = 16, 50 positions, k = 3
//     pe_properties --d-model 64 --positions 100 --shift 7 --svg sim.svg
#include <CLI/CLI.hpp>
#include <xenc/ops/positional.hpp>
#include <xenc/viz/svg.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{"pe_properties: PE(p+k) = R_k PE(p) (a rotation), PE(p).PE(q) depends only on p - q,\n"
               "and how far apart the position vectors are, checked numerically with figures."};
  std::size_t d_model = 16, positions = 50;
  double shift = 3;
  std::string svg = "pe_similarity.svg", offset_svg = "pe_similarity_by_offset.svg";
  app.add_option("--d-model", d_model, "D (even)")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--positions", positions, "positions p = 0 .. positions-1")->check(CLI::Range(2, 4000))->capture_default_str();
  app.add_option("--shift", shift, "k in PE(p + k) = R_k PE(p)")->capture_default_str();
  app.add_option("--svg", svg, "similarity-matrix heatmap path")->capture_default_str();
  app.add_option("--offset-svg", offset_svg, "similarity-by-offset line plot path")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    const std::size_t T = positions, D = d_model;
    const std::size_t k = static_cast<std::size_t>(std::llround(std::abs(shift)));
    if (shift < 0 || std::abs(shift - double(k)) > 0 || k >= T)
      throw std::invalid_argument("--shift is " + std::to_string(shift) +
                                  ", expected a whole number 0 <= k < positions (" + std::to_string(T) + ")");
    // the table, with k extra rows so PE(p + k) exists for every p < T
    const xenc::Tensor2 pe = xenc::sinusoidal_encoding(T + k, D);   // [T + k, D]
    const xenc::Tensor2 rk = xenc::sinusoidal_shift_matrix(double(k), D);  // [D, D]
    const xenc::Tensor1 omega = xenc::sinusoidal_frequencies(D);    // [D/2]

    // 1. R_k: its 2×2 blocks, then max over p and j of |(R_k PE(p))_j - PE(p + k)_j|
    std::printf("1. A shift by k = %zu is a rotation: PE(p + k) = R_k . PE(p), D = %zu\n", k, D);
    std::printf("   R_k = blockdiag of 2x2 blocks [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]]:\n");
    for (std::size_t i = 0; i < D / 2; ++i) {
      if (D / 2 > 10 && i == 4) {
        std::printf("   ... (%zu more blocks)\n", D / 2 - 8);
        i = D / 2 - 4;
      }
      const std::size_t j = 2 * i;
      std::printf("   i = %3zu  w_i = %.6f   [[%9.6f %9.6f]  [%9.6f %9.6f]]\n", i, double(omega(i)),
                  double(rk(j, j)), double(rk(j, j + 1)), double(rk(j + 1, j)), double(rk(j + 1, j + 1)));
    }
    double rot_err = 0;
    for (std::size_t p = 0; p < T; ++p)
      for (std::size_t a = 0; a < D; ++a) {
        double y = 0;  // (R_k PE(p))_a in double
        for (std::size_t b = 0; b < D; ++b) y += double(rk(a, b)) * double(pe(p, b));
        rot_err = std::max(rot_err, std::abs(y - double(pe(p + k, a))));
      }
    std::printf("   max |R_k PE(p) - PE(p+k)| over p = 0..%zu and all %zu dims: %.2e\n"
                "   (float32 rounding): one matrix, built from k alone, shifts every position\n\n",
                T - 1, D, rot_err);

    // 2. S(p, q) = PE(p) . PE(q) and f(k) = sum_i cos(k w_i)
    xenc::Tensor2 sim = xenc::Tensor2::from_shape({T, T});
    for (std::size_t p = 0; p < T; ++p)
      for (std::size_t q = 0; q < T; ++q) {
        double s = 0;
        for (std::size_t j = 0; j < D; ++j) s += double(pe(p, j)) * double(pe(q, j));
        sim(p, q) = static_cast<float>(s);
      }
    auto f = [&](double delta) {
      double s = 0;
      for (std::size_t i = 0; i < D / 2; ++i) s += std::cos(delta * std::pow(10000.0, -2.0 * double(i) / double(D)));
      return s;
    };
    double offset_err = 0;
    for (std::size_t p = 0; p < T; ++p)
      for (std::size_t q = 0; q < T; ++q)
        offset_err = std::max(offset_err, std::abs(double(sim(p, q)) - f(double(p) - double(q))));
    std::printf("2. PE(p) . PE(q) = sum_i cos((p - q) w_i) = f(p - q): depends only on p - q\n");
    std::printf("   max |PE(p).PE(q) - f(p - q)| over all %zu x %zu pairs: %.2e\n", T, T, offset_err);
    std::printf("   f(0) = D/2 = %.4f (every pair has sin^2 + cos^2 = 1)\n  ", f(0));
    for (double d : {1.0, 2.0, 5.0, 10.0, 20.0})
      if (d < double(T)) std::printf(" f(%g) = %.4f", d, f(d));
    std::printf("\n\n");

    // 3. distances between rows
    double dmin = INFINITY;
    std::size_t pmin = 0, qmin = 1;
    for (std::size_t p = 0; p < T; ++p)
      for (std::size_t q = p + 1; q < T; ++q) {
        double s = 0;
        for (std::size_t j = 0; j < D; ++j) {
          const double d = double(pe(p, j)) - double(pe(q, j));
          s += d * d;
        }
        if (std::sqrt(s) < dmin) dmin = std::sqrt(s), pmin = p, qmin = q;
      }
    double adj = 0;
    for (std::size_t i = 0; i < D / 2; ++i) adj += 2 - 2 * std::cos(std::pow(10000.0, -2.0 * double(i) / double(D)));
    std::printf("3. Distinct positions: the smallest distance ||PE(p) - PE(q)|| over p != q < %zu\n"
                "   is %.6f (first found at p = %zu, q = %zu)\n", T, dmin, pmin, qmin);
    std::printf("   ||PE(p+1) - PE(p)|| = sqrt(sum_i 2 - 2 cos w_i) = %.6f for every p (a rotation\n"
                "   keeps distances); every row has length ||PE(p)|| = sqrt(D/2) = %.4f\n",
                std::sqrt(adj), std::sqrt(double(D) / 2));

    // figures: the similarity matrix and f(p - q)
    xenc::viz::HeatmapOptions h;
    h.title = "Position similarity PE(p) . PE(q), D = " + std::to_string(D);
    h.x_label = "position q";
    h.y_label = "position p";
    h.diverging = false;  // viridis: mostly positive values (f can dip below 0 for large D)
    h.colorbar_label = "PE(p) . PE(q)";
    xenc::viz::write_text_file(svg, xenc::viz::heatmap_svg(sim, h));
    xenc::viz::LineSeries s{"f(p - q) = sum_i cos((p - q) w_i)", {}, {}};
    xenc::viz::LineSeries measured{"PE(0) . PE(q) (measured)", {}, {}};
    for (std::size_t d = 0; d < T; ++d) {
      s.x.push_back(double(d));
      s.y.push_back(f(double(d)));
      measured.x.push_back(double(d));
      measured.y.push_back(sim(0, d));
    }
    measured.dashed = true;
    xenc::viz::LinePlotOptions l;
    l.title = "Similarity depends only on the offset p - q, D = " + std::to_string(D);
    l.x_label = "offset p - q";
    l.y_label = "dot product";
    xenc::viz::write_text_file(offset_svg, xenc::viz::line_plot_svg({s, measured}, l));
    std::printf("\nWrote %s (%zu x %zu similarity matrix) and %s\n", svg.c_str(), T, T, offset_svg.c_str());
  } catch (const std::exception& e) {
    std::cerr << "pe_properties: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

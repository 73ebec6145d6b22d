#include "report.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <xenc/viz/svg.hpp>

#include "../common/format.hpp"
#include "ordinal.hpp"

namespace pe_properties {

using xenc_app::format;

std::size_t heatmap_stride(std::size_t positions) { return (positions + kMaxSide - 1) / kMaxSide; }

std::string rotation_text(const Result& r) {
  const std::size_t D = r.options.d_model, k = r.options.shift, T = r.options.positions;
  std::string s =
      format("1. A shift by k = %zu is a rotation: PE(p + k) = R_k . PE(p), D = %zu\n", k, D);
  s += "   R_k = blockdiag of 2x2 blocks [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]]:\n";
  for (std::size_t i = 0; i < D / 2; ++i) {
    if (D / 2 > 10 && i == 4) {
      s += format("   ... (%zu more blocks)\n", D / 2 - 8);
      i = D / 2 - 4;
    }
    const std::size_t j = 2 * i;
    s += format("   i = %3zu  w_i = %.6f   [[%9.6f %9.6f]  [%9.6f %9.6f]]\n", i, double(r.omega(i)),
                double(r.rk(j, j)), double(r.rk(j, j + 1)), double(r.rk(j + 1, j)),
                double(r.rk(j + 1, j + 1)));
  }
  s += format(
      "   max |R_k PE(p) - PE(p+k)| over p = 0..%zu and all %zu dims: %.2e\n"
      "   (float32 rounding): one matrix, built from k alone, shifts every position\n\n",
      T - 1, D, r.rotation_error);
  return s;
}

std::string similarity_text(const Result& r) {
  const std::size_t D = r.options.d_model, T = r.options.positions;
  std::string s = "2. PE(p) . PE(q) = sum_i cos((p - q) w_i) = f(p - q): depends only on p - q\n";
  s += format("   max |PE(p).PE(q) - f(p - q)| over all %zu x %zu pairs: %.2e\n", T, T,
              r.offset_error);
  s += format("   f(0) = D/2 = %.4f (every pair has sin^2 + cos^2 = 1)\n  ",
              offset_similarity(0, D));
  for (double d : {1.0, 2.0, 5.0, 10.0, 20.0})
    if (d < double(T)) s += format(" f(%g) = %.4f", d, offset_similarity(d, D));
  return s + "\n\n";
}

std::string distance_text(const Result& r) {
  const std::size_t D = r.options.d_model, T = r.options.positions;
  return format(
             "3. Distinct positions: the smallest distance ||PE(p) - PE(q)|| over p != q < %zu\n"
             "   is %s\n",
             T, r.closest.c_str()) +
         format(
             "   ||PE(p+1) - PE(p)|| = sqrt(sum_i 2 - 2 cos w_i) = %.6f for every p (a rotation\n"
             "   keeps distances); every row has length ||PE(p)|| = sqrt(D/2) = %.4f\n",
             r.adjacent, std::sqrt(double(D) / 2));
}

std::string heatmap_svg(const Result& r) {
  const std::size_t T = r.options.positions, stride = heatmap_stride(T);
  const std::size_t shown = (T + stride - 1) / stride;
  xenc::Tensor2 sim = xenc::Tensor2::from_shape({shown, shown});
  std::vector<std::string> tick_labels;
  for (std::size_t i = 0; i < shown; ++i) {
    tick_labels.push_back(std::to_string(i * stride));
    for (std::size_t j = 0; j < shown; ++j)
      sim(i, j) = static_cast<float>(r.similarity(i * stride, j * stride));
  }
  xenc::viz::HeatmapOptions h;
  h.title = "Position similarity PE(p) . PE(q), D = " + std::to_string(r.options.d_model);
  h.x_label = "position q";
  h.y_label = "position p";
  h.diverging = false;  // viridis: mostly positive values (f can dip below 0 for large D)
  h.colorbar_label = "PE(p) . PE(q)";
  if (stride > 1) {
    h.title += ", every " + ordinal(stride) + " position";
    h.x_ticks = tick_labels;
    h.y_ticks = tick_labels;
  }
  return xenc::viz::heatmap_svg(sim, h);
}

std::string offset_svg(const Result& r) {
  const std::size_t D = r.options.d_model;
  xenc::viz::LineSeries f{"f(p - q) = sum_i cos((p - q) w_i)", {}, {}};
  xenc::viz::LineSeries measured{"PE(0) . PE(q) (measured)", {}, {}};
  for (std::size_t d = 0; d < r.options.positions; ++d) {
    f.x.push_back(double(d));
    f.y.push_back(offset_similarity(double(d), D));
    measured.x.push_back(double(d));
    measured.y.push_back(r.similarity(0, d));
  }
  measured.dashed = true;
  xenc::viz::LinePlotOptions l;
  l.title = "Similarity depends only on the offset p - q, D = " + std::to_string(D);
  l.x_label = "offset p - q";
  l.y_label = "dot product";
  return xenc::viz::line_plot_svg({f, measured}, l);
}

std::string wrote_text(const Result& r) {
  const std::size_t T = r.options.positions, stride = heatmap_stride(T);
  const std::size_t shown = (T + stride - 1) / stride;
  std::string s;
  if (stride > 1)
    s += format(
        "\nThe heatmap shows every %s position (%zu x %zu of the %zu x %zu pairs): a cell per "
        "pair\n"
        "would make an SVG of about %.0f MiB; the numbers above use every pair.\n",
        ordinal(stride).c_str(), shown, shown, T, T,
        75.0 * double(T) * double(T) / (1024.0 * 1024.0));
  return s + format("\nWrote %s (%zu x %zu similarity matrix) and %s\n", r.options.svg.c_str(),
                    shown, shown, r.options.offset_svg.c_str());
}

}  // namespace pe_properties

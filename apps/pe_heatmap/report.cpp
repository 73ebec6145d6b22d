// xenc-pe-heatmap's report (report.hpp).
#include "report.hpp"

#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

namespace pe_heatmap {

std::string heatmap_svg(const Result& r) {
  xenc::viz::HeatmapOptions h;
  h.title = "Sinusoidal positional encoding, " + std::to_string(r.options.positions) +
            " positions x D = " + std::to_string(r.options.d_model);
  h.x_label = "dimension j (pairs 2i, 2i+1 share a frequency)";
  h.y_label = "position p";
  h.diverging = true;
  h.vmin = -1;
  h.vmax = 1;
  h.colorbar_label = "PE(p, j)";
  return xenc::viz::heatmap_svg(r.pe, h);
}

std::string csv_text(const Result& r) {
  const std::size_t positions = r.pe.shape(0), d_model = r.pe.shape(1);
  std::ostringstream out;
  out << "position";
  for (std::size_t j = 0; j < d_model; ++j) out << ",d" << j;
  out << "\n";
  char buf[32];
  for (std::size_t p = 0; p < positions; ++p) {
    out << p;
    for (std::size_t j = 0; j < d_model; ++j) {
      std::snprintf(buf, sizeof buf, ",%.9g", double(r.pe(p, j)));
      out << buf;
    }
    out << "\n";
  }
  return out.str();
}

std::vector<xenc::viz::LineSeries> line_series(const Result& r) {
  std::vector<xenc::viz::LineSeries> series;
  for (std::size_t d : r.options.dims) {
    xenc::viz::LineSeries s;
    s.label = "dim " + std::to_string(d) + (d % 2 == 0 ? " (sin" : " (cos") +
              ", i = " + std::to_string(d / 2) + ")";
    for (std::size_t p = 0; p < r.pe.shape(0); ++p) {
      s.x.push_back(double(p));
      s.y.push_back(r.pe(p, d));
    }
    series.push_back(s);
  }
  return series;
}

std::string lines_svg(const Result& r) {
  xenc::viz::LinePlotOptions l;
  l.title = "PE(p, j) over positions, D = " + std::to_string(r.options.d_model);
  l.x_label = "position p";
  l.y_label = "PE(p, j)";
  l.y_min = -1.05;
  l.y_max = 1.05;
  return xenc::viz::line_plot_svg(line_series(r), l);
}

std::string terminal_text(const Result& r) {
  const std::size_t positions = r.pe.shape(0), d_model = r.pe.shape(1);
  std::string out =
      "PE(p, 2i) = sin(p / 10000^(2i/D)),  PE(p, 2i+1) = cos(p / 10000^(2i/D)),  D = " +
      std::to_string(d_model) + "\n\nFirst positions, first dimensions:\n       ";
  char buf[64];
  const std::size_t show_d = std::min<std::size_t>(d_model, 8),
                    show_p = std::min<std::size_t>(positions, 5);
  for (std::size_t j = 0; j < show_d; ++j) {
    std::snprintf(buf, sizeof buf, "%9s", ("d" + std::to_string(j)).c_str());
    out += buf;
  }
  out += "\n";
  for (std::size_t p = 0; p < show_p; ++p) {
    std::snprintf(buf, sizeof buf, "  p=%-3zu", p);
    out += buf;
    for (std::size_t j = 0; j < show_d; ++j) {
      std::snprintf(buf, sizeof buf, "%9.4f", double(r.pe(p, j)));
      out += buf;
    }
    out += "\n";
  }
  out += "\nWavelength 2*pi*10000^(2i/D) of a few pairs (positions per full turn):\n";
  for (std::size_t i : std::set<std::size_t>{0, 1, d_model / 8, d_model / 4, d_model / 2 - 1}) {
    if (i >= d_model / 2) continue;
    std::snprintf(buf, sizeof buf, "  dims %3zu,%3zu: %12.1f\n", 2 * i, 2 * i + 1,
                  2 * 3.141592653589793 * std::pow(10000.0, 2.0 * double(i) / double(d_model)));
    out += buf;
  }
  return out;
}

std::string wrote_text(const Result& r, const std::string& svg, const std::string& csv,
                       const std::string& lines) {
  const std::size_t positions = r.options.positions, d_model = r.options.d_model;
  std::string out = "\nWrote " + svg + " (heatmap, " + std::to_string(positions * d_model) +
                    " cells), " + csv + " (" + std::to_string(positions) + " rows x " +
                    std::to_string(d_model) + " columns)";
  if (!r.options.dims.empty())
    out += ", " + lines + " (" + std::to_string(r.options.dims.size()) + " dimensions)";
  return out + "\n";
}

}  // namespace pe_heatmap

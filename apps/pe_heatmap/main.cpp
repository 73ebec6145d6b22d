// pe_heatmap: the sinusoidal positional-encoding table as a picture and as numbers.
//
//     PE(p, 2i)   = sin(p / 10000^(2i / D))
//     PE(p, 2i+1) = cos(p / 10000^(2i / D))
//
// Writes three files:
//   - an SVG heatmap of the table, positions down, dimensions across (diverging colours: -1 blue,
//     0 white, +1 red): low dimensions oscillate fast, high dimensions barely change;
//   - the table as CSV (header "position,d0,d1,...", one row per position);
//   - an SVG line plot of chosen dimensions over the positions.
//
// Before computing anything it estimates the size of each file (about 75 bytes per heatmap cell,
// 13 per CSV value) and refuses, naming the sizes, when one would exceed --max-output-mb
// (default 100 MiB): 10000 positions x D = 8192 would be a 6 GB SVG. With a higher
// --max-output-mb the text of each file, built in memory, is checked against --max-memory-mb.
//
//     xenc-pe-heatmap                              # 64 positions, D = 64, dims 0,8,16,24
//     xenc-pe-heatmap --positions 100 --d-model 128 --dims 0,2,8,32 --svg pe.svg --csv pe.csv
#include <CLI/CLI.hpp>
#include <xenc/ops/positional.hpp>
#include <xenc/viz/svg.hpp>

#include "../common/cli.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{
      "xenc-pe-heatmap: the sinusoidal positional-encoding table PE(p, j) as an SVG heatmap,\n"
      "a CSV file, and an SVG line plot of chosen dimensions over the positions."};
  xenc_app::add_version(app, "xenc-pe-heatmap");
  std::size_t positions = 64, d_model = 64;
  std::vector<std::size_t> dims;  // default: 0, D/8, D/4, 3D/8 (rounded to even: sin columns)
  std::string svg = "pe_heatmap.svg", csv = "pe_table.csv", lines = "pe_lines.svg";
  xenc_app::add_checked(app, "--positions", positions, "number of positions p = 0 .. positions-1",
                        xenc_app::whole_range(1, 10000));
  xenc_app::add_checked(app, "--d-model", d_model, "D, the encoding size (even)",
                        xenc_app::whole_range(1, 8192));
  app.add_option("--dims", dims,
                 "dimensions for the line plot, e.g. --dims 0,1,4 "
                 "(default: 0, D/8, D/4, 3D/8 rounded down to even)")
      ->delimiter(',')
      ->check(xenc_app::whole_range(0, 8191));
  app.add_option("--svg", svg, "heatmap output path")->capture_default_str();
  app.add_option("--csv", csv, "table output path")->capture_default_str();
  app.add_option("--lines-svg", lines, "line-plot output path")->capture_default_str();
  xenc_app::Guard guard;
  xenc_app::add_guard_options(app, guard, xenc_app::kMemory | xenc_app::kOutput);
  CLI11_PARSE(app, argc, argv);

  try {
    if (dims.empty())
      for (std::size_t k = 0; k < 4; ++k) {
        const std::size_t d = (k * d_model / 8) / 2 * 2;
        if (d < d_model && (dims.empty() || dims.back() != d)) dims.push_back(d);
      }
    // 1. the table [positions, D], computed in double precision and stored as float
    for (std::size_t d : dims)
      if (d >= d_model)
        throw std::invalid_argument(
            "--dims: dimension " + std::to_string(d) + " is out of range, expected 0 .. " +
            std::to_string(d_model - 1) + " (D = " + std::to_string(d_model) + ")");
    // the files' sizes, estimated before anything is computed: ~75 bytes per heatmap cell
    // (a <rect> with its colour), ~13 per CSV value ("," and 9 significant digits)
    const double cells = double(positions) * double(d_model);
    const double svg_bytes = 75.0 * cells + 20e3,
                 csv_bytes = 13.0 * cells + 8.0 * double(positions);
    const double mib = 1024.0 * 1024.0, limit = double(guard.max_output_mb) * mib;
    if (svg_bytes > limit || csv_bytes > limit) {
      char msg[512];
      std::snprintf(
          msg, sizeof msg,
          "%zu positions x D = %zu = %.0f values: the heatmap SVG would be about %.0f MiB and the "
          "CSV about %.0f MiB, over the limit of %zu MiB per file (--max-output-mb; fewer "
          "--positions or a smaller --d-model)",
          positions, d_model, cells, svg_bytes / mib, csv_bytes / mib, guard.max_output_mb);
      throw xenc_app::resource_error(msg);
    }
    const std::string table =
        std::to_string(positions) + " positions x D = " + std::to_string(d_model);
    // memory: the table (float, and double while it is computed), each file's text built in
    // memory before it is written (the SVG through a string and its copy)
    guard.memory(12.0 * cells + 2.0 * svg_bytes + 2.0 * csv_bytes, "this table",
                 table + ", its SVG and CSV text built in memory",
                 "fewer --positions or a smaller --d-model");
    const xenc::Tensor2 pe = xenc::sinusoidal_encoding(positions, d_model);  // [T, D]

    // 2. heatmap: a cell per value
    xenc::viz::HeatmapOptions h;
    h.title = "Sinusoidal positional encoding, " + std::to_string(positions) +
              " positions x D = " + std::to_string(d_model);
    h.x_label = "dimension j (pairs 2i, 2i+1 share a frequency)";
    h.y_label = "position p";
    h.diverging = true;
    h.vmin = -1;
    h.vmax = 1;
    h.colorbar_label = "PE(p, j)";
    xenc::viz::write_text_file(svg, xenc::viz::heatmap_svg(pe, h));

    // 3. CSV with 9 significant digits (float32 round-trips)
    std::ostringstream out;
    out << "position";
    for (std::size_t j = 0; j < d_model; ++j) out << ",d" << j;
    out << "\n";
    char buf[32];
    for (std::size_t p = 0; p < positions; ++p) {
      out << p;
      for (std::size_t j = 0; j < d_model; ++j) {
        std::snprintf(buf, sizeof buf, ",%.9g", double(pe(p, j)));
        out << buf;
      }
      out << "\n";
    }
    xenc::viz::write_text_file(csv, out.str());

    // 4. line plot of the chosen dimensions
    std::vector<xenc::viz::LineSeries> series;
    for (std::size_t d : dims) {
      xenc::viz::LineSeries s;
      s.label = "dim " + std::to_string(d) + (d % 2 == 0 ? " (sin" : " (cos") +
                ", i = " + std::to_string(d / 2) + ")";
      for (std::size_t p = 0; p < positions; ++p) {
        s.x.push_back(double(p));
        s.y.push_back(pe(p, d));
      }
      series.push_back(s);
    }
    xenc::viz::LinePlotOptions l;
    l.title = "PE(p, j) over positions, D = " + std::to_string(d_model);
    l.x_label = "position p";
    l.y_label = "PE(p, j)";
    l.y_min = -1.05;
    l.y_max = 1.05;
    if (!series.empty()) xenc::viz::write_text_file(lines, xenc::viz::line_plot_svg(series, l));

    // 5. what a student sees on the terminal: a corner of the table and the wavelengths
    std::cout << "PE(p, 2i) = sin(p / 10000^(2i/D)),  PE(p, 2i+1) = cos(p / 10000^(2i/D)),  D = "
              << d_model << "\n\nFirst positions, first dimensions:\n       ";
    const std::size_t show_d = std::min<std::size_t>(d_model, 8),
                      show_p = std::min<std::size_t>(positions, 5);
    for (std::size_t j = 0; j < show_d; ++j) std::printf("%9s", ("d" + std::to_string(j)).c_str());
    std::printf("\n");
    for (std::size_t p = 0; p < show_p; ++p) {
      std::printf("  p=%-3zu", p);
      for (std::size_t j = 0; j < show_d; ++j) std::printf("%9.4f", double(pe(p, j)));
      std::printf("\n");
    }
    std::printf("\nWavelength 2*pi*10000^(2i/D) of a few pairs (positions per full turn):\n");
    for (std::size_t i : std::set<std::size_t>{0, 1, d_model / 8, d_model / 4, d_model / 2 - 1}) {
      if (i >= d_model / 2) continue;
      std::printf("  dims %3zu,%3zu: %12.1f\n", 2 * i, 2 * i + 1,
                  2 * 3.141592653589793 * std::pow(10000.0, 2.0 * double(i) / double(d_model)));
    }
    std::cout << "\nWrote " << svg << " (heatmap, " << positions * d_model << " cells), " << csv
              << " (" << positions << " rows x " << d_model << " columns)";
    if (!series.empty()) std::cout << ", " << lines << " (" << series.size() << " dimensions)";
    std::cout << "\n";
  } catch (const std::exception& e) {
    return xenc_app::report_error("xenc-pe-heatmap", e);
  }
  return xenc_app::finish_stdout("xenc-pe-heatmap");
}

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
//
// This file is the command line only: experiment.hpp checks the sizes and computes the table,
// report.hpp turns it into the files and the terminal text.
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

#include "../common/cli.hpp"
#include "experiment.hpp"
#include "options.hpp"
#include "report.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "xenc-pe-heatmap: the sinusoidal positional-encoding table PE(p, j) as an SVG heatmap,\n"
      "a CSV file, and an SVG line plot of chosen dimensions over the positions."};
  xenc_app::add_version(app, "xenc-pe-heatmap");
  pe_heatmap::CommandLine c;
  xenc_app::add_options(app, c, pe_heatmap::option_records());
  CLI11_PARSE(app, argc, argv);
  const std::string &svg = c.svg, &csv = c.csv, &lines = c.lines;

  try {
    const pe_heatmap::Result r = pe_heatmap::run_experiment(c);
    xenc::viz::write_text_file(svg, pe_heatmap::heatmap_svg(r));
    xenc::viz::write_text_file(csv, pe_heatmap::csv_text(r));
    if (!r.options.dims.empty()) xenc::viz::write_text_file(lines, pe_heatmap::lines_svg(r));
    std::cout << pe_heatmap::terminal_text(r) << pe_heatmap::wrote_text(r, svg, csv, lines);
  } catch (const std::exception& e) {
    return xenc_app::report_error("xenc-pe-heatmap", e);
  }
  return xenc_app::finish_stdout("xenc-pe-heatmap");
}

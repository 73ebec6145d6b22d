// xenc-pe-heatmap's report: pure functions of the Result (experiment.hpp), tested on hand-made
// tables (tests/apps/test_pe_heatmap_report.cpp).
#pragma once

#include <string>
#include <vector>

#include <xenc/viz/svg.hpp>

#include "experiment.hpp"

namespace pe_heatmap {

/// The heatmap: a cell per value, positions down, dimensions across, diverging colours.
std::string heatmap_svg(const Result& r);

/// "position,d0,d1,...", then one row per position, values with 9 significant digits (a float
/// round-trips).
std::string csv_text(const Result& r);

/// One line per chosen dimension over the positions ("dim 8 (sin, i = 4)").
std::vector<xenc::viz::LineSeries> line_series(const Result& r);
std::string lines_svg(const Result& r);

/// What the terminal shows: the formula, the first 5 positions x 8 dimensions, and the
/// wavelength 2π·10000^(2i/D) of pairs i = 0, 1, D/8, D/4, D/2 - 1.
std::string terminal_text(const Result& r);

/// "Wrote pe.svg (heatmap, 4096 cells), pe.csv (64 rows x 64 columns), lines.svg (4 dimensions)"
/// (the line plot only when there are dimensions to plot).
std::string wrote_text(const Result& r, const std::string& svg, const std::string& csv,
                       const std::string& lines);

}  // namespace pe_heatmap

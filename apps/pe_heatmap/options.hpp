// xenc-pe-heatmap's options, one record each (apps/common/options.hpp): the table's size, the
// dimensions to plot, the three files' paths and the limits. The command line (main.cpp) and the
// web page's sinusoidal tab (apps/web/bindings.cpp: positions and d_model) read this list.
#pragma once

#include <string>
#include <vector>

#include "../common/options.hpp"
#include "experiment.hpp"

namespace pe_heatmap {

/// Everything the command line sets: the experiment's Options and the files' paths.
struct CommandLine : Options {
  std::string svg = "pe_heatmap.svg", csv = "pe_table.csv", lines = "pe_lines.svg";
};

/// Why the table is larger than xenc-pe-properties': one row per position, no pairs.
constexpr const char* kTableLimit = "one row per position (no T x T matrix): a larger table";

inline std::vector<xenc_app::OptionRecord<CommandLine>> option_records() {
  using namespace xenc_app;
  using C = CommandLine;
  const std::vector<OptionRecord<C>> own = {
      {"--positions", "positions", nullptr, "number of positions p = 0 .. positions-1",
       whole(1, 10000), whole(1, 256), XENC_FIELD(C, positions), kTableLimit},
      // an odd D is refused by the library (its message), on the page as here
      {"--d-model", "d_model", nullptr, "D, the encoding size (even)", whole(1, 8192),
       whole(2, 256), XENC_FIELD(C, d_model), kTableLimit},
      {"--dims", "dims", nullptr,
       "dimensions for the line plot, e.g. --dims 0,1,4 (default: 0, D/8, D/4, 3D/8 rounded down "
       "to even)",
       list(0, 8191), absent(), XENC_FIELD(C, dims)},
      {"--svg", "svg", nullptr, "heatmap output path", text(), absent(), XENC_FIELD(C, svg)},
      {"--csv", "csv", nullptr, "table output path", text(), absent(), XENC_FIELD(C, csv)},
      {"--lines-svg", "lines_svg", nullptr, "line-plot output path", text(), absent(),
       XENC_FIELD(C, lines)},
  };
  return records_of<C>({own, memory_records<C>(), output_limit_records<C>()});
}

}  // namespace pe_heatmap

// xenc-pe-heatmap's experiment: the sinusoidal table PE(p, j) for `positions` x D, after the
// checks that refuse it before anything is computed (the dimensions to plot, the files' sizes
// against --max-output-mb, the memory against --max-memory-mb). Options in, a Result out;
// report.hpp turns the Result into the heatmap, the CSV, the line plot and the terminal text.
#pragma once

#include <cstddef>
#include <vector>

#include <xenc/core/tensor.hpp>

#include "../common/cli.hpp"

namespace pe_heatmap {

struct Options {
  std::size_t positions = 64, d_model = 64;
  std::vector<std::size_t> dims;  ///< empty: default_dims(d_model)
  std::size_t max_output_mb = xenc_app::kDefaultMaxOutputMb;
  std::size_t max_memory_mb = xenc_app::kDefaultMaxMemoryMb;
};

struct Result {
  Options options;   ///< dims resolved
  xenc::Tensor2 pe;  ///< [positions, D]
};

/// 0, D/8, D/4, 3D/8, each rounded down to even (a sin column), without repeats and below D.
std::vector<std::size_t> default_dims(std::size_t d_model);

/// The files' sizes, estimated before anything is computed: about 75 bytes per heatmap cell (a
/// <rect> with its colour) and 13 per CSV value ("," and 9 significant digits).
struct FileSizes {
  double cells = 0, svg_bytes = 0, csv_bytes = 0;
};
FileSizes estimate_sizes(std::size_t positions, std::size_t d_model);

/// Throws std::invalid_argument for a --dims entry >= D, xenc_app::resource_error when a file
/// would exceed --max-output-mb or the table and its text --max-memory-mb, and the library's
/// error for an odd D.
Result run_experiment(Options o);

}  // namespace pe_heatmap

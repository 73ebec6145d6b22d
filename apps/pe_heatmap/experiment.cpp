// xenc-pe-heatmap's checks and its table (experiment.hpp).
#include "experiment.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>

#include <xenc/ops/positional.hpp>

namespace pe_heatmap {

std::vector<std::size_t> default_dims(std::size_t d_model) {
  std::vector<std::size_t> dims;
  for (std::size_t k = 0; k < 4; ++k) {
    const std::size_t d = (k * d_model / 8) / 2 * 2;
    if (d < d_model && (dims.empty() || dims.back() != d)) dims.push_back(d);
  }
  return dims;
}

FileSizes estimate_sizes(std::size_t positions, std::size_t d_model) {
  FileSizes s;
  s.cells = double(positions) * double(d_model);
  s.svg_bytes = 75.0 * s.cells + 20e3;
  s.csv_bytes = 13.0 * s.cells + 8.0 * double(positions);
  return s;
}

Result run_experiment(Options o) {
  const std::size_t positions = o.positions, d_model = o.d_model;
  if (o.dims.empty()) o.dims = default_dims(d_model);
  for (std::size_t d : o.dims)
    if (d >= d_model)
      throw std::invalid_argument("--dims: dimension " + std::to_string(d) +
                                  " is out of range, expected 0 .. " + std::to_string(d_model - 1) +
                                  " (D = " + std::to_string(d_model) + ")");
  // the files' sizes, checked before anything is computed
  const FileSizes s = estimate_sizes(positions, d_model);
  const double mib = 1024.0 * 1024.0, limit = double(o.max_output_mb) * mib;
  if (s.svg_bytes > limit || s.csv_bytes > limit) {
    char msg[512];
    std::snprintf(
        msg, sizeof msg,
        "%zu positions x D = %zu = %.0f values: the heatmap SVG would be about %.0f MiB and the "
        "CSV about %.0f MiB, over the limit of %zu MiB per file (--max-output-mb; fewer "
        "--positions or a smaller --d-model)",
        positions, d_model, s.cells, s.svg_bytes / mib, s.csv_bytes / mib, o.max_output_mb);
    throw xenc_app::resource_error(msg);
  }
  // memory: the table (float, and double while it is computed), each file's text built in
  // memory before it is written (the SVG through a string and its copy)
  const std::string table =
      std::to_string(positions) + " positions x D = " + std::to_string(d_model);
  xenc_app::check_memory(12.0 * s.cells + 2.0 * s.svg_bytes + 2.0 * s.csv_bytes, o.max_memory_mb,
                         "this table", table + ", its SVG and CSV text built in memory",
                         "fewer --positions or a smaller --d-model");
  Result r;
  r.pe = xenc::sinusoidal_encoding(positions, d_model);  // [T, D], in double, stored as float
  r.options = o;
  return r;
}

}  // namespace pe_heatmap

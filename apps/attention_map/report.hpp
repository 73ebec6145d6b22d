// xenc-attention-map's report: the attention weights of one run as bertviz's JSON, as text
// tables (row = query, column = key, the strongest key of each row) and as SVG heatmaps, each a
// function of the Run that main.cpp fills.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <xenc/core/tensor.hpp>

namespace attention_map {

/// One sentence through one encoder, and the attention weights of every layer.
struct Run {
  std::string sentence, position, weights;  ///< weights: the .npz, or "" for a random encoder
  std::vector<std::string> tokens;          ///< T tokens
  std::size_t d_model = 0, heads = 0, layers = 0;
  std::uint32_t seed = 0;
  std::vector<xenc::Tensor4> attention;  ///< one per layer, each [1, H, T, T]
};

/// The width of a table column: the longest token + 2, at least 6.
std::size_t column_width(const std::vector<std::string>& tokens);

/// {"tokens": [...], "attention": [layer: [batch][H][T][T]], "config": {...}}, bertviz's
/// head_view layout, on one line.
std::string to_json(const Run& r);

/// The header, then one table per layer and head: a row per query token, a column per key.
std::string table_text(const Run& r);

/// Writes svg_dir/attention_layer<l>_head<h>.svg (one heatmap per layer and head, one colour
/// scale for all) and svg_dir/attention_all.svg (every head in one grid). Returns the number of
/// per-head heatmaps written.
std::size_t write_figures(const Run& r, const std::string& svg_dir);

}  // namespace attention_map

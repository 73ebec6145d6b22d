// SVG figures: heatmaps (one rect per value), line plots, bar charts, and a grid of heatmaps
// sharing one colour scale (attention heads). Plain SVG 1.1 with presentation attributes only (no
// CSS, no scripts, no ids), so the files render the same in browsers, on GitHub, in rsvg-convert
// and inline in a notebook next to other figures.
//
//     Tensor2 pe = sinusoidal_encoding(50, 64);                       // [T, D]
//     HeatmapOptions o;  o.title = "PE";  o.x_label = "dimension";  o.y_label = "position";
//     write_text_file("pe.svg", heatmap_svg(pe, o));
//
// Every heatmap cell is `<rect class="cell" .../>` (tests count them); bar-chart bars
// `<rect class="bar" .../>`; colour-bar swatches are
// `<rect class="colorbar" .../>`, line-plot series `<polyline class="series" .../>`.
// Text is XML-escaped and set in a font list with CJK fallbacks (Noto Sans CJK, Source Han Sans,
// ...), so Chinese or Japanese tokens do not render as empty boxes; text widths count East Asian
// wide characters double (utf8proc's widths). Widths default to about 640 px so a figure fits a
// page (a title too long for the figure is set smaller, then shortened with "..."). Tick labels
// are thinned to every k-th when they would overlap.
//
// Throws:  xenc::shape_error for an empty matrix, panels of different shapes, tick or title
//          lists whose length does not match, or series whose x and y differ in length;
//          xenc::io_error from write_text_file when the file cannot be written (the message
//          names the path). Both are in xenc/core/error.hpp and derive from std::invalid_argument.
//
// Part of xencoder::viz. The code: lib/src/viz/svg_primitives.cpp (text, numbers, colours,
// elements), heatmap.cpp (heatmaps and grids, colour bar), line_plot.cpp, bar_chart.cpp and
// diagram.cpp (the encoder-layer diagram).
#pragma once
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "xenc/core/error.hpp"  // shape_error, io_error
#include "xenc/core/tensor.hpp"

namespace xenc::viz {

/// How the panels of a heatmap grid share colours.
enum class PanelScale {
  shared,     ///< one colour scale and one colour bar for every panel (compare panels directly)
  per_panel,  ///< each panel its own scale and colour bar (see every panel's pattern)
  automatic,  ///< per_panel when one shared scale would leave some panel nearly blank: its
              ///< largest |value| under a fifth of the largest over all panels; else shared.
              ///< A panel under 1e-4 of the largest (float rounding) keeps the shared scale
              ///< and stays blank. A range fixed with vmin / vmax is always shared.
};

/// Options of a heatmap. Rows of the matrix run down the y axis, columns along the x axis.
struct HeatmapOptions {
  std::string title, x_label, y_label;
  /// One label per column / row; empty = numeric ticks (0-based indices) chosen automatically.
  /// When labels would overlap, every k-th is shown (x labels are rotated first).
  std::vector<std::string> x_ticks, y_ticks;
  /// true: blue-white-red centred on 0 (symmetric range); false: sequential (viridis).
  bool diverging = true;
  /// Colour range; NAN = from the data (symmetric around 0 for diverging).
  double vmin = NAN, vmax = NAN;
  std::string colorbar_label;
  /// Cell edge in px; 0 = fit the figure to about 640 px wide (cells at most 56 px, and the
  /// plot at most about 480 px tall, so cells may be wider than tall).
  int cell_size = 0;
  /// Print each value inside its cell (for small matrices such as attention weights).
  bool annotate = false;
  /// How the annotations print: -1, rounded to 2 decimals with trailing zeros dropped ("0.5",
  /// "0.25"); 0 to 6, exactly that many decimals, as a table prints them ("58.8", "54.0").
  int annotate_decimals = -1;
  /// Colour scales of a grid (heatmap_grid_svg); a single heatmap has one scale anyway.
  PanelScale panel_scale = PanelScale::automatic;
  /// Cells drawn hatched, diagonal lines over their colour (`<rect class="marked">`), in every
  /// panel: e.g. values that are not to be compared with the others. [rows, cols] like the
  /// values, or empty (the default): none. `marked_label` says what the hatching means, on a
  /// legend line under the figure; it is required when a cell is marked.
  Mask2 marked;
  std::string marked_label;
};

/// A heatmap of `values` ([rows, cols]) with title, axis labels, ticks and a colour bar.
std::string heatmap_svg(const Tensor2& values, const HeatmapOptions& opt);

/// Several heatmaps of the same shape side by side, e.g. the attention weights of every head
/// of every layer: one shared colour scale and colour bar, or one per panel (opt.panel_scale).
/// `panel_titles` has one title per panel (or is empty); `columns` = panels per row (0 = automatic:
/// at most 4, and only as many as fit about 640 px with cells of at least 8 px). opt.title is the
/// figure title; the axis labels and ticks apply to every panel.
std::string heatmap_grid_svg(const std::vector<Tensor2>& panels,
                             const std::vector<std::string>& panel_titles,
                             const HeatmapOptions& opt, int columns = 0);

/// One line of a line plot: points (x[i], y[i]).
struct LineSeries {
  std::string label;
  std::vector<double> x, y;
  bool dashed = false;  ///< draw with a dash pattern (e.g. a summary line over the others)
};

/// A straight dashed line across the whole plot that marks a value rather than data, with no
/// markers: vertical at x = value (e.g. the longest training length) or horizontal at
/// y = value (e.g. chance level). `<line class="reference">`; listed in the legend when
/// labelled. Its value is always inside the plotted range.
struct ReferenceLine {
  std::string label;
  double value = 0;
  bool vertical = true;
};

struct LinePlotOptions {
  std::string title, x_label, y_label;
  /// Figure size in px. A legend under the plot adds its rows below; the plot itself never
  /// shrinks under half of these (the figure grows instead), so it stays readable.
  int width = 640, height = 400;
  /// The y range. NAN = from the data (and the reference lines). Either way the frame is 4 %
  /// of the range beyond it on each side, so a line at the limit (accuracy 1.0, cosine 1.0) is
  /// never drawn on the frame, and the ticks (as many decimals as their step needs) stay inside.
  double y_min = NAN, y_max = NAN;
  /// Non-empty: categorical x axis, ticks at x = 0, 1, 2, ... with these labels (rotated, then
  /// every k-th shown, when they would overlap).
  std::vector<std::string> x_tick_labels;
  /// Draw a dot at every point (useful for few points).
  bool markers = false;
  /// Marks such as L_train or chance, drawn without markers (see ReferenceLine).
  std::vector<ReferenceLine> reference_lines;
};

/// Most legend entries a line plot shows. With more labelled lines, the legend keeps the
/// reference lines and the dashed series (summaries) first, fills up with the others in order,
/// and ends with the note "N more not shown" beside a grey sample line: the lines left out are
/// drawn thin and grey under the others, so the colours in the legend stay unique.
inline constexpr std::size_t kMaxLegendEntries = 20;

/// A line plot with axes, ticks, light grid lines and a legend (when any series has a label):
/// right of the plot for short labels, in columns under it for long ones. Series get the ten
/// tab10 colours, then the same colours dotted and dash-dotted, so no two legend entries look
/// alike. `<polyline class="series">` per series, `<text class="legend">` per legend entry,
/// `<text class="legend-note">` for the note.
std::string line_plot_svg(const std::vector<LineSeries>& series, const LinePlotOptions& opt);

struct BarChartOptions {
  std::string title, x_label, y_label;
  int width = 640, height = 300;  ///< figure size in px
  std::string color = "#4e79a7";  ///< the bars' fill
};

/// A bar chart of counts, e.g. how many students scored each number of points (a histogram
/// over given bins): one `<rect class="bar">` per category in the order given, its value
/// written above it (`<text class="bar-value">`, none for 0), the category's label under the
/// axis (every k-th when they would overlap), y from 0 with nice ticks (whole numbers when every
/// value is whole).
/// Throws:  xenc::shape_error when labels is empty or its length differs from values', or a
///          value is negative or not finite.
std::string bar_chart_svg(const std::vector<std::string>& labels, const std::vector<double>& values,
                          const BarChartOptions& opt);

/// Sizes and variant of the encoder-layer diagram (glossary names: B, T, D, H, F).
struct EncoderLayerDiagramOptions {
  std::size_t batch = 2;             ///< B
  std::size_t seq_len = 5;           ///< T
  std::size_t d_model = 16;          ///< D
  std::size_t nhead = 2;             ///< H (Dh = D / H)
  std::size_t dim_feedforward = 32;  ///< F
  bool norm_first = false;           ///< false: post-norm (paper); true: pre-norm
  std::string activation = "ReLU";   ///< name shown in the activation box
  std::string title;                 ///< empty: "Post-norm encoder layer" / "Pre-norm ..."
};

/// One transformer encoder layer (TransformerEncoderLayer) as a top-to-bottom block diagram:
/// a box per step (`<rect class="box">` holding one `<text>` with the step's name), an arrow
/// between consecutive steps (`<line class="arrow">`), the two residual connections
/// (`<polyline class="residual">`) into their additions (`<circle class="add">`), and on every
/// arrow the shape of the tensor it carries (`<text class="shape">`), symbolic and with the
/// given sizes: "[B, T, D] = [2, 5, 16]". Dropout (training only) is named in a footnote.
/// Throws:  xenc::config_error when a size is 0 or d_model is not divisible by nhead.
std::string encoder_layer_diagram_svg(const EncoderLayerDiagramOptions& opt);

/// Escapes & < > " ' for XML text and attribute values.
std::string xml_escape(const std::string& text);

/// Writes `text` to `path` (overwriting). Throws xenc::io_error naming the path.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace xenc::viz

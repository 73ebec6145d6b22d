// Heatmaps: one <rect class="cell"> per value, coloured by a diverging (blue-white-red) or
// sequential (viridis) scale, with tick labels, axis labels and a colour bar; and grids of
// panels with one shared colour scale or one per panel (every attention head of every layer).
//
// The layout is planned in three steps (heatmap_impl): panels per row, then the cell size that
// fits the figure width, then the vertical stack of title, panels and labels.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <xtensor/xoperation.hpp>

#include "svg_primitives.hpp"
#include "xenc/core/error.hpp"
#include "xenc/viz/svg.hpp"

namespace xenc::viz {

namespace {

using namespace detail;

// --- layout constants (px) ----------------------------------------------------------------------
constexpr double kFigureWidth = 640.0;       // target width of a heatmap figure
constexpr double kMaxPlotHeight = 480.0;     // tallest plot area of a figure (shared by grid rows)
constexpr double kMinGridRowHeight = 200.0;  // ... but each grid row may be this tall
constexpr double kMaxCell = 56.0;            // largest automatic cell edge
constexpr double kMinCell = 1.0;             // smallest cell edge
constexpr double kMinGridCell = 8.0;         // fewer panels per row rather than narrower cells
constexpr std::size_t kMaxGridColumns = 4;   // panels per row, at most (automatic layout)
constexpr double kPanelGap = 24.0;           // between panels in a row
constexpr double kPanelRowGap = 8.0;         // between rows of panels
constexpr double kBottomMargin = 4.0;
constexpr double kTitleGapBelow = 12.0;              // figure title to the first panel
constexpr double kPanelTitleBand = kLabelFont + 10;  // a panel's title above its plot
constexpr double kAxisLabelBand = kLabelFont + 10;   // a rotated y-axis label
constexpr double kXLabelGap = 4.0;                   // x tick labels to the x-axis label
constexpr double kXLabelBand = kLabelFont + 14;      // the x-axis label, with its descent
constexpr double kNoXLabelPad = 6.0;          // under the tick labels when there is no x label
constexpr double kTickBandPad = 8.0;          // tick mark + gap + spare, beside tick labels
constexpr double kMinNumericXTickGap = 28.0;  // numeric x ticks at least this far apart
constexpr double kNumericXTickPad = 10.0;     // ... or their widest label plus this
constexpr double kNumericYTickGap = kTickFont + 6;  // numeric y ticks at least this far apart
constexpr double kLabelLineHeight = kTickFont + 2;  // named ticks: every k-th when cells are
                                                    // thinner than a line of text
constexpr double kLabelFitPad = 4.0;                // a named x label stays upright if it fits the
                                                    // cell with this to spare
// colour bar
constexpr int kColorbarSwatches = 64;
constexpr double kColorbarGap = 20.0;  // last panel to the bar
constexpr double kColorbarWidth = 16.0;
constexpr double kColorbarMinHeight = 120.0;
constexpr double kColorbarTickSpacing = 40.0;  // about one tick per this many px
constexpr double kColorbarRightPad = 8.0;      // right of the tick labels when there is no label
// marked cells (HeatmapOptions::marked): diagonal hatching, and its legend line under the figure
constexpr double kHatchSpacing = 6.0;   // between the hatch lines
constexpr double kHatchWidth = 1.5;     // of a hatch line
constexpr double kHatchOpacity = 0.45;  // so the cell's colour and number still show
constexpr double kLegendSwatch = 14.0;  // the hatched square of the legend line
constexpr double kLegendGap = 6.0;      // swatch to text
constexpr double kLegendBand = 24.0;    // the legend line's height
// values printed inside cells (HeatmapOptions::annotate)
constexpr double kAnnotationMinFont = 6.0, kAnnotationMaxFont = 12.0;
constexpr double kAnnotationEmsPerCellWidth = 3.2;   // "0.25" fits the cell's width
constexpr double kAnnotationEmsPerCellHeight = 1.8;  // ... and its height

// --- colours ------------------------------------------------------------------------------------
Rgb lerp(const Rgb& a, const Rgb& b, double t) {
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

// Piecewise-linear colour map through evenly spaced anchors, t in [0, 1].
template <std::size_t N>
Rgb colormap(const std::array<Rgb, N>& anchors, double t) {
  t = std::clamp(t, 0.0, 1.0);
  const double pos = t * double(N - 1);
  const std::size_t i = std::min<std::size_t>(std::size_t(pos), N - 2);
  return lerp(anchors[i], anchors[i + 1], pos - double(i));
}

// ColorBrewer RdBu reversed: blue (low) - white (0) - red (high).
const std::array<Rgb, 5> kDiverging = {
    {{33, 102, 172}, {146, 197, 222}, {247, 247, 247}, {244, 165, 130}, {178, 24, 43}}};
// viridis, sampled at 0, 0.25, 0.5, 0.75, 1.
const std::array<Rgb, 5> kSequential = {
    {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}};
const Rgb kNotFiniteColor = {200, 200, 200};  // NaN and inf cells: grey
constexpr double kLightCellLuma = 140.0;      // cells brighter than this get dark annotations

struct ColorScale {
  double vmin = 0, vmax = 1;
  bool diverging = true;
  Rgb color(double v) const {
    if (!std::isfinite(v)) return kNotFiniteColor;
    const double t = vmax > vmin ? (v - vmin) / (vmax - vmin) : 0.5;
    return diverging ? colormap(kDiverging, t) : colormap(kSequential, t);
  }
  // Dark text on light cells, light text on dark ones (luma with Rec. 601 weights).
  const char* text_color(double v) const {
    const Rgb c = color(v);
    return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b > kLightCellLuma ? "#000000" : "#ffffff";
  }
};

ColorScale make_scale(const std::vector<const Tensor2*>& data, const HeatmapOptions& opt) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const Tensor2* m : data)
    for (float v : *m)
      if (std::isfinite(v)) {
        lo = std::min(lo, double(v));
        hi = std::max(hi, double(v));
      }
  if (!std::isfinite(lo)) lo = hi = 0.0;  // all NaN
  ColorScale s;
  s.diverging = opt.diverging;
  if (opt.diverging) {
    const double m = std::max(std::abs(lo), std::abs(hi));
    s.vmin = -m;
    s.vmax = m;
  } else {
    s.vmin = lo;
    s.vmax = hi;
  }
  if (!std::isnan(opt.vmin)) s.vmin = opt.vmin;
  if (!std::isnan(opt.vmax)) s.vmax = opt.vmax;
  if (!(s.vmax > s.vmin)) {  // constant data: widen so the colour bar has a range
    const double c = 0.5 * (s.vmin + s.vmax);
    const double w = std::max(1e-6, std::abs(c) * 0.5);
    s.vmin = s.diverging ? -std::max(w, std::abs(c)) : c - w;
    s.vmax = s.diverging ? std::max(w, std::abs(c)) : c + w;
  }
  return s;
}

// One shared scale, or one per panel (HeatmapOptions::panel_scale). `automatic` gives each
// panel its own when, under one scale, a panel's largest |value| would be less than
// kBlankShare of the largest overall: its colours would all sit near the middle of the bar.
// A panel below kNoiseShare of the largest keeps the shared scale even then: its values are
// float rounding (float32 epsilon 1.2e-7, grown over a few layers), and a scale of its own
// would paint that noise as a pattern (the "none" panel of word-order's final_difference.svg,
// whose A - B is about 5e-7 against 2.6 for sinusoidal). Returns one scale per panel.
constexpr double kBlankShare = 0.2;
constexpr double kNoiseShare = 1e-4;

double max_abs(const Tensor2& m) {
  double a = 0;
  for (float v : m)
    if (std::isfinite(v)) a = std::max(a, std::abs(double(v)));
  return a;
}

std::vector<ColorScale> plan_scales(const std::vector<const Tensor2*>& panels,
                                    const HeatmapOptions& opt) {
  const ColorScale shared = make_scale(panels, opt);
  std::vector<ColorScale> scales(panels.size(), shared);
  const bool fixed = !std::isnan(opt.vmin) || !std::isnan(opt.vmax);
  if (opt.panel_scale == PanelScale::per_panel) {
    for (std::size_t p = 0; p < panels.size(); ++p) scales[p] = make_scale({panels[p]}, opt);
    return scales;
  }
  if (opt.panel_scale == PanelScale::shared || fixed || panels.size() == 1) return scales;
  double largest = 0;
  for (const Tensor2* m : panels) largest = std::max(largest, max_abs(*m));
  bool blank = false;
  for (const Tensor2* m : panels) {
    const double a = max_abs(*m);
    blank = blank || (a >= kNoiseShare * largest && a < kBlankShare * largest);
  }
  if (!blank) return scales;
  for (std::size_t p = 0; p < panels.size(); ++p)
    if (max_abs(*panels[p]) >= kNoiseShare * largest) scales[p] = make_scale({panels[p]}, opt);
  return scales;
}

// --- axes ---------------------------------------------------------------------------------------

// Index ticks 0, s, 2s, ... (s = 1, 2, 5 × 10^k) for an axis of n cells of `cell` px, at least
// `min_gap` px apart.
std::vector<std::size_t> index_ticks(std::size_t n, double cell, double min_gap) {
  std::size_t step = 1;
  const std::array<std::size_t, 4> mult = {1, 2, 5, 10};
  for (std::size_t mag = 1;; mag *= 10) {
    bool found = false;
    for (std::size_t m : mult)
      if (double(m * mag) * cell >= min_gap) {
        step = m * mag;
        found = true;
        break;
      }
    if (found || mag > n) break;
  }
  std::vector<std::size_t> t;
  for (std::size_t i = 0; i < n; i += step) t.push_back(i);
  return t;
}

// Every k-th named label, so that labels of kLabelLineHeight never overlap on cells of `cell` px.
std::vector<std::size_t> every_kth(std::size_t n, double cell) {
  const std::size_t step =
      std::max<std::size_t>(1, std::size_t(std::ceil(kLabelLineHeight / cell)));
  std::vector<std::size_t> t;
  for (std::size_t i = 0; i < n; i += step) t.push_back(i);
  return t;
}

// How one heatmap panel's axes are labelled, computed once for all panels of a figure.
struct AxisPlan {
  std::vector<std::size_t> ticks;   // indices that get a tick label
  std::vector<std::string> labels;  // their text
  bool rotated = false;             // x labels at -45 degrees
  double extent = 0;                // px the labels need away from the axis
};

AxisPlan plan_x(std::size_t n, double cell, const std::vector<std::string>& names) {
  AxisPlan a;
  if (names.empty()) {
    double widest = text_width(std::to_string(n - 1), kTickFont);
    a.ticks = index_ticks(n, cell, std::max(kMinNumericXTickGap, widest + kNumericXTickPad));
    for (auto i : a.ticks) a.labels.push_back(std::to_string(i));
    a.extent = kTickFont + kTickBandPad;
    return a;
  }
  double widest = 0;
  for (auto& s : names) widest = std::max(widest, text_width(s, kTickFont));
  // upright, unless rotating at -45 degrees keeps more of them: a heatmap's names are its
  // tokens, and a key column without its word cannot be read ("the cat chased the mouse" at
  // 5 cells showed only "the chased mouse" upright). Rotated labels need kRotatedLabelPitch px
  // each along the axis, not their width; when even those overlap, every k-th is shown.
  const std::size_t upright = thinning_step(cell, widest + kLabelFitPad);
  const std::size_t rotated = thinning_step(cell, kRotatedLabelPitch);
  a.rotated = upright > rotated;
  const std::size_t step = a.rotated ? rotated : upright;
  for (std::size_t i = 0; i < n; i += step) a.ticks.push_back(i);
  a.extent = a.rotated ? widest * kCos45 + kTickFont + kTickBandPad : kTickFont + kTickBandPad;
  for (auto i : a.ticks) a.labels.push_back(names[i]);
  return a;
}

AxisPlan plan_y(std::size_t n, double cell, const std::vector<std::string>& names) {
  AxisPlan a;
  if (names.empty()) {
    a.ticks = index_ticks(n, cell, kNumericYTickGap);
    for (auto i : a.ticks) a.labels.push_back(std::to_string(i));
  } else {
    a.ticks = every_kth(n, cell);
    for (auto i : a.ticks) a.labels.push_back(names[i]);
  }
  double widest = 0;
  for (auto& s : a.labels) widest = std::max(widest, text_width(s, kTickFont));
  a.extent = widest + kTickBandPad;
  return a;
}

void check_ticks(const char* where, const std::vector<std::string>& ticks, std::size_t n,
                 const char* arg, const char* what) {
  if (!ticks.empty() && ticks.size() != n)
    throw shape_error(std::string(where) + ": " + arg + " has " + std::to_string(ticks.size()) +
                      " labels, expected " + std::to_string(n) + " (one per " + what + ") or none");
}

// --- drawing ------------------------------------------------------------------------------------

// The hatching of a marked cell [xa, xb] x [ya, yb]: lines x + y = const every kHatchSpacing px
// ("/" diagonals), each cut to the cell, as one <path class="marked">; dark lines on light cells
// and light on dark ones, as the annotations. Drawn as segments, not an SVG <pattern>: the
// figures have no ids, so two of them inline in one page cannot clash.
std::string hatch_el(double xa, double xb, double ya, double yb, const char* colour) {
  std::ostringstream d;
  for (double c = xa + ya + kHatchSpacing; c < xb + yb; c += kHatchSpacing) {
    const double x1 = std::max(xa, c - yb), x2 = std::min(xb, c - ya);
    if (x2 - x1 < 0.5) continue;
    d << (d.tellp() > 0 ? " " : "") << "M" << px(x1) << " " << px(c - x1) << "L" << px(x2) << " "
      << px(c - x2);
  }
  return "<path class=\"marked\" d=\"" + d.str() + "\" stroke=\"" + colour + "\" stroke-width=\"" +
         px(kHatchWidth) + "\" stroke-opacity=\"" + px(kHatchOpacity) + "\" fill=\"none\"/>\n";
}

// A value printed inside its cell: decimals -1, rounded to 2 decimals with trailing zeros
// dropped; 0 to 6, exactly that many (fixed).
std::string annotation(float value, int decimals) {
  return decimals < 0 ? fmt(std::round(double(value) * 100) / 100) : fixed(value, decimals);
}

// Cells, frame and tick labels of one panel whose plot area starts at (x0, y0); marked cells
// (a Mask2 of the panel's shape, or empty) hatched over their colour.
void draw_panel(std::ostringstream& out, const Tensor2& v, double x0, double y0, double cw,
                double ch, const AxisPlan& xa, const AxisPlan& ya, const ColorScale& scale,
                bool annotate, int decimals, const Mask2& marked) {
  const std::size_t rows = v.shape()[0], cols = v.shape()[1];
  // one rect per value; crispEdges avoids hairline seams between fractional-width cells
  out << "<g shape-rendering=\"crispEdges\">\n";
  std::string hatching;
  // cell edges snapped to whole pixels so neighbouring cells share an edge exactly
  auto edge = [](double origin, double size, std::size_t k) {
    return std::round(origin + size * double(k));
  };
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const double xa = edge(x0, cw, c), xb = edge(x0, cw, c + 1);
      const double ya = edge(y0, ch, r), yb = edge(y0, ch, r + 1);
      out << "<rect class=\"cell\" x=\"" << px(xa) << "\" y=\"" << px(ya) << "\" width=\""
          << px(std::max(kMinCell, xb - xa)) << "\" height=\"" << px(std::max(kMinCell, yb - ya))
          << "\" fill=\"" << hex(scale.color(v(r, c))) << "\"/>\n";
      if (marked.size() > 0 && marked(r, c))  // drawn after the cells, outside crispEdges
        hatching += hatch_el(xa, xb, ya, yb, scale.text_color(v(r, c)));
    }
  out << "</g>\n" << hatching;
  if (annotate) {  // each value centred in its cell (annotation():
                   // HeatmapOptions::annotate_decimals)
    const double fs =
        std::clamp(std::min(cw / kAnnotationEmsPerCellWidth, ch / kAnnotationEmsPerCellHeight),
                   kAnnotationMinFont, kAnnotationMaxFont);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c)
        out << "<text x=\"" << px(x0 + (double(c) + 0.5) * cw) << "\" y=\""
            << px(y0 + (double(r) + 0.5) * ch + fs * kBaselineShift) << "\" font-family=\"" << kFont
            << "\" font-size=\"" << px(fs) << "\" text-anchor=\"middle\" fill=\""
            << scale.text_color(v(r, c)) << "\">" << annotation(v(r, c), decimals) << "</text>\n";
  }
  out << frame_el(x0, y0, cw * double(cols), ch * double(rows));
  // x ticks under the plot, at cell centres
  const double yb = y0 + ch * double(rows);
  for (std::size_t k = 0; k < xa.ticks.size(); ++k) {
    const double x = x0 + (double(xa.ticks[k]) + 0.5) * cw;
    out << line_el(x, yb, x, yb + kTickLength);
    if (xa.rotated)
      out << rotated_tick_label_el(x, yb, xa.labels[k]);
    else
      out << text_el(x, yb + kTickLabelGap + kTickFont, xa.labels[k], kTickFont, "middle",
                     " class=\"xtick\"");
  }
  // y ticks left of the plot
  for (std::size_t k = 0; k < ya.ticks.size(); ++k) {
    const double y = y0 + (double(ya.ticks[k]) + 0.5) * ch;
    out << line_el(x0 - kTickLength, y, x0, y);
    out << text_el(x0 - kTickLabelGap, y + kTickFont * kBaselineShift, ya.labels[k], kTickFont,
                   "end", " class=\"ytick\"");
  }
}

// Vertical colour bar at (x, y) of height h, with ticks and a rotated label.
void draw_colorbar(std::ostringstream& out, double x, double y, double h, const ColorScale& s,
                   const std::string& label) {
  const int n = kColorbarSwatches;
  const double w = kColorbarWidth, sh = h / n;
  out << "<g shape-rendering=\"crispEdges\">\n";
  for (int i = 0; i < n; ++i) {
    const double v = s.vmax - (double(i) + 0.5) / n * (s.vmax - s.vmin);  // top = vmax
    // each swatch overlaps the next by half a pixel, so no seam shows between them
    out << "<rect class=\"colorbar\" x=\"" << px(x) << "\" y=\"" << px(y + i * sh) << "\" width=\""
        << px(w) << "\" height=\"" << px(sh + 0.5) << "\" fill=\"" << hex(s.color(v)) << "\"/>\n";
  }
  out << "</g>\n";
  out << frame_el(x, y, w, h);
  double widest = 0;
  for (double t : nice_ticks(s.vmin, s.vmax, std::max(2, int(h / kColorbarTickSpacing)))) {
    const double yy = y + (s.vmax - t) / (s.vmax - s.vmin) * h;
    out << line_el(x + w, yy, x + w + kTickLength, yy);
    out << text_el(x + w + kTickLabelGap, yy + kTickFont * kBaselineShift, fmt(t), kTickFont,
                   "start");
    widest = std::max(widest, text_width(fmt(t), kTickFont));
  }
  if (!label.empty()) {  // reads bottom to top, like the y axis label
    const double lx = x + w + (kTickLength + kTickLabelGap) + widest + kLabelFont, ly = y + h / 2;
    out << vertical_text_el(lx, ly, label, kLabelFont);
  }
}

// Width of the colour bar with its gap, ticks and label.
double colorbar_width(const ColorScale& s, const std::string& label) {
  double widest = 0;  // over every tick count draw_colorbar may choose
  for (int n = 2; n <= 14; ++n)
    for (double t : nice_ticks(s.vmin, s.vmax, n))
      widest = std::max(widest, text_width(fmt(t), kTickFont));
  return (kColorbarGap + kColorbarWidth + kTickLength + kTickLabelGap) + widest +
         (label.empty() ? kColorbarRightPad : kAxisLabelBand);
}

// The arguments of heatmap_impl, checked before anything is drawn: at least one panel, all of
// one non-empty shape; one title per panel (or none); ticks and marks that fit the shape.
void check_arguments(const std::vector<const Tensor2*>& panels,
                     const std::vector<std::string>& panel_titles, const HeatmapOptions& opt,
                     const char* where) {
  if (panels.empty())
    throw shape_error(std::string(where) + ": no panels to draw, expected at least one");
  const std::size_t rows = panels[0]->shape()[0], cols = panels[0]->shape()[1];
  if (rows == 0 || cols == 0)
    throw shape_error(std::string(where) + ": values has shape " + shape_str(panels[0]->shape()) +
                      ", expected [rows, cols] with rows, cols > 0");
  for (std::size_t i = 1; i < panels.size(); ++i)
    if (panels[i]->shape()[0] != rows || panels[i]->shape()[1] != cols)
      throw shape_error(std::string(where) + ": panel " + std::to_string(i) + " has shape " +
                        shape_str(panels[i]->shape()) + ", expected " +
                        shape_str(panels[0]->shape()) + " like panel 0");
  if (!panel_titles.empty() && panel_titles.size() != panels.size())
    throw shape_error(std::string(where) + ": panel_titles has " +
                      std::to_string(panel_titles.size()) + " entries, expected " +
                      std::to_string(panels.size()) + " or none");
  check_ticks(where, opt.x_ticks, cols, "x_ticks", "column");
  check_ticks(where, opt.y_ticks, rows, "y_ticks", "row");
  if (opt.marked.size() > 0 && (opt.marked.shape()[0] != rows || opt.marked.shape()[1] != cols))
    throw shape_error(std::string(where) + ": marked has shape " + shape_str(opt.marked.shape()) +
                      ", expected " + shape_str(panels[0]->shape()) + " like the values, or empty");
  if (opt.annotate_decimals < -1 || opt.annotate_decimals > 6)
    throw std::invalid_argument(std::string(where) + ": annotate_decimals is " +
                                std::to_string(opt.annotate_decimals) +
                                ", expected -1 (2 decimals, trailing zeros dropped) or 0 to 6");
  if (opt.marked.size() > 0 && xt::any(opt.marked) && opt.marked_label.empty())
    throw std::invalid_argument(std::string(where) +
                                ": marked has marked cells but marked_label is empty, expected "
                                "the legend text that says what the hatching means");
}

// The legend line under the figure at height y: a hatched swatch on a mid-scale cell, then what
// the hatching means (HeatmapOptions::marked_label).
void draw_legend(std::ostringstream& out, double y, const ColorScale& sc,
                 const std::string& label) {
  const double ly = y + (kLegendBand - kLegendSwatch) / 2;
  const double mid = 0.5 * (sc.vmin + sc.vmax);
  out << "<g class=\"legend\">\n<rect x=\"" << px(kMargin) << "\" y=\"" << px(ly) << "\" width=\""
      << px(kLegendSwatch) << "\" height=\"" << px(kLegendSwatch) << "\" fill=\""
      << hex(sc.color(mid)) << "\"/>\n"
      << hatch_el(kMargin, kMargin + kLegendSwatch, ly, ly + kLegendSwatch, sc.text_color(mid))
      << frame_el(kMargin, ly, kLegendSwatch, kLegendSwatch)
      << text_el(kMargin + kLegendSwatch + kLegendGap,
                 ly + kLegendSwatch / 2 + kTickFont * kBaselineShift, label, kTickFont, "start")
      << "</g>\n";
}

std::string heatmap_impl(const std::vector<const Tensor2*>& panels,
                         const std::vector<std::string>& panel_titles, const HeatmapOptions& opt,
                         int columns, const char* where) {
  check_arguments(panels, panel_titles, opt, where);
  const std::size_t rows = panels[0]->shape()[0], cols = panels[0]->shape()[1];
  const bool any_marked = opt.marked.size() > 0 && xt::any(opt.marked);

  const std::size_t np = panels.size();
  const std::vector<ColorScale> scales = plan_scales(panels, opt);
  bool per_panel = opt.panel_scale == PanelScale::per_panel && np > 1;  // a bar beside each panel
  for (const auto& sc : scales)
    per_panel = per_panel || sc.vmin != scales[0].vmin || sc.vmax != scales[0].vmax;

  // 1. panels per row. The y tick labels' width depends only on the labels (and the cell
  //    height, for thinning): a first estimate of a panel's left part, fixed once cells are known.
  double widest_y = 0;
  if (opt.y_ticks.empty()) widest_y = text_width(std::to_string(rows - 1), kTickFont);
  for (auto& s : opt.y_ticks) widest_y = std::max(widest_y, text_width(s, kTickFont));
  const double y_label_w = opt.y_label.empty() ? 0 : kAxisLabelBand;
  const double left = kMargin + y_label_w + widest_y + kTickBandPad;
  double cbar_w = 0;  // the widest colour bar: one for the figure, or one beside every panel
  for (const auto& sc : scales) cbar_w = std::max(cbar_w, colorbar_width(sc, opt.colorbar_label));
  const double panel_gap = np > 1 ? kPanelGap : 0;
  const double panel_cbar_w = per_panel ? cbar_w : 0;                      // inside each panel
  const double avail = kFigureWidth - kMargin - (per_panel ? 0 : cbar_w);  // for the panels
  // as asked, or automatically as many as fit with cells of at least kMinGridCell
  std::size_t ncol = std::min<std::size_t>(np, kMaxGridColumns);
  if (columns > 0) {
    ncol = std::min<std::size_t>(std::size_t(columns), np);
  } else {
    while (ncol > 1 &&
           (avail - double(ncol) * (left + panel_cbar_w) - double(ncol - 1) * panel_gap) /
                   double(ncol) / double(cols) <
               kMinGridCell)
      --ncol;
  }
  const std::size_t nrow = (np + ncol - 1) / ncol;

  // 2. cell size: fit the panels into the figure width, cap the plot height
  double cw, ch;
  if (opt.cell_size > 0) {
    cw = ch = opt.cell_size;
  } else {
    const double panel_room =
        (avail - double(ncol) * (left + panel_cbar_w) - double(ncol - 1) * panel_gap) /
        double(ncol);
    cw = std::min(kMaxCell, std::max(kMinCell, panel_room / double(cols)));
    // each grid row gets its share of the height cap, but at least kMinGridRowHeight
    ch =
        std::min(cw, std::max(kMinCell, std::max(kMaxPlotHeight / double(nrow), kMinGridRowHeight) /
                                            double(rows)));
  }
  const AxisPlan xa = plan_x(cols, cw, opt.x_ticks);
  const AxisPlan ya = plan_y(rows, ch, opt.y_ticks);
  const double panel_left = kMargin + y_label_w + ya.extent;
  const double plot_w = cw * double(cols), plot_h = ch * double(rows);

  // 3. vertical layout: title, (panel title), plot, x tick labels, x label
  const double title_h = opt.title.empty() ? kMargin : (kMargin + kTitleFont + kTitleGapBelow);
  const double ptitle_h = panel_titles.empty() ? 0 : kPanelTitleBand;
  const double below = xa.extent + (opt.x_label.empty() ? kNoXLabelPad : kXLabelBand);
  const double panel_w = panel_left + plot_w + panel_cbar_w, panel_h = ptitle_h + plot_h + below;
  const double grid_w = double(ncol) * panel_w + double(ncol - 1) * panel_gap;
  double width = grid_w + (per_panel ? 0 : cbar_w);
  width = std::max(width, std::min(kFigureWidth, text_width(opt.title, kTitleFont) + 2 * kMargin));
  const double legend_h = any_marked ? kLegendBand : 0;
  const double legend_w = any_marked ? 2 * kMargin + kLegendSwatch + kLegendGap +
                                           text_width(opt.marked_label, kTickFont)
                                     : 0;
  width = std::max(width, legend_w);
  const double grid_h = title_h + double(nrow) * panel_h + double(nrow - 1) * kPanelRowGap;
  const double height = grid_h + legend_h + kBottomMargin;

  std::ostringstream out;
  out << svg_open(width, height);
  if (!opt.title.empty()) out << title_el(width, opt.title);
  for (std::size_t p = 0; p < np; ++p) {
    const double ox = double(p % ncol) * (panel_w + panel_gap);
    const double oy = title_h + double(p / ncol) * (panel_h + kPanelRowGap);
    const double x0 = ox + panel_left, y0 = oy + ptitle_h;
    if (!panel_titles.empty())
      out << text_el(x0 + plot_w / 2, oy + kLabelFont, panel_titles[p], kLabelFont);
    draw_panel(out, *panels[p], x0, y0, cw, ch, xa, ya, scales[p], opt.annotate,
               opt.annotate_decimals, opt.marked);
    if (per_panel)  // its own colour bar, beside it and as tall as its plot
      draw_colorbar(out, x0 + plot_w + kColorbarGap, y0, plot_h, scales[p], opt.colorbar_label);
    // axis titles once per grid row / column: x under the bottom row, y left of the first column
    const bool bottom_row = p + ncol >= np;
    if (!opt.x_label.empty() && bottom_row)
      out << text_el(x0 + plot_w / 2, y0 + plot_h + xa.extent + kLabelFont + kXLabelGap,
                     opt.x_label, kLabelFont);
    if (!opt.y_label.empty() && p % ncol == 0)
      out << vertical_text_el(ox + kMargin + kLabelFont, y0 + plot_h / 2, opt.y_label, kLabelFont);
  }
  // the colour bar spans the first row's plot height (at least kColorbarMinHeight when the plot
  // is short and the figure has room)
  const double cb_h =
      std::max(plot_h, std::min(kColorbarMinHeight, height - title_h - ptitle_h - kMargin));
  if (!per_panel)
    draw_colorbar(out, grid_w + kColorbarGap, title_h + ptitle_h, cb_h, scales[0],
                  opt.colorbar_label);
  if (any_marked) draw_legend(out, grid_h, scales[0], opt.marked_label);
  out << "</svg>\n";
  return out.str();
}

}  // namespace

std::string heatmap_svg(const Tensor2& values, const HeatmapOptions& opt) {
  return heatmap_impl({&values}, {}, opt, 1, "heatmap_svg");
}

std::string heatmap_grid_svg(const std::vector<Tensor2>& panels,
                             const std::vector<std::string>& panel_titles,
                             const HeatmapOptions& opt, int columns) {
  std::vector<const Tensor2*> ptrs;
  for (auto& p : panels) ptrs.push_back(&p);
  return heatmap_impl(ptrs, panel_titles, opt, columns, "heatmap_grid_svg");
}

}  // namespace xenc::viz

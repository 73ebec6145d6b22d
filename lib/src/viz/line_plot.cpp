// Line plots: one <polyline class="series"> per series, nice y ticks with light grid lines,
// numeric or categorical x ticks, and a legend right of the plot (or under it, for long labels).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>

#include "svg_primitives.hpp"
#include "xenc/core/error.hpp"
#include "xenc/viz/svg.hpp"

namespace xenc::viz {

namespace {

using namespace detail;

// --- layout constants (px) ----------------------------------------------------------------------
constexpr int kYTickSpacing = 45;         // about one y tick per this many px of figure height
constexpr int kVerticalChrome = 100;      // ... after this much for title and x labels
constexpr int kMinTicks = 3;             // on either axis
constexpr double kXTickSpacing = 70.0;    // about one numeric x tick per this many px
constexpr double kMinPlotWidth = 80.0, kMinPlotHeight = 60.0;
constexpr double kAxisLabelBand = kLabelFont + 10;   // a rotated y-axis label
constexpr double kYTickBand = kTickLength + kTickLabelGap;  // y tick mark and gap to its label
constexpr double kRightMargin = 16.0;
constexpr double kTopNoTitle = 14.0;
constexpr double kTitleBand = kTitleFont + 26;      // title with its margins
constexpr double kXTickBandPad = 10.0;    // x tick labels: font size plus this (tick, gap)
constexpr double kXLabelBand = kLabelFont + 14;     // the x-axis label, with its descent
constexpr double kXLabelGap = 2.0;        // x tick labels to the x-axis label
constexpr double kNoXLabelPad = 8.0;      // under the tick labels when there is no x label
constexpr double kMinCategoryGap = 6.0;   // categorical labels closer than this get rotated
// legend: a short line in the series' colour, then the label
constexpr double kLegendGap = 14.0;       // plot to legend
constexpr double kLegendTopPad = 8.0;     // frame top to the first entry
constexpr double kLegendSwatch = 20.0;    // length of the sample line
constexpr double kLegendTextGap = 6.0;    // sample line to label
constexpr double kLegendChrome = 44.0;    // gap + swatch + text gap + spare, beside the labels
constexpr double kLegendRowGap = 8.0;     // between entries (plus the font size)
constexpr double kLegendBottomPad = 6.0;  // under a legend placed below the plot
constexpr double kMaxLegendShare = 0.3;   // a wider legend goes under the plot
// series
constexpr const char* kYGridColor = "#e4e4e4";
constexpr const char* kXGridColor = "#f0f0f0";
constexpr const char* kDashPattern = "7 4";
constexpr double kMarkerRadius = 3.5;

// Matplotlib's tab10 for line series.
const std::array<const char*, 10> kPalette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                              "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                              "#bcbd22", "#17becf"};

}  // namespace

std::string line_plot_svg(const std::vector<LineSeries>& series, const LinePlotOptions& opt) {
  const char* where = "line_plot_svg";
  if (series.empty()) throw shape_error(std::string(where) + ": no series to draw, expected at least one");
  // data range and the widest legend label
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  bool any_label = false;
  double widest_label = 0;
  for (std::size_t s = 0; s < series.size(); ++s) {
    const auto& se = series[s];
    if (se.x.size() != se.y.size())
      throw shape_error(std::string(where) + ": series " + std::to_string(s) + " ('" + se.label +
                        "') has " + std::to_string(se.x.size()) + " x values and " +
                        std::to_string(se.y.size()) + " y values, expected the same number");
    for (std::size_t i = 0; i < se.x.size(); ++i) {
      if (!std::isfinite(se.x[i]) || !std::isfinite(se.y[i])) continue;
      xlo = std::min(xlo, se.x[i]);
      xhi = std::max(xhi, se.x[i]);
      ylo = std::min(ylo, se.y[i]);
      yhi = std::max(yhi, se.y[i]);
    }
    if (!se.label.empty()) {
      any_label = true;
      widest_label = std::max(widest_label, text_width(se.label, kTickFont));
    }
  }
  if (!std::isfinite(xlo)) xlo = 0, xhi = 1, ylo = 0, yhi = 1;
  if (!opt.x_tick_labels.empty()) {
    xlo = std::min(xlo, 0.0);
    xhi = std::max(xhi, double(opt.x_tick_labels.size() - 1));
  }
  if (!std::isnan(opt.y_min)) ylo = opt.y_min;
  if (!std::isnan(opt.y_max)) yhi = opt.y_max;
  if (!(xhi > xlo)) xlo -= 0.5, xhi += 0.5;
  if (!(yhi > ylo)) {
    const double w = std::max(1e-6, std::abs(ylo) * 0.1);
    ylo -= w;
    yhi += w;
  }
  // y range padded to nice ticks unless fixed by the caller
  const int max_y_ticks = std::max(kMinTicks, (opt.height - kVerticalChrome) / kYTickSpacing);
  std::vector<double> yt = nice_ticks(ylo, yhi, max_y_ticks);
  if (std::isnan(opt.y_min)) {
    const double st = nice_step(yhi - ylo, max_y_ticks);
    ylo = std::floor(ylo / st + 1e-9) * st;
    if (std::isnan(opt.y_max)) yhi = std::ceil(yhi / st - 1e-9) * st;
    yt = nice_ticks(ylo, yhi, max_y_ticks);
  }
  double widest_y = 0;
  for (double t : yt) widest_y = std::max(widest_y, text_width(fmt(t), kTickFont));

  // horizontal layout: y label, y tick labels, plot, legend (right of the plot, or under it
  // when its labels are long)
  std::size_t n_labels = 0;
  for (const auto& se : series) n_labels += !se.label.empty();
  const bool legend_below = any_label && widest_label + kLegendChrome > kMaxLegendShare * double(opt.width);
  const double legend_w = any_label && !legend_below ? widest_label + kLegendChrome : 0;
  const double legend_h = legend_below ? double(n_labels) * (kTickFont + kLegendRowGap) + kLegendBottomPad : 0;
  const double left = kMargin + (opt.y_label.empty() ? 0 : kAxisLabelBand) + widest_y + kYTickBand;
  const double right = kRightMargin + legend_w;
  const double plot_w = std::max(kMinPlotWidth, double(opt.width) - left - right);
  // categorical x labels are rotated when they would overlap (one label per unit of x)
  bool rotate = false;
  double widest_x = 0;
  for (auto& s : opt.x_tick_labels) widest_x = std::max(widest_x, text_width(s, kTickFont));
  if (!opt.x_tick_labels.empty() && opt.x_tick_labels.size() > 1 &&
      widest_x + kMinCategoryGap > plot_w / (xhi - xlo))
    rotate = true;
  // vertical layout: title, plot, x tick labels, x label, legend
  const double x_tick_h = rotate ? widest_x * kCos45 + kTickFont + kXTickBandPad : kTickFont + kXTickBandPad;
  const double top = opt.title.empty() ? kTopNoTitle : kTitleBand;
  const double bottom = x_tick_h + (opt.x_label.empty() ? kNoXLabelPad : kXLabelBand);
  const double plot_h = std::max(kMinPlotHeight, double(opt.height) - top - bottom - legend_h);
  const double width = left + plot_w + right, height = top + plot_h + bottom + legend_h;
  auto X = [&](double x) { return left + (x - xlo) / (xhi - xlo) * plot_w; };
  auto Y = [&](double y) { return top + (yhi - y) / (yhi - ylo) * plot_h; };

  std::ostringstream out;
  out << svg_open(width, height);
  if (!opt.title.empty()) out << title_el(width, opt.title);
  // grid lines and y ticks
  for (double t : yt) {
    const double y = Y(t);
    out << line_el(left, y, left + plot_w, y, kYGridColor);
    out << line_el(left - kTickLength, y, left, y);
    out << text_el(left - kTickLabelGap, y + kTickFont * kBaselineShift, fmt(t), kTickFont, "end");
  }
  // x ticks: categorical labels or nice numbers
  const double yb = top + plot_h;
  if (!opt.x_tick_labels.empty()) {
    for (std::size_t i = 0; i < opt.x_tick_labels.size(); ++i) {
      const double x = X(double(i));
      out << line_el(x, top, x, yb, kXGridColor);
      out << line_el(x, yb, x, yb + kTickLength);
      if (rotate)
        out << rotated_tick_label_el(x, yb, opt.x_tick_labels[i]);
      else
        out << text_el(x, yb + kTickLabelGap + kTickFont, opt.x_tick_labels[i], kTickFont);
    }
  } else {
    for (double t : nice_ticks(xlo, xhi, std::max(kMinTicks, int(plot_w / kXTickSpacing)))) {
      const double x = X(t);
      out << line_el(x, top, x, yb, kXGridColor);
      out << line_el(x, yb, x, yb + kTickLength);
      out << text_el(x, yb + kTickLabelGap + kTickFont, fmt(t), kTickFont);
    }
  }
  // series, clipped by construction: points outside a fixed y range are clamped to the frame
  const std::string dash = std::string(" stroke-dasharray=\"") + kDashPattern + "\"";
  for (std::size_t s = 0; s < series.size(); ++s) {
    const char* color = kPalette[s % kPalette.size()];
    std::string pts;
    for (std::size_t i = 0; i < series[s].x.size(); ++i) {
      if (!std::isfinite(series[s].x[i]) || !std::isfinite(series[s].y[i])) continue;
      const double y = std::clamp(Y(series[s].y[i]), top, yb);
      pts += px(X(series[s].x[i])) + "," + px(y) + " ";
    }
    if (!pts.empty()) pts.pop_back();
    out << "<polyline class=\"series\" points=\"" << pts << "\" fill=\"none\" stroke=\"" << color
        << "\" stroke-width=\"2\" stroke-linejoin=\"round\"" << (series[s].dashed ? dash : "")
        << "/>\n";
    if (opt.markers)
      for (std::size_t i = 0; i < series[s].x.size(); ++i)
        if (std::isfinite(series[s].x[i]) && std::isfinite(series[s].y[i]))
          out << "<circle cx=\"" << px(X(series[s].x[i])) << "\" cy=\""
              << px(std::clamp(Y(series[s].y[i]), top, yb)) << "\" r=\"" << px(kMarkerRadius)
              << "\" fill=\"" << color << "\"/>\n";
  }
  // frame and axis labels
  out << frame_el(left, top, plot_w, plot_h);
  if (!opt.x_label.empty())
    out << text_el(left + plot_w / 2, yb + x_tick_h + kLabelFont + kXLabelGap, opt.x_label, kLabelFont);
  if (!opt.y_label.empty())
    out << vertical_text_el(kMargin + kLabelFont, top + plot_h / 2, opt.y_label, kLabelFont);
  // legend, one entry per labelled series
  if (any_label) {
    double ly = legend_below ? top + plot_h + bottom + kTickFont * 0.5 : top + kLegendTopPad;
    const double lx = legend_below ? left : left + plot_w + kLegendGap;
    for (std::size_t s = 0; s < series.size(); ++s) {
      if (series[s].label.empty()) continue;
      const char* color = kPalette[s % kPalette.size()];
      out << "<line x1=\"" << px(lx) << "\" y1=\"" << px(ly) << "\" x2=\"" << px(lx + kLegendSwatch)
          << "\" y2=\"" << px(ly) << "\" stroke=\"" << color << "\" stroke-width=\"2.5\""
          << (series[s].dashed ? dash : "") << "/>\n";
      out << text_el(lx + (kLegendSwatch + kLegendTextGap), ly + kTickFont * kBaselineShift,
                     series[s].label, kTickFont, "start");
      ly += kTickFont + kLegendRowGap;
    }
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace xenc::viz

// Line plots: one <polyline class="series"> per series, nice y ticks with light grid lines,
// numeric or categorical x ticks, dashed reference lines, and a legend right of the plot (or
// in columns under it, for long labels).
//
// The layout is planned in four steps (line_plot_svg): 1. the data range, padded so no line
// lies on the frame; 2. which legend entries are shown and how each series is drawn; 3. the
// horizontal layout (y labels, plot, legend or the overhang of the last x label); 4. the
// vertical layout, where a tall legend or long rotated x labels grow the figure rather than
// squash the plot.
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
constexpr int kYTickSpacing = 45;        // about one y tick per this many px of plot height
constexpr int kMinTicks = 3;             // on either axis
constexpr double kXTickSpacing = 70.0;   // about one numeric x tick per this many px
constexpr double kXTickLabelPad = 12.0;  // ... or the widest label plus this
constexpr double kMinPlotWidth = 80.0, kMinPlotHeight = 60.0;
constexpr double kReadableShare = 0.5;  // the plot keeps at least this share of the figure size
constexpr double kYPadShare = 0.04;     // frame this share of the y range beyond it
constexpr double kAxisLabelBand = kLabelFont + 10;          // a rotated y-axis label
constexpr double kYTickBand = kTickLength + kTickLabelGap;  // y tick mark and gap to its label
constexpr double kRightMargin = 16.0;
constexpr double kOverhangPad = 4.0;  // right of the last x tick label's end
constexpr double kTopNoTitle = 14.0;
constexpr double kTitleBand = kTitleFont + 26;   // title with its margins
constexpr double kXTickBandPad = 10.0;           // x tick labels: font size plus this (tick, gap)
constexpr double kXLabelBand = kLabelFont + 14;  // the x-axis label, with its descent
constexpr double kXLabelGap = 2.0;               // x tick labels to the x-axis label
constexpr double kNoXLabelPad = 8.0;             // under the tick labels when there is no x label
constexpr double kMinCategoryGap = 6.0;          // categorical labels closer than this get rotated
// legend: a short line in the series' colour, then the label
constexpr double kLegendGap = 14.0;     // plot to legend
constexpr double kLegendTopPad = 8.0;   // frame top to the first entry
constexpr double kLegendSwatch = 20.0;  // length of the sample line
constexpr double kLegendTextGap = 6.0;  // sample line to label
constexpr double kLegendChrome = 44.0;  // gap + swatch + text gap + spare, beside the labels
constexpr double kLegendRowHeight = kTickFont + 8;  // one entry
constexpr double kLegendBottomPad = 6.0;            // under a legend placed below the plot
constexpr double kMaxLegendShare = 0.3;             // a wider legend goes under the plot
// series
constexpr const char* kYGridColor = "#e4e4e4";
constexpr const char* kXGridColor = "#f0f0f0";
constexpr const char* kHiddenColor = "#c8c8c8";  // lines left out of a full legend
constexpr const char* kReferenceColor = "#555555";
constexpr const char* kDashPattern = "7 4";  // LineSeries::dashed
constexpr const char* kReferenceDash = "4 3";
constexpr double kMarkerRadius = 3.5;

// Matplotlib's tab10 for line series; after ten series the colours repeat dotted, then
// dash-dotted, then long-dashed, so up to 40 series look different.
const std::array<const char*, 10> kPalette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                              "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                              "#bcbd22", "#17becf"};
const std::array<const char*, 4> kCycleDash = {"", "2 3", "9 3 2 3", "12 4"};

// How one series or reference line is drawn, and whether the legend lists it.
struct Style {
  std::string color;
  std::string dash;  // stroke-dasharray, empty = solid
  double width = 2.0;
  bool in_legend = false;
  bool hidden = false;  // labelled but left out of a full legend: thin and grey
};

std::string dash_attr(const std::string& dash) {
  return dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"";
}

// 2. Which labelled entries the legend shows (references and dashed summaries first, then the
//    others in order), and every series' colour and dash. Entries 0..S-1 are the series,
//    S.. the reference lines.
std::vector<Style> plan_styles(const std::vector<LineSeries>& series,
                               const std::vector<ReferenceLine>& refs, std::size_t* not_shown) {
  const std::size_t S = series.size(), n = S + refs.size();
  std::vector<Style> st(n);
  std::vector<std::size_t> labelled_first, labelled_rest;
  for (std::size_t i = 0; i < n; ++i) {
    const bool labelled = i < S ? !series[i].label.empty() : !refs[i - S].label.empty();
    if (!labelled) continue;
    (i >= S || series[i].dashed ? labelled_first : labelled_rest).push_back(i);
  }
  std::size_t room = kMaxLegendEntries;
  for (auto* group : {&labelled_first, &labelled_rest})
    for (std::size_t i : *group) {
      st[i].in_legend = room > 0;
      st[i].hidden = room == 0;
      room -= room > 0;
    }
  *not_shown = 0;
  std::size_t rank = 0;  // colours in series order, skipping the hidden ones
  for (std::size_t i = 0; i < n; ++i) {
    if (st[i].hidden) {
      ++*not_shown;
      st[i].color = kHiddenColor;
      st[i].width = 1.0;
      continue;
    }
    if (i >= S) {
      st[i].color = kReferenceColor;
      st[i].dash = kReferenceDash;
      st[i].width = 1.5;
      continue;
    }
    st[i].color = kPalette[rank % kPalette.size()];
    st[i].dash =
        series[i].dashed ? kDashPattern : kCycleDash[(rank / kPalette.size()) % kCycleDash.size()];
    ++rank;
  }
  return st;
}

// Categorical x labels: upright, rotated, and every k-th when even rotated ones would overlap.
struct CategoryPlan {
  bool rotate = false;
  std::size_t step = 1;
  double extent = 0;  // px under the frame
};

CategoryPlan plan_categories(const std::vector<std::string>& labels, double spacing) {
  CategoryPlan c;
  double widest = 0;
  for (auto& s : labels) widest = std::max(widest, text_width(s, kTickFont));
  c.extent = kTickFont + kXTickBandPad;
  if (labels.size() < 2 || widest + kMinCategoryGap <= spacing) return c;
  // upright every k-th, unless rotating keeps at least twice as many labels
  const std::size_t upright = thinning_step(spacing, widest + kMinCategoryGap);
  const std::size_t rotated = thinning_step(spacing, kRotatedLabelPitch);
  if (upright <= 2 * rotated) {
    c.step = upright;
    return c;
  }
  c.rotate = true;
  c.step = rotated;
  c.extent = widest * kCos45 + kTickFont + kXTickBandPad;
  return c;
}

// 1. The data range (series and reference lines), padded so no line lies on the frame; the
//    y ticks stay within [y_tick_lo, y_tick_hi].
struct DataRange {
  double xlo, xhi, ylo, yhi, y_tick_lo, y_tick_hi;
};

DataRange data_range(const std::vector<LineSeries>& series, const LinePlotOptions& opt) {
  const char* where = "line_plot_svg";
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
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
  }
  for (const auto& r : opt.reference_lines) {
    if (!std::isfinite(r.value))
      throw shape_error(std::string(where) + ": reference line '" + r.label + "' has value " +
                        fmt(r.value) + ", expected a finite number");
    double& lo = r.vertical ? xlo : ylo;
    double& hi = r.vertical ? xhi : yhi;
    lo = std::min(lo, r.value);
    hi = std::max(hi, r.value);
  }
  if (!std::isfinite(xlo)) xlo = 0, xhi = 1;
  if (!std::isfinite(ylo)) ylo = 0, yhi = 1;
  if (!opt.x_tick_labels.empty()) {
    xlo = std::min(xlo, 0.0);
    xhi = std::max(xhi, double(opt.x_tick_labels.size() - 1));
  }
  if (!std::isnan(opt.y_min)) ylo = opt.y_min;
  if (!std::isnan(opt.y_max)) yhi = opt.y_max;
  if (!(xhi > xlo)) xlo -= 0.5, xhi += 0.5;
  if (!(yhi - ylo > 1e-9 * std::max(1.0, std::abs(yhi)))) {  // constant data: a range around it
    const double w = std::max(1e-6, std::abs(ylo) * 0.1);
    ylo -= w;
    yhi += w;
  }
  // the ticks stay within [ylo, yhi]; the frame is kYPadShare of the range beyond each end
  const double y_tick_lo = ylo, y_tick_hi = yhi;
  const double ypad = kYPadShare * (yhi - ylo);
  ylo -= ypad;
  yhi += ypad;
  return {xlo, xhi, ylo, yhi, y_tick_lo, y_tick_hi};
}

// 2. The legend's entries and every line's style.
struct Legend {
  std::vector<Style> style;  // series, then reference lines
  double widest_label = 0;
  std::string note;  // "N more not shown", or empty
  std::size_t rows_total = 0;
  bool any = false;
};

const std::string& label_of(const std::vector<LineSeries>& series, const LinePlotOptions& opt,
                            std::size_t i) {
  return i < series.size() ? series[i].label : opt.reference_lines[i - series.size()].label;
}

Legend plan_legend(const std::vector<LineSeries>& series, const LinePlotOptions& opt) {
  Legend g;
  std::size_t not_shown = 0;
  g.style = plan_styles(series, opt.reference_lines, &not_shown);
  std::size_t n_entries = 0;
  for (std::size_t i = 0; i < g.style.size(); ++i)
    if (g.style[i].in_legend) {
      ++n_entries;
      g.widest_label = std::max(g.widest_label, text_width(label_of(series, opt, i), kTickFont));
    }
  // the note has a grey sample line like the lines it stands for
  g.note = not_shown > 0 ? std::to_string(not_shown) + " more not shown" : "";
  if (!g.note.empty()) g.widest_label = std::max(g.widest_label, text_width(g.note, kTickFont));
  g.rows_total = n_entries + (g.note.empty() ? 0 : 1);
  g.any = g.rows_total > 0;
  return g;
}

// 3. and 4. Where everything goes.
struct Layout {
  DataRange r;
  double left = 0, right = 0, plot_w = 0, width = 0, top = 0, bottom = 0, plot_h = 0, height = 0;
  double legend_gap = 0;
  bool legend_below = false;
  std::size_t legend_cols = 1;
  std::vector<double> yt;  // y ticks
  double ystep = 0, xstep = 0;
  int max_x_ticks = 0;
  CategoryPlan cat;
  double X(double x) const { return left + (x - r.xlo) / (r.xhi - r.xlo) * plot_w; }
  double Y(double y) const { return top + (r.yhi - y) / (r.yhi - r.ylo) * plot_h; }
  double yb() const { return top + plot_h; }
};

// 3. Horizontal layout: y label, y tick labels, plot, then the legend (right of the plot, or
//    under it when its labels are long) or room for the last x tick label.
void plan_horizontal(const LinePlotOptions& opt, const Legend& g, Layout& l) {
  const double min_plot_h = std::max(kMinPlotHeight, kReadableShare * double(opt.height));
  const double min_plot_w = std::max(kMinPlotWidth, kReadableShare * double(opt.width));
  l.legend_below = g.any && g.widest_label + kLegendChrome > kMaxLegendShare * double(opt.width);
  const double legend_w = g.any && !l.legend_below ? g.widest_label + kLegendChrome : 0;
  // y ticks: about one per kYTickSpacing px of the (estimated) plot height
  const int max_y_ticks =
      std::max(kMinTicks, int(std::max(min_plot_h, double(opt.height) - 140) / kYTickSpacing));
  l.ystep = nice_step(l.r.y_tick_hi - l.r.y_tick_lo, max_y_ticks);
  l.yt = nice_ticks(l.r.y_tick_lo, l.r.y_tick_hi, max_y_ticks);
  double widest_y = 0;
  for (double t : l.yt) widest_y = std::max(widest_y, text_width(fmt_tick(t, l.ystep), kTickFont));
  l.left = kMargin + (opt.y_label.empty() ? 0 : kAxisLabelBand) + widest_y + kYTickBand;
  // the last x tick label is centred on the frame's right edge: half of it overhangs
  double widest_x = 0;
  for (auto& s : opt.x_tick_labels) widest_x = std::max(widest_x, text_width(s, kTickFont));
  if (opt.x_tick_labels.empty())
    for (double v : {l.r.xlo, l.r.xhi})
      widest_x = std::max(widest_x, text_width(fmt(v), kTickFont) + kTickFont);
  const double overhang = widest_x / 2 + kOverhangPad;
  l.legend_gap = std::max(kLegendGap, overhang);
  l.right = legend_w > 0 ? l.legend_gap + legend_w - kLegendGap + kRightMargin
                         : std::max(kRightMargin, overhang);
  l.plot_w = std::max(min_plot_w, double(opt.width) - l.left - l.right);
  l.width = l.left + l.plot_w + l.right;
  // x ticks: categorical labels (rotated or thinned when they would overlap) or nice numbers
  l.cat = plan_categories(opt.x_tick_labels, l.plot_w / (l.r.xhi - l.r.xlo));
  l.max_x_ticks =
      std::max(kMinTicks, int(l.plot_w / std::max(kXTickSpacing, widest_x + kXTickLabelPad)));
  l.xstep = nice_step(l.r.xhi - l.r.xlo, l.max_x_ticks);
}

// 4. Vertical layout: title, plot, x tick labels, x label, legend below; a legend right of the
//    plot makes the plot at least as tall as its entries.
void plan_vertical(const LinePlotOptions& opt, const Legend& g, Layout& l) {
  const double min_plot_h = std::max(kMinPlotHeight, kReadableShare * double(opt.height));
  l.top = opt.title.empty() ? kTopNoTitle : kTitleBand;
  l.bottom = l.cat.extent + (opt.x_label.empty() ? kNoXLabelPad : kXLabelBand);
  std::size_t legend_cols = 1;
  if (l.legend_below)
    legend_cols = std::max<std::size_t>(
        1, std::size_t((l.width - 2 * kMargin) / (g.widest_label + kLegendChrome - kLegendGap)));
  l.legend_cols = std::min(legend_cols, std::max<std::size_t>(1, g.rows_total));
  const std::size_t legend_rows = (g.rows_total + l.legend_cols - 1) / l.legend_cols;
  const double legend_h =
      l.legend_below ? double(legend_rows) * kLegendRowHeight + kLegendBottomPad : 0;
  l.plot_h = std::max(min_plot_h, double(opt.height) - l.top - l.bottom);
  if (g.any && !l.legend_below)
    l.plot_h = std::max(l.plot_h, kLegendTopPad + double(g.rows_total) * kLegendRowHeight);
  l.height = l.top + l.plot_h + l.bottom + legend_h;
}

// Grid lines and y ticks.
void draw_y_ticks(std::ostream& out, const Layout& l) {
  for (double t : l.yt) {
    const double y = l.Y(t);
    out << line_el(l.left, y, l.left + l.plot_w, y, kYGridColor);
    out << line_el(l.left - kTickLength, y, l.left, y);
    out << text_el(l.left - kTickLabelGap, y + kTickFont * kBaselineShift, fmt_tick(t, l.ystep),
                   kTickFont, "end", " class=\"ytick\"");
  }
}

// x ticks: the categories (rotated or thinned as planned) or nice numbers.
void draw_x_ticks(std::ostream& out, const LinePlotOptions& opt, const Layout& l) {
  const double top = l.top, yb = l.yb();
  if (!opt.x_tick_labels.empty()) {
    for (std::size_t i = 0; i < opt.x_tick_labels.size(); ++i) {
      const double x = l.X(double(i));
      out << line_el(x, top, x, yb, kXGridColor);
      out << line_el(x, yb, x, yb + kTickLength);
      if (i % l.cat.step != 0) continue;
      if (l.cat.rotate)
        out << rotated_tick_label_el(x, yb, opt.x_tick_labels[i]);
      else
        out << text_el(x, yb + kTickLabelGap + kTickFont, opt.x_tick_labels[i], kTickFont, "middle",
                       " class=\"xtick\"");
    }
  } else {
    for (double t : nice_ticks(l.r.xlo, l.r.xhi, l.max_x_ticks)) {
      const double x = l.X(t);
      out << line_el(x, top, x, yb, kXGridColor);
      out << line_el(x, yb, x, yb + kTickLength);
      out << text_el(x, yb + kTickLabelGap + kTickFont, fmt_tick(t, l.xstep), kTickFont, "middle",
                     " class=\"xtick\"");
    }
  }
}

// Series: lines left out of the legend first (grey, underneath), then the others; points
// outside a fixed y range are clamped to the frame.
void draw_series(std::ostream& out, const std::vector<LineSeries>& series,
                 const LinePlotOptions& opt, const std::vector<Style>& style, const Layout& l) {
  const double top = l.top, yb = l.yb();
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t s = 0; s < series.size(); ++s) {
      const Style& st = style[s];
      if (st.hidden != (pass == 0)) continue;
      std::string pts;
      for (std::size_t i = 0; i < series[s].x.size(); ++i) {
        if (!std::isfinite(series[s].x[i]) || !std::isfinite(series[s].y[i])) continue;
        const double y = std::clamp(l.Y(series[s].y[i]), top, yb);
        pts += px(l.X(series[s].x[i])) + "," + px(y) + " ";
      }
      if (!pts.empty()) pts.pop_back();
      out << "<polyline class=\"series\" points=\"" << pts << "\" fill=\"none\" stroke=\""
          << st.color << "\" stroke-width=\"" << px(st.width) << "\" stroke-linejoin=\"round\""
          << dash_attr(st.dash) << "/>\n";
      if (opt.markers && !st.hidden)
        for (std::size_t i = 0; i < series[s].x.size(); ++i)
          if (std::isfinite(series[s].x[i]) && std::isfinite(series[s].y[i]))
            out << "<circle class=\"marker\" cx=\"" << px(l.X(series[s].x[i])) << "\" cy=\""
                << px(std::clamp(l.Y(series[s].y[i]), top, yb)) << "\" r=\"" << px(kMarkerRadius)
                << "\" fill=\"" << st.color << "\"/>\n";
    }
}

// Reference lines across the whole plot, no markers.
void draw_references(std::ostream& out, const std::vector<LineSeries>& series,
                     const LinePlotOptions& opt, const std::vector<Style>& style, const Layout& l) {
  const double left = l.left, top = l.top, yb = l.yb();
  for (std::size_t r = 0; r < opt.reference_lines.size(); ++r) {
    const auto& ref = opt.reference_lines[r];
    const Style& st = style[series.size() + r];
    const double x1 = ref.vertical ? l.X(ref.value) : left,
                 x2 = ref.vertical ? x1 : left + l.plot_w;
    const double y1 = ref.vertical ? top : l.Y(ref.value), y2 = ref.vertical ? yb : y1;
    out << "<line class=\"reference\" x1=\"" << px(x1) << "\" y1=\"" << px(y1) << "\" x2=\""
        << px(x2) << "\" y2=\"" << px(y2) << "\" stroke=\"" << st.color << "\" stroke-width=\""
        << px(st.width) << "\"" << dash_attr(st.dash) << "/>\n";
  }
}

// Legend: the shown entries in order (series, then reference lines), then the note; right of
// the plot in one column, or under it filling rows left to right.
void draw_legend(std::ostream& out, const std::vector<LineSeries>& series,
                 const LinePlotOptions& opt, const Legend& g, const Layout& l) {
  const double x0 = l.legend_below ? kMargin : l.left + l.plot_w + l.legend_gap;
  const double y0 = l.legend_below ? l.yb() + l.bottom + kTickFont * 0.5 : l.top + kLegendTopPad;
  const double col_w = g.widest_label + kLegendChrome - kLegendGap;
  std::size_t k = 0;
  auto slot = [&](double* lx, double* ly) {
    *lx = x0 + double(k % l.legend_cols) * col_w;
    *ly = y0 + double(k / l.legend_cols) * kLegendRowHeight;
    ++k;
  };
  for (std::size_t i = 0; i < g.style.size(); ++i) {
    if (!g.style[i].in_legend) continue;
    double lx, ly;
    slot(&lx, &ly);
    out << "<line class=\"legend-swatch\" x1=\"" << px(lx) << "\" y1=\"" << px(ly) << "\" x2=\""
        << px(lx + kLegendSwatch) << "\" y2=\"" << px(ly) << "\" stroke=\"" << g.style[i].color
        << "\" stroke-width=\"2.5\"" << dash_attr(g.style[i].dash) << "/>\n";
    out << text_el(lx + (kLegendSwatch + kLegendTextGap), ly + kTickFont * kBaselineShift,
                   label_of(series, opt, i), kTickFont, "start", " class=\"legend\"");
  }
  if (!g.note.empty()) {
    double lx, ly;
    slot(&lx, &ly);
    out << line_el(lx, ly, lx + kLegendSwatch, ly, kHiddenColor, 1.0);
    out << text_el(lx + (kLegendSwatch + kLegendTextGap), ly + kTickFont * kBaselineShift, g.note,
                   kTickFont, "start", " class=\"legend-note\" font-style=\"italic\"");
  }
}

}  // namespace

std::string line_plot_svg(const std::vector<LineSeries>& series, const LinePlotOptions& opt) {
  if (series.empty())
    throw shape_error(std::string("line_plot_svg") + ": no series to draw, expected at least one");
  Layout l;
  l.r = data_range(series, opt);              // 1.
  const Legend g = plan_legend(series, opt);  // 2.
  plan_horizontal(opt, g, l);                 // 3.
  plan_vertical(opt, g, l);                   // 4.
  std::ostringstream out;
  out << svg_open(l.width, l.height);
  if (!opt.title.empty()) out << title_el(l.width, opt.title);
  draw_y_ticks(out, l);
  draw_x_ticks(out, opt, l);
  draw_series(out, series, opt, g.style, l);
  draw_references(out, series, opt, g.style, l);
  // frame and axis labels
  out << frame_el(l.left, l.top, l.plot_w, l.plot_h);
  if (!opt.x_label.empty())
    out << text_el(l.left + l.plot_w / 2, l.yb() + l.cat.extent + kLabelFont + kXLabelGap,
                   opt.x_label, kLabelFont);
  if (!opt.y_label.empty())
    out << vertical_text_el(kMargin + kLabelFont, l.top + l.plot_h / 2, opt.y_label, kLabelFont);
  if (g.any) draw_legend(out, series, opt, g, l);
  out << "</svg>\n";
  return out.str();
}

}  // namespace xenc::viz

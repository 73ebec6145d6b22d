// A small SVG writer: heatmaps, heatmap grids and line plots as plain SVG 1.1 text.
//
// Layout is computed in pixels from estimated text widths (sans-serif at font size s is about
// 0.6·s px per character), so labels never need a browser to be measured. Colours are computed
// here (diverging blue-white-red, sequential viridis) and written as fill="#rrggbb".
#include "xenc/viz/svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace xenc::viz {

namespace {

constexpr double kFigureWidth = 640.0;   // target width of a heatmap figure
constexpr double kMaxPlotHeight = 480.0; // tallest heatmap plot area
constexpr double kMaxCell = 56.0;        // largest automatic cell edge
constexpr double kTickFont = 11.0;
constexpr double kLabelFont = 13.0;
constexpr double kTitleFont = 15.0;
const char* kFont = "DejaVu Sans, Arial, Helvetica, sans-serif";

double text_width(const std::string& s, double font_size) {
  // count UTF-8 code points, not bytes
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return 0.6 * font_size * double(n);
}

// A number with up to 4 significant digits, "-0" printed as "0".
std::string fmt(double v) {
  if (std::abs(v) < 1e-12) v = 0.0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// Pixel coordinates with 2 decimals (keeps files small and exact enough).
std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

struct Rgb {
  double r, g, b;
};

std::string hex(const Rgb& c) {
  auto clamp8 = [](double v) { return int(std::lround(std::clamp(v, 0.0, 255.0))); };
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", clamp8(c.r), clamp8(c.g), clamp8(c.b));
  return buf;
}

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
const std::array<Rgb, 5> kDiverging = {{{33, 102, 172}, {146, 197, 222}, {247, 247, 247},
                                        {244, 165, 130}, {178, 24, 43}}};
// viridis, sampled at 0, 0.25, 0.5, 0.75, 1.
const std::array<Rgb, 5> kSequential = {{{68, 1, 84}, {59, 82, 139}, {33, 145, 140},
                                         {94, 201, 98}, {253, 231, 37}}};
// Matplotlib's tab10 for line series.
const std::array<const char*, 10> kPalette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                              "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                              "#bcbd22", "#17becf"};

struct ColorScale {
  double vmin = 0, vmax = 1;
  bool diverging = true;
  Rgb color(double v) const {
    if (!std::isfinite(v)) return {200, 200, 200};
    const double t = vmax > vmin ? (v - vmin) / (vmax - vmin) : 0.5;
    return diverging ? colormap(kDiverging, t) : colormap(kSequential, t);
  }
  // Dark text on light cells, light text on dark ones.
  const char* text_color(double v) const {
    const Rgb c = color(v);
    return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b > 140 ? "#000000" : "#ffffff";
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

// "Nice" tick step (1, 2, 2.5 or 5 × 10^k) giving at most about `max_ticks` ticks over `span`.
double nice_step(double span, int max_ticks) {
  if (!(span > 0)) return 1.0;
  const double raw = span / std::max(1, max_ticks);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw * (1 - 1e-9)) return m * mag;
  return 10 * mag;
}

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
  const double step = nice_step(hi - lo, max_ticks);
  std::vector<double> t;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return t;
}

// Index ticks 0, s, 2s, ... for an axis of n cells of `cell` px, at least `min_gap` px apart.
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

std::string text_el(double x, double y, const std::string& s, double size,
                    const char* anchor = "middle", const std::string& extra = "") {
  return "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" font-family=\"" + kFont +
         "\" font-size=\"" + px(size) + "\" text-anchor=\"" + anchor + "\" fill=\"#222222\"" +
         extra + ">" + xml_escape(s) + "</text>\n";
}

std::string line_el(double x1, double y1, double x2, double y2, const char* color = "#444444",
                    double width = 1.0) {
  return "<line x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) + "\" y2=\"" +
         px(y2) + "\" stroke=\"" + color + "\" stroke-width=\"" + px(width) + "\"/>\n";
}

std::string svg_open(double w, double h) {
  const std::string W = px(std::ceil(w)), H = px(std::ceil(h));
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + W +
         "\" height=\"" + H + "\" viewBox=\"0 0 " + W + " " + H + "\">\n<rect x=\"0\" y=\"0\" width=\"" +
         W + "\" height=\"" + H + "\" fill=\"#ffffff\"/>\n";
}

// --- heatmap layout ---------------------------------------------------------------------------

// How one heatmap panel's axes are labelled, computed once for all panels of a figure.
struct AxisPlan {
  std::vector<std::size_t> ticks;  // indices that get a tick label
  std::vector<std::string> labels; // their text
  bool rotated = false;            // x labels at -45 degrees
  double extent = 0;               // px the labels need away from the axis
};

AxisPlan plan_x(std::size_t n, double cell, const std::vector<std::string>& names) {
  AxisPlan a;
  if (names.empty()) {
    double widest = text_width(std::to_string(n - 1), kTickFont);
    a.ticks = index_ticks(n, cell, std::max(28.0, widest + 10));
    for (auto i : a.ticks) a.labels.push_back(std::to_string(i));
    a.extent = kTickFont + 8;
    return a;
  }
  double widest = 0;
  for (auto& s : names) widest = std::max(widest, text_width(s, kTickFont));
  if (widest + 4 <= cell) {
    for (std::size_t i = 0; i < n; ++i) a.ticks.push_back(i);
    a.extent = kTickFont + 8;
  } else {
    a.rotated = true;
    const std::size_t step = std::max<std::size_t>(1, std::size_t(std::ceil((kTickFont + 2) / cell)));
    for (std::size_t i = 0; i < n; i += step) a.ticks.push_back(i);
    a.extent = widest * 0.7071 + kTickFont + 8;
  }
  for (auto i : a.ticks) a.labels.push_back(names[i]);
  return a;
}

AxisPlan plan_y(std::size_t n, double cell, const std::vector<std::string>& names) {
  AxisPlan a;
  if (names.empty()) {
    a.ticks = index_ticks(n, cell, kTickFont + 6);
    for (auto i : a.ticks) a.labels.push_back(std::to_string(i));
  } else {
    const std::size_t step = std::max<std::size_t>(1, std::size_t(std::ceil((kTickFont + 2) / cell)));
    for (std::size_t i = 0; i < n; i += step) a.ticks.push_back(i);
    for (auto i : a.ticks) a.labels.push_back(names[i]);
  }
  double widest = 0;
  for (auto& s : a.labels) widest = std::max(widest, text_width(s, kTickFont));
  a.extent = widest + 8;
  return a;
}

void check_ticks(const char* where, const std::vector<std::string>& ticks, std::size_t n,
                 const char* arg, const char* what) {
  if (!ticks.empty() && ticks.size() != n)
    throw std::invalid_argument(std::string(where) + ": " + arg + " has " +
                                std::to_string(ticks.size()) + " labels, expected " +
                                std::to_string(n) + " (one per " + what + ") or none");
}

// Cells, frame and tick labels of one panel whose plot area starts at (x0, y0).
void draw_panel(std::ostringstream& out, const Tensor2& v, double x0, double y0, double cw,
                double ch, const AxisPlan& xa, const AxisPlan& ya, const ColorScale& scale,
                bool annotate) {
  const std::size_t rows = v.shape()[0], cols = v.shape()[1];
  // one rect per value; crispEdges avoids hairline seams between fractional-width cells
  out << "<g shape-rendering=\"crispEdges\">\n";
  // cell edges snapped to whole pixels so neighbouring cells share an edge exactly
  auto edge = [](double origin, double size, std::size_t k) { return std::round(origin + size * double(k)); };
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const double xa = edge(x0, cw, c), xb = edge(x0, cw, c + 1);
      const double ya = edge(y0, ch, r), yb = edge(y0, ch, r + 1);
      out << "<rect class=\"cell\" x=\"" << px(xa) << "\" y=\"" << px(ya) << "\" width=\""
          << px(std::max(1.0, xb - xa)) << "\" height=\"" << px(std::max(1.0, yb - ya))
          << "\" fill=\"" << hex(scale.color(v(r, c))) << "\"/>\n";
    }
  out << "</g>\n";
  if (annotate) {
    const double fs = std::clamp(std::min(cw / 3.2, ch / 1.8), 6.0, 12.0);
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c)
        out << "<text x=\"" << px(x0 + (double(c) + 0.5) * cw) << "\" y=\""
            << px(y0 + (double(r) + 0.5) * ch + fs * 0.35) << "\" font-family=\"" << kFont
            << "\" font-size=\"" << px(fs) << "\" text-anchor=\"middle\" fill=\""
            << scale.text_color(v(r, c)) << "\">" << fmt(std::round(double(v(r, c)) * 100) / 100)
            << "</text>\n";
  }
  // frame
  out << "<rect x=\"" << px(x0) << "\" y=\"" << px(y0) << "\" width=\"" << px(cw * double(cols))
      << "\" height=\"" << px(ch * double(rows)) << "\" fill=\"none\" stroke=\"#444444\" "
      << "stroke-width=\"1\"/>\n";
  // x ticks under the plot
  const double yb = y0 + ch * double(rows);
  for (std::size_t k = 0; k < xa.ticks.size(); ++k) {
    const double x = x0 + (double(xa.ticks[k]) + 0.5) * cw;
    out << line_el(x, yb, x, yb + 4);
    if (xa.rotated)
      out << text_el(x + 3, yb + 12, xa.labels[k], kTickFont, "end",
                     " transform=\"rotate(-45 " + px(x + 3) + " " + px(yb + 12) + ")\"");
    else
      out << text_el(x, yb + 6 + kTickFont, xa.labels[k], kTickFont);
  }
  // y ticks left of the plot
  for (std::size_t k = 0; k < ya.ticks.size(); ++k) {
    const double y = y0 + (double(ya.ticks[k]) + 0.5) * ch;
    out << line_el(x0 - 4, y, x0, y);
    out << text_el(x0 - 6, y + kTickFont * 0.35, ya.labels[k], kTickFont, "end");
  }
}

// Vertical colour bar at (x, y) of height h, with ticks and a rotated label.
void draw_colorbar(std::ostringstream& out, double x, double y, double h, const ColorScale& s,
                   const std::string& label) {
  const int n = 64;
  const double w = 16, sh = h / n;
  out << "<g shape-rendering=\"crispEdges\">\n";
  for (int i = 0; i < n; ++i) {
    const double v = s.vmax - (double(i) + 0.5) / n * (s.vmax - s.vmin);  // top = vmax
    out << "<rect class=\"colorbar\" x=\"" << px(x) << "\" y=\"" << px(y + i * sh)
        << "\" width=\"" << px(w) << "\" height=\"" << px(sh + 0.5) << "\" fill=\""
        << hex(s.color(v)) << "\"/>\n";
  }
  out << "</g>\n";
  out << "<rect x=\"" << px(x) << "\" y=\"" << px(y) << "\" width=\"" << px(w) << "\" height=\""
      << px(h) << "\" fill=\"none\" stroke=\"#444444\" stroke-width=\"1\"/>\n";
  double widest = 0;
  for (double t : nice_ticks(s.vmin, s.vmax, std::max(2, int(h / 40)))) {
    const double yy = y + (s.vmax - t) / (s.vmax - s.vmin) * h;
    out << line_el(x + w, yy, x + w + 4, yy);
    out << text_el(x + w + 6, yy + kTickFont * 0.35, fmt(t), kTickFont, "start");
    widest = std::max(widest, text_width(fmt(t), kTickFont));
  }
  if (!label.empty()) {  // reads bottom to top, like the y axis label
    const double lx = x + w + 10 + widest + kLabelFont, ly = y + h / 2;
    out << text_el(lx, ly, label, kLabelFont, "middle",
                   " transform=\"rotate(-90 " + px(lx) + " " + px(ly) + ")\"");
  }
}

double colorbar_width(const ColorScale& s, const std::string& label) {
  double widest = 0;  // over every tick count draw_colorbar may choose
  for (int n = 2; n <= 14; ++n)
    for (double t : nice_ticks(s.vmin, s.vmax, n)) widest = std::max(widest, text_width(fmt(t), kTickFont));
  return 20 + 16 + 10 + widest + (label.empty() ? 8 : kLabelFont + 10);
}

std::string heatmap_impl(const std::vector<const Tensor2*>& panels,
                         const std::vector<std::string>& panel_titles, const HeatmapOptions& opt,
                         int columns, const char* where) {
  if (panels.empty()) throw std::invalid_argument(std::string(where) + ": no panels to draw");
  const std::size_t rows = panels[0]->shape()[0], cols = panels[0]->shape()[1];
  if (rows == 0 || cols == 0)
    throw std::invalid_argument(std::string(where) + ": values has shape " +
                                shape_str(panels[0]->shape()) + ", expected [rows, cols] with rows, cols > 0");
  for (std::size_t i = 1; i < panels.size(); ++i)
    if (panels[i]->shape()[0] != rows || panels[i]->shape()[1] != cols)
      throw std::invalid_argument(std::string(where) + ": panel " + std::to_string(i) +
                                  " has shape " + shape_str(panels[i]->shape()) + ", expected " +
                                  shape_str(panels[0]->shape()) + " like panel 0");
  if (!panel_titles.empty() && panel_titles.size() != panels.size())
    throw std::invalid_argument(std::string(where) + ": panel_titles has " +
                                std::to_string(panel_titles.size()) + " entries, expected " +
                                std::to_string(panels.size()) + " or none");
  check_ticks(where, opt.x_ticks, cols, "x_ticks", "column");
  check_ticks(where, opt.y_ticks, rows, "y_ticks", "row");

  const ColorScale scale = make_scale(panels, opt);
  const std::size_t np = panels.size();
  const std::size_t ncol = columns > 0 ? std::min<std::size_t>(std::size_t(columns), np)
                                       : std::min<std::size_t>(np, 4);
  const std::size_t nrow = (np + ncol - 1) / ncol;

  // 1. y tick labels' width depends only on the labels (and cell height, for thinning); make a
  //    first estimate with a generous cell height, then fix it once the cell size is known.
  double widest_y = 0;
  if (opt.y_ticks.empty())
    widest_y = text_width(std::to_string(rows - 1), kTickFont);
  for (auto& s : opt.y_ticks) widest_y = std::max(widest_y, text_width(s, kTickFont));
  const double y_label_w = opt.y_label.empty() ? 0 : kLabelFont + 10;
  const double left = 10 + y_label_w + widest_y + 8;
  const double cbar_w = colorbar_width(scale, opt.colorbar_label);
  const double panel_gap = np > 1 ? 24 : 0;

  // 2. cell size: fit the panels into about 640 px, cap the plot height
  double cw, ch;
  if (opt.cell_size > 0) {
    cw = ch = opt.cell_size;
  } else {
    const double avail = kFigureWidth - cbar_w - 10;
    const double per_panel = (avail - double(ncol) * left - double(ncol - 1) * panel_gap) / double(ncol);
    cw = std::min(kMaxCell, std::max(1.0, per_panel / double(cols)));
    ch = std::min(cw, std::max(1.0, kMaxPlotHeight / double(nrow) / double(rows)));
  }
  const AxisPlan xa = plan_x(cols, cw, opt.x_ticks);
  const AxisPlan ya = plan_y(rows, ch, opt.y_ticks);
  const double panel_left = 10 + y_label_w + ya.extent;
  const double plot_w = cw * double(cols), plot_h = ch * double(rows);

  // 3. vertical layout: title, (panel title), plot, x tick labels, x label
  const double title_h = opt.title.empty() ? 10 : kTitleFont + 22;
  const double ptitle_h = panel_titles.empty() ? 0 : kLabelFont + 10;
  const double below = xa.extent + (opt.x_label.empty() ? 6 : kLabelFont + 14);
  const double panel_w = panel_left + plot_w, panel_h = ptitle_h + plot_h + below;
  const double grid_w = double(ncol) * panel_w + double(ncol - 1) * panel_gap;
  double width = grid_w + cbar_w;
  width = std::max(width, text_width(opt.title, kTitleFont) + 20);
  const double height = title_h + double(nrow) * panel_h + double(nrow - 1) * 8 + 4;

  std::ostringstream out;
  out << svg_open(width, height);
  if (!opt.title.empty())
    out << text_el(width / 2, 10 + kTitleFont, opt.title, kTitleFont, "middle",
                   " font-weight=\"bold\"");
  for (std::size_t p = 0; p < np; ++p) {
    const double ox = double(p % ncol) * (panel_w + panel_gap);
    const double oy = title_h + double(p / ncol) * (panel_h + 8);
    const double x0 = ox + panel_left, y0 = oy + ptitle_h;
    if (!panel_titles.empty())
      out << text_el(x0 + plot_w / 2, oy + kLabelFont, panel_titles[p], kLabelFont);
    draw_panel(out, *panels[p], x0, y0, cw, ch, xa, ya, scale, opt.annotate);
    // axis titles once per grid row / column: x under the bottom row, y left of the first column
    const bool bottom_row = p + ncol >= np;
    if (!opt.x_label.empty() && bottom_row)
      out << text_el(x0 + plot_w / 2, y0 + plot_h + xa.extent + kLabelFont + 4, opt.x_label,
                     kLabelFont);
    if (!opt.y_label.empty() && p % ncol == 0) {
      const double lx = ox + 10 + kLabelFont, ly = y0 + plot_h / 2;
      out << text_el(lx, ly, opt.y_label, kLabelFont, "middle",
                     " transform=\"rotate(-90 " + px(lx) + " " + px(ly) + ")\"");
    }
  }
  // colour bar spans the first row's plot height (at least 120 px when the plot is short)
  const double cb_h = std::max(plot_h, std::min(120.0, height - title_h - ptitle_h - 10));
  draw_colorbar(out, grid_w + 20, title_h + ptitle_h, cb_h, scale, opt.colorbar_label);
  out << "</svg>\n";
  return out.str();
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // control characters other than tab/newline are not allowed in XML 1.0
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
          out += ' ';
        else
          out += c;
    }
  }
  return out;
}

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

std::string line_plot_svg(const std::vector<LineSeries>& series, const LinePlotOptions& opt) {
  const char* where = "line_plot_svg";
  if (series.empty()) throw std::invalid_argument(std::string(where) + ": no series to draw");
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  bool any_label = false;
  double widest_label = 0;
  for (std::size_t s = 0; s < series.size(); ++s) {
    const auto& se = series[s];
    if (se.x.size() != se.y.size())
      throw std::invalid_argument(std::string(where) + ": series " + std::to_string(s) + " ('" +
                                  se.label + "') has " + std::to_string(se.x.size()) +
                                  " x values and " + std::to_string(se.y.size()) +
                                  " y values, expected the same number");
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
  std::vector<double> yt = nice_ticks(ylo, yhi, std::max(3, (opt.height - 100) / 45));
  if (std::isnan(opt.y_min)) {
    const double st = nice_step(yhi - ylo, std::max(3, (opt.height - 100) / 45));
    ylo = std::floor(ylo / st + 1e-9) * st;
    if (std::isnan(opt.y_max)) yhi = std::ceil(yhi / st - 1e-9) * st;
    yt = nice_ticks(ylo, yhi, std::max(3, (opt.height - 100) / 45));
  }
  double widest_y = 0;
  for (double t : yt) widest_y = std::max(widest_y, text_width(fmt(t), kTickFont));

  // layout: categorical x labels may need rotation
  // legend right of the plot, or under it when the labels are long
  std::size_t n_labels = 0;
  for (const auto& se : series) n_labels += !se.label.empty();
  const bool legend_below = any_label && widest_label + 44 > 0.3 * double(opt.width);
  const double legend_w = any_label && !legend_below ? widest_label + 44 : 0;
  const double legend_h = legend_below ? double(n_labels) * (kTickFont + 8) + 6 : 0;
  const double left = 10 + (opt.y_label.empty() ? 0 : kLabelFont + 10) + widest_y + 10;
  const double right = 16 + legend_w;
  const double plot_w = std::max(80.0, double(opt.width) - left - right);
  bool rotate = false;
  double widest_x = 0;
  for (auto& s : opt.x_tick_labels) widest_x = std::max(widest_x, text_width(s, kTickFont));
  if (!opt.x_tick_labels.empty() && opt.x_tick_labels.size() > 1 &&
      widest_x + 6 > plot_w / (xhi - xlo))  // one label per unit of x
    rotate = true;
  const double x_tick_h = rotate ? widest_x * 0.7071 + kTickFont + 10 : kTickFont + 10;
  const double top = opt.title.empty() ? 14 : kTitleFont + 26;
  const double bottom = x_tick_h + (opt.x_label.empty() ? 8 : kLabelFont + 14);
  const double plot_h = std::max(60.0, double(opt.height) - top - bottom - legend_h);
  const double width = left + plot_w + right, height = top + plot_h + bottom + legend_h;
  auto X = [&](double x) { return left + (x - xlo) / (xhi - xlo) * plot_w; };
  auto Y = [&](double y) { return top + (yhi - y) / (yhi - ylo) * plot_h; };

  std::ostringstream out;
  out << svg_open(width, height);
  if (!opt.title.empty())
    out << text_el(width / 2, 10 + kTitleFont, opt.title, kTitleFont, "middle",
                   " font-weight=\"bold\"");
  // grid lines and y ticks
  for (double t : yt) {
    const double y = Y(t);
    out << line_el(left, y, left + plot_w, y, "#e4e4e4");
    out << line_el(left - 4, y, left, y);
    out << text_el(left - 6, y + kTickFont * 0.35, fmt(t), kTickFont, "end");
  }
  // x ticks: categorical labels or nice numbers
  const double yb = top + plot_h;
  if (!opt.x_tick_labels.empty()) {
    for (std::size_t i = 0; i < opt.x_tick_labels.size(); ++i) {
      const double x = X(double(i));
      out << line_el(x, top, x, yb, "#f0f0f0");
      out << line_el(x, yb, x, yb + 4);
      if (rotate)
        out << text_el(x + 3, yb + 12, opt.x_tick_labels[i], kTickFont, "end",
                       " transform=\"rotate(-45 " + px(x + 3) + " " + px(yb + 12) + ")\"");
      else
        out << text_el(x, yb + 6 + kTickFont, opt.x_tick_labels[i], kTickFont);
    }
  } else {
    for (double t : nice_ticks(xlo, xhi, std::max(3, int(plot_w / 70)))) {
      const double x = X(t);
      out << line_el(x, top, x, yb, "#f0f0f0");
      out << line_el(x, yb, x, yb + 4);
      out << text_el(x, yb + 6 + kTickFont, fmt(t), kTickFont);
    }
  }
  // series, clipped by construction: points outside a fixed y range are clamped to the frame
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
        << "\" stroke-width=\"2\" stroke-linejoin=\"round\""
        << (series[s].dashed ? " stroke-dasharray=\"7 4\"" : "") << "/>\n";
    if (opt.markers)
      for (std::size_t i = 0; i < series[s].x.size(); ++i)
        if (std::isfinite(series[s].x[i]) && std::isfinite(series[s].y[i]))
          out << "<circle cx=\"" << px(X(series[s].x[i])) << "\" cy=\""
              << px(std::clamp(Y(series[s].y[i]), top, yb)) << "\" r=\"3.5\" fill=\"" << color
              << "\"/>\n";
  }
  // frame and axis labels
  out << "<rect x=\"" << px(left) << "\" y=\"" << px(top) << "\" width=\"" << px(plot_w)
      << "\" height=\"" << px(plot_h) << "\" fill=\"none\" stroke=\"#444444\" stroke-width=\"1\"/>\n";
  if (!opt.x_label.empty())
    out << text_el(left + plot_w / 2, yb + x_tick_h + kLabelFont + 2, opt.x_label, kLabelFont);
  if (!opt.y_label.empty()) {
    const double lx = 10 + kLabelFont, ly = top + plot_h / 2;
    out << text_el(lx, ly, opt.y_label, kLabelFont, "middle",
                   " transform=\"rotate(-90 " + px(lx) + " " + px(ly) + ")\"");
  }
  // legend to the right of the plot
  if (any_label) {
    double ly = legend_below ? top + plot_h + bottom + kTickFont * 0.5 : top + 8;
    const double lx = legend_below ? left : left + plot_w + 14;
    for (std::size_t s = 0; s < series.size(); ++s) {
      if (series[s].label.empty()) continue;
      const char* color = kPalette[s % kPalette.size()];
      out << "<line x1=\"" << px(lx) << "\" y1=\"" << px(ly) << "\" x2=\"" << px(lx + 20)
          << "\" y2=\"" << px(ly) << "\" stroke=\"" << color << "\" stroke-width=\"2.5\""
          << (series[s].dashed ? " stroke-dasharray=\"7 4\"" : "") << "/>\n";
      out << text_el(lx + 26, ly + kTickFont * 0.35, series[s].label, kTickFont, "start");
      ly += kTickFont + 8;
    }
  }
  out << "</svg>\n";
  return out.str();
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw std::runtime_error("write_text_file: cannot open '" + path + "' for writing");
  f << text;
  f.close();
  if (!f) throw std::runtime_error("write_text_file: writing '" + path + "' failed");
}

}  // namespace xenc::viz

// Bar charts: one <rect class="bar"> per category, its count above it, nice y ticks with light
// grid lines and one label per category under the axis (every k-th when they would overlap).
// Made for counts (how many students scored each number of points), so the y axis starts at 0.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "svg_primitives.hpp"
#include "xenc/core/error.hpp"
#include "xenc/viz/svg.hpp"

namespace xenc::viz {

namespace {

using namespace detail;

constexpr double kLeft = 56.0;       // y tick labels and the y-axis label
constexpr double kRight = 16.0;      // plot to the figure's right edge
constexpr double kTop = 14.0;        // without a title
constexpr double kTitleBand = 40.0;  // with one
constexpr double kBottom = 46.0;     // x tick labels and the x-axis label
constexpr double kBarShare = 0.7;    // of each category's slot
constexpr const char* kGridColor = "#e4e4e4";

void check_bars(const std::vector<std::string>& labels, const std::vector<double>& values) {
  if (labels.empty() || labels.size() != values.size())
    throw shape_error("bar_chart_svg: labels has " + std::to_string(labels.size()) +
                      " entries and values " + std::to_string(values.size()) +
                      "; expected the same number, at least 1");
  for (double v : values)
    if (!std::isfinite(v) || v < 0)
      throw shape_error("bar_chart_svg: a value is " + fmt(v) +
                        "; expected finite values >= 0 (counts)");
}

}  // namespace

std::string bar_chart_svg(const std::vector<std::string>& labels, const std::vector<double>& values,
                          const BarChartOptions& opt) {
  check_bars(labels, values);
  const double top = opt.title.empty() ? kTop : kTitleBand;
  const double plot_w = std::max(opt.width - kLeft - kRight, 40.0);
  const double plot_h = std::max(opt.height - top - kBottom, 40.0);
  const double largest = std::max(*std::max_element(values.begin(), values.end()), 1.0);
  // counts: whole-number ticks when every value is whole
  const bool whole =
      std::all_of(values.begin(), values.end(), [](double v) { return v == std::floor(v); });
  double step = nice_step(largest, 5);
  if (whole) step = std::ceil(step);
  const double y_max = std::ceil(largest / step - 1e-9) * step;
  std::vector<double> ticks;
  for (double t = 0; t <= y_max + step * 1e-6; t += step) ticks.push_back(t);
  auto y_of = [&](double v) { return top + plot_h * (1.0 - v / y_max); };
  const double slot = plot_w / static_cast<double>(values.size());
  std::ostringstream s;
  s << svg_open(opt.width, opt.height);
  if (!opt.title.empty()) s << title_el(opt.width, opt.title);
  for (double t : ticks) {
    s << line_el(kLeft, y_of(t), kLeft + plot_w, y_of(t), kGridColor)
      << text_el(kLeft - kTickLabelGap, y_of(t) + kTickFont * kBaselineShift, fmt(t), kTickFont,
                 "end");
  }
  double widest = 0;
  for (const std::string& l : labels) widest = std::max(widest, text_width(l, kTickFont));
  const std::size_t every = thinning_step(slot, widest + 6.0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double x = kLeft + slot * (static_cast<double>(i) + 0.5);
    const double w = slot * kBarShare, y = y_of(values[i]);
    s << "<rect class=\"bar\" x=\"" << px(x - w / 2) << "\" y=\"" << px(y) << "\" width=\"" << px(w)
      << "\" height=\"" << px(top + plot_h - y) << "\" fill=\"" << xml_escape(opt.color)
      << "\"/>\n";
    if (values[i] > 0)
      s << text_el(x, y - 4, fmt(values[i]), kTickFont, "middle", " class=\"bar-value\"");
    if (i % every == 0)
      s << text_el(x, top + plot_h + kTickLabelGap + kTickFont, labels[i], kTickFont);
  }
  s << frame_el(kLeft, top, plot_w, plot_h);
  if (!opt.x_label.empty())
    s << text_el(kLeft + plot_w / 2, opt.height - 8.0, opt.x_label, kLabelFont);
  if (!opt.y_label.empty()) s << vertical_text_el(16.0, top + plot_h / 2, opt.y_label, kLabelFont);
  s << "</svg>\n";
  return s.str();
}

}  // namespace xenc::viz

// The SVG writer (xenc/viz/svg.hpp): well-formed XML (parsed by libxml2), a cell per value,
// colours that follow the scale, escaped text, no CSS, and errors that name the argument.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "support/svg_xpath.hpp"
#include "xenc/viz/svg.hpp"

namespace {

using xenc::Tensor2;
namespace viz = xenc::viz;

using xenc::test::svg_xpath_number;  // support/svg_xpath.hpp: libxml2 + XPath, "s" = SVG

Tensor2 ramp(std::size_t rows, std::size_t cols) {
  Tensor2 t = Tensor2::from_shape({rows, cols});
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) t(r, c) = float(r) - float(c);
  return t;
}

TEST(SvgHeatmap, OneCellPerValueWithColourBarAndLabels) {
  viz::HeatmapOptions o;
  o.title = "T";
  o.x_label = "columns";
  o.y_label = "rows";
  o.colorbar_label = "value";
  const std::string svg = viz::heatmap_svg(ramp(7, 13), o);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:rect[@class='cell'])"), 7 * 13);
  EXPECT_GE(svg_xpath_number(svg, "count(//s:rect[@class='colorbar'])"), 10);
  for (const char* label : {"T", "columns", "rows", "value"})
    EXPECT_EQ(svg_xpath_number(svg, std::string("count(//s:text[.='") + label + "'])"), 1) << label;
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:style | //@style | //@id)"), 0);  // no CSS, no ids
  // fits a page
  EXPECT_LE(svg_xpath_number(svg, "number(/s:svg/@width)"), 700);
}

TEST(SvgHeatmap, DivergingScaleIsCentredOnZero) {
  // values -2 .. 2: zero is white-ish (#f7f7f7), the extremes blue and red
  Tensor2 t = {{-2, 0, 2}};
  const std::string svg = viz::heatmap_svg(t, {});
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:rect[@class='cell'][2][@fill='#f7f7f7'])"), 1);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:rect[@class='cell'][1][@fill='#2166ac'])"), 1);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:rect[@class='cell'][3][@fill='#b2182b'])"), 1);
}

TEST(SvgHeatmap, TextIsEscaped) {
  viz::HeatmapOptions o;
  o.title = "a < b & \"c\"";
  o.x_ticks = {"<pad>", "&"};
  o.y_ticks = {"x"};
  const std::string svg = viz::heatmap_svg(Tensor2{{1, 2}}, o);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[.='a < b & \"c\"'])"), 1) << svg;
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[.='<pad>'])"), 1);
  EXPECT_EQ(viz::xml_escape("<a href='x'>&</a>"), "&lt;a href=&apos;x&apos;&gt;&amp;&lt;/a&gt;");
}

TEST(SvgHeatmap, GridSharesOneColourBar) {
  std::vector<Tensor2> panels = {ramp(4, 4), ramp(4, 4), ramp(4, 4)};
  viz::HeatmapOptions o;
  o.title = "heads";
  const std::string svg = viz::heatmap_grid_svg(panels, {"h1", "h2", "h3"}, o, 2);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:rect[@class='cell'])"), 3 * 16);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:rect[@class='colorbar'])"), 64);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[.='h3'])"), 1);
}

// Marked cells (HeatmapOptions::marked) are hatched in every panel, and a legend line under the
// figure says what the hatching means; unmarked figures are as before (no legend, no hatching).
TEST(SvgHeatmap, MarkedCellsAreHatchedWithALegendLine) {
  std::vector<Tensor2> panels = {ramp(3, 4), ramp(3, 4)};
  viz::HeatmapOptions o;
  o.title = "marks";
  o.marked = xenc::Mask2::from_shape({3, 4});
  o.marked.fill(false);
  o.marked(0, 1) = o.marked(2, 3) = true;
  o.marked_label = "hatched: did not learn the task";
  const std::string svg = viz::heatmap_grid_svg(panels, {"a", "b"}, o, 2);
  // 2 cells x 2 panels, and the legend's swatch
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:path[@class='marked'])"), 2 * 2 + 1) << svg;
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:g[@class='legend']/s:path[@class='marked'])"), 1);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[.='hatched: did not learn the task'])"), 1);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:style | //@style | //@id)"), 0);  // still no ids
  // the legend line is below every panel: its text's y beyond the lowest cell's bottom
  EXPECT_GT(svg_xpath_number(svg, "number(//s:g[@class='legend']/s:text/@y)"),
            svg_xpath_number(svg, "number(//s:rect[@class='cell'][last()]/@y)") +
                svg_xpath_number(svg, "number(//s:rect[@class='cell'][last()]/@height)"));
  // the hatch of cell (0, 1) of the first panel stays inside that cell
  const double x = svg_xpath_number(svg, "number(//s:rect[@class='cell'][2]/@x)");
  const double w = svg_xpath_number(svg, "number(//s:rect[@class='cell'][2]/@width)");
  const std::string first_hatch = svg.substr(svg.find("class=\"marked\" d=\"M") + 19);
  const double hx = std::stod(first_hatch);
  EXPECT_GE(hx, x - 1e-9);
  EXPECT_LE(hx, x + w + 1e-9);
  // nothing marked: no hatching and no legend, even with a label
  o.marked.fill(false);
  const std::string plain = viz::heatmap_grid_svg(panels, {"a", "b"}, o, 2);
  EXPECT_EQ(svg_xpath_number(plain, "count(//s:path[@class='marked'] | //s:g[@class='legend'])"),
            0);
  // a mark needs its meaning, and the mask the values' shape
  o.marked(1, 1) = true;
  o.marked_label.clear();
  try {
    viz::heatmap_svg(ramp(3, 4), o);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("heatmap_svg: marked has marked cells but marked_label "
                                         "is empty"),
              std::string::npos)
        << e.what();
  }
  o.marked_label = "x";
  try {
    viz::heatmap_svg(ramp(3, 5), o);
    FAIL() << "expected xenc::shape_error";
  } catch (const xenc::shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("heatmap_svg: marked has shape [3, 4], expected [3, 5] "
                                         "like the values, or empty"),
              std::string::npos)
        << e.what();
  }
}

TEST(SvgHeatmap, BadArgumentsNameTheArgument) {
  viz::HeatmapOptions o;
  o.x_ticks = {"a", "b"};
  try {
    viz::heatmap_svg(ramp(2, 3), o);
    FAIL() << "expected xenc::shape_error";
  } catch (const xenc::shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("x_ticks has 2 labels, expected 3"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(viz::heatmap_svg(Tensor2::from_shape({0, 3}), {}), xenc::shape_error);
  EXPECT_THROW(viz::heatmap_grid_svg({ramp(2, 2), ramp(3, 2)}, {}, {}), xenc::shape_error);
  EXPECT_THROW(viz::heatmap_grid_svg({}, {}, {}), xenc::shape_error);
}

// The values printed in the cells: by default rounded to 2 decimals with trailing zeros dropped;
// with annotate_decimals, exactly that many, as a table prints them (xenc-extrapolate's study
// figure prints its accuracies with 1, like its tables). Out of range: an error naming it.
TEST(SvgHeatmap, AnnotationsPrintTheDecimalsAsked) {
  Tensor2 v = {{58.78f, 54.0f, -0.04f}, {0.5f, 0.26f, 99.96f}};
  viz::HeatmapOptions o;
  o.annotate = true;
  const auto count = [](const std::string& svg, const std::string& text) {
    return svg_xpath_number(svg, "count(//s:text[.='" + text + "'])");
  };
  const std::string plain = viz::heatmap_svg(v, o);
  for (const char* text : {"58.78", "54", "-0.04", "0.5", "0.26", "99.96"})
    EXPECT_EQ(count(plain, text), 1) << text;
  o.annotate_decimals = 1;
  const std::string one = viz::heatmap_svg(v, o);
  for (const char* text : {"58.8", "54.0", "0.0", "0.5", "0.3", "100.0"})
    EXPECT_EQ(count(one, text), 1) << text;  // -0.04 rounds to "-0.0": printed "0.0"
  EXPECT_EQ(count(one, "-0.0"), 0);
  o.annotate_decimals = 0;
  EXPECT_EQ(count(viz::heatmap_svg(v, o), "59"), 1);
  o.annotate_decimals = 7;
  try {
    viz::heatmap_svg(v, o);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("heatmap_svg: annotate_decimals is 7, expected -1"),
              std::string::npos)
        << e.what();
  }
}

TEST(SvgLinePlot, OnePolylinePerSeriesAndALegend) {
  viz::LineSeries a{"sin", {0, 1, 2, 3}, {0, 0.84, 0.91, 0.14}};
  viz::LineSeries b{"cos", {0, 1, 2, 3}, {1, 0.54, -0.42, -0.99}};
  viz::LinePlotOptions o;
  o.title = "waves";
  o.x_label = "p";
  o.y_label = "value";
  const std::string svg = viz::line_plot_svg({a, b}, o);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:polyline[@class='series'])"), 2);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[.='sin'] | //s:text[.='cos'])"), 2);
  // 4 points each
  EXPECT_EQ(svg_xpath_number(
                svg,
                "string-length(normalize-space(//s:polyline[1]/@points)) - "
                "string-length(translate(normalize-space(//s:polyline[1]/@points), ' ', '')) + 1"),
            4);
  viz::LineSeries bad{"bad", {0, 1}, {0}};
  EXPECT_THROW(viz::line_plot_svg({bad}, o), xenc::shape_error);
  EXPECT_THROW(viz::line_plot_svg({}, o), xenc::shape_error);
}

TEST(SvgFile, WriteFailureNamesThePath) {
  try {
    viz::write_text_file("/nonexistent-dir/figure.svg", "<svg/>");
    FAIL() << "expected xenc::io_error";
  } catch (const xenc::io_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/figure.svg"), std::string::npos);
  }
}

}  // namespace

// bar_chart_svg: one bar per category, heights proportional to the values (the y axis from 0).
TEST(SvgBarChart, OneBarPerCategoryHeightsInProportion) {
  viz::BarChartOptions o;
  o.title = "softmax";
  o.x_label = "points";
  o.y_label = "students";
  const std::string svg = viz::bar_chart_svg({"0", "0.5", "1", "1.5", "2"}, {2, 0, 0, 1, 4}, o);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:rect[@class='bar'])"), 5);
  const double h0 = svg_xpath_number(svg, "number(//s:rect[@class='bar'][1]/@height)");
  const double h2 = svg_xpath_number(svg, "number(//s:rect[@class='bar'][2]/@height)");
  const double h3 = svg_xpath_number(svg, "number(//s:rect[@class='bar'][4]/@height)");
  const double h4 = svg_xpath_number(svg, "number(//s:rect[@class='bar'][5]/@height)");
  EXPECT_EQ(h2, 0.0);
  EXPECT_NEAR(h0 / h4, 0.5, 1e-3);
  EXPECT_NEAR(h3 / h4, 0.25, 1e-3);
  // bars share one baseline, in the order given, left to right
  const double y0 = svg_xpath_number(svg, "number(//s:rect[@class='bar'][1]/@y)");
  EXPECT_NEAR(y0 + h0, svg_xpath_number(svg, "number(//s:rect[@class='bar'][5]/@y)") + h4, 0.02);
  EXPECT_LT(svg_xpath_number(svg, "number(//s:rect[@class='bar'][1]/@x)"),
            svg_xpath_number(svg, "number(//s:rect[@class='bar'][2]/@x)"));
  // the value above each non-empty bar, and the labels
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[@class='bar-value'])"), 3);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[@class='bar-value'][.='4'])"), 1);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[.='1.5'])"), 1);  // a category label
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[.='students'])"), 1);
  // counts: no tick at a fraction
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[.='0.5' and @text-anchor='end'])"), 0);
}

TEST(SvgBarChart, RefusesMismatchedOrNegative) {
  viz::BarChartOptions o;
  EXPECT_THROW(viz::bar_chart_svg({"a", "b"}, {1}, o), xenc::shape_error);
  EXPECT_THROW(viz::bar_chart_svg({}, {}, o), xenc::shape_error);
  EXPECT_THROW(viz::bar_chart_svg({"a"}, {-1}, o), xenc::shape_error);
  EXPECT_THROW(viz::bar_chart_svg({"a"}, {NAN}, o), xenc::shape_error);
}

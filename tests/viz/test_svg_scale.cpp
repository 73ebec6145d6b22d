// Figures at scale (issue 17, item 6), checked on the parsed SVG with XPath: legends that fit
// or say how many lines they leave out, plots that keep a readable size, y ranges that adapt
// to values near 1 without laying lines on the frame, reference lines without data markers,
// per-panel colour scales, tick labels that do not overlap, and a CJK font fallback.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "support/svg_xpath.hpp"
#include "xenc/text/display_width.hpp"
#include "xenc/viz/svg.hpp"

namespace {

using xenc::Tensor2;
namespace viz = xenc::viz;
using xenc::test::svg_xpath_number;

// The string value of an XPath expression ("" when it does not evaluate).
std::string svg_xpath_string(const std::string& svg, const std::string& expr) {
  xmlDocPtr doc = xmlReadMemory(svg.data(), int(svg.size()), "figure.svg", nullptr,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (!doc) return "";
  xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
  xmlXPathRegisterNs(ctx, BAD_CAST "s", BAD_CAST "http://www.w3.org/2000/svg");
  xmlXPathObjectPtr obj = xmlXPathEvalExpression(BAD_CAST expr.c_str(), ctx);
  std::string out;
  if (obj) {
    xmlChar* s = xmlXPathCastToString(obj);
    out = reinterpret_cast<const char*>(s);
    xmlFree(s);
    xmlXPathFreeObject(obj);
  }
  xmlXPathFreeContext(ctx);
  xmlFreeDoc(doc);
  return out;
}

// The string value of every node `nodes` selects (an attribute path such as "//s:text/@x", or
// elements for their text), in document order; one parse however many nodes.
std::vector<std::string> strings(const std::string& svg, const std::string& nodes) {
  std::vector<std::string> v;
  xmlDocPtr doc =
      xmlReadMemory(svg.data(), int(svg.size()), "figure.svg", nullptr,
                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_HUGE);
  if (!doc) return v;
  xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
  xmlXPathRegisterNs(ctx, BAD_CAST "s", BAD_CAST "http://www.w3.org/2000/svg");
  xmlXPathObjectPtr obj = xmlXPathEvalExpression(BAD_CAST nodes.c_str(), ctx);
  if (obj && obj->nodesetval)
    for (int i = 0; i < obj->nodesetval->nodeNr; ++i) {
      xmlChar* s = xmlNodeGetContent(obj->nodesetval->nodeTab[i]);
      v.emplace_back(s ? reinterpret_cast<const char*>(s) : "");
      xmlFree(s);
    }
  if (obj) xmlXPathFreeObject(obj);
  xmlXPathFreeContext(ctx);
  xmlFreeDoc(doc);
  return v;
}

std::vector<double> numbers(const std::string& svg, const std::string& nodes) {
  std::vector<double> v;
  for (const auto& s : strings(svg, nodes)) v.push_back(std::stod(s));
  return v;
}

// The plot frame of a line plot: the unfilled rect.
struct Frame {
  double x, y, w, h;
};
Frame frame_of(const std::string& svg) {
  const std::string r = "(//s:rect[@fill='none'])[1]";
  return {svg_xpath_number(svg, "number(" + r + "/@x)"),
          svg_xpath_number(svg, "number(" + r + "/@y)"),
          svg_xpath_number(svg, "number(" + r + "/@width)"),
          svg_xpath_number(svg, "number(" + r + "/@height)")};
}

// The word-order figure at 2000 words: one line per word over 4 stages, and the dashed
// sentence line last.
std::vector<viz::LineSeries> many_words(std::size_t n) {
  std::vector<viz::LineSeries> s;
  for (std::size_t i = 0; i <= n; ++i) {
    viz::LineSeries ls;
    ls.label = i < n ? "w" + std::to_string(i) : "sentence (mean-pooled)";
    ls.dashed = i == n;
    for (int st = 0; st < 4; ++st) {
      ls.x.push_back(st);
      ls.y.push_back(1.0 - 1e-4 * double(st) * double(i % 7) / 6.0);
    }
    s.push_back(ls);
  }
  return s;
}

viz::LinePlotOptions stage_axes() {
  viz::LinePlotOptions o;
  o.title = "Cosine between sentence A and B";
  o.x_label = "stage of the forward pass";
  o.y_label = "cosine similarity";
  o.x_tick_labels = {"token embedding", "+ positions", "layer 1", "layer 2"};
  o.markers = true;
  return o;
}

TEST(SvgAtScale, LegendOf2001LinesKeepsTheSummaryAndSaysHowManyAreNotShown) {
  const std::string svg = viz::line_plot_svg(many_words(2000), stage_axes());
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:polyline[@class='series'])"), 2001);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[@class='legend'])"),
            double(viz::kMaxLegendEntries));
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[@class='legend'][.='sentence (mean-pooled)'])"),
            1);
  EXPECT_EQ(svg_xpath_string(svg, "string(//s:text[@class='legend-note'])"),
            std::to_string(2001 - viz::kMaxLegendEntries) + " more not shown");
  // every legend entry lies inside the figure
  const double height = svg_xpath_number(svg, "number(/s:svg/@height)");
  for (double y : numbers(svg, "//s:text[@class='legend' or @class='legend-note']/@y"))
    EXPECT_LT(y, height);
  // the lines in the legend all look different (colour + dash pattern)
  const auto colour = strings(svg, "//s:line[@class='legend-swatch']/@stroke");
  ASSERT_EQ(colour.size(), viz::kMaxLegendEntries);
  std::set<std::string> styles;
  for (std::size_t i = 0; i < colour.size(); ++i)  // solid swatches have no dash attribute
    styles.insert(colour[i] + "|" +
                  svg_xpath_string(svg, "string((//s:line[@class='legend-swatch'])[" +
                                            std::to_string(i + 1) + "]/@stroke-dasharray)"));
  EXPECT_EQ(styles.size(), viz::kMaxLegendEntries);
}

TEST(SvgAtScale, FourteenLongLabelsDoNotSquashThePlot) {
  std::vector<viz::LineSeries> s = many_words(13);
  for (std::size_t i = 0; i + 1 < s.size(); ++i)  // too long for a legend at the side
    s[i].label += " (a word of sentence A)";
  const std::string svg = viz::line_plot_svg(s, stage_axes());
  const Frame f = frame_of(svg);
  EXPECT_GE(f.h, 200.0);  // before: about 60 px, the legend took the rest of 400
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[@class='legend'])"), 14);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[@class='legend-note'])"), 0);
  const double height = svg_xpath_number(svg, "number(/s:svg/@height)");
  for (double y : numbers(svg, "//s:text/@y")) EXPECT_LT(y, height);
  // the legend sits under the plot and uses more than one column
  std::set<double> columns;
  for (double x : numbers(svg, "//s:text[@class='legend']/@x")) columns.insert(x);
  EXPECT_GT(columns.size(), 1u);
}

// xenc-pe-heatmap's pe_lines.svg with 24 dimensions (issue 17: its legend was clipped): the
// labels as that program writes them, "dim 2i (sin, i = ...)"; 20 shown, a note for the other 4,
// and every legend text inside the figure, across and down.
TEST(SvgAtScale, TwentyFourDimensionsKeepTheLegendInsideTheFigure) {
  std::vector<viz::LineSeries> s;
  for (std::size_t d = 0; d < 48; d += 2) {
    viz::LineSeries ls;
    ls.label = "dim " + std::to_string(d) + " (sin, i = " + std::to_string(d / 2) + ")";
    for (std::size_t p = 0; p < 64; ++p) {
      ls.x.push_back(double(p));
      ls.y.push_back(std::sin(double(p) / std::pow(10000.0, double(d) / 48)));
    }
    s.push_back(ls);
  }
  viz::LinePlotOptions o;
  o.title = "PE(p, j) over positions, D = 48";
  o.x_label = "position p";
  o.y_label = "PE(p, j)";
  o.y_min = -1.05;
  o.y_max = 1.05;
  const std::string svg = viz::line_plot_svg(s, o);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[@class='legend'])"),
            double(viz::kMaxLegendEntries));
  EXPECT_EQ(svg_xpath_string(svg, "string(//s:text[@class='legend-note'])"), "4 more not shown");
  const double width = svg_xpath_number(svg, "number(/s:svg/@width)");
  const double height = svg_xpath_number(svg, "number(/s:svg/@height)");
  const auto xs = numbers(svg, "//s:text[@class='legend']/@x");
  const auto labels = strings(svg, "//s:text[@class='legend']");
  ASSERT_EQ(xs.size(), labels.size());
  for (std::size_t i = 0; i < xs.size();
       ++i)  // 0.6 em a column at the legend's 11 px, as viz lays it out
    EXPECT_LE(xs[i] + 0.6 * 11 * double(xenc::display_width(labels[i])), width) << labels[i];
  for (double y : numbers(svg, "//s:text[@class='legend' or @class='legend-note']/@y"))
    EXPECT_LT(y, height);
}

TEST(SvgAtScale, YRangeAdaptsToValuesNearOneAndNoLineLiesOnTheFrame) {
  // rope-like cosines: 0.9995 .. 1.0
  viz::LineSeries a{"rope", {0, 1, 2, 3}, {1.0, 1.0, 0.9997, 0.9995}};
  const std::string svg = viz::line_plot_svg({a}, stage_axes());
  const Frame f = frame_of(svg);
  const auto cy = numbers(svg, "//s:circle/@cy");
  ASSERT_EQ(cy.size(), 4u);
  EXPECT_GT(cy[0], f.y + 1.0);          // the points at 1.0 are below the frame's top edge
  EXPECT_LT(cy[3], f.y + f.h - 1.0);    // the lowest above its bottom edge
  EXPECT_GT(cy[3] - cy[0], 0.5 * f.h);  // and the drop is drawn over most of the height
  // the tick labels are distinct numbers (enough decimals for a step of 0.0001 or less)
  const auto ticks = strings(svg, "//s:text[@class='ytick']");
  ASSERT_GE(ticks.size(), 3u);
  EXPECT_EQ(std::set<std::string>(ticks.begin(), ticks.end()).size(), ticks.size());
  // a range fixed by the caller: lines at its limit stay off the frame too, ticks stay inside
  viz::LinePlotOptions o = stage_axes();
  o.y_min = 0;
  o.y_max = 1;
  viz::LineSeries full{"copy", {0, 1, 2, 3}, {1, 1, 0, 0}};
  const std::string fixed = viz::line_plot_svg({full}, o);
  const Frame g = frame_of(fixed);
  const auto fy = numbers(fixed, "//s:circle/@cy");
  EXPECT_GT(fy[0], g.y + 1.0);
  EXPECT_LT(fy[3], g.y + g.h - 1.0);
  const auto fixed_ticks = strings(fixed, "//s:text[@class='ytick']");
  EXPECT_EQ(fixed_ticks.front(), "0.0");
  EXPECT_EQ(fixed_ticks.back(), "1.0");
}

TEST(SvgAtScale, ReferenceLinesHaveNoMarkersAndAreInTheLegend) {
  viz::LineSeries acc{"rope", {0, 1, 2}, {1.0, 0.9, 0.5}};
  viz::LinePlotOptions o;
  o.x_tick_labels = {"8", "16", "32"};
  o.markers = true;
  o.reference_lines = {{"L_train = 16", 1.0, true}, {"chance (12.5%)", 0.125, false}};
  const std::string svg = viz::line_plot_svg({acc}, o);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:circle)"), 3);  // the data points only
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:line[@class='reference'])"), 2);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:polyline[@class='series'])"), 1);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[@class='legend'])"), 3);
  const Frame f = frame_of(svg);
  // the vertical line spans the frame at x = 16, the horizontal one at y = 0.125 inside it
  const std::string v = "(//s:line[@class='reference'])[1]";
  EXPECT_EQ(svg_xpath_number(svg, "number(" + v + "/@y1)"), f.y);
  EXPECT_EQ(svg_xpath_number(svg, "number(" + v + "/@y2)"), f.y + f.h);
  EXPECT_NEAR(svg_xpath_number(svg, "number(" + v + "/@x1)"), f.x + f.w / 2, 0.01);
  const double hy = svg_xpath_number(svg, "number((//s:line[@class='reference'])[2]/@y1)");
  EXPECT_GT(hy, f.y);
  EXPECT_LT(hy, f.y + f.h);
  o.reference_lines = {{"bad", NAN, true}};
  EXPECT_THROW(viz::line_plot_svg({acc}, o), xenc::shape_error);
}

TEST(SvgAtScale, LastXTickLabelFitsWhenTheLegendIsBelow) {
  viz::LineSeries s{
      "a label far too long to sit beside the plot on the right side", {0, 2000}, {0, 1}};
  const std::string svg = viz::line_plot_svg({s}, {});
  const double width = svg_xpath_number(svg, "number(/s:svg/@width)");
  const auto x = numbers(svg, "//s:text[@class='xtick']/@x");
  const auto label = strings(svg, "//s:text[@class='xtick']");
  ASSERT_FALSE(x.empty());
  EXPECT_EQ(label.back(), "2000");
  // centred on its tick: half of 4 digits at 11 px (0.6 em each) must fit
  EXPECT_LE(x.back() + 0.5 * 4 * 0.6 * 11, width);
}

TEST(SvgAtScale, ManyCategoriesAreThinnedSoLabelsDoNotOverlap) {
  viz::LineSeries s{"acc", {}, {}};
  viz::LinePlotOptions o;
  for (int i = 0; i < 200; ++i) {
    s.x.push_back(i);
    s.y.push_back(0.5);
    o.x_tick_labels.push_back(std::to_string(8 * (i + 1)));
  }
  const std::string svg = viz::line_plot_svg({s}, o);
  const auto x = numbers(svg, "//s:text[@class='xtick']/@x");
  ASSERT_GE(x.size(), 5u);
  EXPECT_LT(x.size(), 200u);
  const bool rotated = svg_xpath_number(svg, "count(//s:text[@class='xtick'][@transform])") > 0;
  // upright: at least the widest label ("1600", 4 x 0.6 em) apart; rotated: a line / cos 45
  const double need = rotated ? 13 / 0.7071 : 4 * 0.6 * 11;
  for (std::size_t i = 1; i < x.size(); ++i) EXPECT_GE(x[i] - x[i - 1], need) << i;
}

TEST(SvgAtScale, HeatmapTickLabelsAt2000PositionsDoNotOverlap) {
  // pe_similarity at 2000 positions shows every 4th: 500 named ticks "0", "4", ..., "1996" on
  // cells of 1 px. One row (for the x axis) and one column (for the y axis) have the same cells
  // as the 500 x 500 figure, without its 250,000 rects.
  std::vector<std::string> names;
  for (std::size_t i = 0; i < 500; ++i) names.push_back(std::to_string(4 * i));
  viz::HeatmapOptions ox;
  ox.x_ticks = names;
  ox.y_ticks = {"0"};
  const std::string svg = viz::heatmap_svg(Tensor2::from_shape({1, 500}), ox);
  const bool rotated = svg_xpath_number(svg, "count(//s:text[@class='xtick'][@transform])") > 0;
  const double need = rotated ? 13 / 0.7071 : 4 * 0.6 * 11;  // "1996" upright, or a line at -45°
  // a rotated label's x is its anchor; the spacing between anchors is the spacing of the ticks
  const auto x = numbers(svg, "//s:text[@class='xtick']/@x");
  ASSERT_GE(x.size(), 5u);
  for (std::size_t i = 1; i < x.size(); ++i) EXPECT_GE(x[i] - x[i - 1], need - 0.01) << i;
  viz::HeatmapOptions oy;
  oy.x_ticks = {"0"};
  oy.y_ticks = names;
  const auto y =
      numbers(viz::heatmap_svg(Tensor2::from_shape({500, 1}), oy), "//s:text[@class='ytick']/@y");
  ASSERT_GE(y.size(), 5u);
  for (std::size_t i = 1; i < y.size(); ++i) EXPECT_GE(y[i] - y[i - 1], 11.0) << i;
}

TEST(SvgAtScale, PerPanelColourScalesWhenOneScaleWouldBlankAPanel) {
  // sinusoidal differences of about 2, rope's about 0.01: under one scale rope's panel is white
  Tensor2 big = Tensor2::from_shape({4, 4}), small = Tensor2::from_shape({4, 4});
  for (std::size_t r = 0; r < 4; ++r)
    for (std::size_t c = 0; c < 4; ++c) {
      big(r, c) = 2.0f * (float(r) - float(c)) / 3.0f;
      small(r, c) = 0.01f * (float(r) - float(c)) / 3.0f;
    }
  viz::HeatmapOptions o;
  const std::string automatic = viz::heatmap_grid_svg({big, small}, {"sinusoidal", "rope"}, o, 1);
  EXPECT_EQ(svg_xpath_number(automatic, "count(//s:rect[@class='colorbar'])"), 2 * 64);
  // rope's panel (cells 17..32) reaches both ends of its own scale: -0.01 blue, +0.01 red
  EXPECT_EQ(svg_xpath_number(automatic,
                             "count((//s:rect[@class='cell'])[position() > 16][@fill='#2166ac'])"),
            1);
  EXPECT_EQ(svg_xpath_number(automatic,
                             "count((//s:rect[@class='cell'])[position() > 16][@fill='#b2182b'])"),
            1);
  // a panel of float rounding (1e-7) keeps the shared scale: white, not a pattern of noise
  Tensor2 noise = small * 1e-5f;
  const std::string three = viz::heatmap_grid_svg({big, small, noise}, {}, o, 1);
  EXPECT_EQ(
      svg_xpath_number(three, "count((//s:rect[@class='cell'])[position() > 32][@fill='#f7f7f7'])"),
      16);
  EXPECT_EQ(
      svg_xpath_number(
          three,
          "count((//s:rect[@class='cell'])[position() > 16][position() <= 16][@fill='#b2182b'])"),
      1);
  o.panel_scale = viz::PanelScale::shared;
  const std::string shared = viz::heatmap_grid_svg({big, small}, {"sinusoidal", "rope"}, o, 1);
  EXPECT_EQ(svg_xpath_number(shared, "count(//s:rect[@class='colorbar'])"), 64);
  EXPECT_EQ(svg_xpath_number(shared,
                             "count((//s:rect[@class='cell'])[position() > 16][@fill='#2166ac'])"),
            0);
  // similar ranges keep one scale; a range fixed by the caller is always shared
  o.panel_scale = viz::PanelScale::automatic;
  EXPECT_EQ(svg_xpath_number(viz::heatmap_grid_svg({big, big}, {}, o, 1),
                             "count(//s:rect[@class='colorbar'])"),
            64);
  o.vmin = -2;
  o.vmax = 2;
  EXPECT_EQ(svg_xpath_number(viz::heatmap_grid_svg({big, small}, {}, o, 1),
                             "count(//s:rect[@class='colorbar'])"),
            64);
  o.panel_scale = viz::PanelScale::per_panel;
  EXPECT_EQ(svg_xpath_number(viz::heatmap_grid_svg({big, big}, {}, o, 2),
                             "count(//s:rect[@class='colorbar'])"),
            2 * 64);
}

TEST(SvgAtScale, EveryTextHasACjkFontFallbackAndWideCharactersCountDouble) {
  viz::LineSeries a{"猫", {0, 1}, {0, 1}}, b{"が好き", {0, 1}, {1, 0}};
  viz::LinePlotOptions o;
  o.title = "猫 chased";
  const std::string svg = viz::line_plot_svg({a, b}, o);
  const double texts = svg_xpath_number(svg, "count(//s:text)");
  EXPECT_GT(texts, 0);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[contains(@font-family, 'Noto Sans CJK')])"),
            texts);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[contains(@font-family, 'sans-serif')])"), texts);
  // the legend beside the plot is as wide as "が好き" at two columns per character:
  // legend text start + 3 × 2 × 0.6 em, plus the 16 px right margin, ≤ figure width
  const double start = svg_xpath_number(svg, "number(//s:text[@class='legend'][.='が好き']/@x)");
  EXPECT_LE(start + 6 * 0.6 * 11 + 16, svg_xpath_number(svg, "number(/s:svg/@width)"));
}

TEST(SvgAtScale, ALongCjkTitleIsCutToTheFigureWidth) {
  std::string title;
  for (int i = 0; i < 120; ++i) title += "猫";  // 240 columns: wider than any figure
  viz::LinePlotOptions o;
  o.title = title;
  const std::string svg = viz::line_plot_svg({viz::LineSeries{"a", {0, 1}, {0, 1}}}, o);
  const std::string shown = svg_xpath_string(svg, "string(//s:text[@font-weight='bold'])");
  ASSERT_GE(shown.size(), 3u);
  EXPECT_EQ(shown.substr(shown.size() - 3), "...");
  EXPECT_EQ(shown.substr(0, 3), "猫");  // cut at whole characters: valid UTF-8 (parsed above)
  // at the smallest title font (11 px), 0.6 em per column, within the 10 px margins
  const double width = svg_xpath_number(svg, "number(/s:svg/@width)");
  EXPECT_LE(double(xenc::display_width(shown)) * 0.6 * 11, width - 20);
  EXPECT_GT(double(xenc::display_width(shown)) * 0.6 * 11,
            width - 20 - 2 * 0.6 * 11);  // as much as fits
}

}  // namespace

// The encoder-layer diagram (xenc/viz/svg.hpp, encoder_layer_diagram_svg): parsed with libxml2,
// every step's box is there once, in the order of TransformerEncoderLayer::forward, every arrow
// carries the shape of its tensor with the given B, T, D, H, F, and bad sizes throw.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/svg_xpath.hpp"
#include "xenc/viz/svg.hpp"

namespace {

namespace viz = xenc::viz;

using xenc::test::svg_xpath_number;  // support/svg_xpath.hpp: libxml2 + XPath, "s" = SVG

double count_text(const std::string& svg, const std::string& text, const std::string& cls = "") {
  const std::string pred = cls.empty() ? "" : "[@class='" + cls + "']";
  return svg_xpath_number(svg, "count(//s:text" + pred + "[.='" + text + "'])");
}

// The y coordinate of the (only) text equal to `text`.
double y_of(const std::string& svg, const std::string& text) {
  return svg_xpath_number(svg, "number(//s:text[.='" + text + "']/@y)");
}

// B = 3, T = 7, D = 12, H = 4 (Dh = 3), F = 20: every size differs, so a swapped one shows.
viz::EncoderLayerDiagramOptions sizes(bool norm_first) {
  viz::EncoderLayerDiagramOptions o;
  o.batch = 3;
  o.seq_len = 7;
  o.d_model = 12;
  o.nhead = 4;
  o.dim_feedforward = 20;
  o.norm_first = norm_first;
  return o;
}

const std::vector<std::string> kBoxes = {"x (input)",
                                         "in_proj → Q, K, V; split heads",
                                         "softmax(Q·Kᵀ / √Dh)",
                                         "weights · V",
                                         "merge heads; out_proj",
                                         "norm1 (LayerNorm)",
                                         "linear1 (D → F)",
                                         "ReLU",
                                         "linear2 (F → D)",
                                         "norm2 (LayerNorm)",
                                         "y (output)"};

void expect_boxes_arrows_and_shapes(const std::string& svg) {
  ASSERT_FALSE(std::isnan(svg_xpath_number(svg, "count(//*)"))) << "not well-formed XML";
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:rect[@class='box'])"), 11);
  for (const auto& box : kBoxes) EXPECT_EQ(count_text(svg, box), 1) << box;
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:circle[@class='add'])"), 2);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:polyline[@class='residual'])"), 2);
  // 13 steps (11 boxes, 2 additions) -> 12 arrows, each labelled; 2 labelled residuals.
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:line[@class='arrow'])"), 12);
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:text[@class='shape'])"), 14);
  // [B, T, D]: x, out_proj, both additions, both norms, linear2 (7 arrows) + 2 residuals
  EXPECT_EQ(count_text(svg, "[B, T, D] = [3, 7, 12]", "shape"), 9);
  EXPECT_EQ(count_text(svg, "[B, T, F] = [3, 7, 20]", "shape"), 2);  // linear1, activation
  EXPECT_EQ(count_text(svg, "Q, K, V: [B, H, T, Dh] = [3, 4, 7, 3]", "shape"), 1);
  EXPECT_EQ(count_text(svg, "[B, H, T, T] = [3, 4, 7, 7]", "shape"), 1);       // attention weights
  EXPECT_EQ(count_text(svg, "[B, H, T, Dh] = [3, 4, 7, 3]", "shape"), 1);      // weights · V
  EXPECT_EQ(svg_xpath_number(svg, "count(//s:style | //@style | //@id)"), 0);  // no CSS, no ids
  EXPECT_LE(svg_xpath_number(svg, "number(/s:svg/@width)"), 700);              // fits a page
}

TEST(SvgEncoderDiagram, PostNormHasEveryBoxAndShape) {
  const std::string svg = viz::encoder_layer_diagram_svg(sizes(false));
  expect_boxes_arrows_and_shapes(svg);
  EXPECT_EQ(count_text(svg, "Post-norm encoder layer"), 1);
  // post-norm: attention first, then norm1; the feed-forward, then norm2 last before y
  EXPECT_LT(y_of(svg, "x (input)"), y_of(svg, "in_proj → Q, K, V; split heads"));
  EXPECT_LT(y_of(svg, "merge heads; out_proj"), y_of(svg, "norm1 (LayerNorm)"));
  EXPECT_LT(y_of(svg, "norm1 (LayerNorm)"), y_of(svg, "linear1 (D → F)"));
  EXPECT_LT(y_of(svg, "linear2 (F → D)"), y_of(svg, "norm2 (LayerNorm)"));
  EXPECT_LT(y_of(svg, "norm2 (LayerNorm)"), y_of(svg, "y (output)"));
}

TEST(SvgEncoderDiagram, PreNormPutsTheNormsFirst) {
  const std::string svg = viz::encoder_layer_diagram_svg(sizes(true));
  expect_boxes_arrows_and_shapes(svg);
  EXPECT_EQ(count_text(svg, "Pre-norm encoder layer"), 1);
  EXPECT_LT(y_of(svg, "x (input)"), y_of(svg, "norm1 (LayerNorm)"));
  EXPECT_LT(y_of(svg, "norm1 (LayerNorm)"), y_of(svg, "in_proj → Q, K, V; split heads"));
  EXPECT_LT(y_of(svg, "merge heads; out_proj"), y_of(svg, "norm2 (LayerNorm)"));
  EXPECT_LT(y_of(svg, "norm2 (LayerNorm)"), y_of(svg, "linear1 (D → F)"));
  EXPECT_LT(y_of(svg, "linear2 (F → D)"), y_of(svg, "y (output)"));
}

TEST(SvgEncoderDiagram, ActivationNameAndTitleAreShownEscaped) {
  viz::EncoderLayerDiagramOptions o = sizes(false);
  o.activation = "GELU";
  o.title = "layer <1> & co";
  const std::string svg = viz::encoder_layer_diagram_svg(o);
  EXPECT_EQ(count_text(svg, "GELU"), 1);
  EXPECT_EQ(count_text(svg, "ReLU"), 0);
  EXPECT_EQ(count_text(svg, "layer <1> & co"), 1);
}

TEST(SvgEncoderDiagram, BadSizesThrowNamingTheRule) {
  viz::EncoderLayerDiagramOptions o = sizes(false);
  o.nhead = 5;  // 12 % 5 != 0
  try {
    viz::encoder_layer_diagram_svg(o);
    FAIL() << "expected config_error";
  } catch (const xenc::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("d_model (12) must be divisible by nhead (5)"),
              std::string::npos)
        << e.what();
  }
  o = sizes(false);
  o.seq_len = 0;
  EXPECT_THROW(viz::encoder_layer_diagram_svg(o), xenc::config_error);
}

}  // namespace

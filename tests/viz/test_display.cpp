// Display types for notebooks: HTML / text tables, SVG bundles, and show()'s text fallback.
#include "xenc/viz/display.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

namespace {

using xenc::Tensor1;
using xenc::Tensor2;
namespace viz = xenc::viz;

// 1. A hand example: every cell written out.
TEST(Display, TableAsHtmlHandExample) {
  Tensor2 m = {{1.0f, -0.5f}, {0.25f, 2.0f}};
  viz::Table t = viz::table(m, {"a", "b"}, {"x", "y<z"}, "caption & co", 2);
  const std::string expected =
      "<table style=\"border-collapse: collapse; font-family: monospace\">\n"
      "<caption>caption &amp; co</caption>\n"
      "<tr><th></th><th style=\"text-align: right\">x</th><th style=\"text-align: "
      "right\">y&lt;z</th></tr>\n"
      "<tr><th style=\"text-align: left\">a</th><td style=\"text-align: right\">1.00</td>"
      "<td style=\"text-align: right\">-0.50</td></tr>\n"
      "<tr><th style=\"text-align: left\">b</th><td style=\"text-align: right\">0.25</td>"
      "<td style=\"text-align: right\">2.00</td></tr>\n"
      "</table>";
  EXPECT_EQ(viz::to_html(t), expected);
}

TEST(Display, TableAsTextIsAlignedAndNumbered) {
  // Columns right-aligned to their widest cell; rows and columns numbered without labels.
  Tensor2 m = {{1.0f, -10.0f}, {0.0f, 2.5f}};
  EXPECT_EQ(viz::to_text(viz::table(m, {}, {}, "", 3)),
            "       0        1\n"
            "0  1.000  -10.000\n"
            "1  0.000    2.500");
}

TEST(Display, TableAsTextAlignsAccentedAndWideLabelsByColumns) {
  // "CAFÉ" is 5 bytes but 4 columns, "猫" 3 bytes but 2 columns: every value column still ends
  // at the same column (a byte count would shift the CAFÉ row left by one, the 猫 row by one)
  Tensor2 m = {{1.0f}, {2.0f}, {3.0f}};
  const viz::Table t = viz::table(m, {"CAFÉ", "猫", "cat"}, {"x"}, "", 1);
  EXPECT_EQ(viz::to_text(t),
            "        x\n"
            "CAFÉ  1.0\n"
            "猫    2.0\n"
            "cat   3.0");
}

TEST(Display, NegativeZeroIsPrintedAsZero) {
  Tensor1 v = {-0.00001f, -0.0f};
  EXPECT_EQ(viz::to_text(viz::table(v, {"a", "b"}, "", 2)), "      a     b\n0  0.00  0.00");
}

TEST(Display, MimeBundles) {
  Tensor2 m = {{1.0f}};
  nlohmann::json table_bundle = mime_bundle_repr(viz::table(m));  // found by ADL
  EXPECT_TRUE(table_bundle.contains("text/html"));
  // row-label column 1 wide, then 2 spaces, then "0" right-aligned in the 6-wide "1.0000" column
  EXPECT_EQ(table_bundle["text/plain"], "        0\n0  1.0000");

  viz::Svg figure{"<svg xmlns=\"http://www.w3.org/2000/svg\"/>", "a figure"};
  nlohmann::json svg_bundle = mime_bundle_repr(figure);
  EXPECT_EQ(svg_bundle["image/svg+xml"], figure.text);
  EXPECT_EQ(svg_bundle["text/plain"], "a figure");
  EXPECT_EQ(mime_bundle_repr(viz::Svg{"<svg/>", ""})["text/plain"], "<SVG figure>");
  // An XML declaration in front is dropped (inline SVG in HTML starts at <svg>).
  EXPECT_EQ(mime_bundle_repr(viz::Svg{"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg/>",
                                      ""})["image/svg+xml"],
            "<svg/>");
}

TEST(Display, PrintFallbackAndCapture) {
  nlohmann::json bundle = {{"text/plain", "plain"}, {"text/html", "<b>html</b>"}};
  ::unsetenv("XENC_MIME_CAPTURE");
  std::ostringstream plain;
  viz::print_mime_bundle(bundle, plain);
  EXPECT_EQ(plain.str(), "plain\n");

  // Under the notebook runner: the prefix, then the whole bundle as one line of JSON.
  ::setenv("XENC_MIME_CAPTURE", "1", 1);
  std::ostringstream captured;
  viz::print_mime_bundle(bundle, captured);
  ::unsetenv("XENC_MIME_CAPTURE");
  const std::string prefix = viz::kMimeCapturePrefix;
  ASSERT_EQ(captured.str().rfind(prefix, 0), 0u) << captured.str();
  ASSERT_EQ(captured.str().back(), '\n');
  std::string json_text = captured.str().substr(prefix.size());
  json_text.pop_back();
  EXPECT_EQ(json_text.find('\n'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(json_text), bundle);
}

TEST(Display, LabelCountMismatchThrowsWithShapes) {
  Tensor2 m = Tensor2::from_shape({2, 3});
  try {
    viz::table(m, {"only one"});
    FAIL() << "expected xenc::shape_error";
  } catch (const xenc::shape_error& e) {
    EXPECT_STREQ(e.what(),
                 "viz::table: row_labels has 1 labels, expected one per row (2) for values of "
                 "shape [2, 3]");
  }
  EXPECT_THROW(viz::table(m, {}, {"a", "b"}), xenc::shape_error);
  EXPECT_THROW(viz::table(m, {}, {}, "", 12), xenc::config_error);
}

}  // namespace

// xenc-pe-properties' report (apps/pe_properties/report.hpp) on hand-made Results: each section's
// text and the figures' titles, with the numbers worked out from the formulas (cos 1, sin 1, ...),
// not from a run of the program.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "pe_properties/report.hpp"

namespace {

using namespace pe_properties;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// D = 2 * n frequencies w_i given, R_k from cos(k w_i), sin(k w_i); T positions
Result hand_made(std::size_t d_model, std::size_t positions, std::size_t shift) {
  Result r;
  r.options.d_model = d_model;
  r.options.positions = positions;
  r.options.shift = shift;
  r.omega = xenc::Tensor1::from_shape({d_model / 2});
  r.rk = xenc::Tensor2::from_shape({d_model, d_model});
  r.rk.fill(0);
  for (std::size_t i = 0; i < d_model / 2; ++i) {
    const double w = std::pow(10000.0, -2.0 * double(i) / double(d_model));
    r.omega(i) = float(w);
    const std::size_t j = 2 * i;
    r.rk(j, j) = r.rk(j + 1, j + 1) = float(std::cos(double(shift) * w));
    r.rk(j, j + 1) = float(std::sin(double(shift) * w));
    r.rk(j + 1, j) = -r.rk(j, j + 1);
  }
  r.similarity = xt::xtensor<double, 2>::from_shape({positions, positions});
  r.similarity.fill(0.5);
  return r;
}

TEST(PePropertiesReport, HeatmapStrideKeepsASideWithin500Cells) {
  EXPECT_EQ(heatmap_stride(50), 1u);
  EXPECT_EQ(heatmap_stride(500), 1u);
  EXPECT_EQ(heatmap_stride(501), 2u);
  EXPECT_EQ(heatmap_stride(4000), 8u);
}

TEST(PePropertiesReport, OffsetSimilarityIsTheSumOfCosines) {
  // D = 4: w_0 = 1, w_1 = 10000^(-1/2) = 0.01
  EXPECT_NEAR(offset_similarity(0, 4), 2.0, 1e-12);
  EXPECT_NEAR(offset_similarity(3, 4), std::cos(3.0) + std::cos(0.03), 1e-12);
}

TEST(PePropertiesReport, RotationTextShowsTheBlocksOfRk) {
  Result r = hand_made(4, 50, 1);
  r.rotation_error = 2.5e-7;
  const std::string t = rotation_text(r);
  EXPECT_TRUE(has(t, "1. A shift by k = 1 is a rotation: PE(p + k) = R_k . PE(p), D = 4\n")) << t;
  // block 0: w = 1, [[cos 1, sin 1], [-sin 1, cos 1]]
  EXPECT_TRUE(has(t, "i =   0  w_i = 1.000000   [[ 0.540302  0.841471]  [-0.841471  0.540302]]"))
      << t;
  EXPECT_TRUE(has(t, "i =   1  w_i = 0.010000")) << t;
  EXPECT_TRUE(has(t, "over p = 0..49 and all 4 dims: 2.50e-07\n")) << t;
  EXPECT_FALSE(has(t, "more blocks")) << t;
}

TEST(PePropertiesReport, RotationTextElidesTheMiddleBlocksOfALargeD) {
  const std::string t = rotation_text(hand_made(24, 50, 2));  // 12 blocks: 0-3, 8-11 shown
  EXPECT_TRUE(has(t, "   ... (4 more blocks)\n")) << t;
  EXPECT_TRUE(has(t, "i =   3 ")) << t;
  EXPECT_FALSE(has(t, "i =   4 ")) << t;
  EXPECT_FALSE(has(t, "i =   7 ")) << t;
  EXPECT_TRUE(has(t, "i =   8 ")) << t;
  EXPECT_TRUE(has(t, "i =  11 ")) << t;
}

TEST(PePropertiesReport, SimilarityTextShowsFAtTheOffsetsBelowT) {
  Result r = hand_made(2, 3, 1);  // D = 2: f(d) = cos d
  r.offset_error = 1e-9;
  const std::string t = similarity_text(r);
  EXPECT_TRUE(has(t, "over all 3 x 3 pairs: 1.00e-09\n")) << t;
  EXPECT_TRUE(has(t, "f(0) = D/2 = 1.0000 (every pair")) << t;
  EXPECT_TRUE(has(t, " f(1) = 0.5403 f(2) = -0.4161\n")) << t;  // cos 1, cos 2
  EXPECT_FALSE(has(t, "f(5)")) << t;                            // 5 >= T
}

TEST(PePropertiesReport, DistanceTextNamesTheClosestPairAndTheRowLength) {
  Result r = hand_made(8, 10, 1);
  r.adjacent = 0.5;
  r.closest = "0.500000, for every pair with q - p = 1";
  const std::string t = distance_text(r);
  EXPECT_TRUE(has(t, "over p != q < 10\n   is 0.500000, for every pair with q - p = 1\n")) << t;
  EXPECT_TRUE(has(t, "= 0.500000 for every p")) << t;
  EXPECT_TRUE(has(t, "sqrt(D/2) = 2.0000\n")) << t;  // D = 8
}

TEST(PePropertiesReport, WroteTextSaysWhenTheHeatmapSkipsPositions) {
  Result small = hand_made(2, 50, 1);
  small.options.svg = "a.svg";
  small.options.offset_svg = "b.svg";
  EXPECT_EQ(wrote_text(small), "\nWrote a.svg (50 x 50 similarity matrix) and b.svg\n");
  Result large = hand_made(2, 1000, 1);
  const std::string t = wrote_text(large);
  // every 2nd position: 500 x 500 cells; 75 bytes x 1000² = 71.5 MiB, printed as 72
  EXPECT_TRUE(has(t, "every 2nd position (500 x 500 of the 1000 x 1000 pairs)")) << t;
  EXPECT_TRUE(has(t, "about 72 MiB")) << t;
  EXPECT_TRUE(has(t, "(500 x 500 similarity matrix)")) << t;
  EXPECT_TRUE(has(heatmap_svg(large), ", every 2nd position")) << "title";
  EXPECT_FALSE(has(heatmap_svg(small), ", every ")) << "title";
}

}  // namespace

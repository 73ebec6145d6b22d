// xenc-pe-properties' closest-pair sentence on hand-made distances
// (apps/pe_properties/closest.hpp): a tie broken by float rounding is reported as a tie
// (issue #17: "first found at p = 40, q = 41" was rounding noise), a real minimum by its pair.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "pe_properties/closest.hpp"

namespace {
bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}
}  // namespace

// 50 positions, distance = |p - q| except that rounding makes the adjacent pairs differ by up
// to 1e-7, the smallest at p = 40: every adjacent pair ties.
TEST(PePropertiesClosest, ATieBrokenByRoundingIsATie) {
  auto dist = [](std::size_t p, std::size_t q) {
    const double d = double(q - p);
    if (q - p != 1) return d;
    return p == 40 ? d - 1e-7 : d + 1e-7 * double(p % 3) / 3.0;
  };
  const std::string t = pe_properties::closest_pairs_text(50, dist, 1.0);
  EXPECT_EQ(t, "1.000000, for every pair with q - p = 1 (49 pairs, equal up to float rounding)");
  EXPECT_FALSE(has(t, "p = 40")) << t;
}

// One pair clearly closer than the rest (by far more than the noise): it is named.
TEST(PePropertiesClosest, ARealMinimumIsNamed) {
  auto dist = [](std::size_t p, std::size_t q) { return p == 3 && q == 9 ? 0.5 : double(q - p); };
  EXPECT_EQ(pe_properties::closest_pairs_text(20, dist, 1.0),
            "0.500000 (first found at p = 3, q = 9; 1 pair within float rounding of it)");
}

// Degenerate: two positions, one pair.
TEST(PePropertiesClosest, TwoPositions) {
  auto dist = [](std::size_t, std::size_t) { return 1.5; };
  EXPECT_EQ(pe_properties::closest_pairs_text(2, dist, 1.5),
            "1.500000 (first found at p = 0, q = 1; 1 pair within float rounding of it)");
}

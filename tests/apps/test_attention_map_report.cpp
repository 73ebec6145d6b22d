// xenc-attention-map's report (apps/attention_map/report.hpp) on a hand-made Run: two tokens, one
// layer, one head, weights written by hand; the JSON in bertviz's layout and the text table.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "attention_map/report.hpp"

namespace {

attention_map::Run hand_made() {
  attention_map::Run r;
  r.sentence = "cat sat";
  r.position = "rope";
  r.tokens = {"cat", "sat"};
  r.d_model = 4;
  r.heads = 1;
  r.layers = 1;
  r.seed = 7;
  xenc::Tensor4 w = xenc::Tensor4::from_shape({1, 1, 2, 2});
  w(0, 0, 0, 0) = 0.25f;  // query "cat": a quarter on itself, the rest on "sat"
  w(0, 0, 0, 1) = 0.75f;
  w(0, 0, 1, 0) = 1.0f;  // query "sat": all on "cat"
  w(0, 0, 1, 1) = 0.0f;
  r.attention = {w};
  return r;
}

TEST(AttentionMapReport, ColumnWidthIsTheLongestTokenPlusTwoAtLeastSix) {
  EXPECT_EQ(attention_map::column_width({"a", "bb"}), 6u);
  EXPECT_EQ(attention_map::column_width({"antidisestablishment"}), 22u);
}

TEST(AttentionMapReport, JsonHasBertvizLayout) {
  const auto j = nlohmann::json::parse(attention_map::to_json(hand_made()));
  EXPECT_EQ(j.at("tokens"), (nlohmann::json{"cat", "sat"}));
  // attention[layer][batch][head][query][key]
  EXPECT_EQ(j.at("attention").size(), 1u);
  EXPECT_DOUBLE_EQ(j["attention"][0][0][0][0][1].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(j["attention"][0][0][0][1][0].get<double>(), 1.0);
  EXPECT_EQ(j.at("config").at("position"), "rope");
  EXPECT_EQ(j.at("config").at("seed"), 7);
  EXPECT_EQ(j.at("config").at("weights"), "");
}

TEST(AttentionMapReport, TableHasARowPerQueryAndItsStrongestKey) {
  const std::string t = attention_map::table_text(hand_made());
  EXPECT_NE(t.find("Sentence: \"cat sat\" (2 tokens); random encoder D = 4, 1 heads, 1 layers, "
                   "rope positions, seed 7\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("\nLayer 1, head 1\n"), std::string::npos) << t;
  // width 6: "  cat   " then "%6.3f" per key
  EXPECT_NE(t.find("  cat    0.250 0.750   -> sat\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  sat    1.000 0.000   -> cat\n"), std::string::npos) << t;
}

}  // namespace

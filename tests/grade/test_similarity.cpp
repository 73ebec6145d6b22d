// xenc/grade/similarity.hpp: the tokenizer, k-gram hashes and winnowing by hand, then pairs of
// real softmax submissions (tests/grade/similarity/): an identical file, a renamed and reformatted
// copy, two solutions written independently, the stub itself; then the error messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <xenc/core/error.hpp>
#include <xenc/grade/similarity.hpp>

#include "support/build_path.hpp"

namespace {

using xenc::grade::CodeToken;
using xenc::grade::Fingerprint;
using xenc::grade::Region;
using xenc::grade::SimilarityOptions;
using xenc::grade::SimilarPair;
using xenc::grade::Submission;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string fixture(const std::string& name) {
  return read(std::string(XENC_SIMILARITY_DIR) + "/" + name);
}

// The stub the teacher hands out for softmax (the template's file).
std::string softmax_stub() {
  return read(std::string(XENC_TEMPLATE_DIR) + "/exercises/softmax.cpp");
}

std::vector<std::string> texts(const std::vector<CodeToken>& tokens) {
  std::vector<std::string> out;
  for (const CodeToken& t : tokens) out.push_back(t.text);
  return out;
}

// The expected message fragment is in e.what().
template <class F>
void expect_config_error(F f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one saying \"" << fragment << "\"";
  } catch (const xenc::config_error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// ---- 1. tokens, hashes, winnowing by hand ------------------------------------------------------

TEST(Similarity, TokenizerDropsCommentsWhitespaceDirectivesAndNormalisesNamesAndLiterals) {
  const std::string source =
      "#include <cmath>\n"
      "int total = count+1; // a note\n"
      "/* block */ x = 'a' + \"s\\\"\" + 0x1F'FF + 1.5e-3f + R\"(raw\")\";\n"
      "p->q >>= std::c;";
  const std::vector<CodeToken> tokens = xenc::grade::tokenize_code(source);
  // int ID = ID + NUM ;   ID = CHR + STR + NUM + NUM + STR ;   ID -> ID >>= ID :: ID ;
  const std::vector<std::string> expected = {
      "int", "ID",  "=", "ID",  "+", "NUM", ";",  "ID", "=",   "CHR", "+",  "STR", "+", "NUM",
      "+",   "NUM", "+", "STR", ";", "ID",  "->", "ID", ">>=", "ID",  "::", "ID",  ";"};
  EXPECT_EQ(texts(tokens), expected);
  // offsets point at the source text: token 1 is `total`, token 11 the string "s\""
  EXPECT_EQ(source.substr(tokens[1].offset, tokens[1].length), "total");
  EXPECT_EQ(source.substr(tokens[11].offset, tokens[11].length), "\"s\\\"\"");
  EXPECT_EQ(source.substr(tokens[13].offset, tokens[13].length), "0x1F'FF");
  EXPECT_EQ(source.substr(tokens[17].offset, tokens[17].length), "R\"(raw\")\"");
}

TEST(Similarity, BrokenCodeIsTokenizedToTheEndWithoutAnError) {
  // an unterminated block comment runs to the end of the file; an unterminated string to the end
  // of its line (so the next line's directive is still one)
  const std::vector<std::string> comment = {"int", "ID", ";"};
  EXPECT_EQ(texts(xenc::grade::tokenize_code("int x; /* never closed int y;")), comment);
  const std::vector<std::string> string = {"ID", "=", "STR", "ID", ";"};
  EXPECT_EQ(texts(xenc::grade::tokenize_code("s = \"open\n#include <x>\nz;")), string);
}

TEST(Similarity, RenamingAndReformattingLeaveTheTokensUnchanged) {
  const std::string a = "float s = 0; for (int i = 0; i < n; ++i) s += x[i];";
  const std::string b =
      "// sum\nfloat   total=0 ;\nfor(int k=0;k<len;++k)\n{ /* add */ }";  // not the same
  const std::string c =
      "float total = 0.0;\nfor (int k = 0;\n     k < len;\n     ++k)\n"
      "  total += values[k];  // add them up\n";
  EXPECT_EQ(texts(xenc::grade::tokenize_code(a)), texts(xenc::grade::tokenize_code(c)));
  EXPECT_NE(texts(xenc::grade::tokenize_code(a)), texts(xenc::grade::tokenize_code(b)));
}

TEST(Similarity, KgramHashesAreFnv1aOfTheTokenTexts) {
  // FNV-1a 64 over each token's bytes followed by a 0 byte; the values are Python's:
  //   def fnv(bs): h = 14695981039346656037
  //       for b in bs: h = ((h ^ b) * 1099511628211) % 2**64
  //   fnv(b'ID\x00') = 4691087361374949056, fnv(b'ID\x00(\x00') = 16754959162101603112
  const auto tokens = xenc::grade::tokenize_code("x ( y (");  // ID ( ID (
  const std::vector<std::uint64_t> k1 = xenc::grade::kgram_hashes(tokens, 1);
  ASSERT_EQ(k1.size(), 4u);
  EXPECT_EQ(k1[0], 4691087361374949056ull);
  EXPECT_EQ(k1[2], 4691087361374949056ull);
  const std::vector<std::uint64_t> k2 = xenc::grade::kgram_hashes(tokens, 2);
  ASSERT_EQ(k2.size(), 3u);  // n - k + 1
  EXPECT_EQ(k2[0], 16754959162101603112ull);
  EXPECT_EQ(k2[2], 16754959162101603112ull);                  // the same 2-gram "ID (" again
  EXPECT_NE(k2[1], k2[0]);                                    // "( ID"
  EXPECT_TRUE(xenc::grade::kgram_hashes(tokens, 5).empty());  // fewer than k tokens
}

TEST(Similarity, WinnowingPicksTheRightmostMinimumOfEachWindowAsInThePaper) {
  // Schleimer, Wilkerson & Aiken (2003), figure 2: these hashes, windows of 4.
  //   position: 0  1  2  3  4  5  6  7  8 9  10 11 12 13 14 15 16
  //   hash:     77 74 42 17 98 50 17 98 8 88 67 39 77 74 42 17 98
  // By the definition (each window's minimum, the rightmost of equals, a position once):
  //   windows 0-2 ([77 74 42 17], [74 42 17 98], [42 17 98 50]): 17 at 3
  //   window 3 [17 98 50 17]: two 17s, the rightmost, at 6; window 4 [98 50 17 98]: 17 at 6
  //   windows 5-8 (from [50 17 98 8] to [8 88 67 39]): 8 at 8
  //   windows 9-11 ([88 67 39 77], [67 39 77 74], [39 77 74 42]): 39 at 11
  //   windows 12-13 ([77 74 42 17], [74 42 17 98]): 17 at 15
  // The paper's (f)-(g): 17 17 8 39 17, at [3, 6, 8, 11, 15].
  const std::vector<std::uint64_t> hashes = {77, 74, 42, 17, 98, 50, 17, 98, 8,
                                             88, 67, 39, 77, 74, 42, 17, 98};
  const std::vector<Fingerprint> expected = {{17, 3}, {17, 6}, {8, 8}, {39, 11}, {17, 15}};
  EXPECT_EQ(xenc::grade::winnow(hashes, 4), expected);
  // ties go to the rightmost: [2 1 1] -> the 1 at 2, [1 1 3] -> the 1 at 2 again (the leftmost
  // rule would give 1 at 1, then 1 at 2)
  const std::vector<Fingerprint> rightmost = {{1, 2}};
  EXPECT_EQ(xenc::grade::winnow({2, 1, 1, 3}, 3), rightmost);
  // w = 1: every hash is its own window; fewer hashes than w: one window, its minimum
  const std::vector<Fingerprint> every = {{5, 0}, {3, 1}, {9, 2}};
  EXPECT_EQ(xenc::grade::winnow({5, 3, 9}, 1), every);
  const std::vector<Fingerprint> one = {{3, 1}};
  EXPECT_EQ(xenc::grade::winnow({5, 3, 9}, 8), one);
  EXPECT_TRUE(xenc::grade::winnow({}, 4).empty());
}

// ---- 2. pairs of real submissions ---------------------------------------------------------------

TEST(Similarity, IdenticalFilesOverlapCompletely) {
  const std::string code = fixture("softmax_original.cpp");
  const std::vector<SimilarPair> pairs =
      xenc::grade::similar_pairs({{"bob", code}, {"alice", code}}, softmax_stub());
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].a, "alice");  // a < b
  EXPECT_EQ(pairs[0].b, "bob");
  EXPECT_EQ(pairs[0].overlap_a, 1.0);
  EXPECT_EQ(pairs[0].overlap_b, 1.0);
  EXPECT_EQ(pairs[0].shared, pairs[0].fingerprints_a);
  EXPECT_GT(pairs[0].shared, 20u);
  // without a stub, the matched region is the whole file, from its first token to its last
  const std::vector<SimilarPair> bare = xenc::grade::similar_pairs({{"a", code}, {"b", code}}, "");
  ASSERT_EQ(bare.size(), 1u);
  const auto tokens = xenc::grade::tokenize_code(code);
  ASSERT_EQ(bare[0].regions_a.size(), 1u);
  EXPECT_EQ(bare[0].regions_a[0].begin, tokens.front().offset);
  EXPECT_EQ(bare[0].regions_a[0].end, tokens.back().offset + tokens.back().length);
}

TEST(Similarity, ARenamedReformattedCopyIsFlagged) {
  // the copy renames every variable, moves braces, changes the comments and the includes' order,
  // and turns one double into a float
  const std::string original = fixture("softmax_original.cpp");
  const std::string copy = fixture("softmax_renamed_copy.cpp");
  const std::vector<SimilarPair> pairs =
      xenc::grade::similar_pairs({{"ann", original}, {"ben", copy}}, softmax_stub());
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_GE(pairs[0].overlap_a, 0.8);
  EXPECT_GE(pairs[0].overlap_b, 0.8);
  EXPECT_LT(pairs[0].overlap_a, 1.0);  // the float: some fingerprints differ
  // the highlighted code in ben's file includes his renamed loop over the maximum
  const std::string line = "biggest = std::max(biggest, input(i, j));";
  const std::size_t at = copy.find(line);
  ASSERT_NE(at, std::string::npos);
  bool inside = false;
  for (const Region& r : pairs[0].regions_b) inside |= r.begin <= at && at + line.size() <= r.end;
  EXPECT_TRUE(inside) << "ben's line at byte " << at << " is not highlighted";
}

TEST(Similarity, TwoIndependentSolutionsAreNotFlagged) {
  // three correct softmax solutions written independently: loops over indices, the standard
  // algorithms over row pointers, xtensor expressions
  const std::vector<Submission> class_ = {{"loops", fixture("softmax_original.cpp")},
                                          {"algorithms", fixture("softmax_independent_loops.cpp")},
                                          {"xtensor", fixture("softmax_independent_xtensor.cpp")}};
  EXPECT_TRUE(xenc::grade::similar_pairs(class_, softmax_stub()).empty());
  // every overlap, however small (threshold 1%, one shared fingerprint), stays under 10%
  SimilarityOptions any;
  any.threshold = 0.01;
  any.min_shared = 1;
  for (const SimilarPair& p : xenc::grade::similar_pairs(class_, softmax_stub(), any)) {
    EXPECT_LT(p.overlap_a, 0.1) << p.a << " / " << p.b;
    EXPECT_LT(p.overlap_b, 0.1) << p.a << " / " << p.b;
  }
}

TEST(Similarity, TheStubIsRemoved) {
  const std::string stub = softmax_stub();
  const std::string solution = fixture("softmax_original.cpp");
  // two students who handed in the stub unchanged, and one solution: nothing in common remains
  EXPECT_TRUE(
      xenc::grade::similar_pairs({{"a", stub}, {"b", stub}, {"c", solution}}, stub).empty());
  // without removing it, the two stubs would be a pair (overlap 1)
  SimilarityOptions few;
  few.min_shared = 1;
  const std::vector<SimilarPair> kept =
      xenc::grade::similar_pairs({{"a", stub}, {"b", stub}}, "", few);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].overlap_a, 1.0);
  // a handed-out file as long as a solution: copies of it, renamed or not, are not flagged
  const std::vector<Submission> around = {
      {"a", solution}, {"b", solution}, {"c", fixture("softmax_renamed_copy.cpp")}};
  EXPECT_TRUE(xenc::grade::similar_pairs(around, solution).empty());
}

TEST(Similarity, CodeMostOfTheClassSharesIsIgnored) {
  // eleven students hand in the same solution (more than max_common = 10), two others another
  const std::string everyone = fixture("softmax_original.cpp");
  const std::string two = fixture("softmax_independent_loops.cpp");
  std::vector<Submission> class_ = {{"p", two}, {"q", two}};
  for (int i = 0; i < 11; ++i) class_.push_back({"s" + std::to_string(i), everyone});
  const std::vector<SimilarPair> pairs = xenc::grade::similar_pairs(class_, softmax_stub());
  ASSERT_EQ(pairs.size(), 1u);  // the eleven's fingerprints are all common, so ignored
  EXPECT_EQ(pairs[0].a, "p");
  EXPECT_EQ(pairs[0].b, "q");
  EXPECT_EQ(pairs[0].overlap_a, 1.0);
  // no limit: every pair of the eleven too, 11 * 10 / 2 = 55 of them
  SimilarityOptions unlimited;
  unlimited.max_common = 0;
  EXPECT_EQ(xenc::grade::similar_pairs(class_, softmax_stub(), unlimited).size(), 56u);
  // ten of them (not more than 10): their 10 * 9 / 2 = 45 pairs are flagged
  class_.pop_back();
  EXPECT_EQ(xenc::grade::similar_pairs(class_, softmax_stub()).size(), 46u);
}

TEST(Similarity, PairsAreSortedByTheLargerOverlap) {
  const std::string original = fixture("softmax_original.cpp");
  const std::string copy = fixture("softmax_renamed_copy.cpp");
  const std::string other = fixture("softmax_independent_loops.cpp");
  // d's file is c's with a second solution appended: all of c's fingerprints are in d's, but
  // only part of d's in c's
  const std::vector<SimilarPair> pairs = xenc::grade::similar_pairs(
      {{"d", other + "\n" + copy}, {"c", copy}, {"b", original}, {"a", original}}, softmax_stub());
  ASSERT_GE(pairs.size(), 3u);
  for (std::size_t i = 1; i < pairs.size(); ++i) {
    const double before = std::max(pairs[i - 1].overlap_a, pairs[i - 1].overlap_b);
    const double now = std::max(pairs[i].overlap_a, pairs[i].overlap_b);
    EXPECT_GE(before, now) << "pair " << i;
  }
  EXPECT_EQ(pairs[0].a, "a");  // the identical pair first (1 and 1)
  EXPECT_EQ(pairs[0].b, "b");
  bool found = false;
  for (const SimilarPair& p : pairs)
    if (p.a == "c" && p.b == "d") {
      found = true;
      EXPECT_EQ(p.overlap_a, 1.0);
      EXPECT_LT(p.overlap_b, 0.8);
    }
  EXPECT_TRUE(found) << "c and d not flagged";
}

// ---- 3. errors ----------------------------------------------------------------------------------

TEST(Similarity, ErrorsNameTheFunctionTheArgumentAndTheValue) {
  expect_config_error([] { xenc::grade::kgram_hashes({}, 0); },
                      "kgram_hashes: k (the k-gram length) is 0, expected at least 1");
  expect_config_error([] { xenc::grade::winnow({1, 2}, 0); },
                      "winnow: w (the window length) is 0, expected at least 1");
  expect_config_error([] { xenc::grade::tokenize_code(std::string(101, 'x'), 100); },
                      "tokenize_code: source has 101 bytes, expected at most 100 (max_bytes)");
  SimilarityOptions bad;
  bad.threshold = 1.5;
  expect_config_error([&] { xenc::grade::similar_pairs({}, "", bad); },
                      "similar_pairs: threshold is 1.500000, expected a share in (0, 1]");
  bad.threshold = 0.0;
  expect_config_error([&] { xenc::grade::similar_pairs({}, "", bad); },
                      "similar_pairs: threshold is 0.000000");
  SimilarityOptions small;
  small.max_file_bytes = 10;
  expect_config_error(
      [&] {
        xenc::grade::similar_pairs({{"a", "int x;"}, {"eve", std::string(11, ' ')}}, "", small);
      },
      "similar_pairs: student eve's file has 11 bytes, expected at most 10 (max_file_bytes)");
  expect_config_error([&] { xenc::grade::similar_pairs({}, std::string(11, ' '), small); },
                      "similar_pairs: the stub has 11 bytes");
  SimilarityOptions zero_w;
  zero_w.w = 0;
  expect_config_error([&] { xenc::grade::similar_pairs({}, "", zero_w); },
                      "similar_pairs: w (the window length) is 0");
}

}  // namespace

// Runs the demo apps as a student would and checks what they print and write.
//
// The executables' paths come from CMake ($<TARGET_FILE:...>). SVGs are parsed with libxml2 (a
// real XML parser) and their heatmap cells counted with XPath; CSV values are compared with the
// sinusoidal formula evaluated here; JSON is parsed with nlohmann::json.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/run_program.hpp"
#include "support/svg_xpath.hpp"
#include "support/tolerances.hpp"
#include "xenc/config.hpp"
#include "xenc/core/blas_core.hpp"
#include "xenc/io.hpp"  // the math (xenc.hpp) and save_state_dict

// OpenBLAS's own account of itself (declared in its cblas.h; xencoder links OpenBLAS publicly)
extern "C" char* openblas_get_config(void);
extern "C" char* openblas_get_corename(void);
extern "C" int openblas_get_num_threads(void);

namespace {

namespace fs = std::filesystem;

using xenc::test::out_dir;      // a fresh directory per test (support/run_program.hpp)
using xenc::test::run_program;  // exit code, stdout and stderr of `exe args` run in a directory
using xenc::test::RunResult;

// Parses an SVG file as XML; returns the number of nodes matching an XPath expression
// (namespace prefix "s" = SVG), or -1 when the file is not well-formed XML.
double xpath_count(const std::string& path, const std::string& expr) {
  const double n = xenc::test::svg_file_xpath_number(path, "count(" + expr + ")");
  return std::isnan(n) ? -1 : n;
}
double cells(const std::string& path) { return xpath_count(path, "//s:rect[@class='cell']"); }

// An SVG every browser shows: well-formed, an <svg> root with width, height and a title text,
// a colour bar when it has cells, and no <style> element (presentation attributes only).
::testing::AssertionResult IsGoodSvg(const std::string& path) {
  if (!fs::exists(path)) return ::testing::AssertionFailure() << path << " was not written";
  if (xpath_count(path, "/s:svg[@width and @height and @viewBox]") != 1)
    return ::testing::AssertionFailure()
           << path << " is not well-formed SVG with width/height/viewBox";
  if (xpath_count(path, "//s:style | //@style") != 0)
    return ::testing::AssertionFailure() << path << " uses CSS";
  if (xpath_count(path, "//s:text") < 3)
    return ::testing::AssertionFailure() << path << " has too few labels";
  if (cells(path) > 0 && xpath_count(path, "//s:rect[@class='colorbar']") < 10)
    return ::testing::AssertionFailure() << path << " has cells but no colour bar";
  return ::testing::AssertionSuccess();
}

double formula(std::size_t p, std::size_t j, std::size_t D) {
  const double angle = double(p) / std::pow(10000.0, double(2 * (j / 2)) / double(D));
  return j % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

// The text with every run of spaces and line breaks as one space (the apps wrap their prose).
std::string flat(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool space = c == ' ' || c == '\n';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  return out;
}
bool has(const std::string& text, const std::string& s) {
  return flat(text).find(flat(s)) != std::string::npos;
}

// ---- word_order ----------------------------------------------------------------------------

TEST(WordOrder, DefaultsPrintBothTablesAndTheExplanation) {
  const RunResult r = run_program(XENC_APP_WORD_ORDER, "", out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"Without positional information", "With sinusoidal positional encoding",
                        "token embedding", "+ positions", "layer 1", "layer 2", "sentence",
                        "permutation-equivariant", "\"chased\" sits at the same position",
                        "averaging is linear", "separate even without attention"})
    EXPECT_NE(flat(r.out).find(s), std::string::npos) << "missing \"" << s << "\" in:\n" << r.out;
  // the old, false claim (issue 12 item 3) is gone
  EXPECT_EQ(flat(r.out).find("separate only after attention"), std::string::npos) << r.out;
}

// The true statement behind the narration, pinned with the library itself (issue 12 item 3):
// the mean-pooled input of two permuted sentences is identical because averaging is linear, and
// any non-linear per-token step separates them. With every attention output zeroed (out_proj
// weight and bias = 0, so self_attn(x) = 0), the word that did not move ("chased", position 1 in
// both) keeps cosine 1 through every layer, while the sentence cosine drops below 1 in layer 1.
TEST(WordOrder, SentencesSeparateWithoutAttention) {
  const std::vector<std::string> sentences = {"cat chased mouse", "mouse chased cat"};
  const auto vocab = xenc::Vocabulary::from_texts(sentences);
  const auto batch = vocab.encode_batch(sentences);
  xenc::EncoderModelConfig cfg;  // the app's defaults
  cfg.vocab_size = vocab.size();
  cfg.layer.d_model = 16;
  cfg.layer.nhead = 2;
  cfg.layer.dim_feedforward = 64;
  cfg.layer.dropout = 0.0f;
  cfg.num_layers = 2;
  cfg.position = xenc::PositionKind::sinusoidal;
  cfg.seed = 42;
  xenc::EncoderModel model(cfg);
  std::size_t zeroed = 0;
  for (auto& p : model.parameters())
    if (p.name.find("self_attn.out_proj.") != std::string::npos) {
      std::fill(p.value, p.value + p.size(), 0.0f);
      ++zeroed;
    }
  ASSERT_EQ(zeroed, 4u);  // weight and bias of 2 layers
  xenc::NoGradGuard no_grad;
  xenc::ModelTrace trace;
  model.forward(batch.ids, batch.padding_mask, &trace);
  auto cos = [](const xenc::Tensor3& x, std::size_t ta, std::size_t tb, bool pooled) {
    double uv = 0, uu = 0, vv = 0;
    for (std::size_t d = 0; d < x.shape()[2]; ++d) {
      double u = 0, v = 0;
      if (pooled)
        for (std::size_t t = 0; t < 3; ++t) u += x(0, t, d), v += x(1, t, d);
      else
        u = x(0, ta, d), v = x(1, tb, d);
      uv += u * v, uu += u * u, vv += v * v;
    }
    return uv / std::sqrt(uu * vv);
  };
  // the input: the sums of the two sentences are the same numbers added in another order
  EXPECT_NEAR(cos(trace.with_positions, 0, 0, true), 1.0, xenc::test::kReorderedSumCosine);
  EXPECT_LT(cos(trace.with_positions, 0, 2, false),
            xenc::test::kTokenMovedCosine);  // "cat" moved: 0 -> 2
  for (std::size_t l = 0; l < 2; ++l) {
    SCOPED_TRACE("layer " + std::to_string(l + 1));
    const xenc::Tensor3& y = trace.encoder.layer_outputs[l];
    EXPECT_NEAR(
        cos(y, 1, 1, false), 1.0,
        xenc::test::kReorderedSumCosine);  // "chased": same input, no attention -> same output
    EXPECT_LT(cos(y, 0, 0, true),
              1.0 - xenc::test::kPooledSentencesMoved);  // the sentences separate anyway
  }
}

TEST(WordOrder, JsonCosinesWithoutAndWithPositions) {
  const RunResult r = run_program(XENC_APP_WORD_ORDER, "--json", out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // without positions: permutation equivariance makes every cosine 1 up to float rounding
  const auto& none = j.at("without_pe");
  ASSERT_EQ(none.at("token_cosine").size(), 3u);
  for (const auto& [word, c] : none.at("token_cosine").items())
    EXPECT_NEAR(c.get<double>(), 1.0, xenc::test::kOpAtol) << word;
  EXPECT_NEAR(none.at("sentence_cosine").get<double>(), 1.0, xenc::test::kOpAtol);
  // with sinusoidal positions the moved words and the sentences differ
  const auto& pe = j.at("with_pe");
  EXPECT_LT(pe.at("token_cosine").at("cat").get<double>(), xenc::test::kTokenMovedCosine);
  EXPECT_LT(pe.at("token_cosine").at("mouse").get<double>(), xenc::test::kTokenMovedCosine);
  EXPECT_LT(pe.at("sentence_cosine").get<double>(), 1.0 - xenc::test::kCosineMoved);
  // "chased" keeps its position: identical input, different after layer 1; the mean-pooled
  // input is identical too (same words at the same set of positions)
  const auto& stages = pe.at("stages");
  ASSERT_EQ(stages.size(), 4u);
  EXPECT_EQ(stages[1].at("stage"), "+ positions");
  EXPECT_NEAR(stages[1].at("token_cosine").at("chased").get<double>(), 1.0,
              xenc::test::kSameVectorCosine);
  EXPECT_LT(stages[1].at("token_cosine").at("cat").get<double>(), xenc::test::kTokenMovedCosine);
  EXPECT_NEAR(stages[1].at("sentence_cosine").get<double>(), 1.0, xenc::test::kOpAtol);
  EXPECT_LT(stages[2].at("token_cosine").at("chased").get<double>(),
            1.0 - xenc::test::kCosineMoved);
  EXPECT_FALSE(j.contains("with_learned"));
}

TEST(WordOrder, AllSchemesAddLearnedPositions) {
  const RunResult r = run_program(XENC_APP_WORD_ORDER, "--position all --json", out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("without_pe") && j.contains("with_pe") && j.contains("with_learned"));
  EXPECT_LT(j["with_learned"]["token_cosine"]["cat"].get<double>(), xenc::test::kTokenMovedCosine);
  const RunResult l = run_program(XENC_APP_WORD_ORDER, "--position learned --json", out_dir());
  ASSERT_EQ(l.status, 0) << l.err;
  EXPECT_TRUE(nlohmann::json::parse(l.out).contains("with_learned"));
}

TEST(WordOrder, RepeatedWordsAreMatchedByOccurrence) {
  const RunResult r = run_program(
      XENC_APP_WORD_ORDER, "--a 'the dog bit the man' --b 'the man bit the dog' --json", out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& tc = j["without_pe"]["token_cosine"];
  for (const char* k : {"the", "dog", "bit", "the#2", "man"}) ASSERT_TRUE(tc.contains(k)) << k;
  for (const auto& [word, c] : tc.items())
    EXPECT_NEAR(c.get<double>(), 1.0, xenc::test::kOpAtol) << word;
  EXPECT_LT(j["with_pe"]["token_cosine"]["dog"].get<double>(), xenc::test::kTokenMovedCosine);
}

TEST(WordOrder, NonPermutationRunsOnSharedWordsAndSaysSo) {
  const std::string dir = out_dir();
  const RunResult r =
      run_program(XENC_APP_WORD_ORDER, "--a 'cat chased mouse' --b 'the dog chased the cat'", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("not permutations"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("shared words"), std::string::npos) << r.out;
  const RunResult j = run_program(
      XENC_APP_WORD_ORDER, "--a 'cat chased mouse' --b 'the dog chased the cat' --json", dir);
  const auto js = nlohmann::json::parse(j.out);
  EXPECT_FALSE(js["permutation"].get<bool>());
  EXPECT_EQ(js["with_pe"]["token_cosine"].size(), 2u);  // cat, chased
}

TEST(WordOrder, SvgFiguresParseWithACellPerValue) {
  const std::string dir = out_dir();
  const RunResult r = run_program(XENC_APP_WORD_ORDER, "--svg-dir figs", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* f : {"cosine_none.svg", "cosine_sinusoidal.svg", "final_difference.svg"})
    EXPECT_TRUE(IsGoodSvg(dir + "/figs/" + f));
  // final-layer A - B: 2 runs x 3 words x D = 16
  EXPECT_EQ(cells(dir + "/figs/final_difference.svg"), 2 * 3 * 16);
  // 3 words + the sentence per line plot
  EXPECT_EQ(xpath_count(dir + "/figs/cosine_sinusoidal.svg", "//s:polyline[@class='series']"), 4);
}

TEST(WordOrder, BadInputGivesAMessageAndNonZeroExit) {
  const std::string dir = out_dir();
  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{{"--a '   '", "--a is empty"},
                                         {"--b ''", "--b is empty"},
                                         {"--d-model 10 --heads 4", "divisible"},
                                         {"--d-model 15 --heads 3", "d_model is 15"},
                                         {"--frobnicate", "frobnicate"},
                                         {"--position rotary", "rotary"},
                                         {"--a 'a b' --b 'c d'", "share no word"}}) {
    const RunResult r = run_program(XENC_APP_WORD_ORDER, c.args, dir);
    EXPECT_NE(r.status, 0) << c.args;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << " -> stderr: " << r.err;
  }
}

// ---- word_order's narration: each sentence it prints is checked against its own numbers ----

// The cosines of one run: stage -> word -> cosine (NaN for JSON null), and the sentence's.
struct Cosines {
  std::vector<std::map<std::string, double>> token;
  std::vector<double> sentence;
};
Cosines cosines(const nlohmann::json& run) {
  Cosines c;
  auto num = [](const nlohmann::json& v) { return v.is_null() ? NAN : v.get<double>(); };
  for (const auto& st : run.at("stages")) {
    std::map<std::string, double> m;
    for (const auto& [w, v] : st.at("token_cosine").items()) m[w] = num(v);
    c.token.push_back(m);
    c.sentence.push_back(num(st.at("sentence_cosine")));
  }
  return c;
}
// A cosine the app prints as 1.000000.
bool prints_one(double c) { return std::abs(1 - c) < xenc::test::kPrinted6; }

// Text and JSON of the same word_order run.
struct WordOrderRun {
  RunResult text;
  nlohmann::json json;
};
WordOrderRun word_order(const std::string& args, const std::string& dir) {
  WordOrderRun r;
  r.text = run_program(XENC_APP_WORD_ORDER, args, dir);
  const RunResult j = run_program(XENC_APP_WORD_ORDER, args + " --json", dir);
  EXPECT_EQ(r.text.status, 0) << args << ": " << r.text.err;
  EXPECT_EQ(j.status, 0) << args << ": " << j.err;
  r.json = nlohmann::json::parse(j.out);
  return r;
}

// Defaults: every claim of the sinusoidal paragraph against the JSON numbers.
TEST(WordOrderNarration, DefaultClaimsHoldInTheNumbers) {
  const auto r = word_order("", out_dir());
  const std::string& out = r.text.out;
  Cosines none = cosines(r.json["without_pe"]), pe = cosines(r.json["with_pe"]);
  // "Every cosine is 1 (...)": without positions
  ASSERT_TRUE(has(out, "Every cosine is 1 (")) << out;
  for (std::size_t s = 0; s < none.token.size(); ++s) {
    for (const auto& [w, c] : none.token[s]) EXPECT_TRUE(prints_one(c)) << w;
    EXPECT_TRUE(prints_one(none.sentence[s]));
  }
  // "the words at different positions ... differ as soon as positions are added: "cat" (x) and
  // "mouse" (y)"
  ASSERT_TRUE(has(out, "differ as soon as positions are added: \"cat\"")) << out;
  EXPECT_LT(pe.token[1]["cat"], 1 - xenc::test::kPrinted6);
  EXPECT_LT(pe.token[1]["mouse"], 1 - xenc::test::kPrinted6);
  EXPECT_TRUE(prints_one(pe.token[0]["cat"]));  // before positions they were the same
  // ""chased" sits at the same position ... its input is identical (cosine 1). After layer 1
  // "chased" (x) differs"
  ASSERT_TRUE(has(out, "its input is identical (cosine 1). After layer 1 \"chased\"")) << out;
  EXPECT_TRUE(prints_one(pe.token[1]["chased"]));
  EXPECT_LT(pe.token[2]["chased"], 1 - xenc::test::kPrinted6);
  char num[32];
  std::snprintf(num, sizeof num, "(%.6f) differs", pe.token[2]["chased"]);
  EXPECT_TRUE(has(out, num)) << num;
  // "The mean-pooled input is identical (1.000000) ... the sentences separate in layer 1 (x)"
  ASSERT_TRUE(has(out, "The mean-pooled input is identical (1.000000)")) << out;
  EXPECT_TRUE(prints_one(pe.sentence[1]));
  std::snprintf(num, sizeof num, "without attention; here they separate in layer 1 (%.6f)",
                pe.sentence[2]);
  EXPECT_TRUE(has(out, num)) << num << "\n" << out;
  EXPECT_LT(pe.sentence[2], 1 - xenc::test::kPrinted6);
}

// Degenerate: the same sentence twice. Nothing moved; the text says so and claims only 1s.
TEST(WordOrderNarration, IdenticalSentencesAreCalledDegenerate) {
  for (const std::string args :
       {"--a cat --b cat", "--a 'cat cat cat' --b 'cat cat cat' --position all"}) {
    SCOPED_TRACE(args);
    const auto r = word_order(args, out_dir());
    const std::string& out = r.text.out;
    EXPECT_TRUE(has(out, "A and B are the same sentence")) << out;
    EXPECT_TRUE(has(out, "degenerate")) << out;
    EXPECT_FALSE(has(out, "differ")) << out;
    EXPECT_FALSE(has(out, "moved (")) << out;
    EXPECT_TRUE(r.json["identical"].get<bool>());
    for (const char* key : {"without_pe", "with_pe", "with_learned"}) {
      if (!r.json.contains(key)) continue;
      const Cosines c = cosines(r.json[key]);
      for (std::size_t s = 0; s < c.token.size(); ++s) {
        for (const auto& [w, v] : c.token[s]) EXPECT_TRUE(prints_one(v)) << key << " " << w;
        EXPECT_TRUE(prints_one(c.sentence[s])) << key;
      }
    }
  }
}

// Degenerate: D = 1. Layer norm of one number is its bias (0): the layer outputs are zero vectors,
// their cosines undefined (n/a, JSON null); every defined cosine of a 1-number vector is +-1.
TEST(WordOrderNarration, OneDimensionIsCalledTooSmall) {
  const auto r = word_order("--d-model 1 --heads 1 --position learned", out_dir());
  const std::string& out = r.text.out;
  EXPECT_TRUE(has(out, "n/a")) << out;
  EXPECT_TRUE(has(out, "With D = 1 layer normalisation")) << out;
  EXPECT_TRUE(has(out, "D = 1 is degenerate")) << out;
  EXPECT_FALSE(has(out, "largest deviation 1.0e+00")) << out;
  for (const char* key : {"without_pe", "with_learned"}) {
    const Cosines c = cosines(r.json[key]);
    for (std::size_t s = 0; s < c.token.size(); ++s)
      for (const auto& [w, v] : c.token[s]) {
        if (s >= 2)
          EXPECT_TRUE(std::isnan(v))
              << key << " stage " << s << " " << w;  // "n/a (layer 1 and layer 2)"
        else
          EXPECT_NEAR(std::abs(v), 1.0, xenc::test::kParallelCosine)
              << key << " " << w;  // "+1, -1 or n/a"
      }
  }
  // without positions the defined cosines are all 1: "Every defined cosine is 1"
  const auto n = word_order("--d-model 1 --heads 1 --position none", out_dir());
  EXPECT_TRUE(has(n.text.out, "Every defined cosine is 1")) << n.text.out;
  const Cosines c = cosines(n.json["without_pe"]);
  for (std::size_t s = 0; s < 2; ++s)
    for (const auto& [w, v] : c.token[s]) EXPECT_TRUE(prints_one(v)) << w;
}

// Degenerate: D = 2. After a layer every vector points along (1, -1) or (-1, 1).
TEST(WordOrderNarration, TwoDimensionsGiveOnlyPlusOrMinusOne) {
  const auto r = word_order("--d-model 2 --heads 1", out_dir());
  EXPECT_TRUE(has(r.text.out, "D = 2 is degenerate")) << r.text.out;
  const Cosines c = cosines(r.json["with_pe"]);
  for (std::size_t s = 2; s < c.token.size(); ++s) {
    for (const auto& [w, v] : c.token[s])
      if (!std::isnan(v)) EXPECT_NEAR(std::abs(v), 1.0, xenc::test::kParallelCosine) << w;
    if (!std::isnan(c.sentence[s]))
      EXPECT_NEAR(std::abs(c.sentence[s]), 1.0, xenc::test::kParallelCosine);
  }
}

// Not permutations: the shared words differ after layer 1 even without positions, and the
// sentence cosine is below 1 from the token embedding on -- or, for "cat" vs "cat cat" (the same
// mean embedding), it is 1 there and the text says so.
TEST(WordOrderNarration, NonPermutationClaimsHold) {
  const auto r = word_order("--a 'cat chased mouse' --b 'the dog chased the cat'", out_dir());
  const std::string& out = r.text.out;
  Cosines none = cosines(r.json["without_pe"]);
  ASSERT_TRUE(has(out, "even without positions \"cat\"")) << out;
  EXPECT_LT(none.token[2]["cat"], 1 - xenc::test::kPrinted6);
  EXPECT_LT(none.token[2]["chased"], 1 - xenc::test::kPrinted6);
  ASSERT_TRUE(has(out, "it is below 1 from the token embedding on")) << out;
  EXPECT_LT(none.sentence[0], 1 - xenc::test::kPrinted6);
  const auto same_mean = word_order("--a 'cat' --b 'cat cat'", out_dir());
  EXPECT_TRUE(has(same_mean.text.out, "The sentence cosine is 1 at the token embedding"))
      << same_mean.text.out;
  EXPECT_TRUE(prints_one(cosines(same_mean.json["without_pe"]).sentence[0]));
}

// rope and alibi act inside attention: every claim of their paragraph against the JSON numbers.
// "the dog bit the man" / "the man bit the dog" is a permutation that is not a reversal.
TEST(WordOrderNarration, SchemesInsideAttentionSeparateWordsOnlyThere) {
  for (const std::string scheme : {"rope", "alibi"}) {
    SCOPED_TRACE(scheme);
    const auto r = word_order(
        "--a 'the dog bit the man' --b 'the man bit the dog' --position " + scheme, out_dir());
    const std::string& out = r.text.out;
    Cosines c = cosines(r.json["with_" + scheme]), none = cosines(r.json["without_pe"]);
    // "With rope positions nothing is added to the input (...), so the "+ positions" stage is the
    // token
    //  embedding itself: the words that moved, "dog" (1.000000) and "man" (1.000000), are still
    //  identical there."
    ASSERT_TRUE(has(out, "With " + scheme + " positions nothing is added to the input (")) << out;
    ASSERT_TRUE(
        has(out,
            "so the \"+ positions\" stage is the token embedding itself: the words that moved, "
            "\"dog\" (1.000000) and \"man\" (1.000000), are still identical there."))
        << out;
    for (std::size_t s = 0; s < 2; ++s)
      for (const auto& [w, v] : c.token[s]) EXPECT_TRUE(prints_one(v)) << w << " at stage " << s;
    // "The words separate only inside attention: after layer 1 "dog" (x) and "man" (y) differ."
    char num[160];
    std::snprintf(num, sizeof num,
                  "The words separate only inside attention: after layer 1 \"dog\" (%.6f) and "
                  "\"man\" (%.6f) differ.",
                  c.token[2]["dog"], c.token[2]["man"]);
    EXPECT_TRUE(has(out, num)) << num << "\n" << out;
    EXPECT_LT(c.token[2]["dog"], 1 - xenc::test::kPrinted6);
    EXPECT_LT(c.token[2]["man"], 1 - xenc::test::kPrinted6);
    EXPECT_TRUE(prints_one(none.token[2]["dog"]));  // and without positions they do not
    // "... adds no position vectors. ... the pooled sentences separate in layer 1 (x) through
    // attention"
    ASSERT_TRUE(has(
        out, "the same embeddings in another order, and " + scheme + " adds no position vectors."))
        << out;
    std::snprintf(num, sizeof num,
                  "the pooled sentences separate in layer 1 (%.6f) through attention",
                  c.sentence[2]);
    EXPECT_TRUE(has(out, num)) << num << "\n" << out;
    EXPECT_TRUE(prints_one(c.sentence[1]));
    EXPECT_LT(c.sentence[2], 1 - xenc::test::kPrinted6);
    EXPECT_FALSE(has(out, "separate even without attention"))
        << out;  // that is the additive schemes' text
  }
}

// The defaults ("cat chased mouse" / "mouse chased cat") are a reversal, which the symmetric ALiBi
// bias -m|i - j| cannot see: every cosine stays 1, and the text says why. RoPE (signed m - n) can.
TEST(WordOrderNarration, AlibiCannotTellASentenceFromItsReverse) {
  const auto r = word_order("--position alibi", out_dir());
  const std::string& out = r.text.out;
  ASSERT_TRUE(has(out, "B is A reversed, and the encoder form of alibi")) << out;
  ASSERT_TRUE(has(out, "alibi cannot tell a sentence from its reverse")) << out;
  Cosines c = cosines(r.json["with_alibi"]);
  for (std::size_t s = 0; s < c.token.size(); ++s) {
    for (const auto& [w, v] : c.token[s]) EXPECT_TRUE(prints_one(v)) << w << " at stage " << s;
    EXPECT_TRUE(prints_one(c.sentence[s]));
  }
  const auto rope = word_order("--position rope", out_dir());
  EXPECT_FALSE(has(rope.text.out, "the encoder form of alibi")) << rope.text.out;
  EXPECT_TRUE(has(rope.text.out, "Note: B is A reversed"))
      << rope.text.out;  // named above the tables
  EXPECT_LT(cosines(rope.json["with_rope"]).token[2]["cat"], 1 - xenc::test::kPrinted6);
  // an odd head dimension is refused before any run, with the config's message and the schemes
  // that take any size
  const RunResult odd =
      run_program(XENC_APP_WORD_ORDER, "--position rope --d-model 18 --heads 6", out_dir());
  EXPECT_NE(odd.status, 0);
  EXPECT_TRUE(has(odd.err, "d_model / nhead = 18 / 6 = 3, expected an even head dimension"))
      << odd.err;
  EXPECT_TRUE(has(odd.err, "--position learned or alibi")) << odd.err;
  EXPECT_TRUE(odd.out.empty()) << odd.out;
}

// --scale-embedding: the measured lengths are printed, a sinusoidal position vector is sqrt(D/2)
// long, and the moved words' cosines after adding positions are closer to 1 than without it.
TEST(WordOrderNarration, ScaleEmbeddingIsExplainedWithMeasuredLengths) {
  const auto plain = word_order("", out_dir());
  const auto scaled = word_order("--scale-embedding", out_dir());
  const std::string& out = scaled.text.out;
  ASSERT_TRUE(has(out, "--scale-embedding multiplied the token embeddings by sqrt(D) = 4.00"))
      << out;
  EXPECT_FALSE(has(plain.text.out, "--scale-embedding multiplied")) << plain.text.out;
  // "... on average R times longer than the position vectors (mean lengths E and P)"
  const auto at = out.find("on average ");
  ASSERT_NE(at, std::string::npos);
  double ratio = 0, emb = 0, pos = 0;
  std::string tail = out.substr(at);
  for (auto& ch : tail)
    if (ch == '\n') ch = ' ';
  while (tail.find("  ") != std::string::npos) tail.erase(tail.find("  "), 1);
  ASSERT_EQ(std::sscanf(
                tail.c_str(),
                "on average %lf times longer than the position vectors (mean lengths %lf and %lf)",
                &ratio, &emb, &pos),
            3)
      << tail;
  EXPECT_NEAR(pos, std::sqrt(8.0), xenc::test::kPrinted2Length);  // ||PE(p)|| = sqrt(D/2) exactly
  EXPECT_NEAR(ratio, emb / pos, xenc::test::kPrinted1Ratio);
  EXPECT_GT(emb, 8.0);  // about D = 16: sqrt(D) * ||N(0, I_D)||
  Cosines p = cosines(plain.json["with_pe"]), q = cosines(scaled.json["with_pe"]);
  for (const char* w : {"cat", "mouse"})
    EXPECT_GT(q.token[1][w], p.token[1][w]) << w;  // "closer to 1"
}

TEST(WordOrder, RefusesAModelOverTheMemoryLimit) {
  const RunResult r = run_program(XENC_APP_WORD_ORDER, "--d-model 4096 --layers 48", out_dir());
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(has(r.err, "this model's inference needs about")) << r.err;
  EXPECT_TRUE(has(r.err, "limit of 1.0 GiB (--max-memory-mb 1024)")) << r.err;
  const RunResult a =
      run_program(XENC_APP_ATTENTION_MAP, "--d-model 4096 --layers 48 --json", out_dir());
  EXPECT_NE(a.status, 0);
  EXPECT_TRUE(has(a.err, "limit of 1.0 GiB (--max-memory-mb 1024)")) << a.err;
}

// ---- every program: --version, range checks, a failed stdout, invalid UTF-8 -------------------

struct App {
  const char* path;
  const char* name;
};
const std::vector<App> kApps = {
    {XENC_APP_WORD_ORDER, "xenc-word-order"},       {XENC_APP_PE_HEATMAP, "xenc-pe-heatmap"},
    {XENC_APP_PE_PROPERTIES, "xenc-pe-properties"}, {XENC_APP_PE_PITFALLS, "xenc-pe-pitfalls"},
    {XENC_APP_ATTENTION_MAP, "xenc-attention-map"}, {XENC_APP_ENCODE, "xenc-encode"},
    {XENC_APP_INIT_ENCODER, "xenc-init-encoder"}};

// The second line is the BLAS: this process's OpenBLAS (the same library and environment as the
// program's), its core set and its thread count, asked from OpenBLAS directly. The third is the
// heap (apps/common/heap_policy.hpp); with the user's GLIBC_TUNABLES, it says they set it.
TEST(EveryApp, VersionPrintsNameLibraryVersionAndBlas) {
  const std::string config = openblas_get_config();  // "OpenBLAS 0.3.21 ... DYNAMIC_ARCH ..."
  const std::string library = config.substr(0, config.find(' ', config.find(' ') + 1));
  const int threads = openblas_get_num_threads();
  // where OpenBLAS fell back here, the program runs the set its re-execution asked for
  const std::string better = xenc::blas_report().better;
  const std::string core = better.empty() ? openblas_get_corename() : better;
  const std::string blas = "BLAS: " + library + ", core set " + core + " (";
  const std::string tail =
      "), " + std::to_string(threads) + (threads == 1 ? " thread\n" : " threads\n") +
#if defined(__SANITIZE_ADDRESS__)  // AddressSanitizer's allocator refuses mallopt
      "heap: the allocator refused mallopt's thresholds (not glibc's heap); left as it is\n";
#else
      "heap: glibc, fixed thresholds (blocks up to 32 MiB reused, 64 MiB kept free)\n";
#endif
  for (const App& app : kApps) {
    const RunResult r = run_program(app.path, "--version", out_dir());
    EXPECT_EQ(r.status, 0) << app.name << ": " << r.err;
    const std::string first = std::string(app.name) + " " + XENC_VERSION + "\n";
    ASSERT_EQ(r.out.substr(0, first.size()), first) << app.name;
    const std::string second = r.out.substr(first.size());
    EXPECT_EQ(second.substr(0, blas.size()), blas) << app.name << ": " << second;
    ASSERT_GE(second.size(), tail.size()) << app.name;
    EXPECT_EQ(second.substr(second.size() - tail.size()), tail) << app.name << ": " << second;
  }
  const RunResult users =
      run_program("env",
                  std::string("GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1048576 '") +
                      XENC_APP_WORD_ORDER + "' --version",
                  out_dir());
  EXPECT_EQ(users.status, 0) << users.err;
  const std::string heap =
      "\nheap: glibc, thresholds from the environment (GLIBC_TUNABLES or MALLOC_*_THRESHOLD_)\n";
  ASSERT_GE(users.out.size(), heap.size()) << users.out;
  EXPECT_EQ(users.out.substr(users.out.size() - heap.size()), heap) << users.out;
}

// CLI11 2.1 reads "-1" into an unsigned option as 2^64 - 1 and "1e99" into a float as inf: each
// numeric option is range-checked, so these are refused before anything runs.
TEST(EveryApp, NegativeAndOutOfRangeNumbersAreRefused) {
  const std::string dir = out_dir();
  struct Case {
    const char* app;
    std::string args, message;
  };
  const std::string enc = "--weights w.npz --input x.npy --output y.npy ";
  const std::string init = "--d-model 8 --heads 2 --dim-feedforward 16 --output w.npz ";
  for (const Case& c : std::vector<Case>{
           {XENC_APP_INIT_ENCODER, init + "--train-steps -1",
            "--train-steps: Value -1 not in range"},
           {XENC_APP_INIT_ENCODER, init + "--layer-norm-eps 1e99",
            "--layer-norm-eps: Value 1e99 is not a finite positive float"},
           {XENC_APP_INIT_ENCODER, init + "--layer-norm-eps nan", "not a finite positive float"},
           {XENC_APP_INIT_ENCODER, init + "--layer-norm-eps 0", "not a finite positive float"},
           {XENC_APP_INIT_ENCODER, init + "--layers -1", "--layers: Value -1 not in range"},
           {XENC_APP_INIT_ENCODER, "--d-model -8 --heads 2 --dim-feedforward 16 --output w.npz",
            "--d-model: Value -8"},
           {XENC_APP_INIT_ENCODER, init + "--seed -1", "--seed: Value -1 not in range"},
           {XENC_APP_ENCODE, enc + "--heads -1", "--heads: Value -1 not in range"},
           {XENC_APP_ENCODE, enc + "--heads 2 --layer-norm-eps 1e99",
            "--layer-norm-eps: Value 1e99"},
           {XENC_APP_WORD_ORDER, "--ff -1", "--ff: Value -1 not in range"},
           {XENC_APP_WORD_ORDER, "--seed -1", "--seed: Value -1 not in range"},
           {XENC_APP_WORD_ORDER, "--heads -2", "--heads: Value -2 not in range"},
           {XENC_APP_WORD_ORDER, "--layers 49", "--layers: Value 49 not in range"},
           {XENC_APP_PE_PROPERTIES, "--shift 2.5", "--shift: Value 2.5 not in range"},
           {XENC_APP_PE_PROPERTIES, "--shift -1", "--shift: Value -1 not in range"},
           {XENC_APP_PE_PROPERTIES, "--positions -3", "--positions: Value -3 not in range"},
           {XENC_APP_PE_HEATMAP, "--dims -1", "--dims: Value -1 not in range"},
           {XENC_APP_PE_HEATMAP, "--d-model -64", "--d-model: Value -64 not in range"},
           {XENC_APP_PE_HEATMAP, "--max-output-mb -1", "--max-output-mb: Value -1 not in range"},
           {XENC_APP_ATTENTION_MAP, "--d-model -1", "--d-model: Value -1 not in range"},
           {XENC_APP_ATTENTION_MAP, "--seed -1", "--seed: Value -1 not in range"},
           {XENC_APP_PE_PITFALLS, "--only -1", "--only: Value -1 not in range"}}) {
    const RunResult r = run_program(c.app, c.args, dir);
    EXPECT_NE(r.status, 0) << c.args;
    EXPECT_TRUE(has(r.err, c.message)) << c.args << " -> stderr: " << r.err;
  }
}

// A full disk (/dev/full) makes every write to stdout fail: the exit status says so.
TEST(EveryApp, AFailedWriteToStdoutExitsNonZero) {
  const std::string dir = out_dir();
  for (const auto& [exe, args] : std::vector<std::pair<std::string, std::string>>{
           {XENC_APP_WORD_ORDER, ""},
           {XENC_APP_WORD_ORDER, "--json"},
           {XENC_APP_PE_HEATMAP, ""},
           {XENC_APP_PE_PROPERTIES, ""},
           {XENC_APP_PE_PITFALLS, ""},
           {XENC_APP_ATTENTION_MAP, "--svg-dir ''"},
           {XENC_APP_INIT_ENCODER, "--d-model 8 --heads 2 --dim-feedforward 16 --output w.npz"}}) {
    const RunResult r = run_program(exe, args + " >/dev/full", dir);
    EXPECT_NE(r.status, 0) << exe << " " << args;
    EXPECT_TRUE(has(r.err, "writing to standard output failed"))
        << exe << " " << args << ": " << r.err;
  }
}

// Invalid UTF-8 in a sentence: a message and a non-zero exit, never an SVG with a broken
// byte in it (the tokenizer rejects invalid UTF-8; every app catches std::exception).
TEST(EveryApp, InvalidUtf8IsRefused) {
  const std::string dir = out_dir();
  const std::string bad =
      "\"$(printf 'caf\\303 chased mouse')\"";  // \303 starts a 2-byte sequence, then a space
  RunResult r = run_program(XENC_APP_WORD_ORDER,
                            "--a " + bad + " --b 'mouse chased cat' --svg-dir figs", dir);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.err, "xenc-word-order: error:")) << r.err;
  EXPECT_TRUE(has(r.err, "UTF-8")) << r.err;
  r = run_program(XENC_APP_ATTENTION_MAP, "--sentence " + bad + " --svg-dir maps", dir);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_TRUE(has(r.err, "xenc-attention-map: error:")) << r.err;
  EXPECT_TRUE(has(r.err, "UTF-8")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/maps/attention_all.svg"));
}

// ---- pe_heatmap ----------------------------------------------------------------------------

TEST(PeHeatmap, DefaultsWriteHeatmapCsvAndLines) {
  const std::string dir = out_dir();
  const RunResult r = run_program(XENC_APP_PE_HEATMAP, "", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(IsGoodSvg(dir + "/pe_heatmap.svg"));
  EXPECT_EQ(cells(dir + "/pe_heatmap.svg"), 64 * 64);
  EXPECT_TRUE(IsGoodSvg(dir + "/pe_lines.svg"));
  EXPECT_EQ(xpath_count(dir + "/pe_lines.svg", "//s:polyline[@class='series']"), 4);
  EXPECT_TRUE(fs::exists(dir + "/pe_table.csv"));
}

TEST(PeHeatmap, CsvMatchesTheFormula) {
  const std::string dir = out_dir();
  const RunResult r = run_program(XENC_APP_PE_HEATMAP,
                                  "--positions 30 --d-model 6 --dims 0,5 --csv t.csv "
                                  "--svg h.svg --lines-svg l.svg",
                                  dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(cells(dir + "/h.svg"), 30 * 6);
  std::ifstream f(dir + "/t.csv");
  std::string line;
  ASSERT_TRUE(std::getline(f, line));
  EXPECT_EQ(line, "position,d0,d1,d2,d3,d4,d5");
  std::size_t rows = 0;
  while (std::getline(f, line)) {
    std::stringstream ss(line);
    std::string cell;
    std::getline(ss, cell, ',');
    const std::size_t p = std::stoul(cell);
    EXPECT_EQ(p, rows);
    std::size_t j = 0;
    for (; std::getline(ss, cell, ','); ++j)
      EXPECT_NEAR(std::stod(cell), formula(p, j, 6), xenc::test::kOpAtol)
          << "p = " << p << ", j = " << j;
    EXPECT_EQ(j, 6u);
    ++rows;
  }
  EXPECT_EQ(rows, 30u);
  // a hand value from source 004's d_model = 6 table: PE(1, 2) = sin(1 / 10000^(2/6)) = 0.04639922
  EXPECT_NEAR(formula(1, 2, 6), 0.04639922, xenc::test::kPrinted8);
}

TEST(PeHeatmap, BadInputGivesAMessageAndNonZeroExit) {
  const std::string dir = out_dir();
  RunResult r = run_program(XENC_APP_PE_HEATMAP, "--d-model 7", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("d_model is 7"), std::string::npos) << r.err;
  r = run_program(XENC_APP_PE_HEATMAP, "--dims 3,99", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("99"), std::string::npos) << r.err;
  r = run_program(XENC_APP_PE_HEATMAP, "--svg /nonexistent/dir/x.svg", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("/nonexistent/dir/x.svg"), std::string::npos) << r.err;
}

// A table whose SVG would be gigabytes is refused before anything is computed, naming the sizes
// and the limit; --max-output-mb raises the limit.
TEST(PeHeatmap, RefusesOutputOverTheSizeLimit) {
  const std::string dir = out_dir();
  const RunResult r = run_program(XENC_APP_PE_HEATMAP, "--d-model 8192 --positions 10000", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(has(r.err, "the heatmap SVG would be about 5859 MiB"))
      << r.err;  // 75 B x 81,920,000 cells
  EXPECT_TRUE(has(r.err, "over the limit of 100 MiB per file (--max-output-mb")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/pe_heatmap.svg"));
  // the estimate is close to the real size: 200 x 64 = 12800 cells, limit 1 MiB (estimate 0.93 MiB)
  const RunResult ok =
      run_program(XENC_APP_PE_HEATMAP, "--positions 200 --d-model 64 --max-output-mb 1", dir);
  ASSERT_EQ(ok.status, 0) << ok.err;
  const double bytes = double(fs::file_size(dir + "/pe_heatmap.svg"));
  EXPECT_NEAR(bytes / (75.0 * 200 * 64 + 20e3), 1.0, xenc::test::kSvgSizeEstimate);
  const RunResult refused =
      run_program(XENC_APP_PE_HEATMAP, "--positions 300 --d-model 64 --max-output-mb 1", dir);
  EXPECT_NE(refused.status, 0);
}

// ---- pe_properties -------------------------------------------------------------------------

// The number after `key` in `text` (e.g. "...: 8.13e-08").
double number_after(const std::string& text, const std::string& key) {
  const auto at = text.find(key);
  if (at == std::string::npos) return NAN;
  return std::stod(text.substr(at + key.size()));
}

TEST(PeProperties, DefaultsShowRotationOffsetAndDistance) {
  const std::string dir = out_dir();
  const RunResult r = run_program(XENC_APP_PE_PROPERTIES, "", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  // the printed max errors are float32 rounding only
  EXPECT_LT(number_after(r.out, "and all 16 dims: "), xenc::test::kPositional) << r.out;
  EXPECT_LT(number_after(r.out, "over all 50 x 50 pairs: "), xenc::test::kPositional) << r.out;
  // the first 2x2 block of R_3: [[cos 3, sin 3], [-sin 3, cos 3]] (w_0 = 1)
  char block[128];
  std::snprintf(block, sizeof block, "[[%9.6f %9.6f]  [%9.6f %9.6f]]", std::cos(3.0), std::sin(3.0),
                -std::sin(3.0), std::cos(3.0));
  EXPECT_NE(r.out.find(block), std::string::npos) << block << "\n" << r.out;
  // adjacent distance sqrt(sum_i 2 - 2 cos w_i), D = 16
  double s = 0;
  for (int i = 0; i < 8; ++i) s += 2 - 2 * std::cos(std::pow(10000.0, -2.0 * i / 16));
  EXPECT_NEAR(number_after(r.out, "sqrt(sum_i 2 - 2 cos w_i) = "), std::sqrt(s),
              xenc::test::kOpAtol);
  EXPECT_TRUE(IsGoodSvg(dir + "/pe_similarity.svg"));
  EXPECT_EQ(cells(dir + "/pe_similarity.svg"), 50 * 50);
  EXPECT_TRUE(IsGoodSvg(dir + "/pe_similarity_by_offset.svg"));
}

// Over 500 positions the heatmap shows every s-th position and the output says so; the numbers
// still use every pair (the adjacent distance is the formula's for every p).
TEST(PeProperties, LargeTablesAreDownsampledInTheHeatmapOnly) {
  const std::string dir = out_dir();
  const RunResult r = run_program(XENC_APP_PE_PROPERTIES, "--positions 501 --d-model 8", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "The heatmap shows every 2nd position (251 x 251 of the 501 x 501 pairs)"))
      << r.out;
  EXPECT_LT(number_after(r.out, "over all 501 x 501 pairs: "), xenc::test::kPositionalSmallD)
      << r.out;
  // the smallest distance over all pairs, from the formula by brute force here (for D = 8 it is
  // not an adjacent pair: 0.645 against 0.964 for p, p + 1)
  double dmin = INFINITY;
  for (std::size_t p = 0; p < 501; ++p)
    for (std::size_t q = p + 1; q < 501; ++q) {
      double d2 = 0;
      for (std::size_t j = 0; j < 8; ++j) d2 += std::pow(formula(p, j, 8) - formula(q, j, 8), 2);
      dmin = std::min(dmin, std::sqrt(d2));
    }
  EXPECT_NEAR(number_after(r.out, "over p != q < 501\n   is "), dmin, xenc::test::kPositionalSmallD)
      << r.out;
  EXPECT_EQ(cells(dir + "/pe_similarity.svg"), 251 * 251);
  EXPECT_TRUE(IsGoodSvg(dir + "/pe_similarity.svg"));
  // tick labels name positions, not heatmap rows: row 245 is position 490; every label is even
  // (which ones are shown depends on the thinning that keeps them from overlapping)
  EXPECT_EQ(xpath_count(dir + "/pe_similarity.svg", "//s:text[@class='ytick'][.='490']"), 1);
  EXPECT_GT(xpath_count(dir + "/pe_similarity.svg", "//s:text[@class='xtick']"), 4);
  EXPECT_EQ(
      xpath_count(
          dir + "/pe_similarity.svg",
          "//s:text[@class='xtick' or @class='ytick'][number(.) mod 2 != 0 or number(.) > 1000]"),
      0);
}

TEST(PeProperties, BadInputGivesAMessageAndNonZeroExit) {
  const std::string dir = out_dir();
  RunResult r = run_program(XENC_APP_PE_PROPERTIES, "--shift 60", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--shift"), std::string::npos) << r.err;
  r = run_program(XENC_APP_PE_PROPERTIES, "--d-model 9", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("d_model is 9"), std::string::npos) << r.err;
}

// ---- pe_pitfalls ---------------------------------------------------------------------------

TEST(PePitfallsApp, EveryExhibitHasItsNumbersAndAnExistingTest) {
  const RunResult r = run_program(XENC_APP_PE_PITFALLS, "", out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  // numbers from the formula and NumPy (see test_pitfalls.cpp)
  EXPECT_NE(r.out.find("correct 0.761720   buggy 0.681561"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("correct 54 of 512   buggy 273 of 512"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("d_model is 5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("correct 1.341635   buggy 1.161886"), std::string::npos) << r.out;
  // batch-axis positions leave the order invisible: cosine 1 for "cat"
  EXPECT_NE(r.out.find("buggy 1.000000  (1 = the order is invisible)"), std::string::npos) << r.out;
  // the first exhibit says where the mistake is found, and names no article or issue: a student
  // reading it cannot look those up
  EXPECT_NE(r.out.find("\n1. Exponent 2*i when i already steps by 2 (a loop common in published "
                       "code)\n---"),
            std::string::npos)
      << r.out;
  for (const char* word : {"article", "Article", "issue", "Issue"})
    EXPECT_EQ(r.out.find(word), std::string::npos) << word << " in:\n" << r.out;
  // every "caught by" names a TEST that exists in the named file
  std::ifstream f(std::string(XENC_SOURCE_DIR) + "/tests/apps/test_pitfalls.cpp");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string source = ss.str();
  std::size_t at = 0, found = 0;
  const std::string key = "caught by: tests/apps/test_pitfalls.cpp  PePitfalls.";
  while ((at = r.out.find(key, at)) != std::string::npos) {
    at += key.size();
    const std::string name = r.out.substr(at, r.out.find('\n', at) - at);
    EXPECT_NE(source.find("TEST(PePitfalls, " + name + ")"), std::string::npos) << name;
    ++found;
  }
  EXPECT_EQ(found, 6u);
}

// ---- attention_map -------------------------------------------------------------------------

TEST(AttentionMap, DefaultsWriteAHeatmapPerLayerAndHead) {
  const std::string dir = out_dir();
  const RunResult r = run_program(XENC_APP_ATTENTION_MAP, "", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Layer 2, head 2"), std::string::npos);
  for (int l = 1; l <= 2; ++l)
    for (int h = 1; h <= 2; ++h) {
      const std::string f = dir + "/attention_maps/attention_layer" + std::to_string(l) + "_head" +
                            std::to_string(h) + ".svg";
      EXPECT_TRUE(IsGoodSvg(f));
      EXPECT_EQ(cells(f), 5 * 5) << f;  // "the cat chased the mouse": T = 5
      // the tokens label both axes
      EXPECT_EQ(xpath_count(f, "//s:text[.='chased']"), 2) << f;
    }
  const std::string all = dir + "/attention_maps/attention_all.svg";
  EXPECT_TRUE(IsGoodSvg(all));
  EXPECT_EQ(cells(all), 4 * 25);
  // every panel names all 5 keys: the narrower cells of the combined figure rotate the labels
  // rather than drop "cat" and the second "the"
  EXPECT_EQ(xpath_count(all, "//s:text[@class='xtick']"), 4 * 5);
  EXPECT_EQ(xpath_count(all, "//s:text[@class='xtick'][.='cat']"), 4);
  EXPECT_EQ(xpath_count(all, "//s:text[@class='xtick'][.='the']"), 4 * 2);
}

TEST(AttentionMap, JsonHasBertvizHeadViewLayout) {
  const RunResult r =
      run_program(XENC_APP_ATTENTION_MAP, "--json --svg-dir '' --heads 4 --layers 3", out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["tokens"], nlohmann::json({"the", "cat", "chased", "the", "mouse"}));
  ASSERT_EQ(j["attention"].size(), 3u);  // layers
  for (const auto& layer : j["attention"]) {
    ASSERT_EQ(layer.size(), 1u);     // batch
    ASSERT_EQ(layer[0].size(), 4u);  // heads
    for (const auto& head : layer[0]) {
      ASSERT_EQ(head.size(), 5u);
      for (const auto& row : head) {
        ASSERT_EQ(row.size(), 5u);
        double sum = 0;
        for (const auto& w : row) sum += w.get<double>();
        EXPECT_NEAR(sum, 1.0, xenc::test::kRowSum);  // softmax rows
      }
    }
  }
}

// Saves a D = 8, 2-head encoder (dropout 0) as np.savez(path, **enc.state_dict()) would;
// returns its layer config.
xenc::EncoderLayerConfig save_small_encoder(const std::string& path, std::size_t dim_feedforward,
                                            std::size_t layers, bool final_norm,
                                            std::uint32_t seed) {
  xenc::EncoderLayerConfig lc;
  lc.d_model = 8;
  lc.nhead = 2;
  lc.dim_feedforward = dim_feedforward;
  lc.dropout = 0;
  xenc::TransformerEncoder enc(lc, layers, final_norm, seed);
  xenc::save_state_dict(path, enc);
  return lc;
}

TEST(AttentionMap, WeightsComeFromATransformerEncoderStateDict) {
  const std::string dir = out_dir();
  // a 3-layer encoder (D = 8, F = 24, final norm) saved as np.savez(path, **enc.state_dict()) does
  const xenc::EncoderLayerConfig lc =
      save_small_encoder(dir + "/enc.npz", /*dim_feedforward=*/24, /*layers=*/3,
                         /*final_norm=*/true, /*seed=*/11);
  const RunResult r =
      run_program(XENC_APP_ATTENTION_MAP, "--weights enc.npz --heads 2 --json --svg-dir ''", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["config"]["d_model"], 8);
  ASSERT_EQ(j["attention"].size(), 3u);
  // the same model built here (the app's seeded embedding, the file's layers) gives the same
  // weights
  const std::vector<std::string> tokens = {"the", "cat", "chased", "the", "mouse"};
  const auto vocab = xenc::Vocabulary::from_tokens(tokens);
  xenc::EncoderModelConfig cfg;
  cfg.vocab_size = vocab.size();
  cfg.layer = lc;
  cfg.num_layers = 3;
  cfg.final_norm = true;
  cfg.max_len = 64;
  cfg.seed = 42;
  xenc::EncoderModel model(cfg);
  model.encoder = xenc::load_transformer_encoder(dir + "/enc.npz", 2);
  xenc::ModelTrace trace;
  model.forward(vocab.encode_batch({"the cat chased the mouse"}).ids, xenc::Mask2(), &trace);
  for (std::size_t l = 0; l < 3; ++l)
    for (std::size_t h = 0; h < 2; ++h)
      for (std::size_t q = 0; q < 5; ++q)
        for (std::size_t k = 0; k < 5; ++k)
          EXPECT_NEAR(j["attention"][l][0][h][q][k].get<double>(),
                      trace.encoder.attention_weights[l](0, h, q, k), xenc::test::kOpAtol);
  // a missing file and heads that do not divide D are refused with a message
  RunResult bad = run_program(XENC_APP_ATTENTION_MAP, "--weights missing.npz", dir);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("missing.npz"), std::string::npos) << bad.err;
  bad = run_program(XENC_APP_ATTENTION_MAP, "--weights enc.npz --heads 3", dir);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("divisible"), std::string::npos) << bad.err;
}

// Layer 1 sees the token embeddings alone (rope and alibi add nothing to the input), and "the"
// appears at positions 0 and 3, so without positions every query weighs keys 0 and 3 equally.
// ALiBi multiplies them by exp(-m_h |i - j|): P[i][0] / P[i][3] = exp(-m_h (i - |i - 3|)) with the
// paper's slopes for H = 2: m = 2^-4, 2^-8. RoPE makes them differ too.
TEST(AttentionMap, RopeAndAlibiChangeTheFirstLayersWeights) {
  auto layer1 = [](const std::string& position) {
    const RunResult r = run_program(XENC_APP_ATTENTION_MAP,
                                    "--json --svg-dir '' --position " + position, out_dir());
    EXPECT_EQ(r.status, 0) << position << ": " << r.err;
    return nlohmann::json::parse(r.out)["attention"][0][0];  // [H][T][T]
  };
  const auto none = layer1("none"), alibi = layer1("alibi"), rope = layer1("rope");
  const double m[2] = {std::pow(2.0, -4), std::pow(2.0, -8)};
  double rope_moved = 0;
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 5; ++i) {
      EXPECT_NEAR(none[h][i][0].get<double>(), none[h][i][3].get<double>(), xenc::test::kRowSum);
      const double ratio = alibi[h][i][0].get<double>() / alibi[h][i][3].get<double>();
      EXPECT_NEAR(ratio, std::exp(-m[h] * (i - std::abs(i - 3))), xenc::test::kAlibiWeightRatio)
          << h << " " << i;
      rope_moved =
          std::max(rope_moved, std::abs(rope[h][i][0].get<double>() - rope[h][i][3].get<double>()));
    }
  EXPECT_GT(rope_moved, xenc::test::kRopeMovesWeights);
}

TEST(AttentionMap, JsonAloneWritesNoSvg) {
  const std::string dir = out_dir();
  const RunResult r = run_program(XENC_APP_ATTENTION_MAP, "--json", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NO_THROW(nlohmann::json::parse(r.out));
  EXPECT_FALSE(fs::exists(dir + "/attention_maps"));
  const RunResult both = run_program(XENC_APP_ATTENTION_MAP, "--json --svg-dir maps", dir);
  ASSERT_EQ(both.status, 0) << both.err;
  EXPECT_TRUE(IsGoodSvg(dir + "/maps/attention_all.svg"));
}

TEST(AttentionMap, WeightsConflictWithModelSizeOptions) {
  const std::string dir = out_dir();
  save_small_encoder(dir + "/enc.npz", /*dim_feedforward=*/16, /*layers=*/1, /*final_norm=*/false,
                     /*seed=*/3);
  for (const char* opt : {"--d-model 16", "--layers 3"}) {
    const RunResult r =
        run_program(XENC_APP_ATTENTION_MAP, std::string("--weights enc.npz --heads 2 ") + opt, dir);
    EXPECT_NE(r.status, 0) << opt;
    EXPECT_TRUE(has(r.err, "sets D and the number of layers; do not give " +
                               std::string(opt).substr(0, std::string(opt).find(' '))))
        << r.err;
  }
}

TEST(AttentionMap, BadInputGivesAMessageAndNonZeroExit) {
  const std::string dir = out_dir();
  RunResult r = run_program(XENC_APP_ATTENTION_MAP, "--heads 3", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("divisible"), std::string::npos) << r.err;
  r = run_program(XENC_APP_ATTENTION_MAP, "--sentence ''", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--sentence is empty"), std::string::npos) << r.err;
}

}  // namespace

// Runs the demo apps as a student would and checks what they print and write.
//
// The executables' paths come from CMake ($<TARGET_FILE:...>). SVGs are parsed with libxml2 (a
// real XML parser) and their heatmap cells counted with XPath; CSV values are compared with the
// sinusoidal formula evaluated here; JSON is parsed with nlohmann::json.
#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <xenc/io.hpp>  // the math (xenc.hpp) and save_state_dict
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Result {
  int status = -1;  // exit code
  std::string out, err;
};

// Runs `exe args` with the shell, in `cwd`; captures stdout and stderr separately.
Result run(const std::string& exe, const std::string& args, const std::string& cwd = ".") {
  const std::string err_file = cwd + "/stderr.txt";
  const std::string cmd = "cd '" + cwd + "' && '" + exe + "' " + args + " 2>'" + err_file + "'";
  Result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int st = pclose(pipe);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream f(err_file);
  std::stringstream ss;
  ss << f.rdbuf();
  r.err = ss.str();
  return r;
}

// A fresh output directory for the current test.
std::string out_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir = fs::path(XENC_TEST_OUT_DIR) / (std::string(info->test_suite_name()) + "." + info->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

// Parses an SVG file as XML; returns the number of nodes matching an XPath expression
// (namespace prefix "s" = SVG), or -1 when the file is not well-formed XML.
double xpath_count(const std::string& path, const std::string& expr) {
  xmlDocPtr doc = xmlReadFile(path.c_str(), nullptr, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (!doc) return -1;
  xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
  xmlXPathRegisterNs(ctx, BAD_CAST "s", BAD_CAST "http://www.w3.org/2000/svg");
  xmlXPathObjectPtr obj = xmlXPathEvalExpression(BAD_CAST ("count(" + expr + ")").c_str(), ctx);
  const double n = obj ? obj->floatval : -2;
  if (obj) xmlXPathFreeObject(obj);
  xmlXPathFreeContext(ctx);
  xmlFreeDoc(doc);
  return n;
}
double cells(const std::string& path) { return xpath_count(path, "//s:rect[@class='cell']"); }

// An SVG every browser shows: well-formed, an <svg> root with width, height and a title text,
// a colour bar when it has cells, and no <style> element (presentation attributes only).
::testing::AssertionResult IsGoodSvg(const std::string& path) {
  if (!fs::exists(path)) return ::testing::AssertionFailure() << path << " was not written";
  if (xpath_count(path, "/s:svg[@width and @height and @viewBox]") != 1)
    return ::testing::AssertionFailure() << path << " is not well-formed SVG with width/height/viewBox";
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

// ---- word_order ----------------------------------------------------------------------------

TEST(WordOrder, DefaultsPrintBothTablesAndTheExplanation) {
  const Result r = run(XENC_APP_WORD_ORDER, "", out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"Without positional information", "With sinusoidal positional encoding",
                        "token embedding", "+ positions", "layer 1", "layer 2", "sentence",
                        "permutation-equivariant", "\"chased\" sits at the same position"})
    EXPECT_NE(r.out.find(s), std::string::npos) << "missing \"" << s << "\" in:\n" << r.out;
}

TEST(WordOrder, JsonCosinesWithoutAndWithPositions) {
  const Result r = run(XENC_APP_WORD_ORDER, "--json", out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // without positions: permutation equivariance makes every cosine 1 up to float rounding
  const auto& none = j.at("without_pe");
  ASSERT_EQ(none.at("token_cosine").size(), 3u);
  for (const auto& [word, c] : none.at("token_cosine").items()) EXPECT_NEAR(c.get<double>(), 1.0, 1e-6) << word;
  EXPECT_NEAR(none.at("sentence_cosine").get<double>(), 1.0, 1e-6);
  // with sinusoidal positions the moved words and the sentences differ
  const auto& pe = j.at("with_pe");
  EXPECT_LT(pe.at("token_cosine").at("cat").get<double>(), 0.999);
  EXPECT_LT(pe.at("token_cosine").at("mouse").get<double>(), 0.999);
  EXPECT_LT(pe.at("sentence_cosine").get<double>(), 1.0 - 1e-5);
  // "chased" keeps its position: identical input, different after layer 1; the mean-pooled
  // input is identical too (same words at the same set of positions)
  const auto& stages = pe.at("stages");
  ASSERT_EQ(stages.size(), 4u);
  EXPECT_EQ(stages[1].at("stage"), "+ positions");
  EXPECT_NEAR(stages[1].at("token_cosine").at("chased").get<double>(), 1.0, 1e-12);
  EXPECT_LT(stages[1].at("token_cosine").at("cat").get<double>(), 0.999);
  EXPECT_NEAR(stages[1].at("sentence_cosine").get<double>(), 1.0, 1e-6);
  EXPECT_LT(stages[2].at("token_cosine").at("chased").get<double>(), 1.0 - 1e-5);
  EXPECT_FALSE(j.contains("with_learned"));
}

TEST(WordOrder, AllSchemesAddLearnedPositions) {
  const Result r = run(XENC_APP_WORD_ORDER, "--position all --json", out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("without_pe") && j.contains("with_pe") && j.contains("with_learned"));
  EXPECT_LT(j["with_learned"]["token_cosine"]["cat"].get<double>(), 0.999);
  const Result l = run(XENC_APP_WORD_ORDER, "--position learned --json", out_dir());
  ASSERT_EQ(l.status, 0) << l.err;
  EXPECT_TRUE(nlohmann::json::parse(l.out).contains("with_learned"));
}

TEST(WordOrder, RepeatedWordsAreMatchedByOccurrence) {
  const Result r = run(XENC_APP_WORD_ORDER,
                       "--a 'the dog bit the man' --b 'the man bit the dog' --json", out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& tc = j["without_pe"]["token_cosine"];
  for (const char* k : {"the", "dog", "bit", "the#2", "man"}) ASSERT_TRUE(tc.contains(k)) << k;
  for (const auto& [word, c] : tc.items()) EXPECT_NEAR(c.get<double>(), 1.0, 1e-6) << word;
  EXPECT_LT(j["with_pe"]["token_cosine"]["dog"].get<double>(), 0.999);
}

TEST(WordOrder, NonPermutationRunsOnSharedWordsAndSaysSo) {
  const std::string dir = out_dir();
  const Result r = run(XENC_APP_WORD_ORDER, "--a 'cat chased mouse' --b 'the dog chased the cat'", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("not permutations"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("shared words"), std::string::npos) << r.out;
  const Result j = run(XENC_APP_WORD_ORDER, "--a 'cat chased mouse' --b 'the dog chased the cat' --json", dir);
  const auto js = nlohmann::json::parse(j.out);
  EXPECT_FALSE(js["permutation"].get<bool>());
  EXPECT_EQ(js["with_pe"]["token_cosine"].size(), 2u);  // cat, chased
}

TEST(WordOrder, SvgFiguresParseWithACellPerValue) {
  const std::string dir = out_dir();
  const Result r = run(XENC_APP_WORD_ORDER, "--svg-dir figs", dir);
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
    const Result r = run(XENC_APP_WORD_ORDER, c.args, dir);
    EXPECT_NE(r.status, 0) << c.args;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << " -> stderr: " << r.err;
  }
}

// ---- pe_heatmap ----------------------------------------------------------------------------

TEST(PeHeatmap, DefaultsWriteHeatmapCsvAndLines) {
  const std::string dir = out_dir();
  const Result r = run(XENC_APP_PE_HEATMAP, "", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(IsGoodSvg(dir + "/pe_heatmap.svg"));
  EXPECT_EQ(cells(dir + "/pe_heatmap.svg"), 64 * 64);
  EXPECT_TRUE(IsGoodSvg(dir + "/pe_lines.svg"));
  EXPECT_EQ(xpath_count(dir + "/pe_lines.svg", "//s:polyline[@class='series']"), 4);
  EXPECT_TRUE(fs::exists(dir + "/pe_table.csv"));
}

TEST(PeHeatmap, CsvMatchesTheFormula) {
  const std::string dir = out_dir();
  const Result r = run(XENC_APP_PE_HEATMAP, "--positions 30 --d-model 6 --dims 0,5 --csv t.csv "
                                            "--svg h.svg --lines-svg l.svg", dir);
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
      EXPECT_NEAR(std::stod(cell), formula(p, j, 6), 1e-6) << "p = " << p << ", j = " << j;
    EXPECT_EQ(j, 6u);
    ++rows;
  }
  EXPECT_EQ(rows, 30u);
  // a hand value from source 004's d_model = 6 table: PE(1, 2) = sin(1 / 10000^(2/6)) = 0.04639922
  EXPECT_NEAR(formula(1, 2, 6), 0.04639922, 1e-8);
}

TEST(PeHeatmap, BadInputGivesAMessageAndNonZeroExit) {
  const std::string dir = out_dir();
  Result r = run(XENC_APP_PE_HEATMAP, "--d-model 7", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("d_model is 7"), std::string::npos) << r.err;
  r = run(XENC_APP_PE_HEATMAP, "--dims 3,99", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("99"), std::string::npos) << r.err;
  r = run(XENC_APP_PE_HEATMAP, "--svg /nonexistent/dir/x.svg", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("/nonexistent/dir/x.svg"), std::string::npos) << r.err;
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
  const Result r = run(XENC_APP_PE_PROPERTIES, "", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  // the printed max errors are float32 rounding only
  EXPECT_LT(number_after(r.out, "and all 16 dims: "), 1e-5) << r.out;
  EXPECT_LT(number_after(r.out, "over all 50 x 50 pairs: "), 1e-5) << r.out;
  // the first 2x2 block of R_3: [[cos 3, sin 3], [-sin 3, cos 3]] (w_0 = 1)
  char block[128];
  std::snprintf(block, sizeof block, "[[%9.6f %9.6f]  [%9.6f %9.6f]]", std::cos(3.0), std::sin(3.0),
                -std::sin(3.0), std::cos(3.0));
  EXPECT_NE(r.out.find(block), std::string::npos) << block << "\n" << r.out;
  // adjacent distance sqrt(sum_i 2 - 2 cos w_i), D = 16
  double s = 0;
  for (int i = 0; i < 8; ++i) s += 2 - 2 * std::cos(std::pow(10000.0, -2.0 * i / 16));
  EXPECT_NEAR(number_after(r.out, "sqrt(sum_i 2 - 2 cos w_i) = "), std::sqrt(s), 1e-6);
  EXPECT_TRUE(IsGoodSvg(dir + "/pe_similarity.svg"));
  EXPECT_EQ(cells(dir + "/pe_similarity.svg"), 50 * 50);
  EXPECT_TRUE(IsGoodSvg(dir + "/pe_similarity_by_offset.svg"));
}

TEST(PeProperties, BadInputGivesAMessageAndNonZeroExit) {
  const std::string dir = out_dir();
  Result r = run(XENC_APP_PE_PROPERTIES, "--shift 60", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--shift"), std::string::npos) << r.err;
  r = run(XENC_APP_PE_PROPERTIES, "--d-model 9", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("d_model is 9"), std::string::npos) << r.err;
}

// ---- pe_pitfalls ---------------------------------------------------------------------------

TEST(PePitfallsApp, EveryExhibitHasItsNumbersAndAnExistingTest) {
  const Result r = run(XENC_APP_PE_PITFALLS, "", out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  // numbers from the formula and NumPy (see test_pitfalls.cpp)
  EXPECT_NE(r.out.find("correct 0.761720   buggy 0.681561"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("correct 54 of 512   buggy 273 of 512"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("d_model is 5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("correct 1.341635   buggy 1.161886"), std::string::npos) << r.out;
  // batch-axis positions leave the order invisible: cosine 1 for "cat"
  EXPECT_NE(r.out.find("buggy 1.000000  (1 = the order is invisible)"), std::string::npos) << r.out;
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
  const Result r = run(XENC_APP_ATTENTION_MAP, "", dir);
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
  EXPECT_TRUE(IsGoodSvg(dir + "/attention_maps/attention_all.svg"));
  EXPECT_EQ(cells(dir + "/attention_maps/attention_all.svg"), 4 * 25);
}

TEST(AttentionMap, JsonHasBertvizHeadViewLayout) {
  const Result r = run(XENC_APP_ATTENTION_MAP, "--json --svg-dir '' --heads 4 --layers 3", out_dir());
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
        EXPECT_NEAR(sum, 1.0, 1e-5);  // softmax rows
      }
    }
  }
}

TEST(AttentionMap, WeightsComeFromATransformerEncoderStateDict) {
  const std::string dir = out_dir();
  // a 3-layer encoder (D = 8, F = 24, final norm) saved as np.savez(path, **enc.state_dict()) does
  xenc::EncoderLayerConfig lc;
  lc.d_model = 8;
  lc.nhead = 2;
  lc.dim_feedforward = 24;
  lc.dropout = 0;
  xenc::TransformerEncoder enc(lc, 3, /*final_norm=*/true, /*seed=*/11);
  xenc::save_state_dict(dir + "/enc.npz", enc);
  const Result r = run(XENC_APP_ATTENTION_MAP, "--weights enc.npz --heads 2 --json --svg-dir ''", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["config"]["d_model"], 8);
  ASSERT_EQ(j["attention"].size(), 3u);
  // the same model built here (the app's seeded embedding, the file's layers) gives the same weights
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
                      trace.encoder.attention_weights[l](0, h, q, k), 1e-6);
  // a missing file and heads that do not divide D are refused with a message
  Result bad = run(XENC_APP_ATTENTION_MAP, "--weights missing.npz", dir);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("missing.npz"), std::string::npos) << bad.err;
  bad = run(XENC_APP_ATTENTION_MAP, "--weights enc.npz --heads 3", dir);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("divisible"), std::string::npos) << bad.err;
}

TEST(AttentionMap, BadInputGivesAMessageAndNonZeroExit) {
  const std::string dir = out_dir();
  Result r = run(XENC_APP_ATTENTION_MAP, "--heads 3", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("divisible"), std::string::npos) << r.err;
  r = run(XENC_APP_ATTENTION_MAP, "--sentence ''", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--sentence is empty"), std::string::npos) << r.err;
}

}  // namespace

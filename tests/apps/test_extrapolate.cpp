// xenc-extrapolate on SMALL settings (they run under the sanitizers too): the JSON, the table
// against the JSON, the conclusions against the numbers, the figure, learned positions beyond
// their table, and every bad input's message and exit code. The default run, with the result
// of the experiment, is test_extrapolate_full.cpp.
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <cmath>
#include <functional>
#include <set>
#include <sstream>

#include "extrapolate_util.hpp"
#include "support/svg_xpath.hpp"
#include "xenc/nn/position.hpp"

using namespace extrapolate_test;

namespace {
// L_train = 8, tested at 8, 16, 32 (4 × L_train); a model small enough for the sanitizers.
const std::string kModel =
    "--train-length 8 --test-lengths 16,32 --train-sequences 300 "
    "--d-model 16 --heads 2 --ff 32 --layers 1 --warmup 5 --lr 0.01";
const std::string kSmall = kModel + " --test-sequences 60 --epochs 2";

// The points of every <polyline class="series"> of an SVG file, parsed by libxml2.
std::vector<std::vector<std::pair<double, double>>> series_points(const std::string& path) {
  std::vector<std::vector<std::pair<double, double>>> out;
  xmlDocPtr doc =
      xmlReadFile(path.c_str(), nullptr, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (!doc) return out;
  // every element in document order
  std::vector<xmlNodePtr> nodes;
  std::function<void(xmlNodePtr)> walk = [&](xmlNodePtr n) {
    nodes.push_back(n);
    for (xmlNodePtr c = n->children; c; c = c->next)
      if (c->type == XML_ELEMENT_NODE) walk(c);
  };
  walk(xmlDocGetRootElement(doc));
  for (xmlNodePtr n : nodes) {
    if (std::string(reinterpret_cast<const char*>(n->name)) != "polyline") continue;
    xmlChar* cls = xmlGetProp(n, BAD_CAST "class");
    xmlChar* pts = xmlGetProp(n, BAD_CAST "points");
    if (cls && pts && std::string(reinterpret_cast<char*>(cls)) == "series") {
      std::vector<std::pair<double, double>> p;
      std::string text(reinterpret_cast<char*>(pts));
      for (char& ch : text)
        if (ch == ',') ch = ' ';
      std::istringstream in(text);
      double x, y;
      while (in >> x >> y) p.emplace_back(x, y);
      out.push_back(p);
    }
    xmlFree(cls);
    xmlFree(pts);
  }
  xmlFreeDoc(doc);
  return out;
}
}  // namespace

// Every registered scheme, every test length (L_train added), the positions counted; learned
// refuses the lengths beyond its table with the library's shape_error message, never a crash.
TEST(Extrapolate, JsonHasEverySchemeAndLength) {
  const Result r = run(kSmall + " --json", out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["test_lengths"], json::array({8, 16, 32}));
  EXPECT_EQ(j["task"]["chance"], 0.125);
  EXPECT_EQ(j["task"]["train_lengths"], json::array({4, 8}));  // L_train / 2 to L_train
  EXPECT_EQ(j["blas_threads"], 1);
  const auto& kinds = xenc::all_position_kinds();
  ASSERT_EQ(j["schemes"].size(), kinds.size());
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const auto& s = j["schemes"][i];
    const std::string name = xenc::to_string(kinds[i]);
    SCOPED_TRACE(name);
    EXPECT_EQ(s["name"], name);
    EXPECT_EQ(s["steps"], 2 * 10);  // 300 sequences in batches of 32
    ASSERT_EQ(s["test"].size(), 3u);
    for (const auto& l : s["test"]) {
      const std::size_t T = l["length"];
      const bool beyond_table = name == "learned" && T > 8;
      EXPECT_EQ(l["available"], !beyond_table) << T;
      if (beyond_table) {
        EXPECT_TRUE(l["accuracy"].is_null());
        EXPECT_EQ(l["error"], "LearnedPosition.forward: x has shape [60, " + std::to_string(T) +
                                  ", 16], expected [B, T, D] with T <= max_len = 8");
      } else {
        EXPECT_EQ(l["positions"], 60 * (T - 2));  // neighbour_sum, k = 1: positions 1 .. T-2
        EXPECT_GE(l["accuracy"].get<double>(), 0.0);
        EXPECT_LE(l["accuracy"].get<double>(), 1.0);
      }
    }
    // the curve ends with the accuracy at L_train that the test reports
    EXPECT_EQ(s["curve"]["accuracy_at_train_length"].back(), at(s, 8)["accuracy"]);
  }
  EXPECT_EQ(j["schemes"][2]["max_len"], 8);
  EXPECT_TRUE(j["files"].empty()) << "--json without --svg-dir writes no figures";
  expect_a_conclusion_per_scheme(j);
}

// The text table shows the JSON's numbers (the runs are seeded: the same settings give the same
// models), the conclusions are the JSON's, and learned's dashes are explained.
TEST(Extrapolate, TableAndConclusionsEqualTheJson) {
  const std::string dir = out_dir();
  const Result t = run(kSmall + " --svg-dir figs", dir);
  const Result r = run(kSmall + " --json", dir);
  ASSERT_EQ(t.status, 0) << t.err;
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  // the description: the rule, the ignored positions (as "positions" in the JSON count), the data
  EXPECT_EQ(
      t.out.rfind(
          "Task neighbour_sum: random sequences of V = 8 symbols; at each position p the "
          "label is (s[p-k] + s[p+k]) mod V, with k = 1 (positions without both neighbours "
          "are ignored by the loss).\nTraining: 300 sequences of lengths 4 to 8 (L_train = 8). "
          "Test: 60 sequences at each length 8, 16 and 32. Chance: 1/V = 12.5%.\nModel: D=16, "
          "H=2, F=32, 1 layer, post-norm, relu; AdamW lr 0.01 (warm-up 5 steps, cosine decay), "
          "batch 32, 2 epochs, seed 0; the same data, batches and initial weights for every "
          "scheme; 1 BLAS thread.\n",
          0),
      0u)
      << t.out;
  EXPECT_EQ(j["task"]["train_labelled_positions"].get<std::size_t>() > 0, true);
  EXPECT_TRUE(contains(t.out, "scheme           train        *8        16        32      time"))
      << t.out;
  for (const auto& s : j["schemes"]) {
    std::string row = s["name"].get<std::string>();
    row += std::string(13 - row.size(), ' ');
    char cell[32];
    std::snprintf(cell, sizeof cell, "%9s", pct(s["train_accuracy"]).c_str());
    row += cell;
    for (const auto& l : s["test"]) {
      std::snprintf(cell, sizeof cell, " %9s", l["available"] ? pct(l["accuracy"]).c_str() : "-");
      row += cell;
    }
    EXPECT_TRUE(contains(t.out, row + " ")) << row << "\n" << t.out;
  }
  for (const auto& c : j["conclusions"])
    EXPECT_TRUE(contains(t.out, c.get<std::string>() + "\n")) << c;
  EXPECT_TRUE(contains(t.out,
                       "- learned has no embedding beyond its table (max_len = 8): "
                       "LearnedPosition.forward: x has shape [60, 16, 16], expected [B, T, D] "
                       "with T <= max_len = 8"))
      << t.out;
  // plain progress lines (stdout is not a terminal), one per epoch and scheme
  for (const char* line :
       {"none: epoch 1/2, step 10/20", "alibi: epoch 2/2, step 20/20", "acc at length 8 "})
    EXPECT_TRUE(contains(t.out, line)) << line;
  EXPECT_TRUE(contains(t.out, "Wrote: figs/extrapolate_accuracy.svg"));
  const Result q = run(kSmall + " --quiet --svg-dir ''", dir);
  ASSERT_EQ(q.status, 0) << q.err;
  EXPECT_FALSE(contains(q.out, "epoch 1/2"));
  EXPECT_FALSE(contains(q.out, "Wrote:"));
  EXPECT_TRUE(contains(q.out, "scheme           train"));
}

// Without positions the encoder is permutation-equivariant: the output at p depends on s[p] and
// the bag of symbols, not on which symbols sit next to p, so the neighbours' sum is a guess.
TEST(Extrapolate, NoneIsAtChanceBecauseItSeesOnlyABagOfSymbols) {
  const Result r =
      run(kModel + " --epochs 2 --json --schemes none --test-sequences 400", out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  for (const auto& l : j["schemes"][0]["test"]) {
    // 400 sequences: at least 2,400 positions, standard error of a guess below 0.7 points; the
    // bag gives short sequences a small edge (data/position_tasks.hpp), hence 5 points
    EXPECT_NEAR(l["accuracy"].get<double>(), 0.125, 0.05) << l["length"];
  }
  EXPECT_EQ(j["conclusions"][1].get<std::string>().rfind("none is at chance at every length", 0),
            0u);
}

// One line per scheme, and two reference lines without markers (viz::ReferenceLine): chance,
// horizontal, and L_train, vertical at the first tick.
TEST(Extrapolate, FigureHasALinePerSchemeAndTheTrainLengthMarker) {
  const std::string dir = out_dir();
  const Result r = run(kSmall + " --quiet", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string path = dir + "/extrapolate_accuracy.svg";
  ASSERT_EQ(xenc::test::svg_file_xpath_number(path, "count(/s:svg)"), 1.0)
      << "not well-formed SVG: " << path;
  const auto series = series_points(path);
  const std::size_t K = xenc::all_position_kinds().size();
  ASSERT_EQ(series.size(), K);
  // schemes: one point per readable length (learned: only L_train), x increasing
  std::size_t points = 0;
  for (std::size_t i = 0; i < K; ++i) {
    const bool learned = xenc::all_position_kinds()[i] == xenc::PositionKind::learned;
    EXPECT_EQ(series[i].size(), learned ? 1u : 3u) << i;
    points += series[i].size();
  }
  // markers on the data only, none on the reference lines
  EXPECT_EQ(xenc::test::svg_file_xpath_number(path, "count(//s:circle)"), double(points));
  auto ref = [&](int i, const char* attr) {
    return xenc::test::svg_file_xpath_number(
        path, "number((//s:line[@class='reference'])[" + std::to_string(i) + "]/@" + attr + ")");
  };
  ASSERT_EQ(xenc::test::svg_file_xpath_number(path, "count(//s:line[@class='reference'])"), 2.0);
  EXPECT_EQ(ref(1, "y1"), ref(1, "y2"));        // chance: horizontal
  EXPECT_EQ(ref(2, "x1"), ref(2, "x2"));        // L_train: vertical
  EXPECT_EQ(ref(2, "x1"), series[0][0].first);  // at the first length, L_train = 8
  const std::string svg = read_file(path);
  EXPECT_TRUE(contains(svg, "L_train = 8 (longest training length)"));
  EXPECT_TRUE(contains(svg, "chance (1/V = 12.5%)"));
  for (auto kind : xenc::all_position_kinds()) {
    const std::string name = xenc::to_string(kind);
    EXPECT_TRUE(
        contains(svg, ">" + name + (name == "learned" ? " (no embedding beyond length 8)<" : "<")))
        << name;
  }
}

// --learned-max-len beyond L_train: learned reads every length with rows never trained, and the
// conclusion says so.
TEST(Extrapolate, LearnedTableSizedToTheTestsUsesUntrainedRows) {
  // copy_left (s[p-1]), which this small model learns in 6 epochs
  const Result r = run(kModel +
                           " --rule copy_left --test-sequences 60 --json --schemes learned "
                           "--learned-max-len 32 --epochs 6",
                       out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  const auto& s = j["schemes"][0];
  EXPECT_EQ(s["max_len"], 32);
  for (const auto& l : s["test"]) EXPECT_TRUE(l["available"].get<bool>()) << l["length"];
  ASSERT_GT(at(s, 8)["accuracy"].get<double>(), 0.125 + 0.05) << "learned did not learn copy_left";
  const std::string c = j["conclusions"][1];
  EXPECT_TRUE(contains(c,
                       "learned (rows 8 to 31 of its position table were never trained: they keep "
                       "their random initial values)"))
      << c;
  expect_a_conclusion_per_scheme(j);
}

TEST(Extrapolate, BadInputGetsAMessageAndNonZeroExit) {
  const std::string dir = out_dir();
  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{
           {"--heads 3", "--d-model (64) must be divisible by --heads (3)"},
           {"--d-model 18 --heads 6 --schemes rope",
            "expected an even head dimension for rope positions"},
           {"--test-lengths 2",
            "--test-lengths holds 2, expected >= 3 (neighbour_sum with --offset 1"},
           {"--train-length 4 --offset 2", "--train-length is 4, expected >= 5"},
           {"--min-train-length 20", "--min-train-length is 20, expected 3...16"},
           {"--learned-max-len 8", "--learned-max-len is 8, expected >= --train-length (16)"},
           {"--rule reverse", "--rule"},
           {"--schemes bogus", "position is \"bogus\""},
           {"--epochs 0", "--epochs"},
           {"--symbols -1", "--symbols"},
           {"--test-lengths 16,5000", "--test-lengths"},
           {"--lr 0", "--lr"},
           {"--lr inf", "--lr"},
           {"--tolerance 0", "--tolerance"},
           {kSmall + " --quiet --svg-dir /proc/no/such/dir", "/proc/no/such/dir"}}) {
    const Result r = run(c.args, dir);
    EXPECT_NE(r.status, 0) << c.args;
    EXPECT_TRUE(contains(r.err + r.out, c.message)) << c.args << "\n" << r.err << r.out;
  }
  const Result v = run("--version", dir);
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.out.rfind("xenc-extrapolate ", 0), 0u) << v.out;
  const Result full = run(kSmall + " --quiet > /dev/full", dir);
  EXPECT_EQ(full.status, 1);
  EXPECT_TRUE(contains(full.err, "writing to standard output failed")) << full.err;
}

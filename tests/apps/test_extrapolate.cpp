// xenc-extrapolate on SMALL settings (they run under the sanitizers too): the JSON, the table
// against the JSON, the conclusions against the numbers, the figure, learned positions beyond
// their table, and every bad input's message and exit code. The default run, with the result
// of the experiment, is test_extrapolate_full.cpp.
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <cmath>
#include <fstream>
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
           {"--learned-max-len 8",
            "--learned-max-len is 8, expected >= 16 (the longest training sequence in tokens)"},
           {"--rule reverse_string --learned-max-len 20",
            "--learned-max-len is 20, expected >= 32 (the longest training sequence in tokens)"},
           {"--study --study-tasks reverse", "--study-tasks: parse_position_rule: unknown rule"},
           {"--study --randomized-positions 90",
            "--randomized-positions is 90, expected >= 96 (the longest test sequence of "
            "duplicate_string in tokens"},
           {"--study --seeds 0", "--seeds"},
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

// ---- the tasks of Ruoss et al. through --rule -------------------------------------------------

// A task answered at <out> placeholders: the paper's alphabet by default (V = 2), every input
// length from 1 (the paper trains 1 to 40), and the score counts the answer tokens only:
// duplicate_string answers 2n tokens after an input of n, so n test sequences of length L count
// 2L positions each; binary_addition has 3 classes (0, 1, <end>) on 2 symbols.
TEST(ExtrapolateRules, RuossTasksTrainAndScoreTheirAnswerTokens) {
  const std::string dir = out_dir();
  const std::string small =
      "--train-length 6 --test-lengths 6,12 --train-sequences 64 --test-sequences 10 --epochs 1 "
      "--d-model 8 --heads 2 --ff 16 --layers 1 --schemes none,rope --json";
  const Result d = run("--rule duplicate_string " + small, dir);
  ASSERT_EQ(d.status, 0) << d.err;
  const json j = json::parse(d.out);
  EXPECT_EQ(j["task"]["rule"], "duplicate_string");
  EXPECT_EQ(j["task"]["symbols"], 2);
  EXPECT_EQ(j["task"]["chance"], 0.5);
  EXPECT_EQ(j["task"]["train_lengths"], json::array({1, 6}));
  for (const auto& s : j["schemes"]) {
    EXPECT_EQ(at(s, 6)["positions"], 10 * 2 * 6);
    EXPECT_EQ(at(s, 12)["positions"], 10 * 2 * 12);
  }
  const Result a = run("--rule binary_addition " + small, dir);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_NEAR(json::parse(a.out)["task"]["chance"].get<double>(), 1.0 / 3.0, 1e-12);
  // a parity answer is one token per sequence
  const Result p = run("--rule parity_check " + small, dir);
  ASSERT_EQ(p.status, 0) << p.err;
  const json parity = json::parse(p.out);  // kept: a loop over a temporary's member dangles
  for (const auto& s : parity["schemes"]) EXPECT_EQ(at(s, 12)["positions"], 10);
  // the text names the task and what is scored
  const Result t = run("--rule reverse_string --quiet --svg-dir '' " +
                           small.substr(0, small.size() - std::string(" --json").size()),
                       dir);
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_EQ(t.out.rfind("Task reverse_string (Ruoss et al. 2023): an input of n symbols (V = 2), "
                        "then m <out> placeholders; the labels at the placeholders are the input "
                        "reversed (m = n). Score: per-token accuracy at the placeholders.\n",
                        0),
            0u)
      << t.out;
  // the library's own check of the alphabet: a bit task refuses V = 8
  const Result v = run("--rule parity_check --symbols 8 " + small, dir);
  EXPECT_NE(v.status, 0);
  EXPECT_TRUE(contains(v.err, "num_symbols is 8, expected 2 (parity_check reads bits)")) << v.err;
}

// ---- the study (--study) ----------------------------------------------------------------------

namespace {
// 2 tasks x (6 schemes + 5 randomized) x 2 seeds = 44 tiny models
const std::string kStudy =
    "--study --study-tasks reverse_string,parity_check --seeds 2 --train-length 4 "
    "--test-lengths 4,6,8 --train-sequences 64 --test-sequences 10 --epochs 1 --d-model 8 "
    "--heads 2 --ff 16 --layers 1 --randomized-positions 16";

std::string spread_cell(const json& seeds_values) {
  // "mean [min-max]" in points, from the seeds' own numbers
  double sum = 0, lo = 2, hi = -1;
  for (const auto& v : seeds_values) {
    const double x = v.get<double>();
    sum += x, lo = std::min(lo, x), hi = std::max(hi, x);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f [%.1f-%.1f]", 100.0 * sum / double(seeds_values.size()),
                100.0 * lo, 100.0 * hi);
  return buf;
}
}  // namespace

// Every cell of the grid is in the JSON with every seed; "beyond" is the mean over the lengths
// longer than L_train; the text's tables show the JSON's numbers as mean [min-max] over the
// seeds (computed here from the seeds' numbers), and every conclusion names its task.
TEST(ExtrapolateStudy, JsonHasEveryCellTextAgreesConclusionsNameTheirTask) {
  const std::string dir = out_dir();
  const Result r = run(kStudy + " --json", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  const json& study = j["study"];
  EXPECT_EQ(study["models"], 44);
  EXPECT_EQ(study["spread"], "min and max over the seeds");
  ASSERT_EQ(study["tasks"].size(), 2u);
  const std::vector<std::string> schemes = {"none", "sinusoidal", "learned",
                                            "rope", "alibi",      "relative"};
  const std::vector<std::string> tasks = {"reverse_string", "parity_check"};
  for (std::size_t k = 0; k < 2; ++k) {
    const json& t = study["tasks"][k];
    EXPECT_EQ(t["rule"], tasks[k]);
    EXPECT_EQ(t["test_lengths"], json::array({4, 6, 8}));
    ASSERT_EQ(t["cells"].size(), 11u);
    std::size_t i = 0;
    for (bool randomized : {false, true})
      for (const auto& s : schemes) {
        if (randomized && s == "none") continue;
        const json& c = t["cells"][i++];
        SCOPED_TRACE(tasks[k] + " " + s + (randomized ? "+rand" : ""));
        EXPECT_EQ(c["scheme"], s);
        EXPECT_EQ(c["randomized"], randomized);
        EXPECT_EQ(c["seeds"], json::array({0, 1}));
        ASSERT_EQ(c["accuracy"].size(), 2u);
        for (std::size_t seed = 0; seed < 2; ++seed) {
          const json& acc = c["accuracy"][seed];
          ASSERT_EQ(acc.size(), 3u);
          for (const auto& a : acc) EXPECT_TRUE(a.is_number()) << "a cell without a number";
          // beyond L_train = 4: the mean of lengths 6 and 8
          EXPECT_NEAR(c["beyond"][seed].get<double>(),
                      (acc[1].get<double>() + acc[2].get<double>()) / 2, 1e-12);
        }
      }
  }
  // every conclusion names a task of the study
  const std::vector<std::string> claims = j["conclusions"];
  ASSERT_EQ(claims.size(), 2 * 2 + 2u);
  for (const auto& c : claims) {
    bool named = false;
    for (const auto& t : tasks) named = named || contains(c, t);
    EXPECT_TRUE(named) << c;
  }
  // the mean gain: randomized minus plain, per seed, over the schemes whose plain and randomized
  // cells both learned the task at L_train = 4 (every seed at least halfway from chance to 100%
  // at length 4, the first test length), over the 2 tasks
  auto learned = [](const json& task, const json& cell) {
    const double halfway = task["chance"].get<double>() + (1 - task["chance"].get<double>()) / 2;
    for (const auto& seed : cell["accuracy"])
      if (!(seed[0].get<double>() >= halfway)) return false;
    return true;
  };
  double gain = 0;
  int pairs = 0, scheme_task_pairs = 0;
  std::vector<std::string> pair_tasks;  // the tasks that give a pair, named by the sentence
  for (const auto& t : study["tasks"])
    for (const auto& c : t["cells"]) {
      // the JSON's own flag is the rule's answer
      EXPECT_EQ(c["learned_at_train_length"].get<bool>(), learned(t, c)) << c["scheme"];
      if (!c["randomized"].get<bool>() || !learned(t, c)) continue;
      for (const auto& p : t["cells"])
        if (!p["randomized"].get<bool>() && p["scheme"] == c["scheme"] && learned(t, p)) {
          ++scheme_task_pairs;
          if (std::find(pair_tasks.begin(), pair_tasks.end(), t["rule"]) == pair_tasks.end())
            pair_tasks.push_back(t["rule"]);
          for (std::size_t seed = 0; seed < 2; ++seed, ++pairs)
            gain += c["beyond"][seed].get<double>() - p["beyond"][seed].get<double>();
        }
    }
  if (pairs == 0) {
    EXPECT_TRUE(study["mean_gain"].is_null()) << study["mean_gain"];
    EXPECT_TRUE(contains(claims.back(),
                         "No scheme learned reverse_string and parity_check at "
                         "L_train both plain and randomized"))
        << claims.back();
  } else {
    EXPECT_NEAR(study["mean_gain"].get<double>(), gain / pairs, 1e-12);
    std::string named = pair_tasks[0];
    if (pair_tasks.size() == 2) named += " and " + pair_tasks[1];
    char sentence[256];
    std::snprintf(sentence, sizeof sentence,
                  "averaged over the %d scheme-task pair%s whose plain and randomized forms both "
                  "learned the task at L_train (%s): %+.1f points",
                  scheme_task_pairs, scheme_task_pairs == 1 ? "" : "s", named.c_str(),
                  100.0 * gain / pairs);
    EXPECT_TRUE(contains(claims.back(), sentence)) << sentence << "\n" << claims.back();
  }

  // the text: the same seeded models, so the same numbers
  const Result t = run(kStudy + " --svg-dir figs", dir);
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_EQ(
      t.out.rfind(
          "Study: tasks reverse_string, parity_check; every scheme (relative too), each plain "
          "and randomized (positions a sorted random sample from [0, 16) in training; none "
          "only plain); 2 seeds (0 to 1); 44 models.\nEach model: trained on inputs of "
          "lengths 1 to 4 (2 to 4 for missing_duplicate_string), 64 sequences x 1 epochs, "
          "batch 32; D=8, H=2, F=16, 1 layer, AdamW lr 0.003. Test: 10 sequences at each "
          "input length 4, 6 and 8.\n",
          0),
      0u)
      << t.out;
  EXPECT_TRUE(contains(t.out,
                       "(* = L_train; +rand = randomized positions; beyond = mean over the "
                       "longer lengths; plain learned has a row for every test position, "
                       "rows beyond training never trained; 44 models, "))
      << t.out;
  for (const auto& task : study["tasks"]) {
    EXPECT_TRUE(contains(t.out, task["rule"].get<std::string>() +
                                    " (V = 2, chance 1/C = 50.0%; trained on lengths 1 to 4): "
                                    "accuracy % mean [min-max] over 2 seeds\n"))
        << t.out;
    for (const auto& c : task["cells"]) {
      std::string row = c["scheme"].get<std::string>() + (c["randomized"] ? "+rand" : "");
      row += std::string(16 - row.size(), ' ');
      char cell[64];
      for (std::size_t i = 0; i < 3; ++i) {
        json column = json::array();
        for (const auto& seed : c["accuracy"]) column.push_back(seed[i]);
        std::snprintf(cell, sizeof cell, " %17s", spread_cell(column).c_str());
        row += cell;
      }
      std::snprintf(cell, sizeof cell, " %17s", spread_cell(c["beyond"]).c_str());
      row += cell;
      EXPECT_TRUE(contains(t.out, row + "\n")) << row << "\n" << t.out;
    }
  }
  for (const auto& c : claims) EXPECT_TRUE(contains(t.out, c + "\n")) << c;
  EXPECT_TRUE(contains(t.out, "Wrote: figs/study_accuracy.svg"));
  // the figure: three panels (lowest seed, mean, highest seed) of 11 schemes x 2 tasks
  const std::string svg = read_file(dir + "/figs/study_accuracy.svg");
  std::size_t cells = 0;
  for (std::size_t p = svg.find("class=\"cell\""); p != std::string::npos;
       p = svg.find("class=\"cell\"", p + 1))
    ++cells;
  EXPECT_EQ(cells, 3u * 11u * 2u);
  for (const char* panel : {">lowest seed<", ">mean over seeds<", ">highest seed<"})
    EXPECT_TRUE(contains(svg, panel)) << panel;
  // each cell's mean over the seeds printed as the tables print accuracies: "%.1f" of the
  // JSON's per-seed beyond accuracies, in a cell's text
  for (const auto& task : study["tasks"])
    for (const auto& c : task["cells"]) {
      double sum = 0.0;
      for (const auto& a : c["beyond"]) sum += a.get<double>();
      char text[64];
      std::snprintf(text, sizeof text, "\">%.1f</text>", 100.0 * sum / double(c["beyond"].size()));
      EXPECT_TRUE(contains(svg, text)) << text;
    }
}

// The time is decided before anything is built: a grid that the estimate puts over
// --max-minutes is refused at once, naming the grid, and nothing is trained.
TEST(ExtrapolateStudy, AGridOverTheTimeLimitIsRefusedUpFront) {
  const Result r = run("--study --seeds 20 --epochs 1000 --max-minutes 1", out_dir());
  EXPECT_EQ(r.status, 1);
  // 7 tasks x (6 plain + 5 randomized) x 20 seeds; 12000 sequences x 1000 epochs / batch 32
  EXPECT_TRUE(contains(r.err, "training 1540 model(s) of 375000 steps would take about")) << r.err;
  EXPECT_TRUE(contains(r.err, "7 tasks x 6 schemes x {plain, randomized} x 20 seeds = 1540 models"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "more than the limit of 1 min (--max-minutes 1)")) << r.err;
  EXPECT_TRUE(r.out.empty()) << "nothing printed, nothing trained: " << r.out;
}

// ---- a study read back (--study-from) ----------------------------------------------------------

namespace {

// The committed study, the run apps/extrapolate/README.md shows.
const std::string kCommittedStudy =
    std::string(XENC_SOURCE_DIR) + "/apps/extrapolate/study/study_L8.json";

// "154 models, 690.4 s of training and testing": the one number two runs of a study differ in
std::string without_seconds(std::string text) {
  const std::string tail = " s of training and testing)";
  const std::size_t end = text.find(tail);
  if (end == std::string::npos) return text;
  const std::size_t start = text.rfind(", ", end);
  return text.replace(start + 2, end - start - 2, "<seconds>");
}

// The lines of `text` between the line that starts with `heading` and the end of the first
// fenced block after it (the fences left out); "" when there is none.
std::string fenced_block_after(const std::string& text, const std::string& heading) {
  const std::size_t h = text.find("\n" + heading);
  if (h == std::string::npos) return "";
  const std::size_t open = text.find("\n```", h + 1);
  if (open == std::string::npos) return "";
  const std::size_t body = text.find('\n', open + 1) + 1;
  const std::size_t close = text.find("\n```\n", body - 1);
  if (close == std::string::npos) return "";
  return text.substr(body, close + 1 - body);
}

json without_files(json j) {
  j.erase("files");
  return j;
}

}  // namespace

// --study-from prints what the study printed, from its JSON alone: the same header, tables and
// conclusions (the report's functions run on the StudyResult read back), the same figure byte for
// byte, and with --json the same JSON; only the study's own clock differs between two runs.
TEST(ExtrapolateStudy, StudyFromPrintsWhatTheStudyPrinted) {
  const std::string dir = out_dir();
  const Result j = run(kStudy + " --json --svg-dir trained", dir);
  ASSERT_EQ(j.status, 0) << j.err;
  {
    std::ofstream f(dir + "/study.json");
    f << j.out;
  }
  const Result text = run(kStudy + " --quiet --svg-dir text", dir);
  ASSERT_EQ(text.status, 0) << text.err;
  const Result again = run("--study-from study.json --quiet --svg-dir again", dir);
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_TRUE(again.err.empty()) << again.err;
  std::string expected = without_seconds(text.out);
  expected.replace(expected.find("Wrote: text/"), 12, "Wrote: again/");
  EXPECT_EQ(without_seconds(again.out), expected);
  // the seconds are the JSON's
  char seconds[64];
  std::snprintf(seconds, sizeof seconds, "44 models, %.1f s of training and testing)",
                json::parse(j.out)["study"]["seconds"].get<double>());
  EXPECT_TRUE(contains(again.out, seconds)) << seconds << "\n" << again.out;
  EXPECT_EQ(read_file(dir + "/again/study_accuracy.svg"),
            read_file(dir + "/trained/study_accuracy.svg"));
  // --json: the JSON again, every number to the last bit (the files it wrote aside)
  const Result json_again = run("--study-from study.json --json", dir);
  ASSERT_EQ(json_again.status, 0) << json_again.err;
  EXPECT_EQ(without_files(json::parse(json_again.out)), without_files(json::parse(j.out)));
  EXPECT_TRUE(json::parse(json_again.out)["files"].empty()) << "--json without --svg-dir: no SVG";
}

// The committed study (apps/extrapolate/study/study_L8.json) is the run the README shows: read
// back, it prints exactly the README's "Output" block (the progress lines, which the README
// leaves out, are printed while training only). So every number and every conclusion of that
// block is the program's, from that file; an edited number in either fails here. And the file is
// what the program writes: re-emitted with --json it is itself.
TEST(ExtrapolateStudy, CommittedJsonIsTheReadmeRun) {
  const std::string dir = out_dir();
  const Result r = run("--study-from '" + kCommittedStudy + "'", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string readme =
      read_file(std::string(XENC_SOURCE_DIR) + "/apps/extrapolate/README.md");
  const std::string block = fenced_block_after(readme, "### Output (the run above");
  ASSERT_FALSE(block.empty()) << "no fenced block after '### Output (the run above' in the README";
  EXPECT_EQ(r.out, block);
  if (r.out != block) {  // the first line that differs, for the reader of the log
    std::istringstream a(r.out), b(block);
    std::string la, lb;
    for (int line = 1; std::getline(a, la) && std::getline(b, lb); ++line)
      if (la != lb) {
        ADD_FAILURE() << "line " << line << " of the block:\nprogram: " << la
                      << "\nREADME:  " << lb;
        break;
      }
  }
  const Result j = run("--study-from '" + kCommittedStudy + "' --json", dir);
  ASSERT_EQ(j.status, 0) << j.err;
  EXPECT_EQ(without_files(json::parse(j.out)),
            without_files(json::parse(read_file(kCommittedStudy))));
}

// A bad file, or an option beside --study-from, gets a message naming the option, the file and
// the field, and a non-zero exit; nothing is printed on stdout.
TEST(ExtrapolateStudy, StudyFromRefusesABadFileNamingTheField) {
  const std::string dir = out_dir();
  const json good = json::parse(read_file(kCommittedStudy));
  auto refused = [&](const std::string& name, const std::string& text, const std::string& args,
                     const std::string& message) {
    SCOPED_TRACE(name);
    if (!text.empty()) {
      std::ofstream f(dir + "/" + name);
      f << text;
    }
    const Result r = run("--study-from " + name + args, dir);
    EXPECT_EQ(r.status, 1) << r.out;
    EXPECT_TRUE(contains(r.err, "xenc-extrapolate: error: " + message)) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  };
  refused("missing.json", "", "", "--study-from missing.json: cannot read the file");
  refused("text.json", "not json", "", "--study-from text.json: not JSON");
  refused("run.json", R"({"options": {}, "schemes": []})", "",
          "--study-from run.json: study is missing: not the JSON of a study");
  json j = good;
  j["options"]["seeds"] = 0;
  refused("seeds.json", j.dump(), "",
          "--study-from seeds.json: options.seeds: expected a whole number in 1 .. 20, got 0");
  j = good;
  j["options"].erase("nhead");
  refused("heads.json", j.dump(), "",
          "--study-from heads.json: options.nhead is missing (the option --heads)");
  j = good;
  j["study"]["tasks"][1]["cells"][3]["accuracy"][0][2] = "x";
  refused("cell.json", j.dump(), "",
          "--study-from cell.json: study.tasks[1].cells[3].accuracy[0][2]: expected a number "
          "between 0 and 1 or null, got \"x\"");
  j = good;
  j["study"]["tasks"][0]["cells"][4]["accuracy"][1][3] = 0.5;  // beyond no longer its mean
  refused("beyond.json", j.dump(), "",
          "--study-from beyond.json: study.tasks[0].cells[4].beyond[1]: expected the mean of "
          "study.tasks[0].cells[4].accuracy[1] over the lengths past L_train");
  j = good;
  j["study"]["tasks"][2]["rule"] = "odds_first";
  refused("rule.json", j.dump(), "",
          "--study-from rule.json: study.tasks[2].rule: expected \"missing_duplicate_string\" "
          "(options.study_tasks[2]), got \"odds_first\"");
  refused("given.json", good.dump(), " --tolerance 10",
          "--study-from: --tolerance cannot be given with it (the study's options are the "
          "file's");
}

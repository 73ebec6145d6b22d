// Every option comes from a record (apps/common/options.hpp): the flags each of the nine
// programs' --help lists (and the grader's two, xenc-grade-all and xenc-grade-similar) are exactly
// its records' flags (plus CLI11's
// --help and --version), and every key the web page (apps/web/app.js) sends is a record's key
// offered on the page, read by read_page_options (apps/web/bindings.cpp reads no key by hand). The
// records' three loops (CLI11, the page's JSON, the echo) are also checked on hand-made options.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "assignment/grade_all/options.hpp"
#include "assignment/similar/options.hpp"
#include "attention_map/options.hpp"
#include "encode/options.hpp"
#include "extrapolate/options.hpp"
#include "pe_heatmap/options.hpp"
#include "pe_pitfalls/options.hpp"
#include "pe_properties/options.hpp"
#include "support/run_program.hpp"
#include "train_order/options.hpp"
#include "word_order/options.hpp"

namespace {

using xenc::test::read_file;
using xenc::test::run_program;

// The flags at the start of --help's option lines ("  --d-model INT:INT in [2 - 512] ...", or a
// short flag alone, "  -k UINT ..."), and the positionals' names (the lines under "Positionals:",
// "  SUBMISSIONS_DIR TEXT REQUIRED ...").
std::set<std::string> help_flags(const std::string& exe) {
  const auto r = run_program(exe, "--help");
  EXPECT_EQ(r.status, 0) << r.err;
  std::set<std::string> flags;
  const std::regex line(R"(^\s+(?:-[a-zA-Z],)?(--[a-z][a-z0-9-]*|-[a-zA-Z](?=\s)))");
  const std::regex positional(R"(^\s+([A-Z][A-Z_]*)\s)");
  bool in_positionals = false;
  std::size_t start = 0;
  while (start < r.out.size()) {
    const std::size_t end = std::min(r.out.find('\n', start), r.out.size());
    std::smatch m;
    const std::string text = r.out.substr(start, end - start);
    if (!text.empty() && text[0] != ' ') in_positionals = text.rfind("Positionals:", 0) == 0;
    if (std::regex_search(text, m, line)) flags.insert(m[1]);
    if (in_positionals && std::regex_search(text, m, positional)) flags.insert(m[1]);
    start = end + 1;
  }
  flags.erase("--help");
  flags.erase("--version");
  return flags;
}

template <class O>
std::set<std::string> record_flags(const std::vector<xenc_app::OptionRecord<O>>& records) {
  const auto flags = xenc_app::cli_flags(records);
  EXPECT_EQ(std::set<std::string>(flags.begin(), flags.end()).size(), flags.size())
      << "a flag has two records";
  return {flags.begin(), flags.end()};
}

TEST(OptionRecords, EveryHelpFlagIsARecord) {
  EXPECT_EQ(help_flags(XENC_APP_WORD_ORDER), record_flags(word_order::option_records()));
  EXPECT_EQ(help_flags(XENC_APP_TRAIN_ORDER), record_flags(train_order::option_records()));
  EXPECT_EQ(help_flags(XENC_APP_EXTRAPOLATE), record_flags(extrapolate::option_records()));
  EXPECT_EQ(help_flags(XENC_APP_PE_PROPERTIES), record_flags(pe_properties::option_records()));
  EXPECT_EQ(help_flags(XENC_APP_PE_HEATMAP), record_flags(pe_heatmap::option_records()));
  EXPECT_EQ(help_flags(XENC_APP_PE_PITFALLS), record_flags(pe_pitfalls::option_records()));
  EXPECT_EQ(help_flags(XENC_APP_ATTENTION_MAP), record_flags(attention_map::option_records()));
  EXPECT_EQ(help_flags(XENC_APP_ENCODE), record_flags(encode_app::encode_records()));
  EXPECT_EQ(help_flags(XENC_APP_INIT_ENCODER), record_flags(encode_app::init_records()));
  EXPECT_EQ(help_flags(XENC_APP_GRADE_SIMILAR), record_flags(grade_similar::option_records()));
  EXPECT_EQ(help_flags(XENC_APP_GRADE_ALL), record_flags(grade_all::option_records()));
}

// A record that the command line must give is required there (CLI11 refuses its absence), and
// is shown without a default.
TEST(OptionRecords, RequiredRecordsAreRequired) {
  encode_app::InitOptions o;
  CLI::App app;
  xenc_app::add_options(app, o, encode_app::init_records());
  EXPECT_THROW(app.parse("--d-model 8 --heads 2 --dim-feedforward 16", false),
               CLI::RequiredError);  // no --output
  encode_app::InitOptions p;
  CLI::App app2;
  xenc_app::add_options(app2, p, encode_app::init_records());
  app2.parse("--d-model 8 --heads 2 --dim-feedforward 16 --output w.npz --layers 3", false);
  EXPECT_EQ(p.d_model, 8u);
  EXPECT_EQ(p.ff, 16u);
  EXPECT_EQ(p.layers, 3u);
  EXPECT_EQ(p.output, "w.npz");
  EXPECT_EQ(p.max_minutes, 10);  // Guard's default; xenc-encode's is 1
  EXPECT_EQ(encode_app::EncodeOptions{}.max_minutes, 1);
  // pick() keeps the group's range (model_records' inference range: 1 .. 4096) and its own help
  CLI::App app3;
  encode_app::InitOptions q;
  xenc_app::add_options(app3, q, encode_app::init_records());
  EXPECT_THROW(app3.parse("--d-model 4097 --heads 2 --dim-feedforward 16 --output w", false),
               CLI::ValidationError);
  EXPECT_NE(app3.help().find("--d-model UINT:INT in [1 - 4096] REQUIRED"), std::string::npos)
      << app3.help();
}

// A list of whole numbers (xenc-pe-heatmap's --dims) is split at commas and each is range-checked.
TEST(OptionRecords, ListsOfWholeNumbersAreSplitAndChecked) {
  pe_heatmap::CommandLine c;
  CLI::App app;
  xenc_app::add_options(app, c, pe_heatmap::option_records());
  app.parse("--dims 0,5,8191", false);
  EXPECT_EQ(c.dims, (std::vector<std::size_t>{0, 5, 8191}));
  pe_heatmap::CommandLine d;
  CLI::App app2;
  xenc_app::add_options(app2, d, pe_heatmap::option_records());
  EXPECT_THROW(app2.parse("--dims 0,8192", false), CLI::ValidationError);
}

// The keys of the object literal that starts at `opening` in app.js ("key: value," lines).
std::set<std::string> page_keys(const std::string& js, const std::string& opening) {
  const std::size_t start = js.find(opening);
  EXPECT_NE(start, std::string::npos) << opening;
  if (start == std::string::npos) return {};
  const std::size_t end = js.find("};", start);
  const std::string body = js.substr(start, end - start);
  std::set<std::string> keys;
  const std::regex key(R"(\n\s+([a-z_]+):)");
  for (std::sregex_iterator it(body.begin(), body.end(), key), stop; it != stop; ++it)
    keys.insert((*it)[1]);
  return keys;
}

template <class O>
std::set<std::string> page_record_keys(const std::vector<xenc_app::OptionRecord<O>>& records) {
  std::set<std::string> keys;
  for (const auto& r : records)
    if (r.page.on) keys.insert(r.key);
  return keys;
}

TEST(OptionRecords, EveryPageKeyIsARecord) {
  const std::string js = read_file(std::string(XENC_SOURCE_DIR) + "/apps/web/app.js");
  ASSERT_FALSE(js.empty());
  const auto word = page_keys(js, "function renderWordOrder");
  const auto table = page_keys(js, "function renderTable");
  EXPECT_EQ(table, (std::set<std::string>{"positions", "d_model"}));
  const auto table_records = page_record_keys(pe_heatmap::option_records());
  EXPECT_EQ(table, table_records);
  const auto train = page_keys(js, "function trainingOptions");
  EXPECT_EQ(word,
            (std::set<std::string>{"a", "b", "position", "d_model", "heads", "layers", "seed"}));
  EXPECT_EQ(train,
            (std::set<std::string>{"schemes", "epochs", "nouns", "verbs", "sentences_per_pair",
                                   "d_model", "heads", "layers", "seed"}));
  const auto word_records = page_record_keys(word_order::option_records());
  const auto train_records = page_record_keys(train_order::option_records());
  for (const auto& k : word) EXPECT_TRUE(word_records.count(k)) << "word order: " << k;
  for (const auto& k : train) EXPECT_TRUE(train_records.count(k)) << "training: " << k;
  // the page's C++ reads its JSON through the records only
  const std::string cpp = read_file(std::string(XENC_SOURCE_DIR) + "/apps/web/bindings.cpp");
  ASSERT_FALSE(cpp.empty());
  EXPECT_EQ(cpp.find("in["), std::string::npos);
  EXPECT_EQ(cpp.find("in.contains("), std::string::npos);
  EXPECT_NE(cpp.find("read_page_options(in, c, word_order::option_records())"), std::string::npos);
  EXPECT_NE(cpp.find("read_page_options(in, c, train_order::option_records())"), std::string::npos);
  EXPECT_NE(cpp.find("read_page_options(in, c, pe_heatmap::option_records())"), std::string::npos);
}

TEST(OptionRecords, CommandLineFillsTheMembersAndChecksTheRange) {
  train_order::CommandLine c;
  CLI::App app;
  xenc_app::add_options(app, c, train_order::option_records());
  app.parse("--quiet --schemes none,rope --lr 0.5 --d-model 8", false);
  EXPECT_EQ(c.d_model, 8);
  EXPECT_EQ(c.lr, 0.5);
  EXPECT_EQ(c.schemes, (std::vector<std::string>{"none", "rope"}));
  EXPECT_TRUE(c.quiet);
  EXPECT_FALSE(c.json);
  train_order::CommandLine d;
  CLI::App app2;
  xenc_app::add_options(app2, d, train_order::option_records());
  // 513 is over the training programs' limit of 512 (kTrainingLimit)
  EXPECT_THROW(app2.parse("--d-model 513", false), CLI::ValidationError);
}

TEST(OptionRecords, PageOptionsAreReadAndCheckedAgainstThePageRange) {
  train_order::CommandLine c;
  xenc_app::read_page_options(nlohmann::json{{"d_model", 16}, {"schemes", {"none", "alibi"}}}, c,
                              train_order::option_records());
  EXPECT_EQ(c.d_model, 16);
  EXPECT_EQ(c.schemes, (std::vector<std::string>{"none", "alibi"}));
  EXPECT_EQ(c.heads, train_order::Options{}.heads);  // absent keys keep the default
  try {
    xenc_app::read_page_options(nlohmann::json{{"d_model", 256}}, c, train_order::option_records());
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--d-model: 256 is out of range, expected 2 .. 128");
  }
  try {
    word_order::CommandLine w;
    xenc_app::read_page_options(nlohmann::json{{"a", 3}}, w, word_order::option_records());
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--a: expected text, got 3");
  }
  try {  // the sinusoidal tab: pe_heatmap's page range of D, 2 .. 256
    pe_heatmap::CommandLine h;
    xenc_app::read_page_options(nlohmann::json{{"d_model", 512}}, h, pe_heatmap::option_records());
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--d-model: 512 is out of range, expected 2 .. 256");
  }
}

TEST(OptionRecords, EchoUsesTheRecordsKeys) {
  extrapolate::CommandLine c;
  c.heads = 3;
  c.clip = 0.25;
  const nlohmann::json j = xenc_app::echo_options(c, extrapolate::option_records());
  EXPECT_EQ(j.at("nhead"), 3);
  EXPECT_EQ(j.at("clip_grad_norm"), 0.25);
  EXPECT_EQ(j.at("rule"), "neighbour_sum");
  EXPECT_FALSE(j.contains("json"));  // outputs and limits are not echoed
  EXPECT_FALSE(j.contains("max_memory_mb"));
  // 9 task, 4 model, 7 fit (seed included), schemes, tolerance, randomized positions, and the
  // study's three (study, study_tasks, seeds); --study-from is not echoed (it names the file)
  EXPECT_EQ(j.size(), 26u);
  EXPECT_EQ(j.at("schemes"), nlohmann::json::array());
  EXPECT_FALSE(j.contains("study_from"));
  EXPECT_EQ(j.at("study"), false);
  EXPECT_EQ(j.at("seeds"), c.seeds);
  EXPECT_EQ(j.at("randomized_positions"), 0);
}

// Loop 4 reads the echo back (xenc-extrapolate --study-from): every echoed option returns to its
// member; a missing key, a wrong type and a value out of the command line's range are refused
// with the key and the value.
TEST(OptionRecords, EchoIsReadBackThroughTheRecords) {
  extrapolate::CommandLine c;
  c.heads = 3;
  c.clip = 0.25;
  c.seeds = 4;
  c.study = true;
  c.schemes = {"rope", "alibi"};
  c.test_lengths = {8, 12};
  const nlohmann::json j = xenc_app::echo_options(c, extrapolate::option_records());
  extrapolate::CommandLine d;
  xenc_app::read_echoed_options(j, d, extrapolate::option_records(), "--study-from f.json");
  EXPECT_EQ(xenc_app::echo_options(d, extrapolate::option_records()), j);
  EXPECT_EQ(d.heads, 3);
  EXPECT_EQ(d.schemes, (std::vector<std::string>{"rope", "alibi"}));
  auto refused = [&](nlohmann::json bad, const std::string& message) {
    extrapolate::CommandLine e;
    try {
      xenc_app::read_echoed_options(bad, e, extrapolate::option_records(), "--study-from f.json");
      ADD_FAILURE() << "no exception for " << message;
    } catch (const std::invalid_argument& ex) {
      EXPECT_EQ(std::string(ex.what()), message);
    }
  };
  nlohmann::json bad = j;
  bad.erase("nhead");
  refused(bad, "--study-from f.json: options.nhead is missing (the option --heads)");
  bad = j;
  bad["nhead"] = "3";
  refused(bad, "--study-from f.json: options.nhead: expected a whole number in 1 .. 64, got \"3\"");
  bad = j;
  bad["seeds"] = 21;
  refused(bad, "--study-from f.json: options.seeds: expected a whole number in 1 .. 20, got 21");
  bad = j;
  bad["rule"] = "sort";
  refused(bad, "--study-from f.json: options.rule: expected one of " +
                   xenc_app::choice_list(extrapolate::rule_names()) + ", got \"sort\"");
  bad = j;
  bad["test_lengths"] = {8, 1};
  refused(bad,
          "--study-from f.json: options.test_lengths: expected a list of whole numbers in 2 .. "
          "1024, got [8,1]");
  refused(nlohmann::json::array(), "--study-from f.json: options: expected an object, got array");
}

}  // namespace

// The position tasks of xenc-extrapolate (data/position_tasks.hpp): the rule against its
// formula, seeding, lengths, the vocabulary, batching and the config errors.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "xenc/core/error.hpp"
#include "xenc/data/batching.hpp"
#include "xenc/data/position_tasks.hpp"

using namespace xenc;

namespace {
// "t5" -> 5, read from the token text (independently of the generator's own symbols array).
std::int64_t symbol_of(const std::string& token) { return std::stoll(token.substr(1)); }

std::string message_of(const PositionTaskConfig& c) {
  try {
    make_position_task(c);
  } catch (const config_error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

// Hand examples, V = 10, k = 1, symbols 3 7 5 9:
//   neighbour_sum: p = 1: (3 + 5) mod 10 = 8; p = 2: (7 + 9) mod 10 = 6; p = 0 and p = 3 ignored
//   copy_left:     p = 1: 3; p = 2: 7; p = 3: 5; p = 0 ignored
TEST(PositionTasks, HandExample) {
  const std::vector<std::int64_t> s = {3, 7, 5, 9};
  const auto ns = PositionRule::neighbour_sum, cl = PositionRule::copy_left;
  EXPECT_EQ(position_task_label(ns, s, 0, 1, 10), kIgnoreIndex);
  EXPECT_EQ(position_task_label(ns, s, 1, 1, 10), 8);
  EXPECT_EQ(position_task_label(ns, s, 2, 1, 10), 6);
  EXPECT_EQ(position_task_label(ns, s, 3, 1, 10), kIgnoreIndex);
  EXPECT_EQ(position_task_label(cl, s, 0, 1, 10), kIgnoreIndex);
  EXPECT_EQ(position_task_label(cl, s, 1, 1, 10), 3);
  EXPECT_EQ(position_task_label(cl, s, 3, 1, 10), 5);
  // k = 2, V = 4: p = 2 of 3 7 5 9 0: (3 + 0) mod 4 = 3
  EXPECT_EQ(position_task_label(ns, {3, 7, 5, 9, 0}, 2, 2, 4), 3);
  EXPECT_THROW(position_task_label(ns, s, 4, 1, 10), std::invalid_argument);
}

// Every label of generated data equals the formula, computed here from the token text.
TEST(PositionTasks, LabelsEqualTheFormula) {
  for (PositionRule rule : all_position_rules())
    for (std::size_t k : {1u, 3u}) {
      SCOPED_TRACE(to_string(rule) + ", k = " + std::to_string(k));
      PositionTaskConfig c;
      c.rule = rule;
      c.offset = k;
      c.num_symbols = 7;
      c.min_length = 7;
      c.max_length = 20;
      c.num_sequences = 200;
      c.seed = 11;
      const PositionTaskDataset d = make_position_task(c);
      ASSERT_EQ(d.sequences.size(), 200u);
      std::size_t labelled = 0;
      for (std::size_t n = 0; n < d.sequences.size(); ++n) {
        const auto& seq = d.sequences[n];
        const std::size_t T = seq.tokens.size();
        ASSERT_EQ(seq.labels.size(), T);
        ASSERT_EQ(d.symbols[n].size(), T);
        for (std::size_t p = 0; p < T; ++p) {
          ASSERT_EQ(symbol_of(seq.tokens[p]), d.symbols[n][p]);
          std::int64_t want = kIgnoreIndex;
          if (rule == PositionRule::neighbour_sum && p >= k && p + k < T)
            want = (symbol_of(seq.tokens[p - k]) + symbol_of(seq.tokens[p + k])) % 7;
          if (rule == PositionRule::copy_left && p >= k) want = symbol_of(seq.tokens[p - k]);
          EXPECT_EQ(seq.labels[p], want) << "sequence " << n << ", p = " << p;
          labelled += want != kIgnoreIndex;
        }
      }
      EXPECT_EQ(d.labelled_positions, labelled);
    }
}

// Lengths cover [min, max], symbols cover [0, V) about uniformly (30,000 draws: each of 6
// symbols within 10% of 5,000).
TEST(PositionTasks, LengthsAndSymbolsAreUniform) {
  PositionTaskConfig c;
  c.num_symbols = 6;
  c.min_length = 8;
  c.max_length = 12;
  c.num_sequences = 3000;
  const PositionTaskDataset d = make_position_task(c);
  std::set<std::size_t> lengths;
  std::vector<std::size_t> count(6, 0);
  std::size_t total = 0;
  for (const auto& s : d.symbols) {
    lengths.insert(s.size());
    for (auto v : s) {
      ASSERT_GE(v, 0);
      ASSERT_LT(v, 6);
      ++count[std::size_t(v)];
      ++total;
    }
  }
  EXPECT_EQ(lengths, (std::set<std::size_t>{8, 9, 10, 11, 12}));
  for (std::size_t s = 0; s < 6; ++s)
    EXPECT_NEAR(double(count[s]), double(total) / 6.0, 0.1 * double(total) / 6.0) << "symbol " << s;
  c.min_length = c.max_length = 12;
  for (const auto& s : make_position_task(c).symbols) EXPECT_EQ(s.size(), 12u);
}

TEST(PositionTasks, SameSeedSameSequencesOtherSeedOthers) {
  PositionTaskConfig c;
  c.seed = 5;
  const auto a = make_position_task(c), b = make_position_task(c);
  ASSERT_EQ(a.sequences.size(), b.sequences.size());
  for (std::size_t n = 0; n < a.sequences.size(); ++n) {
    EXPECT_EQ(a.sequences[n].tokens, b.sequences[n].tokens);
    EXPECT_EQ(a.sequences[n].labels, b.sequences[n].labels);
  }
  c.seed = 6;
  const auto other = make_position_task(c);
  EXPECT_NE(other.symbols, a.symbols);
}

// The vocabulary depends on V only: a model trained on short sequences reads long ones.
TEST(PositionTasks, VocabularyAndBatching) {
  PositionTaskConfig c;
  c.num_symbols = 5;
  c.min_length = c.max_length = 4;
  c.num_sequences = 3;
  const PositionTaskDataset d = make_position_task(c);
  EXPECT_EQ(d.vocab.size(), 7u);  // <pad>, <unk>, t0..t4
  EXPECT_EQ(d.vocab.id("t0"), 2);
  EXPECT_EQ(d.vocab.id("t4"), 6);
  EXPECT_EQ(d.label_names(), (std::vector<std::string>{"t0", "t1", "t2", "t3", "t4"}));
  EXPECT_DOUBLE_EQ(d.chance(), 0.2);
  c.min_length = c.max_length = 40;
  c.seed = 9;
  EXPECT_EQ(make_position_task(c).vocab.size(), d.vocab.size());
  const LabelledBatch b = make_batch(d.sequences, {0, 2}, d.vocab);
  ASSERT_EQ(b.ids.shape(1), 4u);
  for (std::size_t t = 0; t < 4; ++t) {
    EXPECT_EQ(b.ids(1, t), d.symbols[2][t] + 2);
    EXPECT_EQ(b.labels(1, t), d.sequences[2].labels[t]);
  }
}

TEST(PositionTasks, RuleNamesRoundTrip) {
  for (PositionRule r : all_position_rules()) EXPECT_EQ(parse_position_rule(to_string(r)), r);
  try {
    parse_position_rule("reverse");
    FAIL() << "no error";
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown rule \"reverse\""), std::string::npos)
        << e.what();
  }
}

TEST(PositionTasks, BadConfigNamesRuleAndValue) {
  PositionTaskConfig c;
  c.num_symbols = 1;
  EXPECT_EQ(message_of(c), "make_position_task: num_symbols is 1, expected 2...1000");
  c = PositionTaskConfig{};
  c.offset = 0;
  EXPECT_EQ(message_of(c), "make_position_task: offset is 0, expected 1...64");
  c = PositionTaskConfig{};
  c.offset = 4;  // neighbour_sum needs 9, the default min_length is 8
  EXPECT_EQ(message_of(c),
            "make_position_task: min_length is 8, expected >= 9 (neighbour_sum "
            "needs 2k + 1 with k = 4 for one labelled position)");
  c.rule = PositionRule::copy_left;  // needs 5
  EXPECT_EQ(message_of(c), "(no error)");
  c.min_length = 4;
  EXPECT_EQ(message_of(c),
            "make_position_task: min_length is 4, expected >= 5 (copy_left needs "
            "k + 1 with k = 4 for one labelled position)");
  c = PositionTaskConfig{};
  c.max_length = 7;
  EXPECT_EQ(message_of(c),
            "make_position_task: max_length is 7, expected 8...100000 "
            "(min_length...100000)");
  c = PositionTaskConfig{};
  c.num_sequences = 0;
  EXPECT_EQ(message_of(c), "make_position_task: num_sequences is 0, expected 1...10000000");
}

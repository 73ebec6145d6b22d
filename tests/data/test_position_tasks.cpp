// The position tasks of xenc-extrapolate (data/position_tasks.hpp): the rule against its
// formula, seeding, lengths, the vocabulary, batching and the config errors; then the tasks of
// Ruoss et al. (2023): hand examples from the authors' docstrings, invariants that each answer
// must satisfy (checked on the tokens, independently of the generator), seeding and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

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
  for (PositionRule rule : {PositionRule::neighbour_sum, PositionRule::copy_left})
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
    EXPECT_NE(std::string(e.what()).find("unknown rule \"reverse\", expected one of neighbour_sum, "
                                         "copy_left, reverse_string, duplicate_string, "
                                         "missing_duplicate_string, odds_first, parity_check, "
                                         "bucket_sort, binary_addition, even_pairs, "
                                         "cycle_navigation"),
              std::string::npos)
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

// ---- The tasks of Ruoss et al. (2023): an input x, then m <out> placeholders that carry y ----

namespace {
using Seq = std::vector<std::int64_t>;
const PositionRule kReverse = PositionRule::reverse_string,
                   kDuplicate = PositionRule::duplicate_string,
                   kMissing = PositionRule::missing_duplicate_string,
                   kOdds = PositionRule::odds_first, kParity = PositionRule::parity_check,
                   kSort = PositionRule::bucket_sort, kAdd = PositionRule::binary_addition,
                   kPairs = PositionRule::even_pairs, kCycle = PositionRule::cycle_navigation;
const std::vector<PositionRule> kPaperRules = {kReverse, kDuplicate, kMissing, kOdds, kParity,
                                               kSort,    kAdd,       kPairs,   kCycle};

// The config of a paper rule: its alphabet (V = 2; 5 for bucket_sort, 3 for cycle_navigation).
PositionTaskConfig paper_config(PositionRule rule, std::size_t min_len, std::size_t max_len,
                                std::size_t n, std::uint32_t seed) {
  PositionTaskConfig c;
  c.rule = rule;
  c.num_symbols = rule == kSort ? 5 : rule == kCycle ? 3 : 2;
  c.min_length = min_len;
  c.max_length = max_len;
  c.num_sequences = n;
  c.seed = seed;
  return c;
}

// A sequence split back into its parts, read from the token text only: the input tokens before
// the first <out>, and the labels at the <out>s.
struct Parts {
  std::vector<std::string> input;
  std::vector<std::int64_t> answer;  // the labels at the <out>s, kIgnoreIndex included
};

Parts split(const LabelledSentence& s) {
  Parts p;
  std::size_t i = 0;
  for (; i < s.tokens.size() && s.tokens[i] != "<out>"; ++i) {
    EXPECT_EQ(s.labels[i], kIgnoreIndex) << "input token " << i << " has a label";
    p.input.push_back(s.tokens[i]);
  }
  for (; i < s.tokens.size(); ++i) {
    EXPECT_EQ(s.tokens[i], "<out>") << "token " << i << " after the first <out>";
    p.answer.push_back(s.labels[i]);
  }
  return p;
}

// "t1" -> 1 for a symbol token; -1 for any other token.
std::int64_t value_of(const std::string& token) {
  return token.size() >= 2 && token[0] == 't' ? std::stoll(token.substr(1)) : -1;
}

std::string output_error(PositionRule rule, const Seq& x, std::size_t V) {
  try {
    position_task_output(rule, x, V);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

// The examples of the authors' docstrings (tasks/*.py), with the answer worked out by hand:
//   reverse_string    0 1 1 0 1 0            -> 0 1 0 1 1 0
//   duplicate_string  1 0 1                  -> 1 0 1 1 0 1
//   odds_first        0 0 1 1 0 1 0 1        -> x[1] x[3] x[5] x[7] = 0 1 1 1, then
//                                               x[0] x[2] x[4] x[6] = 0 1 0 0
//                     1 1 0                  -> x[1] = 1, then x[0] x[2] = 1 0
//                     (the docstring, counting from 1, writes 0100 0111 and 10 1; the code,
//                     x[1::2] + x[::2], gives these)
//   bucket_sort V = 5 1 0 2 0 4 1 1 2        -> 0 0 1 1 1 2 2 4
//                     1 1 1 0 0 0 1          -> 0 0 0 1 1 1 1
//   parity_check      1 0 1 0 1 0 0          -> three 1s: 1;   0 1 1 1 1 -> four 1s: 0
//   missing_duplicate 0 1 1 0 0 ? 1 0        -> w = 0110, "?" is x[5] = w[1] = 1
//                     1 0 1 1 ? 1 #          -> w = 101, "?" is x[4] = w[1] = 0 ("#" ends odd n)
//   binary_addition   0 0 1 + 0 1 1 0 1      -> 4 + 22 = 26 = 11010b, little-endian 0 1 0 1 1,
//                                               <end>, then 0s up to m = n + 1 = 10
//                     1 0 0 1 + 0 0 0 0 0 1  -> 9 + 32 = 41 = 101001b, little-endian 1 0 0 1 0 1,
//                                               <end>, 0s up to m = 12
//   even_pairs        0 0 1 1 1 0            -> one 01, one 10: two unequal pairs, even: 0
//                     0 1 0 1 0 0 1          -> three 01, two 10: five, odd: 1
//   cycle_navigation  2 0 1 0 0              -> moves +1 -1 0 -1 -1 = -2, state -2 mod 5 = 3
//                     2 2 2 0                -> moves +1 +1 +1 -1 = 2, state 2
TEST(PaperTasks, HandExamples) {
  EXPECT_EQ(position_task_output(kReverse, {0, 1, 1, 0, 1, 0}, 2), (Seq{0, 1, 0, 1, 1, 0}));
  EXPECT_EQ(position_task_output(kDuplicate, {1, 0, 1}, 2), (Seq{1, 0, 1, 1, 0, 1}));
  EXPECT_EQ(position_task_output(kOdds, {0, 0, 1, 1, 0, 1, 0, 1}, 2),
            (Seq{0, 1, 1, 1, 0, 1, 0, 0}));
  EXPECT_EQ(position_task_output(kOdds, {1, 1, 0}, 2), (Seq{1, 1, 0}));
  EXPECT_EQ(position_task_output(kSort, {1, 0, 2, 0, 4, 1, 1, 2}, 5),
            (Seq{0, 0, 1, 1, 1, 2, 2, 4}));
  EXPECT_EQ(position_task_output(kSort, {1, 1, 1, 0, 0, 0, 1}, 2), (Seq{0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(position_task_output(kParity, {1, 0, 1, 0, 1, 0, 0}, 2), (Seq{1}));
  EXPECT_EQ(position_task_output(kParity, {0, 1, 1, 1, 1}, 2), (Seq{0}));
  EXPECT_EQ(position_task_output(kMissing, {0, 1, 1, 0, 0, 2, 1, 0}, 2), (Seq{1}));
  EXPECT_EQ(position_task_output(kMissing, {1, 0, 1, 1, 2, 1, 3}, 2), (Seq{0}));
  EXPECT_EQ(position_task_output(kAdd, {0, 0, 1, 2, 0, 1, 1, 0, 1}, 2),
            (Seq{0, 1, 0, 1, 1, 2, 0, 0, 0, 0}));
  EXPECT_EQ(position_task_output(kAdd, {1, 0, 0, 1, 2, 0, 0, 0, 0, 0, 1}, 2),
            (Seq{1, 0, 0, 1, 0, 1, 2, 0, 0, 0, 0, 0}));
  EXPECT_EQ(position_task_output(kPairs, {0, 0, 1, 1, 1, 0}, 2), (Seq{0}));
  EXPECT_EQ(position_task_output(kPairs, {0, 1, 0, 1, 0, 0, 1}, 2), (Seq{1}));
  EXPECT_EQ(position_task_output(kCycle, {2, 0, 1, 0, 0}, 3), (Seq{3}));
  EXPECT_EQ(position_task_output(kCycle, {2, 2, 2, 0}, 3), (Seq{2}));
}

// position_task_label reads the same answers at the <out>s: reverse_string 0 1 1 has tokens
// t0 t1 t1 <out> <out> <out> and labels - - - 1 1 0; binary_addition 1 + 1 (1 + 1 = 2 = 0 1
// little-endian) has m = 4 labels 0 1 <end> -, the 0 after <end> unscored.
TEST(PaperTasks, LabelsAtThePlaceholders) {
  const Seq x = {0, 1, 1};
  for (std::size_t p = 0; p < 3; ++p)
    EXPECT_EQ(position_task_label(kReverse, x, p, 1, 2), kIgnoreIndex);
  EXPECT_EQ(position_task_label(kReverse, x, 3, 1, 2), 1);
  EXPECT_EQ(position_task_label(kReverse, x, 4, 1, 2), 1);
  EXPECT_EQ(position_task_label(kReverse, x, 5, 1, 2), 0);
  EXPECT_THROW(position_task_label(kReverse, x, 6, 1, 2), std::invalid_argument);
  const Seq add = {1, 2, 1};
  EXPECT_EQ(position_task_output(kAdd, add, 2), (Seq{0, 1, 2, 0}));
  EXPECT_EQ(position_task_label(kAdd, add, 3, 1, 2), 0);
  EXPECT_EQ(position_task_label(kAdd, add, 4, 1, 2), 1);
  EXPECT_EQ(position_task_label(kAdd, add, 5, 1, 2), 2);
  EXPECT_EQ(position_task_label(kAdd, add, 6, 1, 2), kIgnoreIndex);
  EXPECT_EQ(position_task_label(kParity, {1, 1, 1}, 3, 1, 2), 1);
  try {
    position_task_label(kDuplicate, x, 9, 1, 2);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "position_task_label: p is 9, expected < 9 (the input length 3 + the <out>s)");
  }
  // the output lengths m
  EXPECT_EQ(position_task_output_length(kReverse, 7), 7u);
  EXPECT_EQ(position_task_output_length(kDuplicate, 7), 14u);
  EXPECT_EQ(position_task_output_length(kOdds, 7), 7u);
  EXPECT_EQ(position_task_output_length(kSort, 7), 7u);
  EXPECT_EQ(position_task_output_length(kParity, 7), 1u);
  EXPECT_EQ(position_task_output_length(kMissing, 7), 1u);
  EXPECT_EQ(position_task_output_length(kAdd, 7), 8u);
  EXPECT_EQ(position_task_output_length(kPairs, 7), 1u);
  EXPECT_EQ(position_task_output_length(kCycle, 7), 1u);
  EXPECT_EQ(position_task_output_length(PositionRule::copy_left, 7), 0u);
}

// Every generated sequence, read back from its tokens, satisfies its task's invariant:
//   reverse_string    reversing the answer gives the input back (reverse of reverse)
//   duplicate_string  both halves of the answer are the input
//   odds_first        the answer is a shuffle that interleaving undoes: answer[i] = x[2i + 1]
//                     for i < n/2, answer[n/2 + i] = x[2i]
//   bucket_sort       the answer is sorted and has the input's count of every symbol
//   parity_check      the answer is the count of "t1" tokens mod 2
//   missing_duplicate putting the answer in place of "?" makes the input w w (+ "#" if n odd)
//   binary_addition   the answer's bits before <end> are the sum of the two numbers, ends in a 1
//                     (no trailing zero), and nothing after <end> is scored
//   even_pairs        the answer is 1 exactly when the first and last bits differ
//   cycle_navigation  the answer is (count of t2 - count of t0) mod 5
TEST(PaperTasks, GeneratedSequencesSatisfyTheirTask) {
  for (PositionRule rule : kPaperRules) {
    SCOPED_TRACE(to_string(rule));
    const PositionTaskDataset d = make_position_task(paper_config(rule, 3, 40, 300, 21));
    ASSERT_EQ(d.sequences.size(), 300u);
    std::size_t labelled = 0;
    for (std::size_t s = 0; s < d.sequences.size(); ++s) {
      SCOPED_TRACE("sequence " + std::to_string(s));
      const Parts p = split(d.sequences[s]);
      const std::size_t n = p.input.size();
      ASSERT_GE(n, 3u);
      ASSERT_LE(n, 40u);
      ASSERT_EQ(p.answer.size(), position_task_output_length(rule, n));
      ASSERT_EQ(d.symbols[s].size(), n);
      for (const auto& t : d.sequences[s].tokens) EXPECT_NE(d.vocab.id(t), Vocabulary::unk_id) << t;
      for (auto l : p.answer) labelled += l != kIgnoreIndex;
      std::vector<std::int64_t> x;  // the input's symbols (-1 for "?", "#", "+")
      for (const auto& t : p.input) x.push_back(value_of(t));
      const std::vector<std::int64_t>& y = p.answer;
      if (rule == kReverse) {
        EXPECT_EQ(std::vector<std::int64_t>(y.rbegin(), y.rend()), x);
      } else if (rule == kDuplicate) {
        EXPECT_EQ(std::vector<std::int64_t>(y.begin(), y.begin() + std::ptrdiff_t(n)), x);
        EXPECT_EQ(std::vector<std::int64_t>(y.begin() + std::ptrdiff_t(n), y.end()), x);
      } else if (rule == kOdds) {
        for (std::size_t i = 0; i < n / 2; ++i) EXPECT_EQ(y[i], x[2 * i + 1]) << i;
        for (std::size_t i = 0; 2 * i < n; ++i) EXPECT_EQ(y[n / 2 + i], x[2 * i]) << i;
      } else if (rule == kSort) {
        EXPECT_TRUE(std::is_sorted(y.begin(), y.end()));
        for (std::int64_t v = 0; v < 5; ++v)
          EXPECT_EQ(std::count(y.begin(), y.end(), v), std::count(x.begin(), x.end(), v)) << v;
      } else if (rule == kParity) {
        ASSERT_EQ(y.size(), 1u);
        EXPECT_EQ(y[0], std::count(p.input.begin(), p.input.end(), "t1") % 2);
      } else if (rule == kMissing) {
        ASSERT_EQ(y.size(), 1u);
        ASSERT_EQ(std::count(p.input.begin(), p.input.end(), "?"), 1);
        std::vector<std::string> filled = p.input;
        *std::find(filled.begin(), filled.end(), "?") = "t" + std::to_string(y[0]);
        const std::size_t h = n / 2;
        for (std::size_t i = 0; i < h; ++i) {
          EXPECT_TRUE(filled[i] == "t0" || filled[i] == "t1") << filled[i];
          EXPECT_EQ(filled[i], filled[i + h]) << i;
        }
        if (n % 2 == 1) EXPECT_EQ(p.input.back(), "#");
        EXPECT_EQ(std::count(p.input.begin(), p.input.end(), "#"), std::ptrdiff_t(n % 2));
      } else if (rule == kAdd) {
        // a + b from the tokens, little-endian (n <= 40: each number has at most 38 bits)
        const auto plus = std::find(p.input.begin(), p.input.end(), "+");
        ASSERT_NE(plus, p.input.end());
        ASSERT_EQ(std::count(p.input.begin(), p.input.end(), "+"), 1);
        const std::size_t na = std::size_t(plus - p.input.begin());
        ASSERT_GE(na, 1u);
        ASSERT_LE(na, n - 2);
        std::uint64_t a = 0, b = 0, sum = 0;
        for (std::size_t i = 0; i < na; ++i) a |= std::uint64_t(x[i]) << i;
        for (std::size_t i = na + 1; i < n; ++i) b |= std::uint64_t(x[i]) << (i - na - 1);
        EXPECT_GE(a, 1u);
        EXPECT_GE(b, 1u);
        const std::size_t end = std::size_t(std::find(y.begin(), y.end(), 2) - y.begin());
        ASSERT_LT(end, y.size());
        for (std::size_t i = 0; i < end; ++i) sum |= std::uint64_t(y[i]) << i;
        EXPECT_EQ(sum, a + b);
        EXPECT_EQ(y[end - 1], 1);  // the most significant bit
        for (std::size_t i = end + 1; i < y.size(); ++i) EXPECT_EQ(y[i], kIgnoreIndex) << i;
      } else if (rule == kPairs) {
        ASSERT_EQ(y.size(), 1u);
        EXPECT_EQ(y[0], p.input.front() != p.input.back() ? 1 : 0);
      } else if (rule == kCycle) {
        ASSERT_EQ(y.size(), 1u);
        const std::ptrdiff_t right = std::count(p.input.begin(), p.input.end(), "t2");
        const std::ptrdiff_t left = std::count(p.input.begin(), p.input.end(), "t0");
        EXPECT_EQ(y[0], ((right - left) % 5 + 5) % 5);
      }
    }
    EXPECT_EQ(d.labelled_positions, labelled);
  }
}

// The random parts cover their range: binary_addition's split n_a of n = 6 takes 1, 2, 3, 4;
// missing_duplicate's "?" of n = 6 sits at each of the 6 positions; parity is 0 and 1 about
// equally often (2,000 strings: each within 10% of 1,000).
TEST(PaperTasks, RandomPartsCoverTheirRange) {
  std::set<std::size_t> splits, holes;
  for (const auto& s : make_position_task(paper_config(kAdd, 6, 6, 400, 3)).symbols)
    splits.insert(std::size_t(std::find(s.begin(), s.end(), 2) - s.begin()));
  EXPECT_EQ(splits, (std::set<std::size_t>{1, 2, 3, 4}));
  for (const auto& s : make_position_task(paper_config(kMissing, 6, 6, 400, 3)).symbols)
    holes.insert(std::size_t(std::find(s.begin(), s.end(), 2) - s.begin()));
  EXPECT_EQ(holes, (std::set<std::size_t>{0, 1, 2, 3, 4, 5}));
  std::map<std::int64_t, int> parity;
  for (const auto& s : make_position_task(paper_config(kParity, 1, 30, 2000, 3)).sequences)
    ++parity[s.labels.back()];
  EXPECT_NEAR(parity[0], 1000, 100);
  EXPECT_NEAR(parity[1], 1000, 100);
}

TEST(PaperTasks, SameSeedSameSequencesOtherSeedOthers) {
  for (PositionRule rule : kPaperRules) {
    SCOPED_TRACE(to_string(rule));
    const auto a = make_position_task(paper_config(rule, 4, 20, 50, 7));
    const auto b = make_position_task(paper_config(rule, 4, 20, 50, 7));
    const auto other = make_position_task(paper_config(rule, 4, 20, 50, 8));
    ASSERT_EQ(a.sequences.size(), b.sequences.size());
    for (std::size_t n = 0; n < a.sequences.size(); ++n) {
      EXPECT_EQ(a.sequences[n].tokens, b.sequences[n].tokens);
      EXPECT_EQ(a.sequences[n].labels, b.sequences[n].labels);
    }
    EXPECT_EQ(a.symbols, b.symbols);
    EXPECT_NE(other.symbols, a.symbols);
  }
}

// Vocabulary: <pad> <unk> t0 .. t{V-1}, the rule's own input tokens, <out>. Classes and names.
TEST(PaperTasks, VocabularyClassesAndBatching) {
  const Vocabulary m = position_task_vocabulary(kMissing, 2);
  EXPECT_EQ(m.size(), 7u);  // <pad> <unk> t0 t1 ? # <out>
  EXPECT_EQ(m.id("?"), 4);
  EXPECT_EQ(m.id("#"), 5);
  EXPECT_EQ(m.id("<out>"), 6);
  const Vocabulary add = position_task_vocabulary(kAdd, 2);
  EXPECT_EQ(add.size(), 6u);  // <pad> <unk> t0 t1 + <out>
  EXPECT_EQ(add.id("+"), 4);
  EXPECT_EQ(position_task_vocabulary(kSort, 5).size(), 8u);  // <pad> <unk> t0..t4 <out>
  EXPECT_EQ(position_task_vocabulary(PositionRule::copy_left, 5).size(),
            position_task_vocabulary(5).size());
  EXPECT_FALSE(position_task_vocabulary(PositionRule::copy_left, 5).contains("<out>"));
  EXPECT_FALSE(position_task_has_outputs(PositionRule::neighbour_sum));
  EXPECT_TRUE(position_task_has_outputs(kParity));

  const PositionTaskDataset a = make_position_task(paper_config(kAdd, 5, 5, 4, 2));
  EXPECT_EQ(a.num_classes(), 3u);
  EXPECT_EQ(a.label_names(), (std::vector<std::string>{"t0", "t1", "<end>"}));
  EXPECT_DOUBLE_EQ(a.chance(), 1.0 / 3.0);
  const PositionTaskDataset s = make_position_task(paper_config(kSort, 5, 5, 4, 2));
  EXPECT_EQ(s.num_classes(), 5u);
  EXPECT_DOUBLE_EQ(s.chance(), 0.2);
  EXPECT_EQ(make_position_task(paper_config(kParity, 5, 5, 4, 2)).num_classes(), 2u);
  EXPECT_EQ(make_position_task(paper_config(kPairs, 5, 5, 4, 2)).num_classes(), 2u);
  EXPECT_EQ(make_position_task(paper_config(kCycle, 5, 5, 4, 2)).num_classes(), 5u);
  EXPECT_EQ(position_task_vocabulary(kCycle, 3).size(), 6u);  // <pad> <unk> t0 t1 t2 <out>
  // the vocabulary does not depend on the length or the seed
  EXPECT_EQ(make_position_task(paper_config(kAdd, 30, 30, 2, 9)).vocab.size(), a.vocab.size());

  // a batch of reverse_string inputs of lengths 2 and 3: T = 6, placeholders carry the labels
  PositionTaskConfig c = paper_config(kReverse, 2, 3, 20, 4);
  const PositionTaskDataset r = make_position_task(c);
  std::vector<std::size_t> idx;
  for (std::size_t n = 0; n < r.symbols.size() && idx.size() < 2; ++n)
    if (idx.empty() || r.symbols[n].size() != r.symbols[idx[0]].size()) idx.push_back(n);
  ASSERT_EQ(idx.size(), 2u);
  const LabelledBatch b = make_batch(r.sequences, idx, r.vocab);
  ASSERT_EQ(b.ids.shape(1), 6u);
  for (std::size_t row = 0; row < 2; ++row) {
    const Seq& x = r.symbols[idx[row]];
    const std::size_t n = x.size();
    for (std::size_t t = 0; t < n; ++t) {
      EXPECT_EQ(b.ids(row, t), x[t] + 2);
      EXPECT_EQ(b.labels(row, t), kIgnoreIndex);
    }
    for (std::size_t j = 0; j < n; ++j) {
      EXPECT_EQ(b.ids(row, n + j), r.vocab.id("<out>"));
      EXPECT_EQ(b.labels(row, n + j), x[n - 1 - j]);
    }
    for (std::size_t t = 2 * n; t < 6; ++t) EXPECT_TRUE(b.padding_mask(row, t));
  }
}

TEST(PaperTasks, BadConfigNamesRuleAndValue) {
  PositionTaskConfig c = paper_config(kParity, 1, 10, 5, 0);
  c.num_symbols = 8;
  EXPECT_EQ(message_of(c),
            "make_position_task: num_symbols is 8, expected 2 (parity_check reads bits)");
  c = paper_config(kAdd, 1, 10, 5, 0);
  c.num_symbols = 3;
  EXPECT_EQ(message_of(c),
            "make_position_task: num_symbols is 3, expected 2 (binary_addition reads bits)");
  c = paper_config(kCycle, 1, 10, 5, 0);
  c.num_symbols = 2;
  EXPECT_EQ(message_of(c),
            "make_position_task: num_symbols is 2, expected 3 (cycle_navigation reads 3 actions: "
            "t0 left, t1 stay, t2 right)");
  c = paper_config(kMissing, 1, 10, 5, 0);
  EXPECT_EQ(message_of(c),
            "make_position_task: min_length is 1, expected >= 2 (missing_duplicate_string needs a "
            "bit in each half)");
  c = paper_config(kAdd, 2, 10, 5, 0);
  EXPECT_EQ(message_of(c),
            "make_position_task: min_length is 2, expected >= 3 (binary_addition needs a bit, "
            "\"+\" and a bit)");
  c = paper_config(kReverse, 0, 10, 5, 0);
  EXPECT_EQ(message_of(c),
            "make_position_task: min_length is 0, expected >= 1 (reverse_string needs one input "
            "token)");
  c = paper_config(kDuplicate, 5, 4, 5, 0);
  EXPECT_EQ(message_of(c),
            "make_position_task: max_length is 4, expected 5...100000 (min_length...100000)");
  // the shortest inputs are accepted: one symbol, one bit per half, a + b of one bit each
  EXPECT_EQ(message_of(paper_config(kOdds, 1, 1, 3, 0)), "(no error)");
  EXPECT_EQ(message_of(paper_config(kMissing, 2, 2, 3, 0)), "(no error)");
  EXPECT_EQ(message_of(paper_config(kAdd, 3, 3, 3, 0)), "(no error)");
  EXPECT_EQ(make_position_task(paper_config(kAdd, 3, 3, 1, 0)).symbols[0][1], 2);  // 1 + 1
}

TEST(PaperTasks, BadInputNamesArgumentAndValue) {
  EXPECT_EQ(
      output_error(kReverse, {0, 2}, 2),
      "position_task_output: x[1] is 2, expected 0...1 (reverse_string with num_symbols = 2)");
  EXPECT_EQ(output_error(kSort, {}, 5),
            "position_task_output: x has 0 tokens, expected >= 1 (bucket_sort)");
  EXPECT_EQ(output_error(kParity, {1, -1}, 2),
            "position_task_output: x[1] is -1, expected 0...1 (parity_check with num_symbols = 2)");
  EXPECT_EQ(output_error(kMissing, {0, 1, 0, 1}, 2),
            "position_task_output: x has no \"?\" (2), expected one in x[0..3] "
            "(missing_duplicate_string)");
  EXPECT_EQ(output_error(kMissing, {2, 1, 0, 2}, 2),
            "position_task_output: x[3] is 2, expected 0 or 1 (a second \"?\") "
            "(missing_duplicate_string: w w with one \"?\")");
  EXPECT_EQ(output_error(kMissing, {0, 1, 2, 0}, 2),
            "position_task_output: x[1] is 1 and x[3] is 0, expected equal "
            "(missing_duplicate_string: w w)");
  EXPECT_EQ(
      output_error(kMissing, {0, 2, 0, 1, 0}, 2),
      "position_task_output: x[4] is 0, expected 3 (\"#\" ends an input of odd length n = 5)");
  EXPECT_EQ(output_error(kAdd, {2, 1, 1}, 2),
            "position_task_output: \"+\" (2) is at x[0], expected one in x[1..1] (binary_addition: "
            "a + b with a bit on each side)");
  EXPECT_EQ(output_error(kAdd, {1, 1, 1}, 2),
            "position_task_output: \"+\" (2) is missing, expected one in x[1..1] (binary_addition: "
            "a + b with a bit on each side)");
  EXPECT_EQ(output_error(kAdd, {1, 2, 1, 2, 1}, 2),
            "position_task_output: x[3] is 2, expected 0 or 1 (a second \"+\") (binary_addition: a "
            "+ b)");
  EXPECT_EQ(output_error(kCycle, {0, 3}, 3),
            "position_task_output: x[1] is 3, expected 0...2 (cycle_navigation with num_symbols = "
            "3)");
  EXPECT_EQ(output_error(PositionRule::copy_left, {0, 1}, 2),
            "position_task_output: rule is copy_left, expected a rule with <out> placeholders "
            "(copy_left labels its input: use position_task_label)");
}

// The agent/patient task data and the batching helpers.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "support/allclose.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/data/batching.hpp"
#include "xenc/data/word_roles.hpp"
#include "xenc/nn/token_classifier.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
std::string join(const std::vector<std::string>& t) {
  std::string s;
  for (const auto& w : t) s += (s.empty() ? "" : " ") + w;
  return s;
}
std::multiset<std::string> bag(const std::vector<std::string>& t) { return {t.begin(), t.end()}; }
std::set<std::string> unordered(const std::string& a, const std::string& b) { return {a, b}; }
}  // namespace

TEST(WordRoles, DefaultsHaveTheIssuesSizesAndBothVoices) {
  const WordRolesDataset d = make_word_roles(WordRolesConfig{});
  EXPECT_GE(d.nouns.size(), 20u);
  EXPECT_GE(d.verbs.size(), 10u);
  std::size_t passive = 0, adjectives = 0;
  for (const auto& s : d.train) {
    passive += s.passive;
    for (const auto& w : s.tokens)
      adjectives += std::count(d.adjectives.begin(), d.adjectives.end(), w) > 0;
  }
  EXPECT_GT(passive, d.train.size() / 4);
  EXPECT_LT(passive, 3 * d.train.size() / 4);
  EXPECT_GT(adjectives, 0u);
  // 24 nouns: 276 unordered pairs, 20% (55) held out; 4 sentences per ordered pair, mirrored
  EXPECT_EQ(d.heldout_pairs.size(), 55u);
  EXPECT_EQ(d.test.size(), 55u * 2 * 4 * 2);
  EXPECT_EQ(d.train.size(), (276u - 55u) * 2 * 4 * 2);
}

// Each sentence: one agent, one patient, on the nouns; the rest ignored; the template readable.
TEST(WordRoles, LabelsSitOnTheNouns) {
  const WordRolesDataset d = make_word_roles(WordRolesConfig{});
  for (const auto* split : {&d.train, &d.test})
    for (const auto& s : *split) {
      ASSERT_EQ(s.tokens.size(), s.labels.size());
      std::map<std::int64_t, std::string> by_label;
      for (std::size_t t = 0; t < s.tokens.size(); ++t)
        if (s.labels[t] != kIgnoreIndex)
          by_label[s.labels[t]] = s.tokens[t];
        else
          EXPECT_EQ(std::count(d.nouns.begin(), d.nouns.end(), s.tokens[t]), 0) << join(s.tokens);
      EXPECT_EQ(by_label.size(), 2u) << join(s.tokens);
      EXPECT_EQ(by_label[std::int64_t(Role::agent)], s.agent) << join(s.tokens);
      EXPECT_EQ(by_label[std::int64_t(Role::patient)], s.patient) << join(s.tokens);
      if (s.passive) {
        EXPECT_NE(std::find(s.tokens.begin(), s.tokens.end(), "by"), s.tokens.end());
        EXPECT_EQ(s.tokens.back(), s.agent);  // "... by the [adj] AGENT"
      } else {
        EXPECT_EQ(s.tokens.back(), s.patient);  // "the [adj] AGENT verb the [adj] PATIENT"
      }
    }
}

// Mirrors: same split, same bag of words, agent and patient swapped.
TEST(WordRoles, EveryMirrorIsInTheSameSplitWithTheSameWords) {
  const WordRolesDataset d = make_word_roles(WordRolesConfig{});
  for (const auto* split : {&d.train, &d.test})
    for (std::size_t i = 0; i < split->size(); ++i) {
      const auto& s = (*split)[i];
      ASSERT_LT(s.mirror, split->size());
      const auto& m = (*split)[s.mirror];
      EXPECT_EQ(m.mirror, i);
      EXPECT_EQ(m.agent, s.patient);
      EXPECT_EQ(m.patient, s.agent);
      EXPECT_EQ(m.passive, s.passive);
      EXPECT_EQ(bag(m.tokens), bag(s.tokens)) << join(s.tokens) << " / " << join(m.tokens);
      EXPECT_NE(m.tokens, s.tokens);
    }
}

// Held-out pairs never meet in training; the test set holds only them; every noun is trained.
TEST(WordRoles, HeldOutPairsAreNeverSeenTogetherInTraining) {
  const WordRolesDataset d = make_word_roles(WordRolesConfig{});
  std::set<std::set<std::string>> held;
  for (const auto& p : d.heldout_pairs) held.insert(unordered(p.first, p.second));
  std::set<std::string> trained;
  for (const auto& s : d.train) {
    EXPECT_EQ(held.count(unordered(s.agent, s.patient)), 0u) << join(s.tokens);
    trained.insert(s.agent);
  }
  for (const auto& s : d.test)
    EXPECT_EQ(held.count(unordered(s.agent, s.patient)), 1u) << join(s.tokens);
  EXPECT_EQ(trained.size(), d.nouns.size());
}

TEST(WordRoles, SeededAndValidated) {
  WordRolesConfig c;
  c.seed = 7;
  const auto a = make_word_roles(c), b = make_word_roles(c);
  ASSERT_EQ(a.train.size(), b.train.size());
  for (std::size_t i = 0; i < a.train.size(); ++i) EXPECT_EQ(a.train[i].tokens, b.train[i].tokens);
  c.seed = 8;
  const auto other = make_word_roles(c);
  EXPECT_NE(other.heldout_pairs, a.heldout_pairs);
  c.num_nouns = 2;
  EXPECT_THROW(make_word_roles(c), config_error);
  c = WordRolesConfig{};
  c.heldout_fraction = 1.0;
  EXPECT_THROW(make_word_roles(c), config_error);
}

// The 50% ceiling, shown: without positions a noun gets identical logits in a sentence and its
// mirror, while its label flips, so exactly one of the two predictions is right.
TEST(WordRoles, WithoutPositionsMirrorsGetIdenticalLogits) {
  WordRolesConfig wc;
  wc.num_nouns = 5;
  wc.sentences_per_pair = 1;
  const WordRolesDataset d = make_word_roles(wc);
  EncoderModelConfig c;
  c.vocab_size = d.vocab.size();
  c.layer.d_model = 8;
  c.layer.nhead = 2;
  c.layer.dim_feedforward = 16;
  c.layer.dropout = 0.0f;
  c.position = PositionKind::none;
  TokenClassifier model(c, 2);
  const auto data = as_labelled(d.train);
  const RoleSentence& s = d.train[0];
  const LabelledBatch b = make_batch(data, {0, s.mirror}, d.vocab);
  NoGradGuard no_grad;
  const Tensor3 logits = model.forward(b.ids, b.padding_mask);
  const auto& m = d.train[s.mirror];
  for (const std::string& noun : {s.agent, s.patient}) {
    const auto t0 = std::find(s.tokens.begin(), s.tokens.end(), noun) - s.tokens.begin();
    const auto t1 = std::find(m.tokens.begin(), m.tokens.end(), noun) - m.tokens.begin();
    EXPECT_NE(b.labels(0, t0), b.labels(1, t1));
    for (std::size_t k = 0; k < 2; ++k)
      EXPECT_NEAR(logits(0, t0, k), logits(1, t1, k), kEquivariance) << noun;
  }
}

TEST(Batching, ShuffleIsASeededPermutation) {
  Rng r1(3), r2(3), r3(4);
  const auto a = shuffled_indices(50, r1), b = shuffled_indices(50, r2),
             c = shuffled_indices(50, r3);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < 50; ++i) EXPECT_EQ(sorted[i], i);
  Rng r4(3);
  const auto batches = shuffled_batches(50, 16, r4);
  ASSERT_EQ(batches.size(), 4u);
  EXPECT_EQ(batches[3].size(), 2u);
  EXPECT_EQ(batches[0][0], a[0]);
  EXPECT_THROW(shuffled_batches(5, 0, r4), std::invalid_argument);
}

TEST(Batching, PadsWithMaskAndIgnoredLabels) {
  Vocabulary v;
  for (const char* w : {"the", "cat", "ran"}) v.add(w);
  const std::vector<LabelledSentence> data = {
      {{"the", "cat", "ran"}, {kIgnoreIndex, 0, kIgnoreIndex}}, {{"cat", "zebra"}, {1, 0}}};
  const LabelledBatch b = make_batch(data, {1, 0}, v);
  EXPECT_EQ(b.ids, (Index2{{3, Vocabulary::unk_id, Vocabulary::pad_id}, {2, 3, 4}}));
  EXPECT_EQ(b.padding_mask, (Mask2{{false, false, true}, {false, false, false}}));
  EXPECT_EQ(b.labels, (Index2{{1, 0, kIgnoreIndex}, {kIgnoreIndex, 0, kIgnoreIndex}}));
  EXPECT_THROW(make_batch(data, {}, v), std::invalid_argument);
  EXPECT_THROW(make_batch(data, {2}, v), std::invalid_argument);
}

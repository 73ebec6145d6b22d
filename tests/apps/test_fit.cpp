// apps/common/training.hpp's fit(), the one training loop of the apps, on a tiny model: the loss
// falls, on_step and on_epoch come in order with the right counts, every step's learning rate is
// the warm-up + cosine formula (read back from what the optimiser did to the weights), and the
// batches are the seeded shuffle.
//
// The task: sentences of the words a, b, c, d; each word's label is 0 for a and b, 1 for c and d.
// The model can learn it from the token embeddings alone, so a few epochs bring the loss down.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/training.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/random.hpp"
#include "xenc/data/batching.hpp"
#include "xenc/nn/token_classifier.hpp"
#include "xenc/text/vocabulary.hpp"

namespace {

using xenc_app::fit;
using xenc_app::FitOptions;
using xenc_app::FitStep;

constexpr std::size_t kUnk = 1;  // <unk>'s row of the embedding: no sentence holds it

// n distinct sentences of 2..5 words (sentence i spells i in base 4 with the digits a..d).
std::vector<xenc::LabelledSentence> make_sentences(std::size_t n) {
  const std::string words[4] = {"a", "b", "c", "d"};
  std::vector<xenc::LabelledSentence> data;
  for (std::size_t i = 0; i < n; ++i) {
    xenc::LabelledSentence s;
    std::size_t v = i;
    const std::size_t length = 2 + i % 4;
    for (std::size_t t = 0; t < length; ++t, v /= 4) {
      s.tokens.push_back(words[(v + t) % 4]);
      s.labels.push_back((v + t) % 4 < 2 ? 0 : 1);
    }
    data.push_back(s);
  }
  return data;
}

struct Fixture {
  std::vector<xenc::LabelledSentence> data;
  xenc::Vocabulary vocab = xenc::Vocabulary::from_texts({"a b c d"});
  xenc::TokenClassifier model;

  explicit Fixture(std::size_t n) : data(make_sentences(n)), model(config(vocab.size()), 2) {}

  static xenc::EncoderModelConfig config(std::size_t V) {
    xenc::EncoderModelConfig c;
    c.vocab_size = V;
    c.layer.d_model = 8;
    c.layer.nhead = 2;
    c.layer.dim_feedforward = 16;
    c.num_layers = 1;
    c.position = xenc::PositionKind::none;
    c.seed = 3;
    return c;
  }

  // The embedding row of <unk>, as a copy.
  std::vector<float> unk_row() {
    for (const auto& p : model.parameters())
      if (p.name == "embedding.weight") {
        const std::size_t D = p.shape[1];
        return std::vector<float>(p.value + kUnk * D, p.value + (kUnk + 1) * D);
      }
    ADD_FAILURE() << "no parameter embedding.weight";
    return {};
  }
};

// Warm-up then cosine, as the apps' training is specified (0-based step, W warm-up steps capped at
// the total S): lr·(s+1)/W while s < W, then lr·(1 + cos(π·(s−W)/(S−W)))/2.
double scheduled_lr(double lr, std::size_t warmup, std::size_t total, std::size_t s) {
  const std::size_t W = std::min(warmup, total);
  if (s < W) return lr * double(s + 1) / double(W);
  const double pi = std::acos(-1.0);
  return lr * 0.5 *
         (1.0 + std::cos(pi * double(s - W) / double(std::max<std::size_t>(1, total - W))));
}

TEST(Fit, TheLossFalls) {
  Fixture f(48);
  FitOptions o;
  o.epochs = 12;
  o.batch_size = 8;
  o.warmup = 6;
  o.lr = 1e-2;
  std::vector<double> epoch_loss(std::size_t(o.epochs), 0.0);
  std::vector<std::size_t> epoch_steps(std::size_t(o.epochs), 0);
  fit(
      f.model, {f.data, f.vocab}, o,
      [&](const FitStep& s) {
        EXPECT_TRUE(std::isfinite(s.result.loss));
        epoch_loss[std::size_t(s.epoch - 1)] += s.result.loss;
        ++epoch_steps[std::size_t(s.epoch - 1)];
      },
      nullptr);
  const double first = epoch_loss.front() / double(epoch_steps.front());
  const double last = epoch_loss.back() / double(epoch_steps.back());
  // two classes: an untrained model is near ln 2 = 0.69; the words alone decide the label
  EXPECT_GT(first, 0.4);
  EXPECT_LT(last, 0.1) << "first epoch's mean loss " << first;
  EXPECT_LT(last, 0.25 * first);
}

TEST(Fit, CallsOnStepAndOnEpochInOrderWithTheirCounts) {
  Fixture f(10);  // batches of 4: 4, 4, 2 per epoch
  FitOptions o;
  o.epochs = 2;
  o.batch_size = 4;
  std::vector<std::string> calls;
  std::vector<std::size_t> batch_rows;
  const std::size_t steps = fit(
      f.model, {f.data, f.vocab}, o,
      [&](const FitStep& s) {
        EXPECT_TRUE(f.model.is_training()) << "step " << s.step;
        EXPECT_EQ(s.steps, 6u);
        EXPECT_EQ(s.per_epoch, 3u);
        EXPECT_EQ(s.result.logits.shape(0), s.batch.ids.shape(0));
        EXPECT_EQ(s.result.logits.shape(2), 2u);
        batch_rows.push_back(s.batch.ids.shape(0));
        calls.push_back("step " + std::to_string(s.epoch) + "." + std::to_string(s.in_epoch) +
                        " #" + std::to_string(s.step));
      },
      [&](int epoch, std::size_t step) {
        EXPECT_FALSE(f.model.is_training()) << "epoch " << epoch;
        calls.push_back("epoch " + std::to_string(epoch) + " after #" + std::to_string(step));
      });
  EXPECT_EQ(steps, 6u);
  EXPECT_FALSE(f.model.is_training());
  const std::vector<std::string> expected = {"step 1.1 #1",      "step 1.2 #2",     "step 1.3 #3",
                                             "epoch 1 after #3", "step 2.1 #4",     "step 2.2 #5",
                                             "step 2.3 #6",      "epoch 2 after #6"};
  EXPECT_EQ(calls, expected);
  EXPECT_EQ(batch_rows, (std::vector<std::size_t>{4, 4, 2, 4, 4, 2}));
}

// AdamW moves a weight whose gradient is zero only by the decoupled decay, w ← w·(1 − lr·wd):
// <unk>'s embedding row (no sentence holds <unk>) shows the learning rate of every step.
void expect_learning_rates(std::size_t n, std::size_t batch_size, int epochs, std::size_t warmup) {
  Fixture f(n);
  FitOptions o;
  o.epochs = epochs;
  o.batch_size = batch_size;
  o.warmup = warmup;
  o.lr = 1e-2;
  o.weight_decay = 4.0;  // a large decay, so that lr·wd stands well above float rounding
  const std::size_t total = (n + batch_size - 1) / batch_size * std::size_t(epochs);
  std::vector<float> before = f.unk_row();
  ASSERT_FALSE(before.empty());
  std::size_t seen = 0;
  fit(
      f.model, {f.data, f.vocab}, o,
      [&](const FitStep& s) {
        const std::vector<float> after = f.unk_row();
        const double expected = scheduled_lr(o.lr, warmup, total, s.step - 1);
        for (std::size_t i = 0; i < after.size(); ++i) {
          ASSERT_NE(before[i], 0.0f);
          const double lr = (1.0 - double(after[i]) / double(before[i])) / o.weight_decay;
          EXPECT_NEAR(lr, expected, xenc::test::kDecayLearningRate * expected)
              << "step " << s.step << ", column " << i;
        }
        before = after;
        ++seen;
      },
      nullptr);
  EXPECT_EQ(seen, total);
}

TEST(Fit, LearningRatesFollowWarmupThenCosine) {
  expect_learning_rates(20, 4, 3, 4);  // 15 steps: 4 of warm-up, 11 of cosine decay
}

TEST(Fit, WarmupLongerThanTheRunIsCappedAtTheRun) {
  expect_learning_rates(8, 4, 2, 100);  // 4 steps, all warm-up: lr·1/4, 2/4, 3/4, 4/4
}

// The rows of every step's batch, in order, identified by their token ids.
std::vector<std::vector<std::int64_t>> batches_of(std::uint32_t seed, std::size_t n) {
  Fixture f(n);
  FitOptions o;
  o.epochs = 3;
  o.batch_size = 4;
  o.seed = seed;
  std::vector<std::vector<std::int64_t>> out;
  fit(
      f.model, {f.data, f.vocab}, o,
      [&](const FitStep& s) { out.emplace_back(s.batch.ids.begin(), s.batch.ids.end()); }, nullptr);
  return out;
}

TEST(Fit, BatchesAreTheSeededShuffleEpochAfterEpoch) {
  const std::size_t n = 12;
  const auto run = batches_of(7, n);
  EXPECT_EQ(run, batches_of(7, n)) << "the same seed must give the same batches";
  EXPECT_NE(run, batches_of(8, n)) << "another seed must give other batches";

  // fit draws each epoch's order from one Rng(seed), as xenc::shuffled_batches does
  Fixture f(n);
  xenc::Rng rng(7);
  std::vector<std::vector<std::int64_t>> expected;
  for (int epoch = 0; epoch < 3; ++epoch)
    for (const auto& idx : xenc::shuffled_batches(n, 4, rng)) {
      const xenc::LabelledBatch b = xenc::make_batch(f.data, idx, f.vocab);
      expected.emplace_back(b.ids.begin(), b.ids.end());
    }
  EXPECT_EQ(run, expected);
  // and the epochs differ from each other (3 batches each)
  EXPECT_NE(std::vector<std::vector<std::int64_t>>(run.begin(), run.begin() + 3),
            std::vector<std::vector<std::int64_t>>(run.begin() + 3, run.begin() + 6));
}

}  // namespace

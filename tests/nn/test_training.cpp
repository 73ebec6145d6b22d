// Training works end to end: a tiny EncoderModel + a Linear head on the mean-pooled output,
// trained with Adam and cross-entropy to tell "A before B" from "B before A".
//
// Each sentence has three tokens: A, B and one filler word, in any order (3! orders × 4 fillers
// = 24 sentences); the label is 1 when A comes before B. Swapping A and B gives the other label
// with the same bag of words. Without position information the encoder is permutation-
// equivariant and mean pooling is permutation-invariant, so both members of every pair get the
// same logits and the loss cannot go below chance (ln 2 per example). With sinusoidal positions
// the model separates the pairs.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "support/tolerances.hpp"
#include "xenc/nn/encoder_model.hpp"
#include "xenc/nn/linear.hpp"
#include "xenc/nn/optim.hpp"
#include "xenc/ops/cross_entropy.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
constexpr std::int64_t kA = 1, kB = 2;  // 0 is <pad>; fillers are 3..6

struct Task {
  Index2 ids;                        // [24, 3]
  Index1 labels;                     // [24]: 1 = A before B
  std::vector<std::size_t> partner;  // the sentence with A and B swapped
};

Task make_task() {
  Task task;
  task.ids = Index2::from_shape({24, 3});
  task.labels = Index1::from_shape({24});
  const int orders[6][3] = {{0, 1, 2}, {1, 0, 2}, {0, 2, 1}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  std::size_t n = 0;
  for (std::int64_t filler = 3; filler <= 6; ++filler)
    for (const auto& o : orders) {
      const std::int64_t words[3] = {kA, kB, filler};
      for (std::size_t t = 0; t < 3; ++t) task.ids(n, t) = words[o[t]];
      std::size_t pos_a = 0, pos_b = 0;
      for (std::size_t t = 0; t < 3; ++t) {
        if (task.ids(n, t) == kA) pos_a = t;
        if (task.ids(n, t) == kB) pos_b = t;
      }
      task.labels(n) = pos_a < pos_b ? 1 : 0;
      ++n;
    }
  task.partner.resize(24);
  for (std::size_t i = 0; i < 24; ++i)
    for (std::size_t j = 0; j < 24; ++j) {
      bool swapped = true;
      for (std::size_t t = 0; t < 3; ++t) {
        const std::int64_t w = task.ids(i, t), s = w == kA ? kB : w == kB ? kA : w;
        swapped = swapped && task.ids(j, t) == s;
      }
      if (swapped) task.partner[i] = j;
    }
  return task;
}

struct Classifier {
  EncoderModel encoder;
  Linear head;

  explicit Classifier(PositionKind position)
      : encoder([&] {
          EncoderModelConfig c;
          c.vocab_size = 7;
          c.layer.d_model = 16;
          c.layer.nhead = 2;
          c.layer.dim_feedforward = 32;
          c.layer.dropout = 0.0f;
          c.num_layers = 1;
          c.position = position;
          c.seed = 5;
          return c;
        }()),
        head(16, 2, true, 6) {}

  // mean over the T positions of the encoder output, then the head: [B, 2]
  Tensor2 forward(const Index2& ids) {
    const Tensor3 h = encoder.forward(ids);
    const std::size_t B = h.shape(0), T = h.shape(1), D = h.shape(2);
    Tensor2 pooled = xt::zeros<float>({B, D});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t d = 0; d < D; ++d) pooled(b, d) += h(b, t, d) / float(T);
    return head.forward(pooled);
  }
  void backward(const Tensor2& dlogits, std::size_t T) {
    const Tensor2 dpooled = head.backward(dlogits);
    Tensor3 dh = Tensor3::from_shape({dpooled.shape(0), T, dpooled.shape(1)});
    for (std::size_t b = 0; b < dh.shape(0); ++b)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t d = 0; d < dh.shape(2); ++d) dh(b, t, d) = dpooled(b, d) / float(T);
    encoder.backward(dh);
  }
  ParameterList parameters() {
    ParameterList p = encoder.parameters();
    for (auto& q : head.parameters()) p.push_back(q);
    return p;
  }
};

// Full-batch Adam; returns the final loss.
float train(Classifier& model, const Task& task, int steps) {
  Adam opt(model.parameters(), 1e-2f);
  float loss = 0.0f;
  for (int s = 0; s < steps; ++s) {
    opt.zero_grad();
    const Tensor2 logits = model.forward(task.ids);
    loss = cross_entropy_forward(logits, task.labels);
    model.backward(cross_entropy_backward(logits, task.labels), 3);
    opt.step();
  }
  return loss;
}

double accuracy(const Tensor2& logits, const Index1& labels) {
  std::size_t right = 0;
  for (std::size_t n = 0; n < labels.size(); ++n)
    right += (logits(n, 1) > logits(n, 0) ? 1 : 0) == labels(n);
  return double(right) / double(labels.size());
}
}  // namespace

TEST(Training, TaskIsMadeOfSwappedPairs) {
  const Task task = make_task();
  std::size_t ones = 0;
  for (std::size_t i = 0; i < 24; ++i) {
    EXPECT_EQ(task.partner[task.partner[i]], i);
    EXPECT_NE(task.labels(i), task.labels(task.partner[i]));
    ones += task.labels(i);
  }
  EXPECT_EQ(ones, 12u);
}

TEST(Training, WithSinusoidalPositionsTheModelLearnsWordOrder) {
  const Task task = make_task();
  Classifier model(PositionKind::sinusoidal);
  const float initial = cross_entropy_forward(model.forward(task.ids), task.labels);
  const float final_loss = train(model, task, 300);
  const Tensor2 logits = model.forward(task.ids);
  EXPECT_LT(final_loss, 0.1f) << "initial loss " << initial;
  EXPECT_LT(final_loss, std::log(2.0f) / 5);
  EXPECT_EQ(accuracy(logits, task.labels), 1.0);
}

TEST(Training, WithoutPositionsPairsGetEqualLogitsAndTheLossStaysAtChance) {
  const Task task = make_task();
  Classifier model(PositionKind::none);
  const float final_loss = train(model, task, 300);
  const Tensor2 logits = model.forward(task.ids);
  for (std::size_t i = 0; i < 24; ++i)
    for (std::size_t c = 0; c < 2; ++c)
      EXPECT_NEAR(logits(i, c), logits(task.partner[i], c), kEquivariance) << "sentence " << i;
  // Equal logits z for labels 0 and 1 cost -ln p0 - ln p1 >= 2 ln 2 per pair (p0 p1 <= 1/4):
  // the mean loss cannot go below ln 2, and each pair has one right and one wrong answer.
  EXPECT_GE(final_loss, std::log(2.0f) - kLossBound);
}

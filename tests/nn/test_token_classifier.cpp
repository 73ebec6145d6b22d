// The per-token classifier end to end (embedding -> positions -> encoder -> Linear head ->
// cross-entropy with ignore_index), and gradient buffers that exist only after a backward.
#include <gtest/gtest.h>

#include <cmath>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/helpers.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/data/batching.hpp"
#include "xenc/nn/optim.hpp"
#include "xenc/nn/token_classifier.hpp"
#include "xenc/ops/cross_entropy.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
EncoderModelConfig small_config(PositionKind position, Activation act = Activation::gelu) {
  EncoderModelConfig c;
  c.vocab_size = 7;
  c.layer.d_model = 8;
  c.layer.nhead = 2;
  c.layer.dim_feedforward = 16;
  c.layer.dropout = 0.0f;
  c.layer.activation = act;
  c.num_layers = 2;
  c.position = position;
  c.max_len = 6;
  c.final_norm = true;
  c.seed = 3;
  return c;
}

// Mean cross-entropy over non-ignored targets, in double, written out here (the reference for
// the library's float version): -1/N' Σ (z_t - log Σ_c exp z_c).
double reference_loss(const Tensor3& logits, const Index2& targets) {
  const std::size_t B = logits.shape(0), T = logits.shape(1), C = logits.shape(2);
  double total = 0.0;
  std::size_t n = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t) {
      if (targets(b, t) == kIgnoreIndex) continue;
      double m = -1e300, s = 0.0;
      for (std::size_t c = 0; c < C; ++c) m = std::max(m, double(logits(b, t, c)));
      for (std::size_t c = 0; c < C; ++c) s += std::exp(double(logits(b, t, c)) - m);
      total += m + std::log(s) - double(logits(b, t, targets(b, t)));
      ++n;
    }
  return total / double(n);
}

// Two sentences, the second padded; labels on some tokens only, the others ignored.
const Index2 kIds = {{2, 3, 4, 5}, {6, 2, 3, 0}};
const Mask2 kMask = {{false, false, false, false}, {false, false, false, true}};
const Index2 kTargets = {{0, kIgnoreIndex, 2, 1}, {kIgnoreIndex, 1, 0, kIgnoreIndex}};
}  // namespace

// The library's loss equals the double reference, and its gradient (cross_entropy_backward ->
// head -> encoder -> positions -> embedding) matches finite differences for every parameter.
TEST(TokenClassifier, WholeModelGradientsMatchFiniteDifferences) {
  for (PositionKind kind : {PositionKind::learned, PositionKind::sinusoidal}) {
    SCOPED_TRACE(to_string(kind));
    TokenClassifier model(small_config(kind), 3);
    model.zero_grad();
    const Tensor3 logits = model.forward(kIds, kMask);
    EXPECT_NEAR(cross_entropy_forward(logits, kTargets, kIgnoreIndex),
                reference_loss(logits, kTargets), kOpAtol);
    model.backward(cross_entropy_backward(logits, kTargets, kIgnoreIndex));
    const auto targets = parameter_targets(model);
    auto loss = [&] {
      NoGradGuard no_grad;
      return reference_loss(model.forward(kIds, kMask), kTargets);
    };
    EXPECT_TRUE(GradientsMatch(loss, targets, kGradModule));
  }
}

TEST(TokenClassifier, StateDictNamesArePyTorchs) {
  TokenClassifier model(small_config(PositionKind::learned), 3);
  const StateDict s = model.state_dict();
  for (const char* key :
       {"embedding.weight", "position.weight", "encoder.layers.0.self_attn.in_proj_weight",
        "encoder.layers.1.linear2.bias", "encoder.norm.weight", "head.weight", "head.bias"})
    EXPECT_EQ(s.count(key), 1u) << key;
  EXPECT_EQ(s.at("head.weight").shape(), (std::vector<std::size_t>{3, 8}));
  EXPECT_THROW(TokenClassifier(small_config(PositionKind::none), 0), config_error);
}

// No gradient memory until the first backward (a big model used for inference must not pay for
// it); afterwards every parameter has its buffer, views taken before see it, and results are
// the same as with buffers allocated up front would give: a second zero_grad + backward gives
// identical gradients, and an optimiser built before the first backward trains.
TEST(TokenClassifier, GradientBuffersAreAllocatedByTheFirstBackward) {
  TokenClassifier model(small_config(PositionKind::learned, Activation::relu), 3);
  const ParameterList before = model.parameters();
  auto allocated = [&] {
    std::size_t n = 0;
    for (const auto& p : model.parameters()) n += p.grad.allocated() ? p.size() : 0;
    return n;
  };
  EXPECT_EQ(allocated(), 0u);
  model.zero_grad();  // nothing to zero, nothing allocated
  {
    NoGradGuard no_grad;
    model.forward(kIds, kMask);
  }
  const Tensor3 logits = model.forward(kIds, kMask);  // a forward that caches: still no grads
  EXPECT_EQ(allocated(), 0u);
  AdamW opt(before, 1e-2f);
  opt.step();  // nothing to do yet: the weights stay
  EXPECT_TRUE(AllClose(model.forward(kIds, kMask), logits, 0.0, 0.0));

  const Tensor3 dlogits = cross_entropy_backward(logits, kTargets, kIgnoreIndex);
  model.backward(dlogits);
  EXPECT_EQ(allocated(), model.num_parameters());
  std::vector<xt::xarray<float>> g1;
  for (const auto& p : before) {
    ASSERT_TRUE(p.grad.allocated()) << p.name;
    g1.push_back(grad_of(p));
  }
  model.zero_grad();
  model.forward(kIds, kMask);
  model.backward(dlogits);
  for (std::size_t i = 0; i < before.size(); ++i)
    EXPECT_TRUE(AllClose(grad_of(before[i]), g1[i], 0.0, 0.0)) << before[i].name;
  EXPECT_GT(xt::amax(xt::abs(g1.back()))(), 0.0f);  // head.bias has a real gradient

  // the optimiser built before the first backward sees the buffers now
  const float loss0 = cross_entropy_forward(logits, kTargets, kIgnoreIndex);
  for (int step = 0; step < 20; ++step) {
    opt.zero_grad();
    const Tensor3 y = model.forward(kIds, kMask);
    model.backward(cross_entropy_backward(y, kTargets, kIgnoreIndex));
    opt.step();
  }
  EXPECT_LT(cross_entropy_forward(model.forward(kIds, kMask), kTargets, kIgnoreIndex),
            0.5f * loss0);
}

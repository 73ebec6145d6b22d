// Inverted dropout: identity in evaluation, x ⊙ mask with mask ∈ {0, 1/(1-p)} in training.
#include <gtest/gtest.h>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/helpers.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/ops/dropout.hpp"

using namespace xenc;
using namespace xenc::test;

// p = 0.5: every kept entry is scaled by 1 / (1 - 0.5) = 2, a dropped one is 0, so
// x = [1, 2, 3, 4] gives y_i ∈ {0, 2 x_i}, and y = x ⊙ mask exactly.
TEST(Dropout, HandExample) {
  const Tensor1 x = {1, 2, 3, 4};
  Rng rng(1);
  Tensor1 mask;
  const Tensor1 y = dropout_forward(x, 0.5f, true, rng, mask);
  ASSERT_EQ(mask.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(mask(i) == 0.0f || mask(i) == 2.0f) << mask(i);
    EXPECT_EQ(y(i), x(i) * mask(i));
  }
}

TEST(Dropout, EvaluationIsTheIdentityWithAnEmptyMask) {
  Rng rng(2);
  const Tensor2 x = {{1, -2}, {3, 4}};
  Tensor2 mask = xt::ones<float>({2, 2});
  EXPECT_TRUE(AllClose(dropout_forward(x, 0.3f, false, rng, mask), x, 0.0, 0.0));
  EXPECT_EQ(mask.size(), 0u);
  EXPECT_TRUE(
      AllClose(dropout_backward(Tensor2{{5, 6}, {7, 8}}, mask), Tensor2{{5, 6}, {7, 8}}, 0.0, 0.0));
  // p = 0 in training is the identity too
  EXPECT_TRUE(AllClose(dropout_forward(x, 0.0f, true, rng, mask), x, 0.0, 0.0));
  // a gradient moved into backward comes back in the same buffer (no copy)
  Tensor2 g = {{5, 6}, {7, 8}};
  const float* buffer = g.data();
  EXPECT_EQ(dropout_backward(std::move(g), mask).data(), buffer);
}

TEST(Dropout, KeepsAboutOneMinusPAndPreservesTheMean) {
  Rng rng(3);
  const Tensor1 x = xt::ones<float>({20000});
  Tensor1 mask;
  const Tensor1 y = dropout_forward(x, 0.25f, true, rng, mask);
  std::size_t kept = 0;
  double sum = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    EXPECT_TRUE(mask(i) == 0.0f || std::fabs(mask(i) - 4.0f / 3.0f) < kOpAtol);
    kept += mask(i) != 0.0f;
    sum += y(i);
  }
  EXPECT_NEAR(double(kept) / 20000.0, 0.75, kDropoutKeptFraction);
  EXPECT_NEAR(sum / 20000.0, 1.0, kDropoutMean);  // inverted dropout keeps the expectation
}

TEST(Dropout, SameSeedGivesTheSameMask) {
  Rng a(7), b(7);
  const Tensor2 x = xt::ones<float>({8, 8});
  Tensor2 ma, mb;
  EXPECT_TRUE(AllClose(dropout_forward(x, 0.5f, true, a, ma), dropout_forward(x, 0.5f, true, b, mb),
                       0.0, 0.0));
  EXPECT_TRUE(AllClose(ma, mb, 0.0, 0.0));
}

// Training with a fixed mask: restarting the generator from the same state redraws the same
// mask, so the forward is the smooth function x -> x ⊙ m and finite differences apply.
TEST(Dropout, GradientMatchesFiniteDifferencesWithAFixedMask) {
  Rng data(4);
  auto x = random_tensor<Tensor3>(std::array<std::size_t, 3>{2, 3, 4}, data);
  auto G = random_tensor<Tensor3>(x.shape(), data);
  const Rng start(99);
  Rng r0 = start;
  Tensor3 mask;
  dropout_forward(x, 0.4f, true, r0, mask);
  const Tensor3 dx = dropout_backward(G, mask);
  auto loss = [&] {
    Rng r = start;
    Tensor3 m;
    return dot_loss(dropout_forward(x, 0.4f, true, r, m), G);
  };
  EXPECT_TRUE(GradientsMatch(loss, {input_target("x", x, dx)}, kGradOp));
}

TEST(Dropout, InvalidPAndMaskShapeAreClearErrors) {
  Rng rng(5);
  const Tensor1 x = {1, 2};
  Tensor1 mask;
  try {
    dropout_forward(x, 1.0f, true, rng, mask);
    FAIL() << "expected config_error";
  } catch (const config_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("dropout_forward"), std::string::npos) << msg;
    EXPECT_NE(msg.find("0 <= p < 1"), std::string::npos) << msg;
  }
  EXPECT_THROW(dropout_forward(x, -0.1f, false, rng, mask), std::invalid_argument);
  try {
    dropout_backward(Tensor1{1, 2}, Tensor1{1, 1, 1});
    FAIL() << "expected shape_error";
  } catch (const shape_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("dropout_backward: mask has shape [3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2]"), std::string::npos) << msg;
  }
}

// Seeded dropout (SeededDropout): the factor of element (r, c) of x read as rows of its last
// dimension depends on (seed, r, c) alone. Every factor is 0 or 1/(1 − p), about 1 − p of 40,000
// are kept, y = x ⊙ mask exactly; the same seed gives the same mask for any shape with the same
// rows ([2, 3, 8] and [6, 8]: the same 48 factors); another seed, another mask.
TEST(SeededDropout, DependsOnSeedAndPositionOnly) {
  Rng data(8);
  const Tensor2 x = random_tensor<Tensor2>(std::array<std::size_t, 2>{200, 200}, data);
  const SeededDropout drop{0.25f, 0xfeed};
  Tensor2 mask;
  const Tensor2 y = dropout_forward(x, drop, true, mask);
  ASSERT_EQ(mask.shape(), x.shape());
  std::size_t kept = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(mask.data()[i] == 0.0f || mask.data()[i] == 1.0f / 0.75f) << mask.data()[i];
    ASSERT_EQ(y.data()[i], x.data()[i] * mask.data()[i]);
    kept += mask.data()[i] != 0.0f;
  }
  EXPECT_NEAR(double(kept) / double(x.size()), 0.75, kDropoutKeptFraction);

  const Tensor3 ones3 = xt::ones<float>({2, 3, 8});
  const Tensor2 ones2 = xt::ones<float>({6, 8});
  Tensor3 m3;
  Tensor2 m2, again, other;
  dropout_forward(ones3, drop, true, m3);
  dropout_forward(ones2, drop, true, m2);
  EXPECT_TRUE(std::equal(m3.begin(), m3.end(), m2.begin()));
  dropout_forward(x, drop, true, again);
  EXPECT_TRUE(AllClose(again, mask, 0.0, 0.0));
  dropout_forward(x, SeededDropout{0.25f, 0xfeee}, true, other);
  EXPECT_FALSE(AllClose(other, mask, 0.0, 0.0));
}

// A seed is two words of the generator, high first; evaluation and p = 0 are the identity with
// an empty mask; p outside [0, 1) is refused naming the function.
TEST(SeededDropout, SeedFromTheGeneratorAndIdentityWhenOff) {
  Rng a(5), b(5);
  const SeededDropout d = draw_dropout_seed(0.1f, a);
  const std::uint64_t high = b.next_u32();
  EXPECT_EQ(d.seed, (high << 32) | b.next_u32());
  EXPECT_EQ(d.p, 0.1f);
  const Tensor2 x = {{1, -2}, {3, 4}};
  Tensor2 mask = xt::ones<float>({2, 2});
  EXPECT_TRUE(AllClose(dropout_forward(x, d, false, mask), x, 0.0, 0.0));
  EXPECT_EQ(mask.size(), 0u);
  EXPECT_TRUE(AllClose(dropout_forward(x, SeededDropout{0.0f, 3}, true, mask), x, 0.0, 0.0));
  EXPECT_EQ(mask.size(), 0u);
  std::string msg = what_of([&] { draw_dropout_seed(1.0f, a); });
  EXPECT_NE(msg.find("draw_dropout_seed: p is 1.0"), std::string::npos) << msg;
  msg = what_of([&] { dropout_forward(x, SeededDropout{-0.5f, 3}, true, mask); });
  EXPECT_NE(msg.find("dropout_forward: dropout.p is -0.5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected 0 <= p < 1"), std::string::npos) << msg;
}

// With a fixed seed the forward is the smooth function x -> x ⊙ m: its backward (dy ⊙ m) matches
// finite differences.
TEST(SeededDropout, GradientMatchesFiniteDifferences) {
  Rng data(9);
  auto x = random_tensor<Tensor3>(std::array<std::size_t, 3>{2, 3, 4}, data);
  auto G = random_tensor<Tensor3>(x.shape(), data);
  const SeededDropout drop{0.4f, 77};
  Tensor3 mask;
  dropout_forward(x, drop, true, mask);
  const Tensor3 dx = dropout_backward(G, mask);
  auto loss = [&] {
    Tensor3 m;
    return dot_loss(dropout_forward(x, drop, true, m), G);
  };
  EXPECT_TRUE(GradientsMatch(loss, {input_target("x", x, dx)}, kGradOp));
}

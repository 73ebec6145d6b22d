// Inverted dropout: identity in evaluation, x ⊙ mask with mask ∈ {0, 1/(1-p)} in training.
#include <gtest/gtest.h>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
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

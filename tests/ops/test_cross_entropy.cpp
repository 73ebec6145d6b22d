// Cross-entropy over logits, mean over non-ignored rows (NaN when there are none, as PyTorch).
#include <gtest/gtest.h>

#include <cmath>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/helpers.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/ops/cross_entropy.hpp"
#include "xenc/reference/ops.hpp"

using namespace xenc;
using namespace xenc::test;

// Row 0: logits [0, 0], target 0: -log(1/2) = ln 2 = 0.6931472.
// Row 1: logits [0, ln 3], target 1: -log(3/4) = 0.2876821.   Mean = 0.4904146.
// dlogits = (softmax - onehot) / 2 = [[(0.5 - 1)/2, 0.5/2], [0.25/2, (0.75 - 1)/2]]
TEST(CrossEntropy, HandExample) {
  const Tensor2 logits = {{0.0f, 0.0f}, {0.0f, std::log(3.0f)}};
  const Index1 targets = {0, 1};
  EXPECT_NEAR(cross_entropy_forward(logits, targets), 0.4904146, kOpAtol);
  EXPECT_TRUE(AllClose(cross_entropy_backward(logits, targets),
                       Tensor2{{-0.25f, 0.25f}, {0.125f, -0.125f}}, kOpAtol, kOpRtol));
}

TEST(CrossEntropy, MatchesPyTorchWithIgnoreIndex) {
  const json ref = load_reference("cross_entropy");
  const Tensor2 logits = tensor<2>(ref["logits"]);
  const Index1 targets = index1(ref["targets"]);
  EXPECT_NEAR(cross_entropy_forward(logits, targets), ref["loss"].get<double>(), kOpAtol);
  EXPECT_TRUE(AllClose(cross_entropy_backward(logits, targets), tensor<2>(ref["dlogits"]), kOpAtol,
                       kOpRtol));
}

TEST(CrossEntropy, GradientMatchesFiniteDifferences) {
  Rng rng(14);
  auto logits = random_tensor<Tensor2>(std::array<std::size_t, 2>{6, 5}, rng, 2.0f);
  const Index1 targets = {0, 4, -100, 2, 2, 1};
  const Tensor2 d = cross_entropy_backward(logits, targets);
  auto loss = [&] { return double(cross_entropy_forward(logits, targets)); };
  EXPECT_TRUE(GradientsMatch(loss, {input_target("logits", logits, d)}, kGradOp));
}

TEST(CrossEntropy, StableForLargeLogits) {
  const Tensor2 logits = {{1000.0f, 0.0f}, {0.0f, 1000.0f}};
  EXPECT_NEAR(cross_entropy_forward(logits, Index1{0, 0}), 500.0,
              kLargeLossAtol);  // (0 + 1000) / 2
}

// PyTorch 1.13: F.cross_entropy(z, torch.tensor([-100, -100])) is nan (a mean over no rows,
// 0/0), and its backward gives zeros. A batch with nothing to learn from must not pass for a
// perfect one (loss 0). The reference agrees (reference::cross_entropy_forward).
TEST(CrossEntropy, EveryTargetIgnoredIsNaNAsInPyTorch) {
  const json ref = load_reference("nan_rules")["cross_entropy_all_ignored"];
  ASSERT_TRUE(ref["loss_is_nan"].get<bool>());
  const Tensor2 z = tensor<2>(ref["logits"]);
  const Index1 t = index1(ref["targets"]);
  EXPECT_TRUE(std::isnan(cross_entropy_forward(z, t, ref["ignore_index"].get<std::int64_t>())));
  EXPECT_TRUE(AllClose(cross_entropy_backward(z, t), tensor<2>(ref["dlogits"]), 0.0, 0.0));
  const Tensor2 logits = {{1000.0f, 0.0f}, {0.0f, 1000.0f}};
  EXPECT_TRUE(std::isnan(cross_entropy_forward(logits, Index1{-100, -100})));
  EXPECT_TRUE(AllClose(cross_entropy_backward(logits, Index1{-100, -100}),
                       Tensor2(xt::zeros<float>({2, 2})), 0.0, 0.0));
  EXPECT_TRUE(std::isnan(reference::cross_entropy_forward(logits, Index1{-100, -100})));
  const Tensor3 logits3 = xt::zeros<float>({2, 3, 4});
  const Index2 none = {{-100, -100, -100}, {-100, -100, -100}};
  EXPECT_TRUE(std::isnan(cross_entropy_forward(logits3, none)));
  EXPECT_TRUE(AllClose(cross_entropy_backward(logits3, none), logits3, 0.0, 0.0));
}

// [B, T, C] is the [B·T, C] case: the mean over every kept token of the batch.
TEST(CrossEntropy, PerTokenLogitsAreTheFlattenedCase) {
  Rng rng(15);
  auto logits = random_tensor<Tensor3>(std::array<std::size_t, 3>{2, 3, 4}, rng, 2.0f);
  const Index2 targets = {{0, -100, 3}, {1, 2, -100}};
  const reference::Tensor2d rows = reference::rows_of(logits);
  const Index1 flat = {0, -100, 3, 1, 2, -100};
  EXPECT_NEAR(cross_entropy_forward(logits, targets), reference::cross_entropy_forward(rows, flat),
              kOpAtol);
  EXPECT_TRUE(AllClose(reference::rows_of(cross_entropy_backward(logits, targets)),
                       reference::cross_entropy_backward(rows, flat), kOpAtol, kOpRtol));
  const std::string msg =
      what_of([&] { cross_entropy_forward(logits, Index2{{0, 1, 4}, {0, 0, 0}}); });
  EXPECT_NE(msg.find("cross_entropy_forward: targets[2] is 4, expected 0 <= target < C = 4"),
            std::string::npos)
      << msg;
}

TEST(CrossEntropy, BadTargetsAreClearErrors) {
  const Tensor2 logits = xt::zeros<float>({3, 4});
  try {
    cross_entropy_forward(logits, Index1{0, 1});
    FAIL() << "expected shape_error";
  } catch (const shape_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cross_entropy_forward: targets has shape [2]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("N = 3"), std::string::npos) << msg;
  }
  try {
    cross_entropy_backward(logits, Index1{0, 4, 1});
    FAIL() << "expected xenc::index_error";
  } catch (const xenc::index_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("targets[1] is 4"), std::string::npos) << msg;
    EXPECT_NE(msg.find("C = 4"), std::string::npos) << msg;
  }
}

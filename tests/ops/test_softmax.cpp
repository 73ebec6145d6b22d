// Softmax over the last axis: stable, masked entries exactly 0, fully masked rows all 0, NaN kept;
// the loop reference is reference::softmax_forward.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/ops/softmax.hpp"
#include "xenc/reference/ops.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor2 masked_input(const json& ref) {
  Tensor2 x = tensor<2>(ref["x"]);
  const Mask2 m = mask2(ref["mask"]);
  for (std::size_t i = 0; i < x.size(); ++i)
    if (m.data()[i]) x.data()[i] = -kInf;
  return x;
}
}  // namespace

// softmax([0, ln 2, ln 3]) = [1, 2, 3] / (1 + 2 + 3) = [1/6, 1/3, 1/2]
// softmax([0, -inf, ln 3]) = [1, 0, 3] / 4 = [1/4, 0, 3/4]
TEST(Softmax, HandExample) {
  const Tensor2 x = {{0.0f, std::log(2.0f), std::log(3.0f)}, {0.0f, -kInf, std::log(3.0f)}};
  const Tensor2 expected = {{1.0f / 6, 1.0f / 3, 0.5f}, {0.25f, 0.0f, 0.75f}};
  EXPECT_TRUE(AllClose(softmax_forward(x), expected, kOpAtol, kOpRtol));
}

TEST(Softmax, MatchesPyTorchWithMaskedEntries) {
  const json ref = load_reference("softmax");
  EXPECT_TRUE(AllClose(softmax_forward(masked_input(ref)), tensor<2>(ref["y"]), kOpAtol, kOpRtol));
}

TEST(Softmax, RowsSumToOneAndMaskedEntriesAreExactlyZero) {
  Rng rng(1);
  Tensor2 x = random_tensor<Tensor2>(std::array<std::size_t, 2>{50, 9}, rng, 10.0f);
  x(0, 0) = 1000.0f;  // would overflow exp without the max subtraction
  x(1, 1) = -1000.0f;
  for (std::size_t r = 0; r < 50; ++r)
    for (std::size_t c = 0; c < 9; ++c)
      if ((r + 2 * c) % 5 == 0 && c != r % 9) x(r, c) = -kInf;
  const Tensor2 y = softmax_forward(x);
  for (std::size_t r = 0; r < 50; ++r) {
    double sum = 0.0;
    for (std::size_t c = 0; c < 9; ++c) {
      ASSERT_TRUE(std::isfinite(y(r, c))) << "row " << r << " col " << c;
      EXPECT_GE(y(r, c), 0.0f);
      if (x(r, c) == -kInf) EXPECT_EQ(y(r, c), 0.0f) << "masked entry (" << r << ", " << c << ")";
      sum += y(r, c);
    }
    EXPECT_NEAR(sum, 1.0, kProbSum) << "row " << r;
  }
  EXPECT_NEAR(y(0, 0), 1.0f, kProbSum);
}

TEST(Softmax, FullyMaskedRowIsZerosNotNaN) {
  const Tensor2 x = {{-kInf, -kInf, -kInf}, {1.0f, -kInf, 1.0f}};
  const Tensor2 expected = {{0, 0, 0}, {0.5f, 0, 0.5f}};
  EXPECT_TRUE(AllClose(softmax_forward(x), expected, 0.0, 0.0));
}

// NaN is never hidden: PyTorch's softmax of rows holding NaN or +inf (tests/reference/data/
// nan_rules.json) is NaN in every entry, and so is ours. The one difference: a row of -inf only
// (masked by the caller) is NaN in PyTorch and zeros here.
TEST(Softmax, NaNRowsAreNaNAsInPyTorchAndOnlyMaskedRowsAreZeros) {
  const json ref = load_reference("nan_rules")["softmax"];
  const Tensor2 x = special_tensor<2>(ref["x"]), torch_y = special_tensor<2>(ref["y"]);
  const Tensor2 y = softmax_forward(x);
  const reference::Tensor2d r = reference::softmax_forward(x);
  for (std::size_t i = 0; i < x.shape(0); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    bool masked = true;
    for (std::size_t j = 0; j < x.shape(1); ++j) masked = masked && x(i, j) == -kInf;
    for (std::size_t j = 0; j < x.shape(1); ++j) {
      if (masked) {
        EXPECT_TRUE(std::isnan(torch_y(i, j)));  // PyTorch: NaN
        EXPECT_EQ(y(i, j), 0.0f);
        EXPECT_EQ(r(i, j), 0.0);
      } else if (std::isnan(torch_y(i, j))) {
        EXPECT_TRUE(std::isnan(y(i, j))) << "column " << j;
        EXPECT_TRUE(std::isnan(r(i, j))) << "column " << j;
      } else {
        EXPECT_NEAR(y(i, j), torch_y(i, j), kOpAtol) << "column " << j;
        EXPECT_NEAR(r(i, j), torch_y(i, j), kOpAtol) << "column " << j;
      }
    }
  }
}

TEST(Softmax, AgreesWithTheReferenceAndIsShiftInvariant) {
  Rng rng(2);
  auto x = random_tensor<Tensor2>(std::array<std::size_t, 2>{20, 33}, rng, 3.0f);
  const Tensor2 y = softmax_forward(x);
  EXPECT_TRUE(AllClose(y, reference::softmax_forward(x), kNaiveAtol, kNaiveRtol));
  const Tensor2 shifted = x + 7.5f;
  EXPECT_TRUE(AllClose(softmax_forward(shifted), y, kNaiveAtol, kNaiveRtol));
}

TEST(Softmax, Rank4AgreesWithTheReference) {
  Rng rng(3);
  auto x = random_tensor<Tensor4>(std::array<std::size_t, 4>{2, 3, 4, 5}, rng, 2.0f);
  EXPECT_TRUE(AllClose(reference::rows_of(softmax_forward(x)),
                       reference::softmax_forward(reference::rows_of(x)), kNaiveAtol, kNaiveRtol));
}

TEST(Softmax, BackwardMatchesPyTorch) {
  const json ref = load_reference("softmax");
  const Tensor2 y = softmax_forward(masked_input(ref));
  EXPECT_TRUE(
      AllClose(softmax_backward(tensor<2>(ref["dy"]), y), tensor<2>(ref["dx"]), kOpAtol, kOpRtol));
}

TEST(Softmax, GradientMatchesFiniteDifferencesWithMaskedEntries) {
  Rng rng(4);
  auto x = random_tensor<Tensor3>(std::array<std::size_t, 3>{2, 3, 6}, rng);
  x(0, 1, 2) = -kInf;  // masked entries stay -inf under perturbation: gradient 0
  x(1, 2, 0) = -kInf;
  auto G = random_tensor<Tensor3>(x.shape(), rng);
  const Tensor3 dx = softmax_backward(G, softmax_forward(x));
  EXPECT_EQ(dx(0, 1, 2), 0.0f);
  auto loss = [&] { return dot_loss(softmax_forward(x), G); };
  EXPECT_TRUE(GradientsMatch(loss, {input_target("x", x, dx)}, kGradOp));
}

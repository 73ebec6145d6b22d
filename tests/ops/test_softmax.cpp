// Softmax over the last axis: stable, masked entries exactly 0, fully masked rows all 0.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/ops/softmax.hpp"

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
  EXPECT_TRUE(AllClose(softmax_naive(x), expected, kOpAtol, kOpRtol));
}

using SoftmaxFn = std::function<Tensor2(const Tensor2&)>;
struct SoftmaxImpl {
  const char* name;
  SoftmaxFn fn;
};
inline void PrintTo(const SoftmaxImpl& impl, std::ostream* os) { *os << impl.name; }
class SoftmaxImpls : public ::testing::TestWithParam<SoftmaxImpl> {};

TEST_P(SoftmaxImpls, MatchesPyTorchWithMaskedEntries) {
  const json ref = load_reference("softmax");
  EXPECT_TRUE(AllClose(GetParam().fn(masked_input(ref)), tensor<2>(ref["y"]), kOpAtol, kOpRtol));
}

TEST_P(SoftmaxImpls, RowsSumToOneAndMaskedEntriesAreExactlyZero) {
  Rng rng(1);
  Tensor2 x = random_tensor<Tensor2>(std::array<std::size_t, 2>{50, 9}, rng, 10.0f);
  x(0, 0) = 1000.0f;  // would overflow exp without the max subtraction
  x(1, 1) = -1000.0f;
  for (std::size_t r = 0; r < 50; ++r)
    for (std::size_t c = 0; c < 9; ++c)
      if ((r + 2 * c) % 5 == 0 && c != r % 9) x(r, c) = -kInf;
  const Tensor2 y = GetParam().fn(x);
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

TEST_P(SoftmaxImpls, FullyMaskedRowIsZerosNotNaN) {
  const Tensor2 x = {{-kInf, -kInf, -kInf}, {1.0f, -kInf, 1.0f}};
  const Tensor2 expected = {{0, 0, 0}, {0.5f, 0, 0.5f}};
  EXPECT_TRUE(AllClose(GetParam().fn(x), expected, 0.0, 0.0));
}

TEST_P(SoftmaxImpls, AgreesWithNaiveAndIsShiftInvariant) {
  Rng rng(2);
  auto x = random_tensor<Tensor2>(std::array<std::size_t, 2>{20, 33}, rng, 3.0f);
  const Tensor2 y = GetParam().fn(x);
  EXPECT_TRUE(AllClose(y, softmax_naive(x), kNaiveAtol, kNaiveRtol));
  const Tensor2 shifted = x + 7.5f;
  EXPECT_TRUE(AllClose(GetParam().fn(shifted), y, kNaiveAtol, kNaiveRtol));
}

INSTANTIATE_TEST_SUITE_P(
    Implementations, SoftmaxImpls,
    ::testing::Values(SoftmaxImpl{"fast", [](const Tensor2& x) { return softmax_forward(x); }},
                      SoftmaxImpl{"naive", [](const Tensor2& x) { return softmax_naive(x); }}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Softmax, Rank4AgreesWithNaive) {
  Rng rng(3);
  auto x = random_tensor<Tensor4>(std::array<std::size_t, 4>{2, 3, 4, 5}, rng, 2.0f);
  EXPECT_TRUE(AllClose(softmax_forward(x), softmax_naive(x), kNaiveAtol, kNaiveRtol));
}

TEST(Softmax, BackwardMatchesPyTorch) {
  const json ref = load_reference("softmax");
  const Tensor2 y = softmax_forward(masked_input(ref));
  EXPECT_TRUE(AllClose(softmax_backward(tensor<2>(ref["dy"]), y), tensor<2>(ref["dx"]), kOpAtol, kOpRtol));
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

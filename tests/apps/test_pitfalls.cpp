// The bug museum's tests: each published positional-encoding / layer-norm / mask mistake, as the
// library's pitfall museum (xenc/grade/pitfalls.hpp) writes it and apps/pe_pitfalls runs it, next
// to a correctness check. Every test shows both directions: the check PASSES for xencoder's
// implementation and FAILS for the exhibit, so the check really catches the bug (apps/pe_pitfalls
// prints these test names next to each mistake). The exhibits are the app's code, not a copy.
//
// Reference values come from the formulas (evaluated here in double precision) and from NumPy
// (numbers quoted in comments with the one-liner that produced them), never from xencoder.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/tolerances.hpp"
#include "xenc/grade/pitfalls.hpp"
#include "xenc/xenc.hpp"

namespace {

using xenc::Tensor1;
using xenc::Tensor2;
using xenc::Tensor3;
using xenc::Tensor4;

// ---- pitfall 1: exponent 2*i with i already stepping by 2 -------------------------------------

// The formula, straight from the paper: PE(p, 2i) = sin(p / 10000^(2i/D)), PE(p, 2i+1) = cos(...).
double formula(std::size_t p, std::size_t j, std::size_t D) {
  const double angle = double(p) / std::pow(10000.0, double(2 * (j / 2)) / double(D));
  return j % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

// The loop as published in tutorials: `for i in range(0, d, 2): ... 10000 ** ((2 * i) / d)`.
// i already is the even dimension 2k, so the exponent becomes 4k/D.
using xenc::pitfalls::pe_doubled_exponent;

// The check: every entry within kOpAtol (1e-6) of the formula (float32 storage).
::testing::AssertionResult MatchesFormula(const Tensor2& pe, std::size_t D) {
  for (std::size_t p = 0; p < pe.shape()[0]; ++p)
    for (std::size_t j = 0; j < D; ++j)
      if (std::abs(double(pe(p, j)) - formula(p, j, D)) > xenc::test::kOpAtol)
        return ::testing::AssertionFailure() << "PE(" << p << ", " << j << ") = " << pe(p, j)
                                             << ", the formula gives " << formula(p, j, D);
  return ::testing::AssertionSuccess();
}

// Dimensions whose value changes by less than 0.01 over all positions (max - min < 0.01): the
// app's count.
std::size_t near_constant_dims(const Tensor2& pe) {
  return xenc::pitfalls::near_constant_dims(pe, 0.01f);
}

TEST(PePitfalls, DoubledExponentFailsFormulaCheck) {
  // hand value: PE(1, 2) for D = 128 is sin(1 / 10000^(2/128)) = sin(0.86596) = 0.76172041
  EXPECT_NEAR(formula(1, 2, 128), 0.76172041, xenc::test::kPrinted8);
  const Tensor2 good = xenc::sinusoidal_encoding(64, 128);
  const Tensor2 bad = pe_doubled_exponent(64, 128);
  EXPECT_NEAR(good(1, 2), 0.76172041, xenc::test::kOpAtol);
  // the buggy value sin(1 / 10000^(4/128)) = 0.68156135 (NumPy: np.sin(1 / 10000 ** (4 / 128)))
  EXPECT_NEAR(bad(1, 2), 0.68156135, xenc::test::kOpAtol);
  EXPECT_TRUE(MatchesFormula(good, 128));
  EXPECT_FALSE(MatchesFormula(bad, 128));
}

TEST(PePitfalls, DoubledExponentFreezesFiveTimesMoreDimensions) {
  // D = 512, 200 positions, near-constant = max - min over positions < 0.01. NumPy (the same
  // definition on float64 tables) counts 54 for the formula and 273 for the doubled exponent;
  // the nearest ranges to the 0.01 threshold are 0.00963 / 0.01034 and 0.00969 / 0.01041.
  EXPECT_EQ(near_constant_dims(xenc::sinusoidal_encoding(200, 512)), 54u);
  EXPECT_EQ(near_constant_dims(pe_doubled_exponent(200, 512)), 273u);
}

// ---- pitfall 2: positions added along the batch axis ------------------------------------------

// The bug: with x laid out [B, T, D], `x + pe[:x.size(0)]` (written for [T, B, D]) adds PE(b) to
// every token of sentence b. The app plugs the same code into a model as BatchAxisPosition.
Tensor3 add_positions_along_batch(const Tensor3& x) {
  xenc::pitfalls::BatchAxisPosition pos;
  return pos.forward(x);
}

Tensor3 add_positions_library(const Tensor3& x) {
  xenc::SinusoidalPosition pos(x.shape()[2]);
  return pos.forward(x);
}

// The check: y[b, t] - x[b, t] = PE(t) (from the formula) for every sentence b and token t.
::testing::AssertionResult AddsPositionAlongSequence(
    const std::function<Tensor3(const Tensor3&)>& add) {
  const std::size_t B = 3, T = 4, D = 8;
  xenc::Rng rng(7);
  Tensor3 x = Tensor3::from_shape({B, T, D});
  xenc::fill_normal(x, rng);
  const Tensor3 y = add(x);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t d = 0; d < D; ++d) {
        const double added = double(y(b, t, d)) - double(x(b, t, d));
        if (std::abs(added - formula(t, d, D)) > xenc::test::kPositional)
          return ::testing::AssertionFailure()
                 << "sentence " << b << ", token " << t << ", dim " << d << ": added " << added
                 << ", expected PE(" << t << ", " << d << ") = " << formula(t, d, D);
      }
  return ::testing::AssertionSuccess();
}

TEST(PePitfalls, BatchAxisPositionsFailSequenceCheck) {
  EXPECT_TRUE(AddsPositionAlongSequence(add_positions_library));
  EXPECT_FALSE(AddsPositionAlongSequence(add_positions_along_batch));
  // the consequence: every token of a sentence gets the same vector, so order is still invisible
  Tensor3 x = xt::zeros<float>({std::size_t(1), std::size_t(3), std::size_t(8)});
  const Tensor3 y = add_positions_along_batch(x);
  for (std::size_t d = 0; d < 8; ++d) EXPECT_EQ(y(0, 0, d), y(0, 2, d));
}

// ---- pitfall 3: odd D ---------------------------------------------------------------------------

// The common code: div_term has ceil(D/2) frequencies and every one writes a cos column 2i+1,
// which for odd D is one past the end of the row (NumPy/PyTorch: a shape-mismatch crash;
// C: a buffer overflow). The exhibit writes with std::vector::at, which turns the overflow into
// std::out_of_range.
using xenc::pitfalls::pe_odd_d_unchecked;

// The check: an odd D is refused up front with a config_error that names d_model and its value.
::testing::AssertionResult RejectsOddDimensionCleanly(
    const std::function<void(std::size_t)>& build) {
  try {
    build(5);
  } catch (const xenc::config_error& e) {
    const std::string m = e.what();
    if (m.find("d_model") != std::string::npos && m.find('5') != std::string::npos)
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "config_error without d_model = 5: " << m;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure()
           << "crashed with " << e.what() << " instead of a config_error";
  }
  return ::testing::AssertionFailure() << "D = 5 was accepted";
}

TEST(PePitfalls, OddDimensionIsAConfigErrorNotACrash) {
  EXPECT_TRUE(RejectsOddDimensionCleanly([](std::size_t D) { xenc::sinusoidal_encoding(10, D); }));
  EXPECT_TRUE(RejectsOddDimensionCleanly([](std::size_t D) { xenc::SinusoidalPosition pos(D); }));
  EXPECT_FALSE(RejectsOddDimensionCleanly([](std::size_t D) { pe_odd_d_unchecked(10, D); }));
  EXPECT_THROW(pe_odd_d_unchecked(10, 5), std::out_of_range);
  EXPECT_NO_THROW(pe_odd_d_unchecked(10, 6));  // the bug hides for every even D
}

// ---- pitfall 4: layer norm with the unbiased std and eps outside the root ----------------------

// The bug (seen in tutorials' hand-written LayerNorm): x.std() is unbiased in PyTorch/pandas,
// and eps is added to the std:  y = (x - mean) / (std_unbiased + eps).
Tensor2 layer_norm_unbiased_eps_outside(const Tensor2& x, float eps) {
  const Tensor1 w = xt::ones<float>({x.shape()[1]}), b = xt::zeros<float>({x.shape()[1]});
  return xenc::pitfalls::layer_norm_unbiased_std_eps_outside(x, w, b, eps);
}

Tensor2 layer_norm_library(const Tensor2& x, float eps) {
  const Tensor1 w = xt::ones<float>({x.shape()[1]}), b = xt::zeros<float>({x.shape()[1]});
  return xenc::layer_norm_forward<2>(x, w, b, eps);
}

// The check: y = (x - mean) / sqrt(var_biased + eps), as torch.nn.LayerNorm, in double.
::testing::AssertionResult MatchesLayerNormFormula(
    const std::function<Tensor2(const Tensor2&, float)>& ln) {
  // hand example: [1, 2, 3, 4] has mean 2.5 and biased variance 1.25, so with eps = 1e-5
  // y = (x - 2.5) / sqrt(1.25001) = [-1.34163542, -0.44721181, 0.44721181, 1.34163542]
  // (torch.nn.functional.layer_norm gives the same); the second row has a tiny variance
  // (1.875e-7 < eps), where eps inside vs outside the root matters most.
  Tensor2 x = {{1, 2, 3, 4}, {0, 0, 0, 1e-3f}};
  const Tensor2 y = ln(x, 1e-5f);
  for (std::size_t r = 0; r < 2; ++r) {
    double mean = 0, var = 0;
    for (std::size_t d = 0; d < 4; ++d) mean += x(r, d) / 4.0;
    for (std::size_t d = 0; d < 4; ++d) var += (x(r, d) - mean) * (x(r, d) - mean) / 4.0;
    for (std::size_t d = 0; d < 4; ++d) {
      const double want = (x(r, d) - mean) / std::sqrt(var + 1e-5);
      if (std::abs(y(r, d) - want) > xenc::test::kHandValue)
        return ::testing::AssertionFailure()
               << "row " << r << ", dim " << d << ": " << y(r, d) << ", the formula gives " << want;
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(PePitfalls, UnbiasedStdLayerNormFailsFormulaCheck) {
  EXPECT_TRUE(MatchesLayerNormFormula(layer_norm_library));
  EXPECT_FALSE(MatchesLayerNormFormula(layer_norm_unbiased_eps_outside));
  // the consequences (NumPy: (x - x.mean()) / (x.std(ddof=1) + 1e-5)):
  // [1, 2, 3, 4] -> 1.161886 instead of 1.341635 (the factor sqrt((D-1)/D) = 0.866 for D = 4);
  // [0, 0, 0, 1e-3] -> 1.470588 instead of 0.234978 (6 times larger: eps no longer tames it)
  Tensor2 x = {{1, 2, 3, 4}, {0, 0, 0, 1e-3f}};
  const Tensor2 bad = layer_norm_unbiased_eps_outside(x, 1e-5f);
  const Tensor2 good = layer_norm_library(x, 1e-5f);
  EXPECT_NEAR(bad(0, 3), 1.161886, xenc::test::kHandValue);
  EXPECT_NEAR(good(0, 3), 1.34163542, xenc::test::kHandValue);
  EXPECT_NEAR(bad(1, 3), 1.47058824, xenc::test::kNearEpsNorm);
  EXPECT_NEAR(good(1, 3), 0.23497813, xenc::test::kNearEpsNorm);
}

// ---- pitfall 5: a padding mask with the opposite truth convention ------------------------------

// Sentence lengths 3 and 2 in a batch padded to T = 3.
// PyTorch's key_padding_mask: true = padding (ignore).  Hugging Face's attention_mask: 1 = keep.
xenc::Mask2 mask_true_is_padding() { return {{false, false, false}, {false, false, true}}; }
xenc::Mask2 mask_true_is_keep() {
  return xenc::pitfalls::keep_mask_from_lengths({3, 2}, 3);
}  // the bug

// The check: weights on padding keys are exactly 0 and every row sums to 1.
::testing::AssertionResult PaddingGetsNoAttention(const xenc::Mask2& mask) {
  xenc::Rng rng(3);
  Tensor4 q = Tensor4::from_shape({2, 1, 3, 4}), k = q, v = q;
  xenc::fill_normal(q, rng);
  xenc::fill_normal(k, rng);
  xenc::fill_normal(v, rng);
  const auto r = xenc::scaled_dot_product_attention_forward(q, k, v, mask);
  const std::size_t len[2] = {3, 2};
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 3; ++i) {
      double sum = 0;
      for (std::size_t j = 0; j < 3; ++j) {
        sum += r.weights(b, 0, i, j);
        if (j >= len[b] && r.weights(b, 0, i, j) != 0.0f)
          return ::testing::AssertionFailure()
                 << "sentence " << b << ", query " << i << " gives padding key " << j << " weight "
                 << r.weights(b, 0, i, j);
      }
      if (std::abs(sum - 1.0) > xenc::test::kProbSum)
        return ::testing::AssertionFailure()
               << "sentence " << b << ", query " << i << ": weights sum to " << sum;
    }
  return ::testing::AssertionSuccess();
}

TEST(PePitfalls, InvertedPaddingMaskFailsMaskCheck) {
  // the exhibit is Hugging Face's attention_mask for lengths 3 and 2: 1 = real token
  EXPECT_EQ(mask_true_is_keep(), (xenc::Mask2{{true, true, true}, {true, true, false}}));
  EXPECT_TRUE(PaddingGetsNoAttention(mask_true_is_padding()));
  EXPECT_FALSE(PaddingGetsNoAttention(mask_true_is_keep()));
  // the consequence: sentence 1 attends only to its padding (weight exactly 1 on key 2) and
  // sentence 0, which has no padding, has every key masked (this library returns zero rows)
  xenc::Rng rng(3);
  Tensor4 q = Tensor4::from_shape({2, 1, 3, 4}), k = q, v = q;
  xenc::fill_normal(q, rng);
  xenc::fill_normal(k, rng);
  xenc::fill_normal(v, rng);
  const auto r = xenc::scaled_dot_product_attention_forward(q, k, v, mask_true_is_keep());
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_FLOAT_EQ(r.weights(1, 0, i, 2), 1.0f);
    for (std::size_t j = 0; j < 3; ++j) EXPECT_EQ(r.weights(0, 0, i, j), 0.0f);
  }
}

}  // namespace

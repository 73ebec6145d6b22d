// Scaled dot-product attention: the batched op, against PyTorch and the loop reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/ops/attention.hpp"
#include "xenc/reference/ops.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
using Shape4 = std::array<std::size_t, 4>;
}  // namespace

// One query, two keys, Dh = 1 (scale 1/√1 = 1): q = ln 3, k = [0, 1], v = [4, 8].
// S = q kᵀ = [0, ln 3] -> P = [1, 3] / 4 = [0.25, 0.75] -> O = 0.25 · 4 + 0.75 · 8 = 7.
// With key 1 padded: P = [1, 0], O = 4.
TEST(Attention, HandExample) {
  const Tensor4 q = {{{{std::log(3.0f)}}}};
  const Tensor4 k = {{{{0.0f}, {1.0f}}}};
  const Tensor4 v = {{{{4.0f}, {8.0f}}}};
  auto r = scaled_dot_product_attention_forward(q, k, v);
  EXPECT_TRUE(AllClose(r.weights, Tensor4{{{{0.25f, 0.75f}}}}, kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(r.output, Tensor4{{{{7.0f}}}}, kOpAtol, kOpRtol));
  r = scaled_dot_product_attention_forward(q, k, v, Mask2{{false, true}});
  EXPECT_TRUE(AllClose(r.weights, Tensor4{{{{1.0f, 0.0f}}}}, 0.0, 0.0));
  EXPECT_TRUE(AllClose(r.output, Tensor4{{{{4.0f}}}}, 0.0, 0.0));
}

// The op under test; the loop reference is reference::scaled_dot_product_attention_forward.
AttentionResult attention(const Tensor4& q, const Tensor4& k, const Tensor4& v, const Mask2& kpm,
                          const Tensor2& am) {
  return scaled_dot_product_attention_forward(q, k, v, kpm, am);
}

TEST(Attention, MatchesPyTorchWithBothMasks) {
  const json ref = load_reference("attention");
  const auto r = attention(tensor<4>(ref["query"]), tensor<4>(ref["key"]), tensor<4>(ref["value"]),
                           mask2(ref["key_padding_mask"]), tensor<2>(ref["attn_mask"]));
  EXPECT_TRUE(AllClose(r.weights, tensor<4>(ref["weights"]), kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(r.output, tensor<4>(ref["output"]), kOpAtol, kOpRtol));
}

TEST(Attention, MaskedProbabilitiesAreExactlyZeroAndRowsSumToOne) {
  Rng rng(20);
  const std::size_t B = 2, H = 3, T = 6, Dh = 4;
  auto q = random_tensor<Tensor4>(Shape4{B, H, T, Dh}, rng);
  auto k = random_tensor<Tensor4>(Shape4{B, H, T, Dh}, rng);
  auto v = random_tensor<Tensor4>(Shape4{B, H, T, Dh}, rng);
  Mask2 kpm = xt::zeros<bool>({B, T});
  kpm(0, 5) = kpm(1, 0) = kpm(1, 3) = true;
  Tensor2 causal = xt::zeros<float>({T, T});  // an additive mask with -inf above the diagonal
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = i + 1; j < T; ++j) causal(i, j) = -kInf;
  const auto r = attention(q, k, v, kpm, causal);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < T; ++i) {
        double sum = 0.0;
        bool any_key = false;
        for (std::size_t j = 0; j < T; ++j) {
          const float p = r.weights(b, h, i, j);
          ASSERT_TRUE(std::isfinite(p));
          if (kpm(b, j) || j > i)
            EXPECT_EQ(p, 0.0f) << "b " << b << " h " << h << " i " << i << " j " << j;
          else
            any_key = true;
          sum += p;
        }
        // row (b = 1, i = 0) has its only allowed key padded: attends to nothing
        EXPECT_NEAR(sum, any_key ? 1.0 : 0.0, kProbSum) << "b " << b << " h " << h << " i " << i;
      }
}

TEST(Attention, FullyMaskedRowGivesZerosNotNaN) {
  Rng rng(21);
  auto q = random_tensor<Tensor4>(Shape4{2, 2, 3, 4}, rng);
  auto k = random_tensor<Tensor4>(Shape4{2, 2, 5, 4}, rng);
  auto v = random_tensor<Tensor4>(Shape4{2, 2, 5, 4}, rng);
  Mask2 kpm = xt::zeros<bool>({2, 5});
  for (std::size_t j = 0; j < 5; ++j) kpm(1, j) = true;  // the whole second sentence is padding
  const auto r = attention(q, k, v, kpm, Tensor2());
  for (std::size_t h = 0; h < 2; ++h)
    for (std::size_t i = 0; i < 3; ++i) {
      for (std::size_t j = 0; j < 5; ++j) EXPECT_EQ(r.weights(1, h, i, j), 0.0f);
      for (std::size_t e = 0; e < 4; ++e) EXPECT_EQ(r.output(1, h, i, e), 0.0f);
    }
}

TEST(Attention, AgreesWithTheReference) {
  Rng rng(22);
  auto q = random_tensor<Tensor4>(Shape4{3, 4, 17, 8}, rng);
  auto k = random_tensor<Tensor4>(Shape4{3, 4, 23, 8}, rng);
  auto v = random_tensor<Tensor4>(Shape4{3, 4, 23, 8}, rng);
  Mask2 kpm = xt::zeros<bool>({3, 23});
  for (std::size_t j = 15; j < 23; ++j) kpm(2, j) = true;
  auto am = random_tensor<Tensor2>(std::array<std::size_t, 2>{17, 23}, rng, 0.5f);
  const auto r = attention(q, k, v, kpm, am);
  const auto ref = reference::scaled_dot_product_attention_forward(q, k, v, kpm, am);
  EXPECT_TRUE(AllClose(r.weights, ref.weights, kNaiveAtol, kNaiveRtol));
  EXPECT_TRUE(AllClose(r.output, ref.output, kNaiveAtol, kNaiveRtol));
  const Tensor4 dout = random_tensor<Tensor4>(q.shape(), rng);
  const auto g = scaled_dot_product_attention_backward(dout, q, k, v, r.weights);
  const auto gr = reference::scaled_dot_product_attention_backward(dout, q, k, v, ref.weights);
  EXPECT_TRUE(AllClose(g.query, gr.query, kNaiveAtol, kNaiveRtol));
  EXPECT_TRUE(AllClose(g.key, gr.key, kNaiveAtol, kNaiveRtol));
  EXPECT_TRUE(AllClose(g.value, gr.value, kNaiveAtol, kNaiveRtol));
}

// NaN is never hidden: a NaN in a query makes its scores NaN, and its row of weights is NaN (as
// in PyTorch), even when some keys are padded; only a row whose every key is padded gives zeros.
TEST(Attention, NaNInAQueryGivesANaNRowNotZeros) {
  Rng rng(24);
  auto q = random_tensor<Tensor4>(Shape4{1, 1, 3, 4}, rng);
  auto k = random_tensor<Tensor4>(Shape4{1, 1, 5, 4}, rng);
  q(0, 0, 1, 2) = std::numeric_limits<float>::quiet_NaN();
  const Mask2 kpm = {{false, true, false, true, true}};
  const auto r = scaled_dot_product_attention_forward(q, k, k, kpm);
  for (std::size_t j = 0; j < 5; ++j) {
    EXPECT_TRUE(std::isnan(r.weights(0, 0, 1, j))) << "key " << j;
    EXPECT_FALSE(std::isnan(r.weights(0, 0, 0, j))) << "key " << j;
  }
  const auto ref = reference::scaled_dot_product_attention_forward(q, k, k, kpm);
  EXPECT_TRUE(std::isnan(ref.weights(0, 0, 1, 0)));
}

TEST(Attention, BackwardMatchesPyTorch) {
  const json ref = load_reference("attention");
  const Tensor4 q = tensor<4>(ref["query"]), k = tensor<4>(ref["key"]), v = tensor<4>(ref["value"]);
  const auto r = scaled_dot_product_attention_forward(q, k, v, mask2(ref["key_padding_mask"]),
                                                      tensor<2>(ref["attn_mask"]));
  const auto g =
      scaled_dot_product_attention_backward(tensor<4>(ref["doutput"]), q, k, v, r.weights);
  EXPECT_TRUE(AllClose(g.query, tensor<4>(ref["dquery"]), kAttentionGradAtol, kAttentionGradRtol));
  EXPECT_TRUE(AllClose(g.key, tensor<4>(ref["dkey"]), kAttentionGradAtol, kAttentionGradRtol));
  EXPECT_TRUE(AllClose(g.value, tensor<4>(ref["dvalue"]), kAttentionGradAtol, kAttentionGradRtol));
}

TEST(Attention, GradientsMatchFiniteDifferencesWithMasks) {
  Rng rng(23);
  auto q = random_tensor<Tensor4>(Shape4{2, 2, 3, 4}, rng);
  auto k = random_tensor<Tensor4>(Shape4{2, 2, 5, 4}, rng);
  auto v = random_tensor<Tensor4>(Shape4{2, 2, 5, 4}, rng);
  Mask2 kpm = xt::zeros<bool>({2, 5});
  kpm(0, 4) = kpm(1, 1) = kpm(1, 2) = true;
  auto am = random_tensor<Tensor2>(std::array<std::size_t, 2>{3, 5}, rng, 0.5f);
  am(2, 0) = -kInf;
  auto G = random_tensor<Tensor4>(q.shape(), rng);
  const auto r = scaled_dot_product_attention_forward(q, k, v, kpm, am);
  const auto g = scaled_dot_product_attention_backward(G, q, k, v, r.weights);
  auto loss = [&] {
    return dot_loss(scaled_dot_product_attention_forward(q, k, v, kpm, am).output, G);
  };
  EXPECT_TRUE(GradientsMatch(loss,
                             {input_target("query", q, g.query), input_target("key", k, g.key),
                              input_target("value", v, g.value)},
                             kGradOp));
}

// (the per-head kernel on strided views, with dropout: tests/kernels/test_kernels.cpp)

TEST(Attention, WrongShapesNameTheArgumentAndBothShapes) {
  const Tensor4 q = xt::zeros<float>({2, 2, 3, 4});
  const Tensor4 k = xt::zeros<float>({2, 2, 5, 4});
  try {
    scaled_dot_product_attention_forward(q, Tensor4(xt::zeros<float>({2, 2, 5, 3})), k);
    FAIL() << "expected shape_error";
  } catch (const shape_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("scaled_dot_product_attention_forward: key has shape [2, 2, 5, 3]"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("Dh = 4"), std::string::npos) << msg;
  }
  try {
    scaled_dot_product_attention_forward(q, k, k, Mask2(xt::zeros<bool>({2, 3})));
    FAIL() << "expected shape_error";
  } catch (const shape_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("key_padding_mask has shape [2, 3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Tk = 5"), std::string::npos) << msg;
  }
  EXPECT_THROW(
      scaled_dot_product_attention_forward(q, k, k, Mask2(), Tensor2(xt::zeros<float>({5, 3}))),
      shape_error);
  EXPECT_THROW(
      scaled_dot_product_attention_backward(k, q, k, k, Tensor4(xt::zeros<float>({2, 2, 3, 5}))),
      shape_error);
}

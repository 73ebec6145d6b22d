// Multi-head attention ops on [B, T, D] tensors: the packed in-projection against
// reference::linear_forward on each block, the heads' attention against the reference's
// scaled_dot_product_attention on [B, H, T, Dh] copies (reference::split_heads), gradients, and
// error messages. (The position seam: tests/nn/test_multihead_attention.cpp.)
#include <gtest/gtest.h>

#include <xtensor/xview.hpp>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/helpers.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/ops/multi_head_attention.hpp"
#include "xenc/reference/ops.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
using Shape3 = std::array<std::size_t, 3>;

namespace ref = xenc::reference;

// The plain gradients: in_projection_backward into zeroed buffers.
struct PlainGrads {
  InProjectionGrads inputs;
  Tensor2 weight;
  Tensor1 bias;
};
PlainGrads plain_backward(const Projections& G, const Tensor3& query, const Tensor3& key,
                          const Tensor3& value, const Tensor2& w, bool self = false) {
  PlainGrads g{{}, xt::zeros<float>(w.shape()), xt::zeros<float>({w.shape(0)})};
  g.inputs = in_projection_backward(G, query, key, value, w, g.weight, g.bias, self);
  return g;
}
}  // namespace

TEST(MultiHeadAttentionOps, InProjectionIsALinearLayerPerBlock) {
  Rng rng(1);
  const std::size_t D = 6;
  auto query = random_tensor<Tensor3>(Shape3{2, 3, D}, rng);
  auto key = random_tensor<Tensor3>(Shape3{2, 4, D}, rng);
  auto value = random_tensor<Tensor3>(Shape3{2, 4, D}, rng);
  auto w = random_tensor<Tensor2>(std::array<std::size_t, 2>{3 * D, D}, rng);
  auto b = random_tensor<Tensor1>(std::array<std::size_t, 1>{3 * D}, rng);
  const auto p = in_projection_forward(query, key, value, w, b);
  auto block = [&](std::size_t i) {
    return std::make_pair(Tensor2(xt::view(w, xt::range(i * D, (i + 1) * D), xt::all())),
                          Tensor1(xt::view(b, xt::range(i * D, (i + 1) * D))));
  };
  const auto [wq, bq] = block(0);
  const auto [wk, bk] = block(1);
  const auto [wv, bv] = block(2);
  EXPECT_TRUE(AllClose(ref::rows_of(p.q), ref::linear_forward(ref::rows_of(query), wq, bq),
                       kNaiveAtol, kNaiveRtol));
  EXPECT_TRUE(AllClose(ref::rows_of(p.k), ref::linear_forward(ref::rows_of(key), wk, bk),
                       kNaiveAtol, kNaiveRtol));
  EXPECT_TRUE(AllClose(ref::rows_of(p.v), ref::linear_forward(ref::rows_of(value), wv, bv),
                       kNaiveAtol, kNaiveRtol));

  // backward: finite differences of Σ Gq ⊙ q + Σ Gk ⊙ k + Σ Gv ⊙ v
  Projections G{random_tensor<Tensor3>(p.q.shape(), rng), random_tensor<Tensor3>(p.k.shape(), rng),
                random_tensor<Tensor3>(p.v.shape(), rng)};
  const PlainGrads g = plain_backward(G, query, key, value, w);
  auto loss = [&] {
    const auto r = in_projection_forward(query, key, value, w, b);
    return dot_loss(r.q, G.q) + dot_loss(r.k, G.k) + dot_loss(r.v, G.v);
  };
  EXPECT_TRUE(GradientsMatch(
      loss,
      {input_target("query", query, g.inputs.query), input_target("key", key, g.inputs.key),
       input_target("value", value, g.inputs.value), input_target("in_proj_weight", w, g.weight),
       input_target("in_proj_bias", b, g.bias)},
      kGradOp));
}

// The backward accumulates as a module needs: the parameter gradients are added to the buffers,
// the input gradients do not depend on them; for self-attention (one x, self_attention = true)
// the returned dx is the sum of the three input gradients.
TEST(MultiHeadAttentionOps, InProjectionBackwardAddsIntoTheGradientBuffers) {
  Rng rng(2);
  const std::size_t D = 6;
  auto x = random_tensor<Tensor3>(Shape3{2, 3, D}, rng);
  auto key = random_tensor<Tensor3>(Shape3{2, 4, D}, rng);
  auto value = random_tensor<Tensor3>(Shape3{2, 4, D}, rng);
  auto w = random_tensor<Tensor2>(std::array<std::size_t, 2>{3 * D, D}, rng);
  const Tensor2 w_grad0 = random_tensor<Tensor2>(std::array<std::size_t, 2>{3 * D, D}, rng);
  const Tensor1 b_grad0 = random_tensor<Tensor1>(std::array<std::size_t, 1>{3 * D}, rng);
  Projections G{random_tensor<Tensor3>(x.shape(), rng), random_tensor<Tensor3>(key.shape(), rng),
                random_tensor<Tensor3>(value.shape(), rng)};
  {
    SCOPED_TRACE("query, key, value");
    const PlainGrads g = plain_backward(G, x, key, value, w);
    Tensor2 w_grad = w_grad0;
    Tensor1 b_grad = b_grad0;
    const auto a = in_projection_backward(G, x, key, value, w, w_grad, b_grad);
    EXPECT_TRUE(AllClose(a.query, g.inputs.query, kOpAtol, kOpRtol));
    EXPECT_TRUE(AllClose(a.key, g.inputs.key, kOpAtol, kOpRtol));
    EXPECT_TRUE(AllClose(a.value, g.inputs.value, kOpAtol, kOpRtol));
    EXPECT_TRUE(AllClose(w_grad, Tensor2(w_grad0 + g.weight), kOpAtol, kOpRtol));
    EXPECT_TRUE(AllClose(b_grad, Tensor1(b_grad0 + g.bias), kOpAtol, kOpRtol));
  }
  {
    SCOPED_TRACE("self-attention");
    Projections Gs{G.q, random_tensor<Tensor3>(x.shape(), rng),
                   random_tensor<Tensor3>(x.shape(), rng)};
    const PlainGrads g = plain_backward(Gs, x, x, x, w);
    Tensor2 w_grad = w_grad0;
    Tensor1 b_grad = b_grad0;
    const auto a = in_projection_backward(Gs, x, x, x, w, w_grad, b_grad, true);
    EXPECT_TRUE(AllClose(a.query, Tensor3(g.inputs.query + g.inputs.key + g.inputs.value), kOpAtol,
                         kOpRtol));
    EXPECT_EQ(a.key.size(), 0u);
    EXPECT_EQ(a.value.size(), 0u);
    EXPECT_TRUE(AllClose(w_grad, Tensor2(w_grad0 + g.weight), kOpAtol, kOpRtol));
    EXPECT_TRUE(AllClose(b_grad, Tensor1(b_grad0 + g.bias), kOpAtol, kOpRtol));
    Tensor1 wrong = xt::zeros<float>({D});
    try {
      in_projection_backward(Gs, x, x, x, w, w_grad, wrong, true);
      FAIL() << "expected shape_error";
    } catch (const shape_error& e) {
      EXPECT_STREQ(e.what(),
                   "in_projection_backward: in_proj_bias_grad has "
                   "shape [6], expected [3D] with D = 6");
    }
  }
}

// Heads as column blocks of [B, T, D] give what the [B, H, T, Dh] op gives on copies.
TEST(MultiHeadAttentionOps, HeadsAsColumnBlocksMatchTheBatchedOpOnCopies) {
  Rng rng(2);
  const std::size_t H = 3;
  auto q = random_tensor<Tensor3>(Shape3{2, 3, 6}, rng);
  auto k = random_tensor<Tensor3>(Shape3{2, 5, 6}, rng);
  auto v = random_tensor<Tensor3>(Shape3{2, 5, 6}, rng);
  Mask2 kpm = xt::zeros<bool>({2, 5});
  kpm(1, 0) = kpm(1, 4) = true;
  auto am = random_tensor<Tensor2>(std::array<std::size_t, 2>{3, 5}, rng, 0.5f);
  const Tensor4 no_dropout;
  const AttentionInputs in{H, kpm, am, no_dropout};
  const auto r = multi_head_attention_forward(q, k, v, in, true);
  const auto expected = ref::scaled_dot_product_attention_forward(
      ref::split_heads(q, H), ref::split_heads(k, H), ref::split_heads(v, H), kpm, am);
  EXPECT_TRUE(AllClose(r.output, ref::merge_heads(expected.output), kNaiveAtol, kNaiveRtol));
  EXPECT_TRUE(AllClose(r.weights, expected.weights, kNaiveAtol, kNaiveRtol));
  // without keep_weights: the same output, no weights
  const auto r2 = multi_head_attention_forward(q, k, v, in, false);
  EXPECT_TRUE(AllClose(r2.output, r.output, 0.0, 0.0));
  EXPECT_EQ(r2.weights.size(), 0u);

  auto G = random_tensor<Tensor3>(r.output.shape(), rng);
  const auto g = multi_head_attention_backward(G, q, k, v, r.weights, in);
  auto loss = [&] { return dot_loss(multi_head_attention_forward(q, k, v, in, false).output, G); };
  EXPECT_TRUE(GradientsMatch(
      loss, {input_target("q", q, g.q), input_target("k", k, g.k), input_target("v", v, g.v)},
      kGradOp));
}

TEST(MultiHeadAttentionOps, ErrorsNameTheFunctionTheArgumentAndTheShapes) {
  const Tensor3 x = xt::zeros<float>({2, 3, 6});
  std::string msg = what_of(
      [&] { in_projection_forward(x, x, x, Tensor2(xt::zeros<float>({12, 6})), Tensor1()); });
  EXPECT_NE(
      msg.find(
          "in_projection_forward: in_proj_weight has shape [12, 6], expected [3D, D] with D = 6"),
      std::string::npos)
      << msg;
  const Tensor4 none;
  msg =
      what_of([&] { multi_head_attention_forward(x, x, x, {4, Mask2(), Tensor2(), none}, false); });
  EXPECT_NE(
      msg.find("multi_head_attention_forward: embed_dim (6) must be divisible by num_heads (4)"),
      std::string::npos)
      << msg;
  msg = what_of([&] {
    multi_head_attention_forward(x, x, Tensor3(xt::zeros<float>({2, 4, 6})),
                                 {2, Mask2(), Tensor2(), none}, false);
  });
  EXPECT_NE(msg.find("v has shape [2, 4, 6], expected k's shape [2, 3, 6]"), std::string::npos)
      << msg;
}

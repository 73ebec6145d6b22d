// Transformer-XL's relative positions (ops/relative_attention.hpp, nn/position.hpp's
// RelativePosition): a hand example of the relative shift, PyTorch reference values through
// self-attention (tests/reference/generate_relative.py, written from the paper without the
// shift), the reference oracle against the fast op, finite-difference gradients, an invariant
// (equal tokens: the scores depend on i − j only), the error paths, and attn_mask and dropout
// against their formulas (with the backward through both).
#include <gtest/gtest.h>

#include <cmath>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/helpers.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/nn/multihead_attention.hpp"
#include "xenc/nn/position.hpp"
#include "xenc/ops/relative_attention.hpp"
#include "xenc/reference/ops.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
using Shape3 = std::array<std::size_t, 3>;

// [B, T, D] -> [B, H, T, Dh] in double (head h: columns h·Dh .. (h+1)·Dh)
reference::Tensor4d heads_of(const Tensor3& x, std::size_t H) {
  return reference::split_heads(reference::Tensor3d(x), H);
}
}  // namespace

// 1. Hand example, T = 3: column m of z holds distance δ = 2 − m. Row i keeps the 3 columns
//    from 2 − i: row 0 -> z[0, 2..4] = (2, 3, 4); row 1 -> z[1, 1..3] = (11, 12, 13);
//    row 2 -> z[2, 0..2] = (20, 21, 22). The diagonal is column 2 (δ = 0) in every row.
TEST(RelativeShift, HandExample) {
  const Tensor2 z = {{0, 1, 2, 3, 4}, {10, 11, 12, 13, 14}, {20, 21, 22, 23, 24}};
  const Tensor2 expected = {{2, 3, 4}, {11, 12, 13}, {20, 21, 22}};
  EXPECT_TRUE(AllClose(relative_shift(z), expected, 0.0, 0.0));
  EXPECT_TRUE(
      AllClose(Tensor2(reference::relative_shift(reference::Tensor2d(z))), expected, 0.0, 0.0));
  // The backward puts each gradient back where its value came from, zeros elsewhere.
  const Tensor2 g = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
  const Tensor2 dz = {{0, 0, 1, 2, 3}, {0, 4, 5, 6, 0}, {7, 8, 9, 0, 0}};
  EXPECT_TRUE(AllClose(relative_shift_backward(g), dz, 0.0, 0.0));
  EXPECT_TRUE(
      AllClose(Tensor2(reference::relative_shift_backward(reference::Tensor2d(g))), dz, 0.0, 0.0));
  // The distances of the rows of R: T − 1 .. −(T − 1)
  EXPECT_EQ(relative_distances(3), (std::vector<double>{2, 1, 0, -1, -2}));
}

// 2. Reference values: self-attention with relative positions against an independent PyTorch
//    implementation from the paper (a [T, T, D] table of W_R R_{i−j}, no shift).
class RelativeAttentionReference : public ::testing::TestWithParam<const char*> {};

TEST_P(RelativeAttentionReference, MatchesPyTorch) {
  const std::string name = GetParam();
  const json ref = load_reference("relative_attention");
  const json& c = ref[name];
  const std::size_t D = ref["embed_dim"].get<std::size_t>(),
                    H = ref["num_heads"].get<std::size_t>();
  MultiheadAttention mha(D, H);
  mha.load_state_dict(state_dict(ref["state_dict"]));
  Rng rng(0);
  RelativePosition scheme(D, H, rng);
  RelativeAttentionParameters& p = scheme.parameters_of_attention();
  p.content_bias = tensor<2>(ref["content_bias"]);
  p.position_bias = tensor<2>(ref["position_bias"]);
  p.position_weight = tensor<2>(ref["position_weight"]);
  if (name == "randomized") {
    // |i − j| = n -> s_n with the sign of i − j: rows m = 0 .. 2T − 2 hold δ = T − 1 − m
    const auto s = ref["randomized_distances"].get<std::vector<double>>();
    const long T = long(s.size());
    p.distances.clear();
    for (long m = 0; m < 2 * T - 1; ++m) {
      const long d = T - 1 - m;
      p.distances.push_back(d >= 0 ? s[std::size_t(d)] : -s[std::size_t(-d)]);
    }
  }
  mha.set_position(scheme.attention_position());
  Tensor4 w;
  const Tensor3 y = mha.forward(tensor<3>(c["x"]), mask2(c["key_padding_mask"]), Tensor2(), &w);
  EXPECT_TRUE(AllClose(y, tensor<3>(c["output"]), kModuleAtol, kModuleRtol));
  EXPECT_TRUE(AllClose(w, tensor<4>(c["weights"]), kModuleAtol, kModuleRtol));
  mha.zero_grad();
  scheme.zero_grad();
  const Tensor3 dx = mha.backward(tensor<3>(c["doutput"]));
  EXPECT_TRUE(AllClose(dx, tensor<3>(c["dx"]), kModuleAtol, kModuleRtol));
  for (const auto& q : mha.parameters()) {
    SCOPED_TRACE(q.name);
    EXPECT_TRUE(AllClose(grad_of(q), array(c["grads"][q.name]), kModuleAtol, kModuleRtol));
  }
  for (const auto& q : scheme.parameters()) {
    SCOPED_TRACE(q.name);
    EXPECT_TRUE(AllClose(grad_of(q), array(c[q.name + "_grad"]), kModuleAtol, kModuleRtol));
  }
}

INSTANTIATE_TEST_SUITE_P(Relative, RelativeAttentionReference,
                         ::testing::Values("plain", "plain_masked", "randomized"));

// 3. The oracle: reference::relative_attention_forward / _backward (double, built on
//    scaled_dot_product_attention) give the fast op's numbers, with padding.
TEST(RelativeAttention, FastOpMatchesTheReference) {
  const std::size_t B = 2, T = 6, H = 2, D = 8, Dh = D / H;
  Rng rng(7);
  const auto q = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const auto k = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const auto v = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const auto dO = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  RelativeAttentionParameters p;
  p.content_bias = random_tensor<Tensor2>(std::array<std::size_t, 2>{H, Dh}, rng);
  p.position_bias = random_tensor<Tensor2>(std::array<std::size_t, 2>{H, Dh}, rng);
  p.position_weight = random_tensor<Tensor2>(std::array<std::size_t, 2>{D, D}, rng);
  Mask2 kpm = xt::zeros<bool>({B, T});
  kpm(1, 4) = kpm(1, 5) = true;
  const Tensor2 none;
  const Tensor4 no_dropout;
  const AttentionInputs in{H, kpm, none, no_dropout};
  const auto distances = relative_distances(T);
  const RelativeAttentionResult fast =
      relative_attention_forward(q, k, v, in, p, relative_sinusoids(distances, D));
  const RelativeAttentionGrads g = relative_attention_backward(dO, q, k, v, fast.saved, p, H);

  const reference::RelativeTerms terms{p.content_bias, p.position_bias, p.position_weight,
                                       distances};
  const auto ref = reference::relative_attention_forward(heads_of(q, H), heads_of(k, H),
                                                         heads_of(v, H), terms, kpm);
  EXPECT_TRUE(AllClose(fast.output, Tensor3(reference::merge_heads(ref.output)), kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(fast.saved.probs, Tensor4(ref.weights), kOpAtol, kOpRtol));
  const auto rg = reference::relative_attention_backward(
      heads_of(dO, H), heads_of(q, H), heads_of(k, H), heads_of(v, H), terms, ref.weights);
  EXPECT_TRUE(AllClose(g.q, Tensor3(reference::merge_heads(rg.query)), kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(g.k, Tensor3(reference::merge_heads(rg.key)), kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(g.v, Tensor3(reference::merge_heads(rg.value)), kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(g.content_bias, Tensor2(rg.content_bias), kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(g.position_bias, Tensor2(rg.position_bias), kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(g.position_weight, Tensor2(rg.position_weight), kOpAtol, kOpRtol));
}

// 4. Finite differences through self-attention with relative positions and a padding mask:
//    the input, the attention's parameters and u, v, W_R.
TEST(RelativeAttention, MatchesFiniteDifferences) {
  Rng rng(40);
  MultiheadAttention mha(8, 2, rng);
  fill_parameters_normal(mha, rng, 0.5f);
  RelativePosition scheme(8, 2, rng);
  fill_parameters_normal(scheme, rng, 0.5f);
  mha.set_position(scheme.attention_position());
  auto x = random_tensor<Tensor3>(Shape3{2, 4, 8}, rng);
  Mask2 kpm = xt::zeros<bool>({2, 4});
  kpm(1, 3) = true;
  const auto G = random_tensor<Tensor3>(x.shape(), rng);
  mha.zero_grad();
  scheme.zero_grad();
  mha.forward(x, kpm);
  const Tensor3 dx = mha.backward(G);
  auto targets = parameter_targets(mha);
  for (auto& t : parameter_targets(scheme, "relative.")) targets.push_back(std::move(t));
  targets.push_back(input_target("x", x, dx));
  auto loss = [&] { return dot_loss(mha.forward(x, kpm), G); };
  EXPECT_TRUE(GradientsMatch(loss, targets, kGradModule));
}

// 5. Invariant: with every token equal, q and k are the same in every row, so the scores of
//    row i differ only through r[i − j]: log P[i, j] − log P[i, j+1] is the same along every
//    diagonal.
TEST(RelativeAttention, EqualTokensScoreByDistanceOnly) {
  const std::size_t T = 6, D = 8, H = 2;
  Rng rng(5);
  MultiheadAttention mha(D, H, rng);
  RelativePosition scheme(D, H, rng);
  mha.set_position(scheme.attention_position());
  Tensor3 x = Tensor3::from_shape({1, T, D});
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t d = 0; d < D; ++d) x(0, t, d) = 0.1f * float(d) - 0.3f;
  Tensor4 w;
  mha.forward(x, Mask2(), Tensor2(), &w);
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i + 1 < T; ++i)
      for (std::size_t j = 0; j + 2 < T; ++j) {
        const double a = std::log(w(0, h, i, j) / w(0, h, i, j + 1));
        const double b = std::log(w(0, h, i + 1, j + 1) / w(0, h, i + 1, j + 2));
        EXPECT_NEAR(a, b, 1e-4) << "head " << h << ", i " << i << ", j " << j;
      }
  // ... and the position term is not zero: the weights are not uniform
  EXPECT_GT(std::fabs(w(0, 0, 0, 0) - w(0, 0, 0, T - 1)), 1e-3);
}

// 6. Error paths name the function, the argument and both shapes.
TEST(RelativeAttention, ErrorsNameTheArgument) {
  EXPECT_EQ(what_of([] { relative_shift(Tensor2::from_shape({3, 4})); }),
            "relative_shift: z has shape [3, 4], expected [3, 5]");
  Rng rng(1);
  EXPECT_THROW(RelativePosition(7, 1, rng), config_error);
  EXPECT_THROW(RelativePosition(8, 3, rng), config_error);
  EXPECT_EQ(parse_position_kind("relative"), PositionKind::relative);
  RelativePosition scheme(8, 2, rng);
  std::vector<std::string> names;
  for (const auto& p : scheme.parameters()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"content_bias", "position_bias", "position_weight"}));
}

// 7. attn_mask and dropout factors, each against its formula on the op's unmasked numbers:
//    softmax(S + M) = P ⊙ exp(M), renormalised by rows; O = (P ⊙ dropout) V. Then the backward
//    with both, against central differences of Σ G ⊙ O over q, u and v.
TEST(RelativeAttention, AttnMaskAndDropoutFollowTheirFormulas) {
  const std::size_t B = 1, T = 5, H = 2, D = 8, Dh = D / H;
  Rng rng(11);
  auto q = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const auto k = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const auto v = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const auto G = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  RelativeAttentionParameters p;
  p.content_bias = random_tensor<Tensor2>(std::array<std::size_t, 2>{H, Dh}, rng);
  p.position_bias = random_tensor<Tensor2>(std::array<std::size_t, 2>{H, Dh}, rng);
  p.position_weight = random_tensor<Tensor2>(std::array<std::size_t, 2>{D, D}, rng);
  const Tensor2 mask = random_tensor<Tensor2>(std::array<std::size_t, 2>{T, T}, rng);
  Tensor4 drop = Tensor4::from_shape({B, H, T, T});
  for (std::size_t n = 0; n < drop.size(); ++n) drop.flat(n) = n % 3 == 1 ? 0.0f : 1.5f;
  const Tensor2 R = relative_sinusoids(relative_distances(T), D);
  const Mask2 no_padding;
  const Tensor2 no_mask;
  const Tensor4 no_dropout;
  const auto P0 =
      relative_attention_forward(q, k, v, {H, no_padding, no_mask, no_dropout}, p, R).saved.probs;
  const auto masked =
      relative_attention_forward(q, k, v, {H, no_padding, mask, no_dropout}, p, R).saved.probs;
  const auto dropped = relative_attention_forward(q, k, v, {H, no_padding, no_mask, drop}, p, R);
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < T; ++i) {
      double z = 0;
      for (std::size_t j = 0; j < T; ++j) z += P0(0, h, i, j) * std::exp(double(mask(i, j)));
      for (std::size_t j = 0; j < T; ++j)
        EXPECT_NEAR(masked(0, h, i, j), P0(0, h, i, j) * std::exp(double(mask(i, j))) / z, 1e-5);
      for (std::size_t e = 0; e < Dh; ++e) {
        double o = 0;
        for (std::size_t j = 0; j < T; ++j)
          o += double(P0(0, h, i, j)) * drop(0, h, i, j) * v(0, j, h * Dh + e);
        EXPECT_NEAR(dropped.output(0, i, h * Dh + e), o, 1e-5);
      }
    }
  // The backward with the mask and the dropout factors, against central differences
  const AttentionInputs both{H, no_padding, mask, drop};
  const auto loss = [&] {
    const Tensor3 o = relative_attention_forward(q, k, v, both, p, R).output;
    double s = 0;
    for (std::size_t n = 0; n < o.size(); ++n) s += double(o.flat(n)) * G.flat(n);
    return s;
  };
  const auto g = relative_attention_backward(
      G, q, k, v, relative_attention_forward(q, k, v, both, p, R).saved, p, H);
  const auto central = [&](float& x) {
    const float x0 = x, h = 1e-2f;
    x = x0 + h;
    const double up = loss();
    x = x0 - h;
    const double down = loss();
    x = x0;
    return (up - down) / (2.0 * double(h));
  };
  for (std::size_t n = 0; n < q.size(); ++n)
    EXPECT_NEAR(g.q.flat(n), central(q.flat(n)), 1e-2) << "q " << n;
  for (std::size_t n = 0; n < p.content_bias.size(); ++n)
    EXPECT_NEAR(g.content_bias.flat(n), central(p.content_bias.flat(n)), 1e-2) << "u " << n;
  for (std::size_t n = 0; n < p.position_bias.size(); ++n)
    EXPECT_NEAR(g.position_bias.flat(n), central(p.position_bias.flat(n)), 1e-2) << "v " << n;
}

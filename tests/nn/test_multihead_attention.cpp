// MultiheadAttention: packed in-projection, per-head attention, output projection.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/helpers.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/nn/multihead_attention.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
using Shape3 = std::array<std::size_t, 3>;
}  // namespace

// D = 2, H = 1 (scale 1/√2), identity projections, zero biases: Q = K = V = x.
// x = [[1, 0], [0, 1]]: S = x xᵀ / √2 = [[0.7071, 0], [0, 0.7071]]
// row 0: softmax([0.7071, 0]) = [2.0281, 1] / 3.0281 = [0.66976155, 0.33023845]
// y = P V = P (V = I) = [[0.66976155, 0.33023845], [0.33023845, 0.66976155]]
TEST(MultiheadAttention, HandExample) {
  MultiheadAttention mha(2, 1);
  mha.in_proj_weight = Tensor2{{1, 0}, {0, 1}, {1, 0}, {0, 1}, {1, 0}, {0, 1}};
  mha.out_proj.weight = Tensor2{{1, 0}, {0, 1}};
  mha.in_proj_bias.fill(0.0f);
  mha.out_proj.bias.fill(0.0f);
  Tensor4 w;
  const Tensor3 y = mha.forward(Tensor3{{{1, 0}, {0, 1}}}, Mask2(), Tensor2(), &w);
  const float a = 0.66976155f, b = 0.33023845f;
  EXPECT_TRUE(AllClose(y, Tensor3{{{a, b}, {b, a}}}, kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(w, Tensor4{{{{a, b}, {b, a}}}}, kOpAtol, kOpRtol));
}

TEST(MultiheadAttention, StateDictNamesAndInitialisationFollowPyTorch) {
  MultiheadAttention mha(8, 2);
  const StateDict s = mha.state_dict();
  std::vector<std::string> names;
  for (const auto& kv : s) names.push_back(kv.first);
  EXPECT_EQ(names, (std::vector<std::string>{"in_proj_bias", "in_proj_weight", "out_proj.bias",
                                             "out_proj.weight"}));
  const float a = std::sqrt(6.0f / (8 + 24));  // xavier_uniform_ on [3D, D]
  EXPECT_LE(xt::amax(xt::abs(mha.in_proj_weight))(), a);
  EXPECT_EQ(xt::amax(xt::abs(mha.in_proj_bias))(), 0.0f);
  EXPECT_EQ(xt::amax(xt::abs(mha.out_proj.bias))(), 0.0f);
  EXPECT_EQ(mha.num_parameters(), 3u * 64 + 24 + 64 + 8);
}

TEST(MultiheadAttention, SelfAttentionMatchesPyTorch) {
  const json ref = load_reference("multihead_attention");
  const json& c = ref["self"];
  MultiheadAttention mha(ref["embed_dim"].get<std::size_t>(), ref["num_heads"].get<std::size_t>());
  mha.load_state_dict(state_dict(ref["state_dict"]));
  Tensor4 w;
  const Tensor3 y =
      mha.forward(tensor<3>(c["x"]), mask2(c["key_padding_mask"]), tensor<2>(c["attn_mask"]), &w);
  EXPECT_TRUE(AllClose(y, tensor<3>(c["output"]), kModuleAtol, kModuleRtol));
  EXPECT_TRUE(AllClose(w, tensor<4>(c["weights"]), kModuleAtol, kModuleRtol));
  mha.zero_grad();
  const Tensor3 dx = mha.backward(tensor<3>(c["doutput"]));
  EXPECT_TRUE(AllClose(dx, tensor<3>(c["dx"]), kModuleAtol, kModuleRtol));
  for (const auto& p : mha.parameters()) {
    SCOPED_TRACE(p.name);
    EXPECT_TRUE(AllClose(grad_of(p), array(c["grads"][p.name]), kModuleAtol, kModuleRtol));
  }
}

TEST(MultiheadAttention, GeneralQueryKeyValueMatchesPyTorch) {
  const json ref = load_reference("multihead_attention");
  const json& c = ref["general"];
  MultiheadAttention mha(ref["embed_dim"].get<std::size_t>(), ref["num_heads"].get<std::size_t>());
  mha.load_state_dict(state_dict(ref["state_dict"]));
  const auto r = mha.forward(tensor<3>(c["query"]), tensor<3>(c["key"]), tensor<3>(c["value"]),
                             mask2(c["key_padding_mask"]), true);
  EXPECT_TRUE(AllClose(r.output, tensor<3>(c["output"]), kModuleAtol, kModuleRtol));
  EXPECT_TRUE(AllClose(r.weights, tensor<4>(c["weights"]), kModuleAtol, kModuleRtol));
  mha.zero_grad();
  const auto g = mha.backward_qkv(tensor<3>(c["doutput"]));
  EXPECT_TRUE(AllClose(g.query, tensor<3>(c["dquery"]), kModuleAtol, kModuleRtol));
  EXPECT_TRUE(AllClose(g.key, tensor<3>(c["dkey"]), kModuleAtol, kModuleRtol));
  EXPECT_TRUE(AllClose(g.value, tensor<3>(c["dvalue"]), kModuleAtol, kModuleRtol));
  for (const auto& p : mha.parameters()) {
    SCOPED_TRACE(p.name);
    EXPECT_TRUE(AllClose(grad_of(p), array(c["grads"][p.name]), kModuleAtol, kModuleRtol));
  }
}

TEST(MultiheadAttention, SelfAttentionGradientsMatchFiniteDifferences) {
  Rng rng(30);
  MultiheadAttention mha(8, 2, rng);
  fill_parameters_normal(mha, rng, 0.5f);
  auto x = random_tensor<Tensor3>(Shape3{2, 4, 8}, rng);
  Mask2 kpm = xt::zeros<bool>({2, 4});
  kpm(1, 2) = kpm(1, 3) = true;
  auto am = random_tensor<Tensor2>(std::array<std::size_t, 2>{4, 4}, rng, 0.5f);
  auto G = random_tensor<Tensor3>(x.shape(), rng);
  EXPECT_TRUE(ModuleGradientsMatch(mha, x, G, kGradModule, kpm, am));
}

TEST(MultiheadAttention, GeneralGradientsMatchFiniteDifferences) {
  Rng rng(31);
  MultiheadAttention mha(8, 2, rng);
  fill_parameters_normal(mha, rng, 0.5f);
  auto q = random_tensor<Tensor3>(Shape3{2, 3, 8}, rng);
  auto k = random_tensor<Tensor3>(Shape3{2, 5, 8}, rng);
  auto v = random_tensor<Tensor3>(Shape3{2, 5, 8}, rng);
  Mask2 kpm = xt::zeros<bool>({2, 5});
  kpm(0, 4) = kpm(1, 0) = kpm(1, 3) = true;
  auto G = random_tensor<Tensor3>(q.shape(), rng);
  mha.zero_grad();
  mha.forward(q, k, v, kpm);
  const auto g = mha.backward_qkv(G);
  auto targets = parameter_targets(mha);
  targets.push_back(input_target("query", q, g.query));
  targets.push_back(input_target("key", k, g.key));
  targets.push_back(input_target("value", v, g.value));
  auto loss = [&] { return dot_loss(mha.forward(q, k, v, kpm).output, G); };
  EXPECT_TRUE(GradientsMatch(loss, targets, kGradModule));
}

TEST(MultiheadAttention, WithoutBiasGradientsMatchFiniteDifferences) {
  Rng rng(37);
  MultiheadAttention mha(6, 3, rng, 0.0f, /*bias=*/false);
  fill_parameters_normal(mha, rng, 0.5f);
  EXPECT_EQ(mha.parameters().size(), 2u);  // in_proj_weight, out_proj.weight
  auto x = random_tensor<Tensor3>(Shape3{2, 3, 6}, rng);
  auto G = random_tensor<Tensor3>(x.shape(), rng);
  EXPECT_TRUE(ModuleGradientsMatch(mha, x, G, kGradModule));
}

// Training mode: dropout on the attention probabilities. Each evaluation runs on a copy of the
// module, so every forward draws the same mask from the same generator state.
TEST(MultiheadAttention, DropoutGradientsMatchFiniteDifferencesWithAFixedMask) {
  Rng rng(32);
  MultiheadAttention work(8, 2, rng, 0.3f);
  fill_parameters_normal(work, rng, 0.5f);
  work.train();
  auto x = random_tensor<Tensor3>(Shape3{2, 4, 8}, rng);
  auto G = random_tensor<Tensor3>(x.shape(), rng);
  ExpectDropoutGradientsMatch(work, x, G, kGradModule);
}

TEST(MultiheadAttention, WeightsAreProbabilitiesAndPaddedKeysGetExactlyZero) {
  Rng rng(33);
  MultiheadAttention mha(8, 4, rng);
  auto x = random_tensor<Tensor3>(Shape3{2, 5, 8}, rng);
  Mask2 kpm = xt::zeros<bool>({2, 5});
  kpm(0, 1) = kpm(1, 3) = kpm(1, 4) = true;
  Tensor4 w;
  mha.forward(x, kpm, Tensor2(), &w);
  ASSERT_EQ(shape_str(w.shape()), "[2, 4, 5, 5]");
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t h = 0; h < 4; ++h)
      for (std::size_t i = 0; i < 5; ++i) {
        double s = 0.0;
        for (std::size_t j = 0; j < 5; ++j) {
          if (kpm(b, j)) EXPECT_EQ(w(b, h, i, j), 0.0f);
          s += w(b, h, i, j);
        }
        EXPECT_NEAR(s, 1.0, kProbSum);
      }
}

TEST(MultiheadAttention, FullyPaddedSentenceGivesFiniteOutput) {
  Rng rng(34);
  MultiheadAttention mha(8, 2, rng);
  fill_parameters_normal(mha, rng, 0.5f);
  auto x = random_tensor<Tensor3>(Shape3{2, 3, 8}, rng);
  Mask2 kpm = xt::zeros<bool>({2, 3});
  kpm(1, 0) = kpm(1, 1) = kpm(1, 2) = true;
  const Tensor3 y = mha.forward(x, kpm);
  // attending to nothing: the context is 0, so the output is exactly out_proj.bias
  for (std::size_t t = 0; t < 3; ++t)
    for (std::size_t d = 0; d < 8; ++d) EXPECT_EQ(y(1, t, d), mha.out_proj.bias(d));
  const Tensor3 dx = mha.backward(xt::ones<float>({2, 3, 8}));
  for (auto v : dx) ASSERT_TRUE(std::isfinite(v));
}

// The general path with three equal (but distinct) tensors is the self-attention path, and
// self-attention's input gradient is the sum of the three.
TEST(MultiheadAttention, GeneralPathAgreesWithSelfPath) {
  Rng rng(35);
  MultiheadAttention mha(8, 2, rng);
  fill_parameters_normal(mha, rng, 0.5f);
  auto x = random_tensor<Tensor3>(Shape3{2, 4, 8}, rng);
  auto G = random_tensor<Tensor3>(x.shape(), rng);
  const Tensor3 k = x, v = x;
  mha.zero_grad();
  const auto r = mha.forward(x, k, v);
  const auto g = mha.backward_qkv(G);
  const StateDict general_grads = [&] {
    StateDict s;
    for (auto& p : mha.parameters()) s.emplace(p.name, grad_of(p));
    return s;
  }();
  mha.zero_grad();
  EXPECT_TRUE(AllClose(mha.forward(x), r.output, kNaiveAtol, kNaiveRtol));
  EXPECT_TRUE(
      AllClose(mha.backward(G), Tensor3(g.query + g.key + g.value), kNaiveAtol, kNaiveRtol));
  for (auto& p : mha.parameters())
    EXPECT_TRUE(AllClose(grad_of(p), general_grads.at(p.name), kNaiveAtol, kNaiveRtol)) << p.name;
}

TEST(MultiheadAttention, NoGradForwardGivesTheSameOutputAndBackwardThenThrows) {
  Rng rng(36);
  MultiheadAttention mha(8, 2, rng);
  auto x = random_tensor<Tensor3>(Shape3{1, 3, 8}, rng);
  const Tensor3 y = mha.forward(x);
  NoGradGuard guard;
  EXPECT_TRUE(AllClose(mha.forward(x), y, 0.0, 0.0));
  const std::string msg = what_of([&] { mha.backward(x); });
  EXPECT_NE(msg.find("MultiheadAttention.backward"), std::string::npos) << msg;
  EXPECT_THROW(mha.backward(x), std::logic_error);
}

TEST(MultiheadAttention, ErrorsNameTheFunctionAndTheShapes) {
  MultiheadAttention mha(8, 2);
  std::string msg = what_of([&] { mha.forward(Tensor3(xt::zeros<float>({2, 5, 7}))); });
  EXPECT_NE(msg.find("MultiheadAttention.forward"), std::string::npos) << msg;
  EXPECT_NE(msg.find("query has shape [2, 5, 7]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("D = 8"), std::string::npos) << msg;
  EXPECT_THROW(mha.forward(Tensor3(xt::zeros<float>({2, 5, 7}))), shape_error);

  const Tensor3 q = xt::zeros<float>({2, 3, 8});
  msg = what_of([&] {
    mha.forward(q, Tensor3(xt::zeros<float>({1, 4, 8})), Tensor3(xt::zeros<float>({1, 4, 8})));
  });
  EXPECT_NE(msg.find("key has shape [1, 4, 8]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("B = 2"), std::string::npos) << msg;
  msg = what_of([&] { mha.forward(q, Mask2(xt::zeros<bool>({2, 4}))); });
  EXPECT_NE(msg.find("key_padding_mask has shape [2, 4]"), std::string::npos) << msg;
  msg = what_of([&] { mha.forward(q, Mask2(), Tensor2(xt::zeros<float>({3, 2}))); });
  EXPECT_NE(msg.find("attn_mask has shape [3, 2]"), std::string::npos) << msg;

  msg = what_of([] { MultiheadAttention bad(10, 4); });
  EXPECT_NE(msg.find("embed_dim (10) must be divisible by num_heads (4)"), std::string::npos)
      << msg;
  EXPECT_THROW(MultiheadAttention(10, 4), config_error);
  EXPECT_THROW(MultiheadAttention(8, 2, 1.0f), config_error);

  MultiheadAttention fresh(8, 2);
  EXPECT_THROW(fresh.backward(q), std::logic_error);
  fresh.forward(q, Tensor3(xt::zeros<float>({2, 4, 8})), Tensor3(xt::zeros<float>({2, 4, 8})));
  msg = what_of([&] { fresh.backward(q); });
  EXPECT_NE(msg.find("Tq = 3, Tk = 4"), std::string::npos) << msg;
  msg = what_of([&] { fresh.backward_qkv(Tensor3(xt::zeros<float>({2, 4, 8}))); });
  EXPECT_NE(msg.find("grad_output has shape [2, 4, 8]"), std::string::npos) << msg;
}

// ---- the seam for position schemes acting inside attention ----------------------------------

namespace {

// A test-only scheme, neither rotary nor ALiBi but using both hooks: q and k are scaled per
// (token t, head h), a diagonal linear map (its own transpose, so the backward scales dq and dk
// the same way), and every head's scores get a bias depending on (h, i, j).
struct ScaleAndBias : AttentionPosition {
  static float q_factor(std::size_t t, std::size_t h) {
    return 1.0f + 0.25f * float(t) - 0.1f * float(h);
  }
  static float k_factor(std::size_t t, std::size_t h) {
    return 0.5f + 0.1f * float(t) * float(h + 1);
  }
  static float bias(std::size_t h, std::size_t i, std::size_t j) {
    return -0.3f * float(h + 1) * std::fabs(float(i) - float(j)) + 0.2f * float(j);
  }
  static void scale(Tensor3& x, std::size_t H, float (*f)(std::size_t, std::size_t)) {
    const std::size_t Dh = x.shape(2) / H;
    for (std::size_t b = 0; b < x.shape(0); ++b)
      for (std::size_t t = 0; t < x.shape(1); ++t)
        for (std::size_t c = 0; c < x.shape(2); ++c) x(b, t, c) *= f(t, c / Dh);
  }
  void transform_qk(Tensor3& q, Tensor3& k, std::size_t H) const override {
    scale(q, H, q_factor);
    scale(k, H, k_factor);
  }
  void transform_qk_backward(Tensor3& dq, Tensor3& dk, std::size_t H) const override {
    scale(dq, H, q_factor);
    scale(dk, H, k_factor);
  }
  bool has_score_bias() const override { return true; }
  Tensor2 score_bias(std::size_t h, std::size_t, std::size_t Tq, std::size_t Tk) const override {
    Tensor2 s = Tensor2::from_shape({Tq, Tk});
    for (std::size_t i = 0; i < Tq; ++i)
      for (std::size_t j = 0; j < Tk; ++j) s(i, j) = bias(h, i, j);
    return s;
  }
};

// Self-attention with ScaleAndBias, loop by loop in double: projections, the per-(t, h)
// scaling of q and k, scores + bias + key padding, softmax, P V, output projection.
Tensor3 naive_attention_with_scale_and_bias(const MultiheadAttention& mha, const Tensor3& x,
                                            const Mask2& kpm) {
  const std::size_t B = x.shape(0), T = x.shape(1), D = x.shape(2), H = mha.num_heads(), Dh = D / H;
  const Tensor2& W = mha.in_proj_weight;
  const Tensor1& bias = mha.in_proj_bias;
  Tensor3 y = Tensor3::from_shape({B, T, D});
  for (std::size_t b = 0; b < B; ++b) {
    // proj[t][r] for r in [0, 3D): [q | k | v] of token t
    std::vector<std::vector<double>> proj(T, std::vector<double>(3 * D));
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t r = 0; r < 3 * D; ++r) {
        double s = bias(r);
        for (std::size_t c = 0; c < D; ++c) s += double(W(r, c)) * x(b, t, c);
        if (r < D)
          s *= ScaleAndBias::q_factor(t, r / Dh);
        else if (r < 2 * D)
          s *= ScaleAndBias::k_factor(t, (r - D) / Dh);
        proj[t][r] = s;
      }
    std::vector<std::vector<double>> ctx(T, std::vector<double>(D, 0.0));
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < T; ++i) {
        std::vector<double> s(T);
        double m = -1e300, sum = 0.0;
        for (std::size_t j = 0; j < T; ++j) {
          double dot = 0.0;
          for (std::size_t e = 0; e < Dh; ++e) dot += proj[i][h * Dh + e] * proj[j][D + h * Dh + e];
          s[j] = kpm(b, j) ? -1e300 : dot / std::sqrt(double(Dh)) + ScaleAndBias::bias(h, i, j);
          m = std::max(m, s[j]);
        }
        for (std::size_t j = 0; j < T; ++j) sum += kpm(b, j) ? 0.0 : std::exp(s[j] - m);
        for (std::size_t j = 0; j < T; ++j) {
          const double p = kpm(b, j) ? 0.0 : std::exp(s[j] - m) / sum;
          for (std::size_t e = 0; e < Dh; ++e)
            ctx[i][h * Dh + e] += p * proj[j][2 * D + h * Dh + e];
        }
      }
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t o = 0; o < D; ++o) {
        double s = mha.out_proj.bias(o);
        for (std::size_t c = 0; c < D; ++c) s += double(mha.out_proj.weight(o, c)) * ctx[t][c];
        y(b, t, o) = float(s);
      }
  }
  return y;
}

}  // namespace

TEST(MultiheadAttentionPosition, TransformAndScoreBiasMatchTheLoopReference) {
  Rng rng(40);
  MultiheadAttention mha(8, 2, rng);
  fill_parameters_normal(mha, rng, 0.5f);
  const ScaleAndBias scheme;
  auto x = random_tensor<Tensor3>(Shape3{2, 5, 8}, rng);
  Mask2 kpm = xt::zeros<bool>({2, 5});
  kpm(1, 3) = true;
  const Tensor3 plain = mha.forward(x, kpm);
  mha.set_position(&scheme);
  EXPECT_EQ(mha.position(), &scheme);
  const Tensor3 y = mha.forward(x, kpm);
  EXPECT_TRUE(
      AllClose(y, naive_attention_with_scale_and_bias(mha, x, kpm), kNaiveAtol, kNaiveRtol));
  // the scheme changes the output (not silently ignored)
  EXPECT_GT(xt::amax(xt::abs(y - plain))(), kNotEquivariant);
  mha.set_position(nullptr);
  EXPECT_TRUE(AllClose(mha.forward(x, kpm), plain, 0.0, 0.0));
}

TEST(MultiheadAttentionPosition, GradientsThroughTransformAndBiasMatchFiniteDifferences) {
  Rng rng(41);
  MultiheadAttention mha(8, 2, rng);
  fill_parameters_normal(mha, rng, 0.5f);
  const ScaleAndBias scheme;
  mha.set_position(&scheme);
  auto x = random_tensor<Tensor3>(Shape3{2, 4, 8}, rng);
  Mask2 kpm = xt::zeros<bool>({2, 4});
  kpm(0, 1) = true;
  auto G = random_tensor<Tensor3>(x.shape(), rng);
  EXPECT_TRUE(ModuleGradientsMatch(mha, x, G, kGradModule, kpm));
}

TEST(MultiheadAttentionPosition, CrossAttentionGradientsThroughTheSeamMatchFiniteDifferences) {
  Rng rng(42);
  MultiheadAttention mha(6, 3, rng);
  fill_parameters_normal(mha, rng, 0.5f);
  const ScaleAndBias scheme;
  mha.set_position(&scheme);
  auto q = random_tensor<Tensor3>(Shape3{1, 3, 6}, rng);
  auto k = random_tensor<Tensor3>(Shape3{1, 4, 6}, rng);
  auto v = random_tensor<Tensor3>(Shape3{1, 4, 6}, rng);
  auto G = random_tensor<Tensor3>(q.shape(), rng);
  mha.zero_grad();
  mha.forward(q, k, v);
  const auto g = mha.backward_qkv(G);
  auto targets = parameter_targets(mha);
  targets.push_back(input_target("query", q, g.query));
  targets.push_back(input_target("key", k, g.key));
  targets.push_back(input_target("value", v, g.value));
  auto loss = [&] { return dot_loss(mha.forward(q, k, v).output, G); };
  EXPECT_TRUE(GradientsMatch(loss, targets, kGradModule));
}

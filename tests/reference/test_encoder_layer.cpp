// The reference encoder (lib/src/reference/encoder_layer.cpp): a hand example, PyTorch's values
// (tests/reference/data/*.json, from generate.py), finite-difference checks of its backward, and
// then its job: the nn modules (TransformerEncoderLayer, MultiheadAttention, Embedding with
// sinusoidal positions) must equal it, forward and backward.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/helpers.hpp"
#include "support/oracle.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/core/random.hpp"
#include "xenc/nn/embedding.hpp"
#include "xenc/nn/multihead_attention.hpp"
#include "xenc/nn/position.hpp"
#include "xenc/nn/transformer_encoder.hpp"
#include "xenc/reference/encoder_layer.hpp"
#include "xenc/reference/ops.hpp"

using namespace xenc;
using namespace xenc::test;
namespace ref = xenc::reference;

namespace {
using Shape3 = std::array<std::size_t, 3>;

// Random weights everywhere (PyTorch's init leaves biases 0 and norm weights 1, which would hide
// a bias or norm weight used in the wrong place).
void randomize(ref::LayerWeights& w, Rng& rng) {
  ref::for_each_weight(w, [&](const std::string& name, auto& t) {
    const bool norm_weight = name.rfind("norm", 0) == 0 && name.find("weight") != std::string::npos;
    for (auto& v : t) v = norm_weight ? 1.0f + 0.2f * rng.normal() : 0.4f * rng.normal();
  });
}
void randomize(Module& m, Rng& rng) {
  for (auto& p : m.parameters()) {
    const bool norm_weight =
        p.name.rfind("norm", 0) == 0 && p.name.find("weight") != std::string::npos;
    for (std::size_t i = 0; i < p.size(); ++i)
      p.value[i] = norm_weight ? 1.0f + 0.2f * rng.normal() : 0.4f * rng.normal();
  }
}

ref::Config small_config(bool norm_first, ref::Activation act) {
  ref::Config c;
  c.d_model = 8;
  c.nhead = 2;
  c.dim_feedforward = 12;
  c.activation = act;
  c.norm_first = norm_first;
  return c;
}

}  // namespace

// ---- 1. hand examples -------------------------------------------------------------------------

// D = 2, H = 1 (scale 1/√2), identity projections, zero biases: Q = K = V = x.
// x = [[1, 0], [0, 1]]: scores x xᵀ / √2 = [[0.7071, 0], [0, 0.7071]]
// row 0: softmax([0.7071, 0]) = [2.0281, 1] / 3.0281 = [0.66976155, 0.33023845]; y = P V = P.
// With token 1 padded, both queries see only token 0: weights [1, 0], y = [1, 0] in both rows.
TEST(ReferenceAttention, HandExample) {
  ref::AttentionWeights w = ref::zero_attention_weights(2);
  w.in_proj_weight = Tensor2{{1, 0}, {0, 1}, {1, 0}, {0, 1}, {1, 0}, {0, 1}};
  w.out_proj_weight = Tensor2{{1, 0}, {0, 1}};
  const Tensor3 x = {{{1, 0}, {0, 1}}};
  ref::AttentionActivations a;
  Tensor3 y;
  ref::multihead_attention_forward(y, a, x, Mask2(), w, 1);
  const float p = 0.66976155f, q = 0.33023845f;
  EXPECT_TRUE(AllClose(y, Tensor3{{{p, q}, {q, p}}}, kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(a.att, Tensor4{{{{p, q}, {q, p}}}}, kOpAtol, kOpRtol));
  ref::multihead_attention_forward(y, a, x, Mask2{{false, true}}, w, 1);
  EXPECT_TRUE(AllClose(y, Tensor3{{{1, 0}, {1, 0}}}, 0.0, 0.0));
  EXPECT_TRUE(AllClose(a.att, Tensor4{{{{1, 0}, {1, 0}}}}, 0.0, 0.0));
}

// ids [[2, 0]], table rows r_v = [v, 10 v, -v, 0.5]: the lookup copies rows 2 and 0; positions
// add PE(0) = [sin 0, cos 0, sin 0, cos 0] = [0, 1, 0, 1] and
// PE(1) = [sin 1, cos 1, sin(1/100), cos(1/100)] (D = 4: ω_1 = 10000^(-2/4) = 1/100).
TEST(ReferenceEmbedding, HandExampleWithPositions) {
  Tensor2 table = Tensor2::from_shape({3, 4});
  for (std::size_t v = 0; v < 3; ++v) {
    table(v, 0) = float(v);
    table(v, 1) = 10.0f * float(v);
    table(v, 2) = -float(v);
    table(v, 3) = 0.5f;
  }
  Tensor3 e, y;
  ref::embedding_forward(e, Index2{{2, 0}}, table);
  ref::positions_forward(y, e);
  const Tensor3 expected = {{{2.0f, 21.0f, -2.0f, 1.5f},
                             {float(std::sin(1.0)), float(std::cos(1.0)), float(std::sin(0.01)),
                              float(0.5 + std::cos(0.01))}}};
  EXPECT_TRUE(AllClose(y, expected, kOpAtol, kOpRtol));
}

// ---- 2. PyTorch's values ----------------------------------------------------------------------

class ReferenceLayerPyTorch : public ::testing::TestWithParam<const char*> {};

// torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), eval mode, float64, with a key
// padding mask: output at real positions, input gradient and every weight gradient.
TEST_P(ReferenceLayerPyTorch, ForwardAndBackwardMatch) {
  const json data = load_reference("transformer_encoder_layer");
  const json& c = data["cases"][GetParam()];
  ref::Config cfg;
  cfg.d_model = data["d_model"];
  cfg.nhead = data["nhead"];
  cfg.dim_feedforward = data["dim_feedforward"];
  cfg.layer_norm_eps = data["layer_norm_eps"];
  cfg.norm_first = c["norm_first"];
  cfg.activation = c["activation"] == "relu" ? ref::Activation::relu : ref::Activation::gelu;
  ref::LayerWeights w = ref::zero_layer_weights(cfg);
  ref::load_state_dict(w, state_dict(c["state_dict"]));
  const Tensor3 x = tensor<3>(c["x"]);
  const Mask2 kpm = mask2(c["key_padding_mask"]);
  ref::LayerActivations a;
  Tensor3 y;
  ref::encoder_layer_forward(y, a, x, kpm, w, cfg);
  // PyTorch's values at padded positions are arbitrary (its fast path writes zeros there).
  Tensor3 y_torch = tensor<3>(c["y"]);
  for (std::size_t b = 0; b < kpm.shape(0); ++b)
    for (std::size_t t = 0; t < kpm.shape(1); ++t)
      if (kpm(b, t))
        for (std::size_t i = 0; i < cfg.d_model; ++i) y_torch(b, t, i) = y(b, t, i);
  EXPECT_TRUE(AllClose(y, y_torch, kModuleAtol, kModuleRtol));

  Tensor3 dx = xt::zeros<float>(x.shape());
  ref::LayerWeights dw = ref::zero_layer_weights(cfg);
  ref::encoder_layer_backward(dx, dw, tensor<3>(c["dy"]), a, w, cfg);
  EXPECT_TRUE(AllClose(dx, tensor<3>(c["dx"]), kModuleAtol, kModuleRtol));
  ref::for_each_weight(dw, [&](const std::string& name, const auto& g) {
    EXPECT_TRUE(AllClose(g, array(c["grads"][name]), kModuleAtol, kModuleRtol)) << name;
  });
}

INSTANTIATE_TEST_SUITE_P(Cases, ReferenceLayerPyTorch,
                         ::testing::Values("post_relu", "post_gelu", "pre_relu", "pre_gelu"));

TEST(ReferenceSteps, LinearLayerNormActivationEmbeddingPositionsMatchPyTorch) {
  // Linear and layer norm are reference/ops.hpp's (the layer calls them on its [B·T, C] rows):
  // here on the same rows, against PyTorch's [B, T, C] tensors.
  const auto rows = [](const Tensor3& t) { return Tensor2(ref::rows_of(t)); };
  {
    SCOPED_TRACE("linear");
    const json d = load_reference("linear");
    const Tensor3 x = tensor<3>(d["x"]);
    const Tensor2 w = tensor<2>(d["weight"]);
    const Tensor2 y = ref::linear_forward(ref::rows_of(x), w, tensor<1>(d["bias"]));
    EXPECT_TRUE(AllClose(y, rows(tensor<3>(d["y"])), kOpAtol, kOpRtol));
    const ref::LinearGrads g =
        ref::linear_backward(ref::rows_of(tensor<3>(d["dy"])), ref::rows_of(x), w);
    EXPECT_TRUE(AllClose(Tensor2(g.input), rows(tensor<3>(d["dx"])), kOpAtol, kOpRtol));
    EXPECT_TRUE(AllClose(Tensor2(g.weight), tensor<2>(d["dweight"]), kOpAtol, kOpRtol));
    EXPECT_TRUE(AllClose(Tensor1(g.bias), tensor<1>(d["dbias"]), kOpAtol, kOpRtol));
  }
  for (const char* name : {"plain", "offset"}) {
    SCOPED_TRACE(std::string("layer norm ") + name);
    const json d = load_reference("layer_norm")["cases"][name];
    const Tensor3 x = tensor<3>(d["x"]);
    const Tensor1 w = tensor<1>(d["weight"]);
    const double eps = d["eps"].get<float>();
    const Tensor2 y = ref::layer_norm_forward(ref::rows_of(x), w, tensor<1>(d["bias"]), eps);
    EXPECT_TRUE(AllClose(y, rows(tensor<3>(d["y"])), kOpAtol, kOpRtol));
    const ref::LayerNormGrads g =
        ref::layer_norm_backward(ref::rows_of(tensor<3>(d["dy"])), ref::rows_of(x), w, eps);
    // "offset" rows (mean 10, std 0.1) lose digits to float32 in x - mean: kNormOffset
    EXPECT_TRUE(AllClose(Tensor2(g.input), rows(tensor<3>(d["dx"])), kOpAtol, kNormOffsetRtol));
    EXPECT_TRUE(AllClose(Tensor1(g.weight), tensor<1>(d["dweight"]), kOpAtol, kNormOffsetRtol));
    EXPECT_TRUE(AllClose(Tensor1(g.bias), tensor<1>(d["dbias"]), kOpAtol, kOpRtol));
  }
  {
    const json d = load_reference("activation");
    const Tensor1 x1 = tensor<1>(d["x"]), dy1 = tensor<1>(d["dy"]);
    const Tensor3 x = xt::reshape_view(x1, {std::size_t(1), std::size_t(1), x1.size()});
    const Tensor3 dy = xt::reshape_view(dy1, {std::size_t(1), std::size_t(1), x1.size()});
    for (const auto act : {ref::Activation::relu, ref::Activation::gelu}) {
      const char* name = act == ref::Activation::relu ? "relu" : "gelu";
      SCOPED_TRACE(name);
      Tensor3 y, dx = xt::zeros<float>(x.shape());
      ref::activation_forward(y, x, act);
      ref::activation_backward(dx, dy, x, act);
      EXPECT_TRUE(AllClose(xt::flatten(y), tensor<1>(d[name]["y"]), kOpAtol, kOpRtol));
      EXPECT_TRUE(AllClose(xt::flatten(dx), tensor<1>(d[name]["dx"]), kOpAtol, kOpRtol));
    }
  }
  {
    SCOPED_TRACE("embedding");
    const json d = load_reference("embedding");
    const Tensor2 w = tensor<2>(d["weight"]);
    const Index2 ids = index2(d["ids"]);
    Tensor3 y;
    ref::embedding_forward(y, ids, w);
    EXPECT_TRUE(AllClose(y, tensor<3>(d["y"]), 0.0, 0.0));  // a copy: exact
    Tensor2 dw = xt::zeros<float>(w.shape());
    ref::embedding_backward(dw, tensor<3>(d["dy"]), ids, d["padding_idx"].get<std::int64_t>());
    EXPECT_TRUE(AllClose(dw, tensor<2>(d["dweight"]), kOpAtol, kOpRtol));
  }
  {
    SCOPED_TRACE("positions");
    const json d = load_reference("positional");
    const Tensor2 table = tensor<2>(d["table_d6"]);  // positions 0..9, D = 6
    Tensor3 y;
    ref::positions_forward(
        y, Tensor3(xt::zeros<float>({std::size_t(1), table.shape(0), table.shape(1)})));
    EXPECT_TRUE(AllClose(xt::view(y, 0), table, kPositional, 0.0));
    const auto pos = d["positions_d128"].get<std::vector<std::size_t>>();
    const Tensor2 big = tensor<2>(d["table_d128"]);
    for (std::size_t r = 0; r < pos.size(); ++r)
      for (std::size_t j = 0; j < 128; ++j)
        EXPECT_NEAR(ref::sinusoidal_position(pos[r], j, 128), big(r, j), kPositional)
            << "p = " << pos[r] << ", j = " << j;
  }
}

// ---- 3. finite differences --------------------------------------------------------------------

struct RefCase {
  bool norm_first;
  ref::Activation act;
};
void PrintTo(const RefCase& c, std::ostream* os) {
  *os << (c.norm_first ? "pre-norm " : "post-norm ")
      << (c.act == ref::Activation::relu ? "relu" : "gelu");
}
class ReferenceLayerGrad : public ::testing::TestWithParam<RefCase> {};

// B = 2, T = 3 with one padded key: every weight and the input against the 4-point stencil.
TEST_P(ReferenceLayerGrad, BackwardMatchesFiniteDifferences) {
  const ref::Config cfg = small_config(GetParam().norm_first, GetParam().act);
  Rng rng(50);
  ref::LayerWeights w = ref::zero_layer_weights(cfg);
  randomize(w, rng);
  auto x = random_tensor<Tensor3>(Shape3{2, 3, 8}, rng);
  Mask2 kpm = xt::zeros<bool>({2, 3});
  kpm(1, 2) = true;
  const auto G = random_tensor<Tensor3>(x.shape(), rng);
  auto forward = [&] {
    ref::LayerActivations a;
    Tensor3 y;
    ref::encoder_layer_forward(y, a, x, kpm, w, cfg);
    return std::make_pair(y, a);
  };
  const auto [y, a] = forward();
  Tensor3 dx = xt::zeros<float>(x.shape());
  ref::LayerWeights dw = ref::zero_layer_weights(cfg);
  ref::encoder_layer_backward(dx, dw, G, a, w, cfg);

  std::vector<GradTarget> targets;
  std::vector<std::vector<double>> grads;
  ref::for_each_weight(
      dw, [&](const std::string&, const auto& g) { grads.emplace_back(g.begin(), g.end()); });
  std::size_t k = 0;
  ref::for_each_weight(w, [&](const std::string& name, auto& t) {
    GradTarget tg;
    tg.name = name;
    tg.value = t.data();
    tg.size = t.size();
    tg.analytic = grads[k++];
    targets.push_back(std::move(tg));
  });
  targets.push_back(input_target("x", x, dx));
  auto loss = [&] { return dot_loss(forward().first, G); };
  const bool relu = GetParam().act == ref::Activation::relu;
  EXPECT_TRUE(GradientsMatch(loss, targets, relu ? kGradModuleRelu : kGradModule,
                             relu ? kGradStepRelu : kGradStep));
}

INSTANTIATE_TEST_SUITE_P(Configs, ReferenceLayerGrad,
                         ::testing::Values(RefCase{false, ref::Activation::relu},
                                           RefCase{false, ref::Activation::gelu},
                                           RefCase{true, ref::Activation::relu},
                                           RefCase{true, ref::Activation::gelu}),
                         [](const auto& info) {
                           return std::string(info.param.norm_first ? "pre_" : "post_") +
                                  (info.param.act == ref::Activation::relu ? "relu" : "gelu");
                         });

// ---- 4. the oracle: the nn modules equal the reference ------------------------------------------

// Runs the module (forward with its attention weights, then backward of dy) and compares output,
// weights, input gradient and every parameter gradient with the reference run r; ref_grads are
// r's gradients in the module's parameter layout (r.grads for a layer, r.attn_grads for MHA).
template <class M, class W>
void ExpectModuleEqualsReference(M& module, const Tensor3& x, const Mask2& kpm, const Tensor3& dy,
                                 const ReferenceRun& r, const W& ref_grads) {
  Tensor4 att;
  module.zero_grad();
  const Tensor3 y = module.forward(x, kpm, Tensor2(), &att);
  const Tensor3 dx = module.backward(dy);
  EXPECT_TRUE(AllClose(y, r.y, kReferenceAtol, kReferenceRtol));
  EXPECT_TRUE(AllClose(att, r.att, kReferenceAtol, kReferenceRtol));
  EXPECT_TRUE(AllClose(dx, r.dx, kReferenceAtol, kReferenceRtol));
  EXPECT_TRUE(GradientsEqual(module, ref_grads, kReferenceAtol, kReferenceRtol));
}

struct ModuleCase {
  bool norm_first;
  Activation act;
  bool masked;
};
void PrintTo(const ModuleCase& c, std::ostream* os) {
  *os << (c.norm_first ? "pre-norm " : "post-norm ") << to_string(c.act)
      << (c.masked ? " masked" : " unmasked");
}
class LayerEqualsReference : public ::testing::TestWithParam<ModuleCase> {};

// B = 3, T = 5 (odd), D = 12, H = 3 (Dh = 4), F = 20; the mask pads scattered keys, and a whole
// sentence in one case. Forward output, attention weights, input gradient, every weight gradient.
TEST_P(LayerEqualsReference, ForwardAndBackward) {
  const ModuleCase p = GetParam();
  EncoderLayerConfig c;
  c.d_model = 12;
  c.nhead = 3;
  c.dim_feedforward = 20;
  c.dropout = 0.1f;  // evaluation mode: inactive
  c.activation = p.act;
  c.norm_first = p.norm_first;
  Rng rng(60);
  TransformerEncoderLayer layer(c, rng);
  randomize(layer, rng);
  auto x = random_tensor<Tensor3>(Shape3{3, 5, 12}, rng);
  Mask2 kpm;
  if (p.masked) {
    kpm = xt::zeros<bool>({3, 5});
    kpm(0, 4) = kpm(1, 1) = kpm(1, 3) = true;
    if (p.norm_first) kpm(2, 0) = kpm(2, 1) = kpm(2, 2) = kpm(2, 3) = kpm(2, 4) = true;
  }
  const auto dy = random_tensor<Tensor3>(x.shape(), rng);
  const ReferenceRun r = reference_run(layer, x, kpm, dy);
  ExpectModuleEqualsReference(layer, x, kpm, dy, r, r.grads);
}

INSTANTIATE_TEST_SUITE_P(Configs, LayerEqualsReference,
                         ::testing::Values(ModuleCase{false, Activation::relu, false},
                                           ModuleCase{false, Activation::relu, true},
                                           ModuleCase{false, Activation::gelu, false},
                                           ModuleCase{false, Activation::gelu, true},
                                           ModuleCase{true, Activation::relu, false},
                                           ModuleCase{true, Activation::relu, true},
                                           ModuleCase{true, Activation::gelu, false},
                                           ModuleCase{true, Activation::gelu, true}),
                         [](const auto& info) {
                           return std::string(info.param.norm_first ? "pre_" : "post_") +
                                  to_string(info.param.act) +
                                  (info.param.masked ? "_masked" : "_unmasked");
                         });

TEST(MultiheadAttentionEqualsReference, ForwardAndBackwardWithAndWithoutMask) {
  for (bool masked : {false, true}) {
    SCOPED_TRACE(masked ? "masked" : "unmasked");
    Rng rng(61);
    MultiheadAttention mha(12, 4, rng);
    fill_parameters_normal(mha, rng, 0.5f);
    auto x = random_tensor<Tensor3>(Shape3{2, 7, 12}, rng);
    Mask2 kpm;
    if (masked) {
      kpm = xt::zeros<bool>({2, 7});
      kpm(0, 6) = kpm(1, 0) = kpm(1, 5) = true;
    }
    const auto dy = random_tensor<Tensor3>(x.shape(), rng);
    const ReferenceRun r = reference_run(mha, x, kpm, dy);
    ExpectModuleEqualsReference(mha, x, kpm, dy, r, r.attn_grads);
  }
}

// Embedding then SinusoidalPosition, against the reference's lookup and positions: forward, and
// the table's gradient (the padding row gets none, repeated ids add up).
TEST(EmbeddingAndPositionsEqualReference, ForwardAndBackward) {
  Rng rng(62);
  Embedding emb(7, 6, rng, /*padding_idx=*/0);
  SinusoidalPosition pos(6);
  const Index2 ids = {{3, 1, 0, 3, 6}, {0, 2, 2, 5, 1}};
  const auto dy = random_tensor<Tensor3>(Shape3{2, 5, 6}, rng);
  emb.zero_grad();
  const Tensor3 y = pos.forward(emb.forward(ids));
  emb.backward(pos.backward(dy));

  Tensor3 e, y_ref;
  ref::embedding_forward(e, ids, emb.weight);
  ref::positions_forward(y_ref, e);
  Tensor3 de = xt::zeros<float>(e.shape());
  ref::positions_backward(de, dy);
  Tensor2 dw = xt::zeros<float>(emb.weight.shape());
  ref::embedding_backward(dw, de, ids, 0);
  EXPECT_TRUE(AllClose(y, y_ref, kPositional, 0.0));
  EXPECT_TRUE(AllClose(emb.weight_grad, dw, kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(xt::view(dw, 0), xt::zeros<float>({6}), 0.0, 0.0));
}

// A stack's state_dict holds each layer under "layers.<i>.": the reference takes one layer out
// by prefix and computes what that layer of the stack computes.
TEST(EncoderStackLayerEqualsReference, WeightsByPrefix) {
  EncoderLayerConfig c;
  c.d_model = 8;
  c.nhead = 2;
  c.dim_feedforward = 12;
  c.activation = Activation::gelu;
  Rng rng(63);
  TransformerEncoder enc(c, 2, rng);
  randomize(enc, rng);
  const auto x = random_tensor<Tensor3>(Shape3{2, 3, 8}, rng);
  const ref::Config cfg = reference_config(c);
  ref::LayerWeights w = ref::zero_layer_weights(cfg);
  ref::load_state_dict(w, enc.state_dict(), "layers.1.");
  ref::LayerActivations a;
  Tensor3 y;
  ref::encoder_layer_forward(y, a, x, Mask2(), w, cfg);
  EXPECT_TRUE(AllClose(enc.layers[1].forward(x), y, kReferenceAtol, kReferenceRtol));
  EXPECT_FALSE(AllClose(enc.layers[0].forward(x), y, kReferenceAtol, kReferenceRtol));
}

// ---- 5. errors --------------------------------------------------------------------------------

TEST(Reference, ErrorsNameTheFunctionTheArgumentAndTheShapes) {
  ref::Config cfg = small_config(false, ref::Activation::relu);
  const ref::LayerWeights w = ref::zero_layer_weights(cfg);
  ref::LayerActivations a;
  Tensor3 y;
  std::string msg = what_of([&] {
    ref::encoder_layer_forward(y, a, Tensor3(xt::zeros<float>({2, 3, 6})), Mask2(), w, cfg);
  });
  EXPECT_NE(msg.find("reference::encoder_layer_forward: x has shape [2, 3, 6], expected [B, T, D] "
                     "with D = 8"),
            std::string::npos)
      << msg;
  msg = what_of([&] {
    ref::encoder_layer_forward(y, a, Tensor3(xt::zeros<float>({2, 3, 8})),
                               Mask2(xt::zeros<bool>({2, 4})), w, cfg);
  });
  EXPECT_NE(msg.find("key_padding_mask has shape [2, 4], expected [B, T] = [2, 3]"),
            std::string::npos)
      << msg;

  cfg.nhead = 3;
  msg = what_of([&] { ref::zero_layer_weights(cfg); });
  EXPECT_NE(msg.find("d_model (8) must be divisible by nhead (3)"), std::string::npos) << msg;
  EXPECT_THROW(ref::zero_layer_weights(cfg), config_error);

  ref::LayerWeights w2 = ref::zero_layer_weights(small_config(false, ref::Activation::relu));
  StateDict s;
  msg = what_of([&] { ref::load_state_dict(w2, s); });
  EXPECT_NE(msg.find("missing key \"self_attn.in_proj_weight\" (expected shape [24, 8])"),
            std::string::npos)
      << msg;
  TransformerEncoderLayer layer(EncoderLayerConfig{8, 2, 12});
  s = layer.state_dict();
  s["linear1.bias"] = xt::zeros<float>({13});
  EXPECT_THROW(ref::load_state_dict(w2, s), shape_error);

  Tensor3 e;
  EXPECT_THROW(ref::embedding_forward(e, Index2{{0, 5}}, Tensor2(xt::zeros<float>({5, 4}))),
               index_error);
}

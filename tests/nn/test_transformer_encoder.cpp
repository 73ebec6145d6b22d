// TransformerEncoderLayer (post-norm / pre-norm, relu / gelu) and TransformerEncoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/helpers.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/nn/transformer_encoder.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
using Shape3 = std::array<std::size_t, 3>;

EncoderLayerConfig small_config(bool norm_first, Activation act, float dropout = 0.0f) {
  EncoderLayerConfig c;
  c.d_model = 8;
  c.nhead = 2;
  c.dim_feedforward = 16;
  c.dropout = dropout;
  c.activation = act;
  c.norm_first = norm_first;
  return c;
}

void randomize(Module& m, Rng& rng) {
  for (auto& p : m.parameters()) {
    const bool norm_weight = p.name.find("norm") != std::string::npos && p.name.size() >= 6 &&
                             p.name.compare(p.name.size() - 6, 6, "weight") == 0;
    for (std::size_t i = 0; i < p.size(); ++i)
      p.value[i] = norm_weight ? 1.0f + 0.2f * rng.normal() : 0.4f * rng.normal();
  }
}

// Rows of y at non-padded positions only, as [N, D].
Tensor2 unpadded(const Tensor3& y, const Mask2& kpm) {
  std::vector<std::size_t> rows;
  for (std::size_t b = 0; b < y.shape(0); ++b)
    for (std::size_t t = 0; t < y.shape(1); ++t)
      if (!kpm(b, t)) rows.push_back(b * y.shape(1) + t);
  Tensor2 out = Tensor2::from_shape({rows.size(), y.shape(2)});
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::copy_n(y.data() + rows[i] * y.shape(2), y.shape(2), out.data() + i * y.shape(2));
  return out;
}

}  // namespace

// With every projection weight and bias zero, both residual branches add exactly 0:
//   post-norm: y = norm2(h + 0), h = norm1(x + 0)  ->  y = LN(LN(x)) = LN(x) (weight 1, bias 0)
//   pre-norm:  y = h + 0, h = x + 0                ->  y = x
// x = [1, 2, 3, 4] (D = 4): mean 2.5, biased var 1.25, LN(x) = [-1.5, -0.5, 0.5, 1.5] / √1.25001
// (LN of an already normalised row is itself up to the eps correction).
TEST(TransformerEncoderLayer, HandExampleWithZeroBranches) {
  EncoderLayerConfig cfg;
  cfg.d_model = 4;
  cfg.nhead = 2;
  cfg.dim_feedforward = 3;
  for (bool norm_first : {false, true}) {
    SCOPED_TRACE(norm_first ? "pre-norm" : "post-norm");
    cfg.norm_first = norm_first;
    TransformerEncoderLayer layer(cfg);
    for (auto& p : layer.parameters())
      if (p.name.find("norm") == std::string::npos) std::fill_n(p.value, p.size(), 0.0f);
    const Tensor3 x = {{{1, 2, 3, 4}, {4, 4, 0, 0}}};
    const Tensor3 y = layer.forward(x);
    if (norm_first) {
      EXPECT_TRUE(AllClose(y, x, 0.0, 0.0));
    } else {
      const double s = std::sqrt(1.25 + 1e-5), r = std::sqrt(1.0 / (1.0 + 1e-5 / 1.25) + 1e-5);
      // second row: mean 2, var 4: LN = [1, 1, -1, -1] / √(4 + eps)
      const double s2 = std::sqrt(4.0 + 1e-5), r2 = std::sqrt(4.0 / (4.0 + 1e-5) + 1e-5);
      const Tensor3 expected = {
          {{float(-1.5 / s / r), float(-0.5 / s / r), float(0.5 / s / r), float(1.5 / s / r)},
           {float(2 / s2 / r2), float(2 / s2 / r2), float(-2 / s2 / r2), float(-2 / s2 / r2)}}};
      EXPECT_TRUE(AllClose(y, expected, kOpAtol, kOpRtol));
    }
  }
}

class EncoderLayerReference : public ::testing::TestWithParam<const char*> {};

// Same weights, same input: our layer against torch.nn.TransformerEncoderLayer(batch_first=True).
TEST_P(EncoderLayerReference, ForwardAndBackwardMatchPyTorch) {
  const json ref = load_reference("transformer_encoder_layer");
  const json& c = ref["cases"][GetParam()];
  EncoderLayerConfig cfg;
  cfg.d_model = ref["d_model"];
  cfg.nhead = ref["nhead"];
  cfg.dim_feedforward = ref["dim_feedforward"];
  cfg.layer_norm_eps = ref["layer_norm_eps"];
  cfg.norm_first = c["norm_first"];
  cfg.activation = parse_activation(c["activation"]);
  cfg.dropout = 0.1f;  // evaluation mode: no effect
  TransformerEncoderLayer layer(cfg);
  layer.load_state_dict(state_dict(c["state_dict"]));
  const Mask2 kpm = mask2(c["key_padding_mask"]);
  const Tensor3 y = layer.forward(tensor<3>(c["x"]), kpm);
  EXPECT_TRUE(
      AllClose(unpadded(y, kpm), unpadded(tensor<3>(c["y"]), kpm), kModuleAtol, kModuleRtol));
  layer.zero_grad();
  const Tensor3 dx = layer.backward(tensor<3>(c["dy"]));
  EXPECT_TRUE(AllClose(dx, tensor<3>(c["dx"]), kModuleAtol, kModuleRtol));
  for (const auto& p : layer.parameters())
    EXPECT_TRUE(AllClose(grad_of(p), array(c["grads"][p.name]), kModuleAtol, kModuleRtol))
        << p.name;
}

INSTANTIATE_TEST_SUITE_P(PyTorch, EncoderLayerReference,
                         ::testing::Values("post_relu", "post_gelu", "pre_relu", "pre_gelu"));

TEST(TransformerEncoder, StackWithFinalNormMatchesPyTorch) {
  const json ref = load_reference("transformer_encoder");
  EncoderLayerConfig cfg = small_config(true, Activation::gelu);
  TransformerEncoder enc(cfg, ref["num_layers"].get<std::size_t>(), true);
  enc.load_state_dict(state_dict(ref["state_dict"]));
  const Mask2 kpm = mask2(ref["key_padding_mask"]);
  EncoderTrace trace;
  const Tensor3 y = enc.forward(tensor<3>(ref["x"]), kpm, Tensor2(), &trace);
  EXPECT_TRUE(
      AllClose(unpadded(y, kpm), unpadded(tensor<3>(ref["y"]), kpm), kModuleAtol, kModuleRtol));
  ASSERT_EQ(trace.layer_outputs.size(), 2u);
  ASSERT_EQ(trace.attention_weights.size(), 2u);
  EXPECT_EQ(shape_str(trace.attention_weights[1].shape()), "[2, 2, 5, 5]");
  enc.zero_grad();
  const Tensor3 dx = enc.backward(tensor<3>(ref["dy"]));
  EXPECT_TRUE(AllClose(dx, tensor<3>(ref["dx"]), kModuleAtol, kModuleRtol));
  for (const auto& p : enc.parameters())
    EXPECT_TRUE(AllClose(grad_of(p), array(ref["grads"][p.name]), kModuleAtol, kModuleRtol))
        << p.name;
}

// state_dict keys (and shapes) are PyTorch's, so weights move between the two by name.
TEST(TransformerEncoder, StateDictNamesMatchPyTorch) {
  const json ref = load_reference("transformer_encoder");
  for (bool final_norm : {false, true}) {
    SCOPED_TRACE(final_norm ? "with final norm" : "without final norm");
    TransformerEncoder enc(small_config(!final_norm, Activation::relu), 2, final_norm);
    std::vector<std::pair<std::string, std::string>> ours, theirs;
    for (const auto& kv : enc.state_dict())
      ours.emplace_back(kv.first, shape_str(kv.second.shape()));
    for (const auto& e : ref[final_norm ? "keys_with_norm" : "keys_without_norm"])
      theirs.emplace_back(e[0].get<std::string>(), shape_str(e[1].get<std::vector<std::size_t>>()));
    std::sort(theirs.begin(), theirs.end());
    EXPECT_EQ(ours, theirs);
  }
  // a single layer's names are the stack's without the "layers.0." prefix
  TransformerEncoderLayer layer(small_config(false, Activation::relu));
  std::vector<std::string> names;
  for (const auto& p : layer.parameters()) names.push_back("layers.0." + p.name);
  for (const auto& e : ref["keys_without_norm"]) {
    const std::string k = e[0];
    if (k.rfind("layers.0.", 0) == 0)
      EXPECT_NE(std::find(names.begin(), names.end(), k), names.end()) << k;
  }
  EXPECT_EQ(names.size(), 12u);
}

struct LayerCase {
  bool norm_first;
  Activation act;
};
inline void PrintTo(const LayerCase& c, std::ostream* os) {
  *os << (c.norm_first ? "pre-norm " : "post-norm ") << to_string(c.act);
}
class EncoderLayerGrad : public ::testing::TestWithParam<LayerCase> {};

TEST_P(EncoderLayerGrad, ParametersAndInputMatchFiniteDifferences) {
  Rng rng(40);
  TransformerEncoderLayer layer(small_config(GetParam().norm_first, GetParam().act), rng);
  randomize(layer, rng);
  auto x = random_tensor<Tensor3>(Shape3{2, 4, 8}, rng);
  Mask2 kpm = xt::zeros<bool>({2, 4});
  kpm(1, 3) = true;
  auto G = random_tensor<Tensor3>(x.shape(), rng);
  layer.zero_grad();
  layer.forward(x, kpm);
  const Tensor3 dx = layer.backward(G);
  auto targets = parameter_targets(layer);
  targets.push_back(input_target("x", x, dx));
  auto loss = [&] { return dot_loss(layer.forward(x, kpm), G); };
  const bool relu = GetParam().act == Activation::relu;
  EXPECT_TRUE(GradientsMatch(loss, targets, relu ? kGradModuleRelu : kGradModule,
                             relu ? kGradStepRelu : kGradStep));
}

INSTANTIATE_TEST_SUITE_P(
    Configs, EncoderLayerGrad,
    ::testing::Values(LayerCase{false, Activation::relu}, LayerCase{false, Activation::gelu},
                      LayerCase{true, Activation::relu}, LayerCase{true, Activation::gelu}),
    [](const auto& info) {
      return std::string(info.param.norm_first ? "pre_" : "post_") + to_string(info.param.act);
    });

// Training mode: three dropouts in the layer plus one on the attention probabilities. Each
// evaluation runs on a copy, so all masks are the same in every call.
TEST(TransformerEncoderLayer, DropoutGradientsMatchFiniteDifferencesWithFixedMasks) {
  for (bool norm_first : {false, true}) {
    SCOPED_TRACE(norm_first ? "pre-norm" : "post-norm");
    Rng rng(41);
    TransformerEncoderLayer work(small_config(norm_first, Activation::gelu, 0.25f), rng);
    randomize(work, rng);
    work.train();
    auto x = random_tensor<Tensor3>(Shape3{2, 3, 8}, rng);
    auto G = random_tensor<Tensor3>(x.shape(), rng);
    ExpectDropoutGradientsMatch(work, x, G, kGradModule);
  }
}

TEST(TransformerEncoder, StackWithFinalNormMatchesFiniteDifferences) {
  Rng rng(42);
  TransformerEncoder enc(small_config(true, Activation::gelu), 2, rng, true);
  randomize(enc, rng);
  auto x = random_tensor<Tensor3>(Shape3{2, 3, 8}, rng);
  Mask2 kpm = xt::zeros<bool>({2, 3});
  kpm(0, 2) = true;
  auto G = random_tensor<Tensor3>(x.shape(), rng);
  EXPECT_TRUE(ModuleGradientsMatch(enc, x, G, kGradModule, kpm));
}

// Without positional information, self-attention sees a set: permuting the tokens permutes the
// outputs the same way, encoder(P x) = P encoder(x).
TEST(TransformerEncoder, IsPermutationEquivariant) {
  const std::vector<std::size_t> perm = {3, 0, 5, 1, 4, 2};
  for (bool norm_first : {false, true}) {
    SCOPED_TRACE(norm_first ? "pre-norm" : "post-norm");
    EncoderLayerConfig cfg = small_config(norm_first, Activation::gelu);
    cfg.d_model = 16;
    cfg.nhead = 4;
    cfg.dim_feedforward = 32;
    Rng rng(43);
    TransformerEncoder enc(cfg, 2, rng, true);
    randomize(enc, rng);
    auto x = random_tensor<Tensor3>(Shape3{2, 6, 16}, rng);
    Mask2 kpm = xt::zeros<bool>({2, 6});
    kpm(1, 1) = kpm(1, 4) = true;
    const Tensor3 y = enc.forward(x, kpm);
    const Tensor3 y_perm = enc.forward(permute_time(x, perm), permute_time(kpm, perm));
    const double err = max_abs_diff(y_perm, permute_time(y, perm));
    EXPECT_LT(err, kEquivariance);
    EXPECT_GT(max_abs_diff(y_perm, y), kNotEquivariant);  // the permutation did move things
  }
}

// A key-padding mask really hides the padded tokens: whatever they contain, the outputs at the
// real positions stay exactly the same.
TEST(TransformerEncoder, PaddedTokensDoNotInfluenceRealPositions) {
  Rng rng(45);
  TransformerEncoder enc(small_config(false, Activation::gelu), 2, rng, true);
  randomize(enc, rng);
  auto x = random_tensor<Tensor3>(Shape3{2, 5, 8}, rng);
  Mask2 kpm = xt::zeros<bool>({2, 5});
  kpm(0, 4) = kpm(1, 2) = kpm(1, 3) = kpm(1, 4) = true;
  const Tensor3 y = enc.forward(x, kpm);
  Tensor3 x2 = x;
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t t = 0; t < 5; ++t)
      if (kpm(b, t))
        for (std::size_t d = 0; d < 8; ++d) x2(b, t, d) = 100.0f * rng.normal();
  EXPECT_TRUE(AllClose(unpadded(enc.forward(x2, kpm), kpm), unpadded(y, kpm), 0.0, 0.0));
}

TEST(TransformerEncoder, BackwardAccumulatesAndNoGradDisablesIt) {
  Rng rng(44);
  TransformerEncoderLayer layer(small_config(false, Activation::relu), rng);
  auto x = random_tensor<Tensor3>(Shape3{1, 3, 8}, rng);
  auto G = random_tensor<Tensor3>(x.shape(), rng);
  layer.zero_grad();
  layer.forward(x);
  layer.backward(G);
  const xt::xarray<float> once = grad_of(layer.parameters()[0]);
  layer.forward(x);
  layer.backward(G);
  EXPECT_TRUE(AllClose(grad_of(layer.parameters()[0]), xt::xarray<float>(2.0f * once),
                       kAccumulateAtol, kAccumulateRtol));
  {
    NoGradGuard guard;
    layer.forward(x);
  }
  EXPECT_THROW(layer.backward(G), std::logic_error);
}

TEST(TransformerEncoder, ConfigurationAndShapeErrorsAreClear) {
  EncoderLayerConfig cfg = small_config(false, Activation::relu);
  cfg.d_model = 10;
  cfg.nhead = 4;
  std::string msg = what_of([&] { TransformerEncoderLayer l(cfg); });
  EXPECT_NE(msg.find("TransformerEncoderLayer"), std::string::npos) << msg;
  EXPECT_NE(msg.find("d_model (10) must be divisible by nhead (4)"), std::string::npos) << msg;
  EXPECT_THROW(TransformerEncoder(cfg, 2), config_error);
  cfg = small_config(false, Activation::relu, 1.5f);
  EXPECT_THROW(TransformerEncoderLayer{cfg}, config_error);
  EXPECT_THROW(TransformerEncoder(small_config(false, Activation::relu), 0), config_error);

  TransformerEncoderLayer layer(small_config(false, Activation::relu));
  msg = what_of([&] { layer.forward(Tensor3(xt::zeros<float>({2, 3, 6}))); });
  EXPECT_NE(msg.find("TransformerEncoderLayer.forward: x has shape [2, 3, 6]"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("D = 8"), std::string::npos) << msg;
  msg = what_of(
      [&] { layer.forward(Tensor3(xt::zeros<float>({2, 3, 8})), Mask2(xt::zeros<bool>({2, 4}))); });
  EXPECT_NE(msg.find("key_padding_mask has shape [2, 4]"), std::string::npos) << msg;
}

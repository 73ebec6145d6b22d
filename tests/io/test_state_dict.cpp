// State_dicts to modules: sizes read from PyTorch's keys and shapes, save -> load round trips
// (identical parameters and outputs), and every key error with file, key and both shapes.
#include <gtest/gtest.h>

#include "io_test_util.hpp"
#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/core/random.hpp"
#include "xenc/io/npz.hpp"
#include "xenc/io/state_dict.hpp"
#include "xenc/nn/optim.hpp"

using namespace xenc_test;

namespace {

// Every parameter random (the default init has norm weights 1 and zero biases, which would not
// show two parameters swapped).
void randomize(xenc::Module& m, std::uint32_t seed) {
  xenc::Rng rng(seed);
  for (auto& p : m.parameters())
    for (std::size_t i = 0; i < p.size(); ++i) p.value[i] = rng.uniform(-1.0f, 1.0f);
}

xenc::Tensor3 random_input(std::size_t B, std::size_t T, std::size_t D, std::uint32_t seed) {
  xenc::Rng rng(seed);
  xenc::Tensor3 x = xenc::Tensor3::from_shape({B, T, D});
  xenc::fill_normal(x, rng);
  return x;
}

xenc::EncoderLayerConfig small_config(bool norm_first, xenc::Activation act) {
  xenc::EncoderLayerConfig c;
  c.d_model = 8;
  c.nhead = 2;
  c.dim_feedforward = 12;
  c.dropout = 0.0f;
  c.activation = act;
  c.norm_first = norm_first;
  c.layer_norm_eps = 1e-6f;
  return c;
}

// tests/io/data/post_relu_l2_h2.npz: nn.TransformerEncoder, 2 layers, D = 8, H = 2, F = 16.
const std::string kStack = "post_relu_l2_h2.npz";

}  // namespace

TEST(StateDictInfo, StackWithAndWithoutFinalNorm) {
  const auto s = xenc::load_npz(data_path(kStack));
  EXPECT_EQ(s.size(), 2u * 12u);  // 12 tensors per layer, as PyTorch's state_dict
  auto info = xenc::inspect_encoder_state(s);
  EXPECT_EQ(info.num_layers, 2u);
  EXPECT_EQ(info.d_model, 8u);
  EXPECT_EQ(info.dim_feedforward, 16u);
  EXPECT_FALSE(info.final_norm);
  EXPECT_FALSE(info.single_layer);
  info = xenc::inspect_encoder_state(xenc::load_npz(data_path("pre_gelu_l6_h8_final.npz")));
  EXPECT_EQ(info.num_layers, 6u);
  EXPECT_TRUE(info.final_norm);
}

TEST(StateDictInfo, SingleLayerGivesOneLayerEncoder) {
  const auto s = xenc::load_npz(data_path("layer_post_relu_h2.npz"));
  EXPECT_EQ(s.count("self_attn.in_proj_weight"), 1u);
  const auto info = xenc::inspect_encoder_state(s);
  EXPECT_TRUE(info.single_layer);
  EXPECT_EQ(info.num_layers, 1u);
  auto enc = xenc::load_transformer_encoder(s, 2);
  EXPECT_EQ(enc.num_layers(), 1u);
  EXPECT_FALSE(enc.norm);
  EXPECT_EQ(enc.layers[0].linear1.weight, s.at("linear1.weight"));
}

// save -> load gives the same parameters, bit for bit, and the same outputs.
TEST(StateDictRoundTrip, EncoderParametersAndOutputsIdentical) {
  for (bool norm_first : {false, true}) {
    for (bool compressed : {false, true}) {
      SCOPED_TRACE(std::string(norm_first ? "pre-norm" : "post-norm") +
                   (compressed ? ", deflated" : ", stored"));
      const auto cfg = small_config(norm_first, xenc::Activation::gelu);
      xenc::TransformerEncoder a(cfg, 3, /*final_norm=*/true, /*seed=*/11);
      randomize(a, 5);
      const std::string path = tmp_path("roundtrip.npz");
      xenc::save_state_dict(path, a, compressed);

      const xenc::StateDict loaded = xenc::load_npz(path);
      const xenc::StateDict original = a.state_dict();
      ASSERT_EQ(loaded.size(), original.size());
      for (const auto& kv : original) EXPECT_EQ(loaded.at(kv.first), kv.second) << kv.first;

      auto b = xenc::load_transformer_encoder(path, cfg.nhead, cfg.activation, cfg.norm_first,
                                              cfg.layer_norm_eps);
      EXPECT_EQ(b.num_layers(), 3u);
      ASSERT_TRUE(b.norm);
      const auto x = random_input(2, 5, 8, 3);
      xenc::Mask2 mask{{false, false, false, true, true}, {false, false, false, false, false}};
      const xenc::Tensor3 ya = a.forward(x, mask), yb = b.forward(x, mask);
      EXPECT_EQ(ya, yb);
    }
  }
}

TEST(StateDictRoundTrip, MultiheadAttention) {
  xenc::MultiheadAttention a(12, 3, 0.0f, true, 4);
  randomize(a, 9);
  xenc::save_state_dict(tmp_path("mha.npz"), a);
  auto b = xenc::load_multihead_attention(xenc::load_npz(tmp_path("mha.npz")), 3, "mha.npz");
  EXPECT_EQ(b.in_proj_weight, a.in_proj_weight);
  EXPECT_EQ(b.out_proj.bias, a.out_proj.bias);
  const auto x = random_input(2, 4, 12, 8);
  EXPECT_EQ(a.forward(x), b.forward(x));
}

// ---- key errors: file, key, both shapes ------------------------------------------------------

TEST(StateDictErrors, MissingKey) {
  auto s = xenc::load_npz(data_path(kStack));
  s.erase("layers.1.norm2.bias");
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_transformer_encoder(s, 2, xenc::Activation::relu, false, 1e-5f, "w.npz"); },
      {"load_transformer_encoder: w.npz", "missing key \"layers.1.norm2.bias\"",
       "expected shape [D] = [8]"}));
  // a layer index that skips one: layers.2 exists, so layers.2's other keys are missing
  s = xenc::load_npz(data_path(kStack));
  s["layers.2.norm1.weight"] = xt::ones<float>({8});
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_transformer_encoder(s, 2); },
      {"missing key \"layers.2.self_attn.in_proj_weight\"", "[3D, D] = [24, 8]"}));
}

TEST(StateDictErrors, UnexpectedKey) {
  auto s = xenc::load_npz(data_path(kStack));
  s["layers.0.self_attn.bias_k"] = xt::zeros<float>({1, 1, 8});
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_transformer_encoder(s, 2); },
      {"unexpected key \"layers.0.self_attn.bias_k\"", "shape [1, 1, 8]"}));
  s = xenc::load_npz(data_path(kStack));
  s["decoder.weight"] = xt::zeros<float>({4});
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_transformer_encoder(s, 2); },
                                         {"unexpected key \"decoder.weight\"", "[4]"}));
  s = xenc::load_npz(data_path(kStack));
  s["layers.x.norm1.weight"] = xt::zeros<float>({8});
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_transformer_encoder(s, 2); },
                                         {"unexpected key \"layers.x.norm1.weight\"", "[8]"}));
}

TEST(StateDictErrors, WronglyShapedKey) {
  auto s = xenc::load_npz(data_path(kStack));
  s["layers.1.linear2.weight"] = xt::zeros<float>({16, 8});  // transposed
  EXPECT_TRUE(ThrowsWith<xenc::shape_error>(
      [&] { xenc::load_transformer_encoder(s, 2, xenc::Activation::relu, false, 1e-5f, "w.npz"); },
      {"w.npz", "key \"layers.1.linear2.weight\" has shape [16, 8], expected [D, F] = [8, 16]"}));
  s = xenc::load_npz(data_path(kStack));
  s["layers.0.self_attn.in_proj_weight"] = xt::zeros<float>({8, 8});
  EXPECT_TRUE(ThrowsWith<xenc::shape_error>(
      [&] { xenc::load_transformer_encoder(s, 2); },
      {"key \"layers.0.self_attn.in_proj_weight\" has shape [8, 8], expected [3D, D]"}));
  s = xenc::load_npz(data_path(kStack));
  s["layers.0.linear1.weight"] = xt::zeros<float>({16, 6});
  EXPECT_TRUE(ThrowsWith<xenc::shape_error>(
      [&] { xenc::load_transformer_encoder(s, 2); },
      {"key \"layers.0.linear1.weight\" has shape [16, 6], expected [F, D] with D = 8"}));
  s = xenc::load_npz(data_path(kStack));
  s["layers.1.linear1.bias"] = xt::zeros<float>({12});
  EXPECT_TRUE(ThrowsWith<xenc::shape_error>(
      [&] { xenc::load_transformer_encoder(s, 2); },
      {"key \"layers.1.linear1.bias\" has shape [12], expected [F] = [16]"}));
}

TEST(StateDictErrors, FileNameInMessages) {
  auto s = xenc::load_npz(data_path(kStack));
  s.erase("layers.0.linear1.bias");
  const std::string path = tmp_path("missing_key.npz");
  xenc::save_npz(path, s);
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_transformer_encoder(path, 2); },
                                         {"load_transformer_encoder: " + path,
                                          "missing key \"layers.0.linear1.bias\"", "[F] = [16]"}));
}

TEST(StateDictErrors, HeadsMustDivideD) {
  const auto s = xenc::load_npz(data_path(kStack));
  EXPECT_TRUE(ThrowsWith<xenc::config_error>(
      [&] { xenc::load_transformer_encoder(s, 3); },
      {"d_model (8, from in_proj_weight) must be divisible by nhead (3)"}));
}

TEST(StateDictErrors, NotAnEncoder) {
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_transformer_encoder(xenc::StateDict{}, 2); }, {"has no keys"}));
  xenc::StateDict s{{"weight", xt::zeros<float>({3, 3})}};
  EXPECT_TRUE(
      ThrowsWith<xenc::io_error>([&] { xenc::load_transformer_encoder(s, 1); },
                                 {"missing key \"self_attn.in_proj_weight\"", "keys: weight"}));
  // a stack's file read as a MultiheadAttention
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_multihead_attention(xenc::load_npz(data_path(kStack)), 2, kStack); },
      {"load_multihead_attention", kStack, "missing key \"in_proj_weight\""}));
}

TEST(StateDictErrors, FailedLoadLeavesModuleUnchanged) {
  xenc::TransformerEncoder enc(small_config(false, xenc::Activation::relu), 1, false, 2);
  const auto before = enc.state_dict();
  auto s = before;
  for (auto& kv : s) kv.second += 1.0f;
  s.erase("layers.0.norm2.weight");
  EXPECT_THROW(enc.load_state_dict(s, true, "test: s"), xenc::io_error);
  const auto after = enc.state_dict();
  for (const auto& kv : before) EXPECT_EQ(after.at(kv.first), kv.second) << kv.first;
}

// Weights trained in xencoder (Adam holding parameters() views across steps) save and load
// identically. Regression: backward used to accumulate gradients with `grad += g`, which in
// xtensor assigns through a temporary and swaps buffers, leaving ParameterRef.grad dangling.
TEST(StateDictRoundTrip, TrainedWeights) {
  xenc::TransformerEncoder enc(small_config(true, xenc::Activation::relu), 2, true, 21);
  const auto params = enc.parameters();
  xenc::Adam adam(params, 1e-2f);
  enc.train();
  const auto x = random_input(2, 4, 8, 6);
  for (int step = 0; step < 3; ++step) {
    adam.zero_grad();
    const xenc::Tensor3 y = enc.forward(x);
    enc.backward(xenc::Tensor3(y - x));
    adam.step();
  }
  enc.eval();
  const auto now = enc.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(now[i].value, params[i].value) << params[i].name;
    EXPECT_EQ(now[i].grad, params[i].grad) << params[i].name << ": gradient buffer moved";
  }
  const xenc::StateDict trained = enc.state_dict();
  EXPECT_NE(trained.at("layers.0.norm1.weight"), xt::xarray<float>(xt::ones<float>({8})));
  xenc::save_state_dict(tmp_path("trained.npz"), enc, true);
  auto back = xenc::load_transformer_encoder(tmp_path("trained.npz"), 2, xenc::Activation::relu,
                                             true, 1e-6f);
  for (const auto& kv : back.state_dict()) EXPECT_EQ(kv.second, trained.at(kv.first)) << kv.first;
  EXPECT_EQ(back.forward(x), enc.forward(x));
}

// The snippet of apps/encode/README.md, on the app_b fixture (PyTorch: 3 layers, relu, post-norm).
TEST(ReadmeExample, LoadRunSave) {
  xenc::TransformerEncoder enc =
      xenc::load_transformer_encoder(data_path("app_b.npz"), /*nhead=*/2, xenc::Activation::relu,
                                     /*norm_first=*/false, /*layer_norm_eps=*/1e-5f);
  xt::xarray<float> x = xenc::load_npy(data_path("app_b_x.npy"));         // [B, T, D]
  xt::xarray<bool> m = xenc::load_npy_bool(data_path("app_b_mask.npy"));  // [B, T]
  xenc::Tensor3 y = enc.forward(xenc::Tensor3(x), xenc::Mask2(m));
  xenc::save_npy(tmp_path("readme_y.npy"), y);
  std::vector<bool> keep(m.size());
  for (std::size_t i = 0; i < m.size(); ++i) keep[i] = !m.data()[i];
  EXPECT_TRUE(AllClose(xenc::load_npy(tmp_path("readme_y.npy")),
                       xenc::load_npy(data_path("app_b_y.npy")), kParityTol, keep));
  xenc::save_state_dict(tmp_path("readme_trained.npz"), enc, /*compressed=*/true);
  EXPECT_EQ(xenc::load_npz(tmp_path("readme_trained.npz")).size(), 3u * 12u);
}

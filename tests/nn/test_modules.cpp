// The small modules (Linear, LayerNorm, Embedding) and the Module base: parameters by name,
// gradient accumulation, state_dict and load_state_dict.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/helpers.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/nn/embedding.hpp"
#include "xenc/nn/encoder_model.hpp"
#include "xenc/nn/layer_norm.hpp"
#include "xenc/nn/linear.hpp"
#include "xenc/nn/transformer_encoder.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
using Shape3 = std::array<std::size_t, 3>;
}  // namespace

// ---- Linear ----------------------------------------------------------------------------

// W = [[1, 2]], b = [3]: x = [[[1, 1]], [[2, 0]]] -> y = [[[1 + 2 + 3]], [[2 + 0 + 3]]] = [[[6]],
// [[5]]]
TEST(NnLinear, HandExampleAndPyTorchInitialisationBounds) {
  Linear lin(2, 1);
  lin.weight = Tensor2{{1, 2}};
  lin.bias = Tensor1{3};
  EXPECT_TRUE(AllClose(lin.forward(Tensor3{{{1, 1}}, {{2, 0}}}), Tensor3{{{6}}, {{5}}}, 0.0, 0.0));
  Linear big(16, 32, true, 9);
  EXPECT_LE(xt::amax(xt::abs(big.weight))(), 0.25f);  // U(-1/√16, 1/√16)
  EXPECT_LE(xt::amax(xt::abs(big.bias))(), 0.25f);
  EXPECT_GT(xt::amax(xt::abs(big.weight))(), 0.2f);
  EXPECT_FALSE(Linear(3, 4, false).has_bias());
  EXPECT_EQ(Linear(3, 4, false).parameters().size(), 1u);
}

TEST(NnLinear, GradientsMatchFiniteDifferencesFor2DAnd3DInputs) {
  Rng rng(60);
  Linear lin(5, 4, rng);
  auto x3 = random_tensor<Tensor3>(Shape3{2, 3, 5}, rng);
  auto G3 = random_tensor<Tensor3>(Shape3{2, 3, 4}, rng);
  lin.zero_grad();
  lin.forward(x3);
  const Tensor3 dx3 = lin.backward(G3);
  auto targets = parameter_targets(lin);
  targets.push_back(input_target("x", x3, dx3));
  EXPECT_TRUE(GradientsMatch([&] { return dot_loss(lin.forward(x3), G3); }, targets, kGradOp));

  auto x2 = random_tensor<Tensor2>(std::array<std::size_t, 2>{3, 5}, rng);
  auto G2 = random_tensor<Tensor2>(std::array<std::size_t, 2>{3, 4}, rng);
  lin.zero_grad();
  lin.forward(x2);
  const Tensor2 dx2 = lin.backward(G2);
  targets = parameter_targets(lin);
  targets.push_back(input_target("x", x2, dx2));
  EXPECT_TRUE(GradientsMatch([&] { return dot_loss(lin.forward(x2), G2); }, targets, kGradOp));
}

TEST(NnLinear, BackwardAccumulatesParameterGradients) {
  Rng rng(61);
  Linear lin(3, 2, rng);
  auto x = random_tensor<Tensor3>(Shape3{1, 4, 3}, rng);
  auto G = random_tensor<Tensor3>(Shape3{1, 4, 2}, rng);
  lin.zero_grad();
  lin.forward(x);
  lin.backward(G);
  const Tensor2 once = lin.weight_grad;
  lin.backward(G);
  EXPECT_TRUE(AllClose(lin.weight_grad, Tensor2(2.0f * once), kAccumulateAtol, kAccumulateRtol));
  lin.zero_grad();
  EXPECT_EQ(xt::amax(xt::abs(lin.weight_grad))(), 0.0f);
}

TEST(NnLinear, ErrorsNameTheFunctionAndShapes) {
  Linear lin(5, 4);
  std::string msg = what_of([&] { lin.forward(Tensor3(xt::zeros<float>({2, 3, 6}))); });
  EXPECT_NE(msg.find("Linear.forward: x has shape [2, 3, 6]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("in = 5"), std::string::npos) << msg;
  msg = what_of([&] { lin.backward(Tensor3(xt::zeros<float>({2, 3, 4}))); });
  EXPECT_NE(msg.find("Linear.backward"), std::string::npos) << msg;
  lin.forward(Tensor3(xt::zeros<float>({2, 3, 5})));
  msg = what_of([&] { lin.backward(Tensor3(xt::zeros<float>({2, 2, 4}))); });
  EXPECT_NE(msg.find("[2, 2, 4]"), std::string::npos) << msg;
  EXPECT_THROW(Linear(0, 3), config_error);
}

// ---- LayerNorm -------------------------------------------------------------------------

TEST(NnLayerNorm, StartsAsPlainNormalisationAndMatchesFiniteDifferences) {
  LayerNorm ln(6);
  EXPECT_TRUE(AllClose(ln.weight, Tensor1(xt::ones<float>({6})), 0.0, 0.0));
  EXPECT_TRUE(AllClose(ln.bias, Tensor1(xt::zeros<float>({6})), 0.0, 0.0));
  Rng rng(62);
  for (auto& v : ln.weight) v += 0.3f * rng.normal();
  for (auto& v : ln.bias) v = 0.3f * rng.normal();
  auto x = random_tensor<Tensor3>(Shape3{2, 3, 6}, rng);
  auto G = random_tensor<Tensor3>(x.shape(), rng);
  ln.zero_grad();
  ln.forward(x);
  const Tensor3 dx = ln.backward(G);
  auto targets = parameter_targets(ln);
  targets.push_back(input_target("x", x, dx));
  EXPECT_TRUE(GradientsMatch([&] { return dot_loss(ln.forward(x), G); }, targets, kGradOp));
  const std::string msg = what_of([&] { ln.forward(Tensor3(xt::zeros<float>({2, 3, 5}))); });
  EXPECT_NE(msg.find("LayerNorm.forward: x has shape [2, 3, 5]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("D = 6"), std::string::npos) << msg;
}

// ---- Embedding -------------------------------------------------------------------------

TEST(NnEmbedding, PaddingRowStartsAtZeroAndGetsNoGradient) {
  Rng rng(63);
  Embedding emb(6, 4, rng, 0);
  for (std::size_t d = 0; d < 4; ++d) EXPECT_EQ(emb.weight(0, d), 0.0f);
  const Index2 ids = {{0, 3, 3}, {5, 0, 2}};
  auto G = random_tensor<Tensor3>(Shape3{2, 3, 4}, rng);
  emb.zero_grad();
  emb.forward(ids);
  emb.backward(G);
  for (std::size_t d = 0; d < 4; ++d) {
    EXPECT_EQ(emb.weight_grad(0, d), 0.0f);
    EXPECT_FLOAT_EQ(emb.weight_grad(3, d), G(0, 1, d) + G(0, 2, d));
  }
}

TEST(NnEmbedding, GradientMatchesFiniteDifferences) {
  Rng rng(64);
  Embedding emb(6, 4, rng);
  const Index2 ids = {{1, 3, 3}, {5, 0, 2}};
  auto G = random_tensor<Tensor3>(Shape3{2, 3, 4}, rng);
  emb.zero_grad();
  emb.forward(ids);
  emb.backward(G);
  EXPECT_TRUE(GradientsMatch([&] { return dot_loss(emb.forward(ids), G); }, parameter_targets(emb),
                             kGradOp));
}

TEST(NnEmbedding, OutOfRangeTokenIdIsAClearError) {
  Embedding emb(5, 2);
  const std::string msg = what_of([&] { emb.forward(Index2{{1, 2}, {7, 0}}); });
  EXPECT_NE(msg.find("ids[1, 0] is 7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("V = 5"), std::string::npos) << msg;
  EXPECT_THROW(emb.forward(Index2{{-3}}), xenc::index_error);
  EXPECT_THROW(Embedding(5, 2, 5), config_error);  // padding_idx must be < V
}

// ---- Module base: state_dict / load_state_dict -------------------------------------------

namespace {
EncoderLayerConfig layer_config() {
  EncoderLayerConfig c;
  c.d_model = 8;
  c.nhead = 2;
  c.dim_feedforward = 16;
  return c;
}
}  // namespace

TEST(Module, StateDictRoundTripsBetweenModules) {
  TransformerEncoderLayer a(layer_config(), 1), b(layer_config(), 2);
  EXPECT_GT(max_abs_diff(a.linear1.weight, b.linear1.weight), 0.0);
  b.load_state_dict(a.state_dict());
  for (const auto& kv : a.state_dict())
    EXPECT_TRUE(AllClose(b.state_dict().at(kv.first), kv.second, 0.0, 0.0)) << kv.first;
  EXPECT_EQ(a.num_parameters(), 3u * 64 + 24 + 64 + 8 + 128 + 16 + 128 + 8 + 4 * 8);
  // a state_dict is a copy, not a view
  StateDict s = a.state_dict();
  s.at("norm1.bias").fill(5.0f);
  EXPECT_EQ(a.norm1.bias(0), 0.0f);
}

TEST(Module, LoadStateDictNamesTheMissingUnexpectedOrMisshapenKey) {
  TransformerEncoderLayer layer(layer_config());
  const StateDict good = layer.state_dict();
  const Tensor2 before = layer.linear1.weight;

  StateDict missing = good;
  missing.erase("norm1.bias");
  std::string msg = what_of([&] { layer.load_state_dict(missing); });
  EXPECT_NE(msg.find("load_state_dict"), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing key \"norm1.bias\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("[8]"), std::string::npos) << msg;
  EXPECT_THROW(layer.load_state_dict(missing), std::invalid_argument);

  StateDict unexpected = good;
  unexpected.emplace("norm3.weight", xt::xarray<float>(xt::ones<float>({8})));
  msg = what_of([&] { layer.load_state_dict(unexpected); });
  EXPECT_NE(msg.find("unexpected key \"norm3.weight\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("[8]"), std::string::npos) << msg;
  EXPECT_NO_THROW(layer.load_state_dict(unexpected, /*strict=*/false));

  StateDict wrong = good;
  wrong["linear1.weight"] = xt::xarray<float>(xt::ones<float>({16, 7}));
  wrong["linear2.weight"] =
      xt::xarray<float>(xt::ones<float>({8, 16}));  // valid, must not be applied
  msg = what_of([&] { layer.load_state_dict(wrong); });
  EXPECT_NE(msg.find("\"linear1.weight\" has shape [16, 7], expected [F, D] = [16, 8]"),
            std::string::npos)
      << msg;
  EXPECT_THROW(layer.load_state_dict(wrong), shape_error);
  // a failed load leaves the module unchanged
  EXPECT_TRUE(AllClose(layer.linear1.weight, before, 0.0, 0.0));
  EXPECT_TRUE(AllClose(layer.linear2.weight, good.at("linear2.weight"), 0.0, 0.0));
}

TEST(Module, StartsInEvalModeAndTrainPropagates) {
  TransformerEncoder enc(layer_config(), 2, true);
  EXPECT_FALSE(enc.is_training());
  enc.train();
  EXPECT_TRUE(enc.layers[1].self_attn.is_training());
  EXPECT_TRUE(enc.layers[0].linear2.is_training());
  EXPECT_TRUE(enc.norm->is_training());
  enc.eval();
  EXPECT_FALSE(enc.layers[1].self_attn.out_proj.is_training());
}

// grad_mode.hpp: "Inside a NoGradGuard scope forward keeps nothing ... backward then throws."
// A backward after a no-grad forward must not silently reuse the cache of an older forward.
TEST(Module, BackwardAfterANoGradForwardThrowsInsteadOfUsingAStaleCache) {
  Rng rng(65);
  Linear lin(3, 2, rng);
  LayerNorm ln(3);
  Embedding emb(4, 3, rng);
  const Tensor3 x = random_tensor<Tensor3>(Shape3{1, 2, 3}, rng);
  const Index2 ids = {{1, 2}};
  lin.forward(x);  // with gradients: caches x
  ln.forward(x);
  emb.forward(ids);
  {
    NoGradGuard guard;
    lin.forward(x);
    ln.forward(x);
    emb.forward(ids);
  }
  EXPECT_THROW(lin.backward(Tensor3(xt::ones<float>({1, 2, 2}))), std::logic_error);
  EXPECT_THROW(ln.backward(Tensor3(xt::ones<float>({1, 2, 3}))), std::logic_error);
  EXPECT_THROW(emb.backward(Tensor3(xt::ones<float>({1, 2, 3}))), std::logic_error);
  const std::string msg = what_of([&] { lin.backward(Tensor3(xt::ones<float>({1, 2, 2}))); });
  EXPECT_NE(msg.find("Linear.backward"), std::string::npos) << msg;
  EXPECT_NE(msg.find("NoGradGuard"), std::string::npos) << msg;
}

// Optimisers keep the ParameterRef pointers from parameters() for the whole training run, so
// forward and backward must update values and gradients in place, never reallocate them.
TEST(Module, ParameterAndGradientBuffersStayPutThroughForwardAndBackward) {
  Rng rng(66);
  EncoderModelConfig cfg;
  cfg.vocab_size = 6;
  cfg.layer = layer_config();
  cfg.layer.dropout = 0.0f;
  cfg.num_layers = 1;
  cfg.position = PositionKind::learned;
  cfg.max_len = 4;
  cfg.final_norm = true;
  EncoderModel model(cfg);
  Linear head(8, 3, rng);
  const ParameterList before = model.parameters();
  const ParameterList head_before = head.parameters();
  const Index2 ids = {{2, 3, 4}};
  model.zero_grad();
  const Tensor3 y = model.forward(ids);
  head.forward(y);
  model.backward(head.backward(Tensor3(xt::ones<float>({1, 3, 3}))));
  const ParameterList after = model.parameters();
  const ParameterList head_after = head.parameters();
  ASSERT_EQ(before.size(), after.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(before[i].value, after[i].value) << before[i].name;
    EXPECT_EQ(before[i].grad, after[i].grad)
        << before[i].name << " gradient buffer was reallocated";
  }
  for (std::size_t i = 0; i < head_before.size(); ++i)
    EXPECT_EQ(head_before[i].grad, head_after[i].grad) << "head " << head_before[i].name;
}

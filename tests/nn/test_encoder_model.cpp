// EncoderModel (embedding -> × √D -> position scheme -> encoder) and the position schemes.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include <xtensor/xview.hpp>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/helpers.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/nn/encoder_model.hpp"
#include "xenc/ops/positional.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
EncoderModelConfig small_model(PositionKind position) {
  EncoderModelConfig c;
  c.vocab_size = 9;
  c.layer.d_model = 8;
  c.layer.nhead = 2;
  c.layer.dim_feedforward = 16;
  c.layer.dropout = 0.0f;
  c.layer.activation = Activation::gelu;
  c.num_layers = 2;
  c.position = position;
  c.max_len = 6;
  c.seed = 3;
  return c;
}

}  // namespace

// The first two stages by hand: with scale_embedding, stage 1 is weight[id] · √8, and stage 2
// adds PE(t) for sinusoidal positions; e.g. at t = 1 dimension 0 gains sin(1) = 0.84147098.
TEST(EncoderModel, TraceShowsEmbeddingScalingAndPositions) {
  EncoderModelConfig cfg = small_model(PositionKind::sinusoidal);
  cfg.scale_embedding = true;
  EncoderModel model(cfg);
  const Index2 ids = {{4, 2, 7}};
  ModelTrace trace;
  const Tensor3 y = model.forward(ids, Mask2(), &trace);
  const float s = std::sqrt(8.0f);
  for (std::size_t t = 0; t < 3; ++t)
    for (std::size_t d = 0; d < 8; ++d) {
      EXPECT_FLOAT_EQ(trace.token_embedding(0, t, d), model.embedding.weight(ids(0, t), d) * s);
      EXPECT_NEAR(trace.with_positions(0, t, d),
                  trace.token_embedding(0, t, d) + sinusoidal_value(double(t), d, 8), kOpAtol);
    }
  EXPECT_NEAR(trace.with_positions(0, 1, 0) - trace.token_embedding(0, 1, 0), 0.84147098, kOpAtol);
  ASSERT_EQ(trace.encoder.layer_outputs.size(), 2u);
  EXPECT_TRUE(AllClose(trace.encoder.layer_outputs[1], y, 0.0, 0.0));  // no final norm
}

TEST(EncoderModel, StateDictNamesAndPaddingRow) {
  EncoderModel model(small_model(PositionKind::learned));
  const StateDict s = model.state_dict();
  EXPECT_EQ(shape_str(s.at("embedding.weight").shape()), "[9, 8]");
  EXPECT_EQ(shape_str(s.at("position.weight").shape()), "[6, 8]");
  EXPECT_EQ(shape_str(s.at("encoder.layers.1.self_attn.in_proj_weight").shape()), "[24, 8]");
  EXPECT_EQ(s.count("encoder.norm.weight"), 0u);
  for (std::size_t d = 0; d < 8; ++d) EXPECT_EQ(model.embedding.weight(0, d), 0.0f);  // <pad>
  EXPECT_EQ(EncoderModel(small_model(PositionKind::none)).state_dict().count("position.weight"),
            0u);
}

// Seeded initialisation: the same seed gives the same numbers, another seed others.
TEST(EncoderModel, SameSeedGivesTheSameModel) {
  const StateDict a = EncoderModel(small_model(PositionKind::learned)).state_dict();
  const StateDict b = EncoderModel(small_model(PositionKind::learned)).state_dict();
  EncoderModelConfig other = small_model(PositionKind::learned);
  other.seed = 4;
  const StateDict c = EncoderModel(other).state_dict();
  for (const auto& kv : a) {
    EXPECT_TRUE(AllClose(kv.second, b.at(kv.first), 0.0, 0.0)) << kv.first;
    if (kv.first.find("bias") == std::string::npos && kv.first.find("norm") == std::string::npos)
      EXPECT_GT(max_abs_diff(kv.second, c.at(kv.first)), 0.0) << kv.first;
  }
}

// Every parameter, with learned positions, × √D, a final norm and a padded sentence.
TEST(EncoderModel, GradientsMatchFiniteDifferences) {
  for (PositionKind kind : {PositionKind::learned, PositionKind::sinusoidal}) {
    SCOPED_TRACE(to_string(kind));
    EncoderModelConfig cfg = small_model(kind);
    cfg.scale_embedding = true;
    cfg.final_norm = true;
    cfg.layer.norm_first = kind == PositionKind::learned;
    EncoderModel model(cfg);
    Rng rng(50);
    for (auto& p : model.parameters())  // random biases and norms too
      if (p.name.find("embedding") == std::string::npos &&
          p.name.find("position") == std::string::npos)
        for (std::size_t i = 0; i < p.size(); ++i) p.value[i] += 0.3f * rng.normal();
    const Index2 ids = {{3, 5, 2, 8, 3}, {7, 1, 4, 0, 0}};
    const Mask2 kpm = {{false, false, false, false, false}, {false, false, false, true, true}};
    auto G = random_tensor<Tensor3>(std::array<std::size_t, 3>{2, 5, 8}, rng);
    for (std::size_t t = 3; t < 5; ++t)
      for (std::size_t d = 0; d < 8; ++d) G(1, t, d) = 0.0f;  // the loss ignores padding
    model.zero_grad();
    model.forward(ids, kpm);
    model.backward(G);
    auto loss = [&] { return dot_loss(model.forward(ids, kpm), G); };
    EXPECT_TRUE(GradientsMatch(loss, parameter_targets(model), kGradModule));
  }
}

// The headline lesson: without position information the model cannot see word order.
TEST(EncoderModel, WithoutPositionsItIsPermutationEquivariantWithPositionsItIsNot) {
  const std::vector<std::size_t> perm = {2, 0, 4, 1, 3};
  const Index2 ids = {{3, 5, 2, 8, 6}, {7, 1, 4, 2, 2}};
  for (PositionKind kind : {PositionKind::none, PositionKind::sinusoidal, PositionKind::learned}) {
    SCOPED_TRACE(to_string(kind));
    EncoderModelConfig cfg = small_model(kind);
    cfg.final_norm = true;
    EncoderModel model(cfg);
    const Tensor3 y = model.forward(ids);
    const Tensor3 y_perm = model.forward(permute_time(ids, perm));
    const double err = max_abs_diff(y_perm, permute_time(y, perm));
    if (kind == PositionKind::none)
      EXPECT_LT(err, kEquivariance);
    else
      EXPECT_GT(err, kNotEquivariant);
  }
}

TEST(PositionSchemes, SinusoidalHasNoMaximumLengthAndLearnedHasOne) {
  Rng rng(1);
  SinusoidalPosition sin_pos(8);
  const Tensor3 x = xt::zeros<float>({1, 3, 8});
  EXPECT_TRUE(
      AllClose(Tensor2(xt::view(sin_pos.forward(x), 0)), sinusoidal_encoding(3, 8), 0.0, 0.0));
  const Tensor3 long_x = xt::zeros<float>({1, 700, 8});
  EXPECT_TRUE(AllClose(Tensor2(xt::view(sin_pos.forward(long_x), 0)), sinusoidal_encoding(700, 8),
                       0.0, 0.0));
  EXPECT_TRUE(
      AllClose(Tensor2(xt::view(sin_pos.forward(x), 0)), sinusoidal_encoding(3, 8), 0.0, 0.0));

  LearnedPosition learned(4, 8, rng);
  const std::string msg = what_of([&] { learned.forward(Tensor3(xt::zeros<float>({2, 5, 8}))); });
  EXPECT_NE(msg.find("LearnedPosition.forward: x has shape [2, 5, 8]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("max_len = 4"), std::string::npos) << msg;
  // dweight[t] = Σ_b dy[b, t]; the input gradient passes through
  learned.zero_grad();
  const Tensor3 g = xt::ones<float>({2, 3, 8});
  EXPECT_TRUE(AllClose(learned.backward(g), g, 0.0, 0.0));
  EXPECT_EQ(learned.weight_grad(2, 5), 2.0f);
  EXPECT_EQ(learned.weight_grad(3, 5), 0.0f);
  // the backward checks its gradient as the forward checks x: a wrong D or a T beyond max_len
  // is named, not read out of bounds
  std::string bad = what_of([&] { learned.backward(Tensor3(xt::zeros<float>({2, 3, 7}))); });
  EXPECT_NE(bad.find("LearnedPosition.backward: grad_y has shape [2, 3, 7], expected [B, T, D] "
                     "with D = 8"),
            std::string::npos)
      << bad;
  bad = what_of([&] { learned.backward(Tensor3(xt::zeros<float>({1, 5, 8}))); });
  EXPECT_NE(bad.find("LearnedPosition.backward: grad_y has shape [1, 5, 8], expected [B, T, D] "
                     "with T <= max_len = 4"),
            std::string::npos)
      << bad;
}

TEST(PositionSchemes, ConfigurationErrorsAreClear) {
  std::string msg = what_of([] { SinusoidalPosition p(7); });
  EXPECT_NE(msg.find("SinusoidalPosition: d_model is 7"), std::string::npos) << msg;
  EXPECT_THROW(SinusoidalPosition(7), config_error);
  EncoderModelConfig cfg = small_model(PositionKind::sinusoidal);
  cfg.layer.d_model = 7;
  cfg.layer.nhead = 1;
  msg = what_of([&] { EncoderModel m(cfg); });
  EXPECT_NE(msg.find("EncoderModel"), std::string::npos) << msg;
  EXPECT_NE(msg.find("d_model is 7"), std::string::npos) << msg;
  cfg.position = PositionKind::none;  // odd D is fine without sinusoids
  EXPECT_NO_THROW(EncoderModel{cfg});
  msg = what_of([] { parse_position_kind("rotary"); });
  EXPECT_NE(msg.find("\"rotary\""), std::string::npos) << msg;
  EXPECT_EQ(parse_position_kind("learned"), PositionKind::learned);
  EncoderModel model(small_model(PositionKind::none));
  msg = what_of([&] { model.forward(Index2{{1, 9}}); });
  EXPECT_NE(msg.find("is 9"), std::string::npos) << msg;
  EXPECT_NE(msg.find("V = 9"), std::string::npos) << msg;
}

namespace {
// A scheme acting inside attention, for the test only: the identity on the embeddings and a
// per-head score bias that prefers earlier keys (enough to break permutation equivariance).
struct EarlierKeysBias : PositionScheme, AttentionPosition {
  PositionKind kind() const override { return PositionKind::none; }
  Tensor3 forward(const Tensor3& x) override { return x; }
  Tensor3 backward(const Tensor3& grad_y) override { return grad_y; }
  void collect_parameters(const std::string&, ParameterList&) override {}
  const AttentionPosition* attention_position() const override { return this; }
  bool has_score_bias() const override { return true; }
  Tensor2 score_bias(std::size_t h, std::size_t, std::size_t Tq, std::size_t Tk) const override {
    Tensor2 s = Tensor2::from_shape({Tq, Tk});
    for (std::size_t i = 0; i < Tq; ++i)
      for (std::size_t j = 0; j < Tk; ++j) s(i, j) = -0.5f * float(h + 1) * float(j);
    return s;
  }
};
}  // namespace

// The model asks its scheme for an attention hook and hands it to every self-attention, so a
// scheme acting inside attention needs no change to the modules.
TEST(PositionSchemes, ASchemeActingInAttentionReachesEverySelfAttention) {
  EncoderModelConfig cfg;
  cfg.vocab_size = 10;
  cfg.layer.d_model = 8;
  cfg.layer.nhead = 2;
  cfg.layer.dim_feedforward = 16;
  cfg.layer.dropout = 0.0f;
  cfg.num_layers = 2;
  cfg.position = PositionKind::none;
  cfg.seed = 3;
  EncoderModel model(cfg);
  EXPECT_FALSE(model.position->acts_in_attention());
  const Index2 ids = {{1, 2, 3, 4}}, swapped = {{3, 2, 1, 4}};
  const Tensor3 plain = model.forward(ids);
  for (const auto& layer : model.encoder.layers) EXPECT_EQ(layer.self_attn.position(), nullptr);

  auto scheme = std::make_unique<EarlierKeysBias>();
  const AttentionPosition* hook = scheme.get();
  model.position = std::move(scheme);
  EXPECT_TRUE(model.position->acts_in_attention());
  const Tensor3 y = model.forward(ids);
  for (const auto& layer : model.encoder.layers) EXPECT_EQ(layer.self_attn.position(), hook);
  EXPECT_GT(xt::amax(xt::abs(y - plain))(), kNotEquivariant);
  // without positions, swapping tokens 0 and 2 swaps their outputs; with the bias it does not
  const Tensor3 ys = model.forward(swapped);
  EXPECT_GT(xt::amax(xt::abs(xt::view(ys, 0, 0, xt::all()) - xt::view(y, 0, 2, xt::all())))(),
            kNotEquivariant);
}

// Randomized positions (Ruoss et al., 2023; ops/randomized_positions.hpp): the sorted samples,
// each scheme using them in training and 0 .. T−1 in eval, PyTorch reference values for RoPE at
// given positions and ALiBi with given distances (tests/reference/generate_relative.py; the
// relative scheme's randomized case is in test_relative_position.cpp), finite differences, and
// the encoder model's switch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/helpers.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/nn/encoder_model.hpp"
#include "xenc/nn/multihead_attention.hpp"
#include "xenc/nn/position.hpp"
#include "xenc/ops/positional.hpp"
#include "xenc/ops/randomized_positions.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
using Shape3 = std::array<std::size_t, 3>;
}  // namespace

// 1. The sample: sorted, distinct, inside [lo, hi), reproducible, and every subset possible.
TEST(RandomizedPositions, SortedDistinctInRangeAndSeeded) {
  Rng a(11), b(11), c(12);
  const auto s = sample_sorted(40, 0, 2048, a);
  ASSERT_EQ(s.size(), 40u);
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  EXPECT_EQ(std::set<std::size_t>(s.begin(), s.end()).size(), 40u);
  EXPECT_LT(s.back(), 2048u);
  EXPECT_EQ(sample_sorted(40, 0, 2048, b), s);  // same seed, same sample
  EXPECT_NE(sample_sorted(40, 0, 2048, c), s);  // another seed, another sample
  // All of [lo, hi) when count = hi − lo; [5, 8) -> 5, 6, 7
  EXPECT_EQ(sample_sorted(3, 5, 8, a), (std::vector<std::size_t>{5, 6, 7}));
  EXPECT_EQ(plain_positions(3), (std::vector<double>{0, 1, 2}));
}

// Uniform: 2 of [0, 4) over 6000 draws; each of the 6 pairs is expected 1000 times (binomial
// sd ≈ 29, so ±150 is more than 5 sd).
TEST(RandomizedPositions, EveryPairEquallyLikely) {
  Rng rng(3);
  std::map<std::pair<std::size_t, std::size_t>, int> count;
  for (int n = 0; n < 6000; ++n) {
    const auto s = sample_sorted(2, 0, 4, rng);
    ++count[{s[0], s[1]}];
  }
  ASSERT_EQ(count.size(), 6u);
  for (const auto& [pair, c] : count)
    EXPECT_NEAR(c, 1000, 150) << pair.first << ", " << pair.second;
}

// Distances: 2T − 1 rows for δ = T − 1 .. −(T − 1); 0 in the middle, antisymmetric, |δ| → s_|δ|
// increasing, every s in [1, L).
TEST(RandomizedPositions, DistancesAreSignedSortedSamples) {
  Rng rng(5);
  const std::size_t T = 6;
  const auto d = randomized_distances(T, 100, rng);
  ASSERT_EQ(d.size(), 2 * T - 1);
  EXPECT_EQ(d[T - 1], 0.0);
  for (std::size_t m = 0; m < 2 * T - 1; ++m) EXPECT_EQ(d[m], -d[2 * T - 2 - m]);
  for (std::size_t m = 0; m + 1 < T; ++m) {
    EXPECT_GT(d[m], d[m + 1]);  // s_{T−1−m} > s_{T−2−m}
    EXPECT_LT(d[m], 100.0);
  }
  EXPECT_GE(d[T - 2], 1.0);
}

TEST(RandomizedPositions, RefusesTooShortARange) {
  Rng rng(1);
  EXPECT_EQ(what_of([&] { sample_sorted(5, 0, 4, rng); }),
            "sample_sorted: cannot draw 5 distinct values from [0, 4) (4 values)");
  EXPECT_THROW(randomized_distances(5, 4, rng), config_error);  // 4 from [1, 4): 3 values
  NoPosition none;
  EXPECT_THROW(none.set_randomized(16, 1), config_error);
  LearnedPosition learned(8, 4, rng);
  EXPECT_EQ(what_of([&] { learned.set_randomized(16, 1); }),
            "LearnedPosition.set_randomized: max_len is 16, expected <= the table's 8 rows "
            "(positions are drawn from [0, 16))");
}

// 2. The additive schemes: in training row t gets PE(p_t) / weight[p_t] with p the scheme's
//    sample (the same generator: Rng(seed)); in eval the plain 0 .. T−1.
TEST(RandomizedPositions, SinusoidalUsesTheSampleInTrainingOnly) {
  const std::size_t T = 5, D = 8, L = 2048;
  SinusoidalPosition pe(D);
  pe.set_randomized(L, 21);
  const Tensor3 x = xt::zeros<float>(Shape3{1, T, D});
  pe.train();
  const Tensor3 y = pe.forward(x);
  Rng same(21);
  const std::vector<double> p = randomized_positions(T, L, same);
  Tensor3 expected = Tensor3::from_shape({1, T, D});
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t c = 0; c < D; ++c) expected(0, t, c) = float(sinusoidal_value(p[t], c, D));
  EXPECT_TRUE(AllClose(y, expected, kFloatRound, kFloatRound));
  EXPECT_FALSE(AllClose(pe.forward(x), y, kFloatRound, kFloatRound));  // a new sample each forward
  pe.eval();
  const Tensor2 table = sinusoidal_encoding(T, D);
  Tensor3 plain = Tensor3::from_shape({1, T, D});
  std::copy(table.begin(), table.end(), plain.begin());
  EXPECT_TRUE(AllClose(pe.forward(x), plain, 0.0, 0.0));
}

TEST(RandomizedPositions, LearnedReadsAndTrainsTheSampledRows) {
  const std::size_t T = 3, D = 2, L = 64;
  Rng rng(2);
  LearnedPosition pe(L, D, rng);
  pe.set_randomized(L, 8);
  pe.train();
  const Tensor3 x = xt::zeros<float>(Shape3{2, T, D});
  const Tensor3 y = pe.forward(x);
  Rng same(8);
  const std::vector<double> p = randomized_positions(T, L, same);
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t c = 0; c < D; ++c) EXPECT_EQ(y(1, t, c), pe.weight(std::size_t(p[t]), c));
  // dweight[p_t] = Σ_b dy[b, t] = 2 (two sentences of ones); every other row 0
  pe.zero_grad();
  pe.backward(xt::ones<float>(Shape3{2, T, D}));
  float total = 0.0f;
  for (float g : pe.weight_grad) total += g;
  EXPECT_EQ(total, float(2 * T * D));
  for (std::size_t t = 0; t < T; ++t) EXPECT_EQ(pe.weight_grad(std::size_t(p[t]), 0), 2.0f);
  // a gradient of another length than the drawn rows is named, not read past them
  EXPECT_EQ(what_of([&] { pe.backward(xt::ones<float>(Shape3{2, T + 1, D})); }),
            "LearnedPosition.backward: grad_y has T = 4, the last forward drew 3 randomized "
            "positions");
  // in eval the forward draws nothing: the backward adds to row t again, at any T <= L
  pe.eval();
  pe.forward(x);
  pe.zero_grad();
  pe.backward(xt::ones<float>(Shape3{1, T + 1, D}));
  for (std::size_t t = 0; t < T + 1; ++t) EXPECT_EQ(pe.weight_grad(t, 1), 1.0f);
  EXPECT_EQ(pe.weight_grad(T + 1, 1), 0.0f);
}

// 3. Inside attention: RoPE at given positions and ALiBi with given distances against PyTorch.
class RandomizedInAttentionReference : public ::testing::TestWithParam<const char*> {};

TEST_P(RandomizedInAttentionReference, MatchesPyTorch) {
  const std::string name = GetParam();
  const json ref = load_reference("relative_attention");
  const json& c = ref[name];
  const std::size_t D = ref["embed_dim"].get<std::size_t>(),
                    H = ref["num_heads"].get<std::size_t>();
  MultiheadAttention mha(D, H);
  mha.load_state_dict(state_dict(ref["state_dict"]));
  RotaryPosition rope;
  ALiBiPosition alibi;
  if (name == "rope_randomized") {
    rope.train();
    const auto p = ref["randomized_positions"].get<std::vector<double>>();
    const_cast<RotaryPosition::Rotation*>(
        static_cast<const RotaryPosition::Rotation*>(rope.attention_position()))
        ->positions = p;
    mha.set_position(rope.attention_position());
  } else {
    const auto s = ref["randomized_distances"].get<std::vector<double>>();
    const long T = long(s.size());
    auto* bias = const_cast<ALiBiPosition::Bias*>(
        static_cast<const ALiBiPosition::Bias*>(alibi.attention_position()));
    for (long m = 0; m < 2 * T - 1; ++m) {
      const long d = T - 1 - m;
      bias->distances.push_back(d >= 0 ? s[std::size_t(d)] : -s[std::size_t(-d)]);
    }
    mha.set_position(alibi.attention_position());
  }
  Tensor4 w;
  const Tensor3 y = mha.forward(tensor<3>(c["x"]), Mask2(), Tensor2(), &w);
  EXPECT_TRUE(AllClose(y, tensor<3>(c["output"]), kModuleAtol, kModuleRtol));
  EXPECT_TRUE(AllClose(w, tensor<4>(c["weights"]), kModuleAtol, kModuleRtol));
  mha.zero_grad();
  const Tensor3 dx = mha.backward(tensor<3>(c["doutput"]));
  EXPECT_TRUE(AllClose(dx, tensor<3>(c["dx"]), kModuleAtol, kModuleRtol));
  for (const auto& q : mha.parameters()) {
    SCOPED_TRACE(q.name);
    EXPECT_TRUE(AllClose(grad_of(q), array(c["grads"][q.name]), kModuleAtol, kModuleRtol));
  }
}

INSTANTIATE_TEST_SUITE_P(RopeAndAlibi, RandomizedInAttentionReference,
                         ::testing::Values("rope_randomized", "alibi_randomized"));

// 4. Finite differences through self-attention with each randomized scheme inside attention:
//    the scheme's forward draws once, the attention's backward must use that same draw.
class RandomizedInAttentionGradient : public ::testing::TestWithParam<PositionKind> {};

TEST_P(RandomizedInAttentionGradient, MatchesFiniteDifferences) {
  Rng rng(40);
  MultiheadAttention mha(8, 2, rng);
  fill_parameters_normal(mha, rng, 0.5f);
  auto scheme = make_position_scheme(GetParam(), 8, 8, rng, 2);
  scheme->set_randomized(512, 77);
  scheme->train();
  auto x = random_tensor<Tensor3>(Shape3{2, 4, 8}, rng);
  scheme->forward(x);  // draws this forward's positions / distances
  mha.set_position(scheme->attention_position());
  Mask2 kpm = xt::zeros<bool>({2, 4});
  kpm(1, 3) = true;
  const auto G = random_tensor<Tensor3>(x.shape(), rng);
  mha.zero_grad();
  scheme->zero_grad();
  mha.forward(x, kpm);
  const Tensor3 dx = mha.backward(G);
  auto targets = parameter_targets(mha);
  for (auto& t : parameter_targets(*scheme, "position.")) targets.push_back(std::move(t));
  targets.push_back(input_target("x", x, dx));
  auto loss = [&] { return dot_loss(mha.forward(x, kpm), G); };
  EXPECT_TRUE(GradientsMatch(loss, targets, kGradModule));
}

INSTANTIATE_TEST_SUITE_P(Schemes, RandomizedInAttentionGradient,
                         ::testing::Values(PositionKind::rope, PositionKind::alibi,
                                           PositionKind::relative),
                         [](const auto& info) { return to_string(info.param); });

// 5. The encoder model: randomized positions change nothing in eval (the draws have their own
//    generator, the parameters are the same), and in training two forwards differ.
class RandomizedEncoderModel : public ::testing::TestWithParam<PositionKind> {};

TEST_P(RandomizedEncoderModel, EvalIsPlainTrainingSamples) {
  EncoderModelConfig cfg;
  cfg.vocab_size = 10;
  cfg.layer.d_model = 8;
  cfg.layer.nhead = 2;
  cfg.layer.dim_feedforward = 16;
  cfg.layer.dropout = 0.0f;
  cfg.num_layers = 2;
  cfg.position = GetParam();
  cfg.max_len = 256;
  cfg.seed = 4;
  EncoderModel plain(cfg);
  cfg.randomized_positions = 256;
  EncoderModel randomized(cfg);
  const Index2 ids = {{1, 2, 3, 4, 5, 6}};
  plain.eval();
  randomized.eval();
  EXPECT_TRUE(AllClose(randomized.forward(ids), plain.forward(ids), 0.0, 0.0));
  randomized.train();
  const Tensor3 a = randomized.forward(ids), b = randomized.forward(ids);
  EXPECT_GT(max_abs_diff(a, b), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Schemes, RandomizedEncoderModel,
                         ::testing::Values(PositionKind::sinusoidal, PositionKind::learned,
                                           PositionKind::rope, PositionKind::alibi,
                                           PositionKind::relative),
                         [](const auto& info) { return to_string(info.param); });

TEST(RandomizedEncoderModel, ConfigRules) {
  EncoderModelConfig cfg;
  cfg.vocab_size = 10;
  cfg.layer.d_model = 8;
  cfg.layer.nhead = 2;
  cfg.position = PositionKind::none;
  cfg.randomized_positions = 64;
  EXPECT_THROW(cfg.validate("test"), config_error);
  cfg.position = PositionKind::learned;
  cfg.max_len = 32;
  EXPECT_EQ(what_of([&] { cfg.validate("test"); }),
            "test: max_len is 32, expected >= randomized_positions = 64 (learned rows are drawn "
            "from it)");
}

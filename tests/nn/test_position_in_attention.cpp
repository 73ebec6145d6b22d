// RoPE and ALiBi (ops/position_in_attention.hpp, nn/position.hpp): a hand example, PyTorch
// reference values through self-attention, finite-difference gradients, and the invariants
// (norms kept, scores depend on m − n only, the paper's slopes, no permutation equivariance).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/helpers.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/nn/encoder_model.hpp"
#include "xenc/nn/multihead_attention.hpp"
#include "xenc/nn/position.hpp"
#include "xenc/ops/position_in_attention.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
using Shape3 = std::array<std::size_t, 3>;

// head-by-head scores q_m · k_n of one sentence: [H][Tq][Tk] flattened
std::vector<double> scores(const Tensor3& q, const Tensor3& k, std::size_t H) {
  const std::size_t T = q.shape(1), Dh = q.shape(2) / H;
  std::vector<double> s;
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t m = 0; m < T; ++m)
      for (std::size_t n = 0; n < T; ++n) {
        double d = 0;
        for (std::size_t e = 0; e < Dh; ++e) d += double(q(0, m, h * Dh + e)) * k(0, n, h * Dh + e);
        s.push_back(d);
      }
  return s;
}
}  // namespace

// 1. Hand example: D = Dh = 4, one head, θ = (1, 10000^(−1/2)) = (1, 0.01).
//    Token t = 1, x = (1, 0, 0, 2): pair 0 turns by 1 rad -> (cos 1, sin 1) = (0.5403, 0.8415);
//    pair 1 is (0, 2) turned by 0.01 rad -> (−2 sin 0.01, 2 cos 0.01) = (−0.0200, 1.9999).
//    Token t = 0 is not turned.
TEST(Rope, HandExample) {
  Tensor3 x = {{{1, 0, 0, 2}, {1, 0, 0, 2}}};
  rope_forward(x, 1);
  const Tensor3 expected = {
      {{1, 0, 0, 2}, {0.540302306f, 0.841470985f, -0.0199996667f, 1.99990000f}}};
  EXPECT_TRUE(AllClose(x, expected, kHandValue, kHandValue));
  rope_backward(x, 1);  // Rᵀ R = I
  EXPECT_TRUE(AllClose(x, Tensor3{{{1, 0, 0, 2}, {1, 0, 0, 2}}}, kHandValue, kHandValue));
}

// The angle table is built by turning angle t−1 by θ_i (kernels, ops/position_in_attention.cpp):
// over a long sequence with an offset it stays at float rounding of the direct formula
// x' = (cos φ·x0 − sin φ·x1, sin φ·x0 + cos φ·x1), φ = (t + offset)·θ_i in double, both pairings.
TEST(Rope, LongSequenceMatchesTheDirectFormula) {
  const std::size_t T = 4096, H = 2, Dh = 8, D = H * Dh;
  const double offset = 1000.0;
  Rng rng(44);
  const auto x = random_tensor<Tensor3>(Shape3{1, T, D}, rng);
  const std::vector<double> theta = rope_frequencies(Dh);
  for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
    SCOPED_TRACE(pairing == RopePairing::half ? "half" : "interleaved");
    Tensor3 y = x;
    rope_forward(y, H, pairing, offset);
    Tensor3 expected = x;
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t i = 0; i < Dh / 2; ++i) {
          const std::size_t a = h * Dh + (pairing == RopePairing::interleaved ? 2 * i : i);
          const std::size_t a2 = pairing == RopePairing::interleaved ? a + 1 : a + Dh / 2;
          const double phi = (double(t) + offset) * theta[i], x0 = x(0, t, a), x1 = x(0, t, a2);
          expected(0, t, a) = float(std::cos(phi) * x0 - std::sin(phi) * x1);
          expected(0, t, a2) = float(std::sin(phi) * x0 + std::cos(phi) * x1);
        }
    EXPECT_TRUE(AllClose(y, expected, 10 * kFloatRound, 10 * kFloatRound));
  }
}

// 2. Reference values: self-attention with RoPE / ALiBi against an independent PyTorch
//    implementation (complex-number RoPE as in Meta's LLaMA code; the ALiBi authors' slopes).
class PositionInAttentionReference : public ::testing::TestWithParam<const char*> {};

TEST_P(PositionInAttentionReference, MatchesPyTorch) {
  const std::string name = GetParam();
  const json ref = load_reference("position_in_attention");
  const json& c = ref[name];
  MultiheadAttention mha(ref["embed_dim"].get<std::size_t>(), ref["num_heads"].get<std::size_t>());
  mha.load_state_dict(state_dict(ref["state_dict"]));
  Rng rng(0);
  auto scheme =
      make_position_scheme(parse_position_kind(name.substr(0, name.find('_'))), 8, 8, rng);
  mha.set_position(scheme->attention_position());
  Tensor4 w;
  const Tensor3 y = mha.forward(tensor<3>(c["x"]), mask2(c["key_padding_mask"]), Tensor2(), &w);
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

INSTANTIATE_TEST_SUITE_P(RopeAndAlibi, PositionInAttentionReference,
                         ::testing::Values("rope", "rope_masked", "alibi", "alibi_masked"));

// 3. Finite differences through self-attention with each scheme (and a padding mask).
class PositionInAttentionGradient : public ::testing::TestWithParam<PositionKind> {};

TEST_P(PositionInAttentionGradient, MatchesFiniteDifferences) {
  Rng rng(40);
  MultiheadAttention mha(8, 2, rng);
  fill_parameters_normal(mha, rng, 0.5f);
  auto scheme = make_position_scheme(GetParam(), 8, 8, rng);
  mha.set_position(scheme->attention_position());
  auto x = random_tensor<Tensor3>(Shape3{2, 4, 8}, rng);
  Mask2 kpm = xt::zeros<bool>({2, 4});
  kpm(1, 3) = true;
  auto G = random_tensor<Tensor3>(x.shape(), rng);
  EXPECT_TRUE(ModuleGradientsMatch(mha, x, G, kGradModule, kpm));
}

TEST(PositionInAttentionGradient, RotateHalfPairingMatchesFiniteDifferences) {
  Rng rng(41);
  MultiheadAttention mha(8, 2, rng);
  fill_parameters_normal(mha, rng, 0.5f);
  RotaryPosition scheme(RopePairing::half);
  mha.set_position(scheme.attention_position());
  auto x = random_tensor<Tensor3>(Shape3{1, 5, 8}, rng);
  auto G = random_tensor<Tensor3>(x.shape(), rng);
  EXPECT_TRUE(ModuleGradientsMatch(mha, x, G, kGradModule));
}

INSTANTIATE_TEST_SUITE_P(RopeAndAlibi, PositionInAttentionGradient,
                         ::testing::Values(PositionKind::rope, PositionKind::alibi),
                         [](const auto& info) { return to_string(info.param); });

// 4. Invariants.
TEST(Rope, PreservesNorms) {
  Rng rng(42);
  for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
    auto x = random_tensor<Tensor3>(Shape3{2, 12, 16}, rng);
    Tensor3 y = x;
    rope_forward(y, 4, pairing);
    EXPECT_GT(xt::amax(xt::abs(y - x))(), kNotEquivariant);  // it did rotate
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t t = 0; t < 12; ++t)
        for (std::size_t h = 0; h < 4; ++h) {
          double nx = 0, ny = 0;
          for (std::size_t e = 0; e < 4; ++e) {
            nx += double(x(b, t, h * 4 + e)) * x(b, t, h * 4 + e);
            ny += double(y(b, t, h * 4 + e)) * y(b, t, h * 4 + e);
          }
          EXPECT_NEAR(std::sqrt(ny), std::sqrt(nx), kRotatedNorm * std::sqrt(nx));
        }
  }
}

// (R(m+s) q)·(R(n+s) k) = qᵀ R(n − m) k for every shift s.
TEST(Rope, ScoresDependOnlyOnRelativePosition) {
  Rng rng(43);
  const std::size_t H = 2;
  const auto q = random_tensor<Tensor3>(Shape3{1, 6, 8}, rng);
  const auto k = random_tensor<Tensor3>(Shape3{1, 6, 8}, rng);
  for (RopePairing pairing : {RopePairing::interleaved, RopePairing::half}) {
    Tensor3 q0 = q, k0 = k;
    rope_forward(q0, H, pairing);
    rope_forward(k0, H, pairing);
    const std::vector<double> s0 = scores(q0, k0, H), plain = scores(q, k, H);
    double moved = 0;
    for (std::size_t i = 0; i < s0.size(); ++i)
      moved = std::max(moved, std::fabs(s0[i] - plain[i]));
    EXPECT_GT(moved, kNotEquivariant);  // the rotation changes the scores ...
    for (double s : {1.0, 7.0, 100.0, 1000.0}) {
      SCOPED_TRACE("shift " + std::to_string(s));
      Tensor3 qs = q, ks = k;
      rope_forward(qs, H, pairing, s);
      rope_forward(ks, H, pairing, s);
      const std::vector<double> ss = scores(qs, ks, H);
      for (std::size_t i = 0; i < s0.size(); ++i) EXPECT_NEAR(ss[i], s0[i], kRopeShift) << i;
    }
  }
}

// Rotate-half is the interleaved rotation on permuted columns: column i <-> 2i, i + Dh/2 <-> 2i+1.
TEST(Rope, RotateHalfIsInterleavedOnPermutedColumns) {
  Rng rng(44);
  const std::size_t H = 2, Dh = 4, D = 8;
  const auto x = random_tensor<Tensor3>(Shape3{1, 5, D}, rng);
  Tensor3 half = x, perm = x;
  for (std::size_t t = 0; t < 5; ++t)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < Dh / 2; ++i) {
        perm(0, t, h * Dh + 2 * i) = x(0, t, h * Dh + i);
        perm(0, t, h * Dh + 2 * i + 1) = x(0, t, h * Dh + i + Dh / 2);
      }
  rope_forward(half, H, RopePairing::half);
  rope_forward(perm, H, RopePairing::interleaved);
  for (std::size_t t = 0; t < 5; ++t)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < Dh / 2; ++i) {
        EXPECT_FLOAT_EQ(half(0, t, h * Dh + i), perm(0, t, h * Dh + 2 * i));
        EXPECT_FLOAT_EQ(half(0, t, h * Dh + i + Dh / 2), perm(0, t, h * Dh + 2 * i + 1));
      }
}

// The paper (Press et al. 2022, sec. 3): for 8 heads 1/2^1 .. 1/2^8; otherwise the slopes of
// the closest smaller power of two n, then every other slope of 2n heads. Written out by hand:
//   H = 6:  n = 4 -> 2^-2, 2^-4, 2^-6, 2^-8; from 8 heads (2^-1 .. 2^-8) every other: 2^-1, 2^-3
//   H = 12: n = 8 -> 2^-1 .. 2^-8; from 16 heads (2^-0.5 .. 2^-8): 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5
TEST(Alibi, SlopesFollowThePaper) {
  const std::vector<double> h8 = {1. / 2,  1. / 4,  1. / 8,   1. / 16,
                                  1. / 32, 1. / 64, 1. / 128, 1. / 256};
  const std::vector<double> h6 = {1. / 4, 1. / 16, 1. / 64, 1. / 256, 1. / 2, 1. / 8};
  std::vector<double> h12(h8);
  for (double e : {0.5, 1.5, 2.5, 3.5}) h12.push_back(std::pow(2.0, -e));
  for (const auto& [H, expected] : {std::pair{8, h8}, std::pair{6, h6}, std::pair{12, h12}}) {
    SCOPED_TRACE("H = " + std::to_string(H));
    const std::vector<double> m = alibi_slopes(H);
    ASSERT_EQ(m.size(), expected.size());
    for (std::size_t h = 0; h < m.size(); ++h) EXPECT_NEAR(m[h], expected[h], kDoubleFormula) << h;
  }
  // and the authors' get_slopes (run by tests/reference/generate.py) for more head counts
  const json ref = load_reference("position_in_attention");
  for (const auto& [key, slopes] : ref["alibi_slopes"].items()) {
    SCOPED_TRACE("H = " + key);
    const std::vector<double> m = alibi_slopes(std::stoul(key));
    ASSERT_EQ(m.size(), slopes.size());
    for (std::size_t h = 0; h < m.size(); ++h)
      EXPECT_NEAR(m[h], slopes[h].get<double>(), kDoubleFormula);
  }
}

// bias(i, j) = −m |i − j|, symmetric; the scheme's bias for head 1 of 8 has m = 1/4.
TEST(Alibi, BiasIsMinusSlopeTimesDistance) {
  ALiBiPosition scheme;
  const Tensor2 b = scheme.attention_position()->score_bias(1, 8, 3, 4);
  const Tensor2 expected = {
      {0, -0.25f, -0.5f, -0.75f}, {-0.25f, 0, -0.25f, -0.5f}, {-0.5f, -0.25f, 0, -0.25f}};
  EXPECT_TRUE(AllClose(b, expected, kFloatRound, kFloatRound));
  EXPECT_EQ(scheme.num_parameters(), 0u);
}

// ALiBi's fast path (distance_bias_slope: the kernel writes −m_h·|i − j| with the scores) gives
// what the general path gives with the same bias as [Tq, Tk] tensors from alibi_bias, in
// inference and with gradients on, with a key padding mask.
namespace {
struct AlibiAsTensors : AttentionPosition {
  bool has_score_bias() const override { return true; }
  Tensor2 score_bias(std::size_t h, std::size_t H, std::size_t Tq, std::size_t Tk) const override {
    return alibi_bias(alibi_slopes(H)[h], Tq, Tk);
  }
};
}  // namespace

TEST(Alibi, KernelSlopeMatchesTheBiasTensorPath) {
  const std::size_t B = 2, T = 6, D = 8, H = 4;
  Rng rng(31);
  MultiheadAttention mha(D, H, rng);
  fill_parameters_normal(mha, rng, 0.5f);
  const Tensor3 x = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  Mask2 kpm = xt::zeros<bool>({B, T});
  kpm(1, T - 1) = true;
  ALiBiPosition alibi;
  const AlibiAsTensors tensors;
  EXPECT_EQ(tensors.distance_bias_slope(0, H), 0.0f);  // the default: use score_bias
  EXPECT_EQ(alibi.attention_position()->distance_bias_slope(1, H), 0.0625f);  // 2^-4 for H = 4
  for (const bool grad : {false, true}) {
    SCOPED_TRACE(grad ? "with gradients" : "inference");
    GradMode::set_enabled(grad);
    mha.set_position(alibi.attention_position());
    const Tensor3 fast = mha.forward(x, kpm);
    mha.set_position(&tensors);
    const Tensor3 general = mha.forward(x, kpm);
    GradMode::set_enabled(true);
    EXPECT_TRUE(AllClose(fast, general, kOpAtol, kOpRtol));
  }
}

// Without position information the encoder is permutation-equivariant; rope and alibi (which
// add nothing to the input) break that inside attention.
TEST(PositionInAttention, EncoderIsPermutationEquivariantOnlyWithoutPositions) {
  EncoderModelConfig cfg;
  cfg.vocab_size = 9;
  cfg.layer.d_model = 8;
  cfg.layer.nhead = 2;
  cfg.layer.dim_feedforward = 16;
  cfg.layer.dropout = 0.0f;
  cfg.num_layers = 2;
  cfg.seed = 5;
  const Index2 ids = {{4, 2, 7, 1}},
               permuted = {{7, 4, 1, 2}};  // output t of permuted = input perm[t]
  const std::size_t perm[] = {2, 0, 3, 1};
  for (PositionKind kind : {PositionKind::none, PositionKind::rope, PositionKind::alibi}) {
    SCOPED_TRACE(to_string(kind));
    cfg.position = kind;
    EncoderModel model(cfg);
    const Tensor3 y = model.forward(ids), yp = model.forward(permuted);
    double worst = 0;
    for (std::size_t t = 0; t < 4; ++t)
      for (std::size_t d = 0; d < 8; ++d)
        worst = std::max(worst, double(std::fabs(yp(0, t, d) - y(0, perm[t], d))));
    if (kind == PositionKind::none)
      EXPECT_LT(worst, kEquivariance);
    else
      EXPECT_GT(worst, kNotEquivariant);
    EXPECT_EQ(model.position->acts_in_attention(), kind != PositionKind::none);
    EXPECT_EQ(model.position->num_parameters(), 0u);
  }
}

// 5. Names and errors.
TEST(PositionInAttention, SelectableByNameAndRegistered) {
  for (const char* name : {"rope", "alibi"}) {
    EXPECT_EQ(to_string(parse_position_kind(name)), name);
    const auto& kinds = all_position_kinds();
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), parse_position_kind(name)), kinds.end());
  }
  const std::string msg = what_of([] { parse_position_kind("rotary"); });
  EXPECT_NE(msg.find("\"rope\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"alibi\""), std::string::npos) << msg;
}

TEST(PositionInAttention, OddHeadDimensionIsAConfigError) {
  EncoderModelConfig cfg;
  cfg.vocab_size = 9;
  cfg.layer.d_model = 12;
  cfg.layer.nhead = 4;  // Dh = 3
  cfg.layer.dim_feedforward = 16;
  cfg.position = PositionKind::rope;
  std::string msg = what_of([&] { EncoderModel m(cfg); });
  EXPECT_NE(msg.find("12 / 4 = 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rope"), std::string::npos) << msg;
  EXPECT_THROW(EncoderModel{cfg}, config_error);
  cfg.position = PositionKind::alibi;  // ALiBi has no such rule
  EXPECT_NO_THROW(EncoderModel{cfg});
  Tensor3 x = xt::zeros<float>({1, 2, 6});
  msg = what_of([&] { rope_forward(x, 2); });
  EXPECT_NE(msg.find("Dh = d_model / nhead is 3"), std::string::npos) << msg;
  EXPECT_THROW(rope_forward(x, 2), config_error);
  msg = what_of([] { alibi_slopes(0); });
  EXPECT_NE(msg.find("nhead is 0"), std::string::npos) << msg;
}

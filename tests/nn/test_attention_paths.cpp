// The two attention paths of MultiheadAttention (plain and tiled, nn/multihead_attention.hpp)
// and the feed-forward block in row chunks (nn/transformer_encoder.hpp):
//   - the automatic choice (by size; the weights always from the plain path);
//   - tiled against PyTorch's reference values with RoPE and ALiBi (the data of
//     test_position_in_attention.cpp), forward, input and parameter gradients;
//   - tiled = plain through the module, with key padding, an attention mask and each position
//     scheme, at T = 150 (several query tiles);
//   - attention dropout drawn tile by tile (AttentionDropout) = the plain path given the same
//     factors as a [B, H, T, T] mask (attention_dropout_mask), forward and backward;
//   - two threads give the same numbers as one, and leave OpenBLAS's setting as it was;
//   - an encoder layer at B·T > 1024 rows (tiles and feed-forward chunks) against the
//     reference encoder (lib/src/reference/) and against its own unchunked forward.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/helpers.hpp"
#include "support/oracle.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/nn/multihead_attention.hpp"
#include "xenc/nn/position.hpp"
#include "xenc/nn/transformer_encoder.hpp"

extern "C" int openblas_get_num_threads(void);
extern "C" void openblas_set_num_threads(int);

using namespace xenc;
using namespace xenc::test;

namespace {

using Shape3 = std::array<std::size_t, 3>;
using Shape2 = std::array<std::size_t, 2>;

// ‖a − e‖ / ‖e‖ (scale-free; NaN if either holds a NaN).
template <class A, class E>
double relative_error(const A& a, const E& e) {
  double diff = 0.0, norm = 0.0;
  auto ia = a.begin();
  for (auto ie = e.begin(); ie != e.end(); ++ie, ++ia) {
    diff += (double(*ia) - double(*ie)) * (double(*ia) - double(*ie));
    norm += double(*ie) * double(*ie);
  }
  return std::sqrt(diff / norm);
}

template <class A, class E>
::testing::AssertionResult RelativelyClose(const A& a, const E& e, double tol) {
  if (a.size() != e.size())
    return ::testing::AssertionFailure() << "sizes " << a.size() << " and " << e.size();
  const double err = relative_error(a, e);
  if (err <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "‖a − e‖ / ‖e‖ = " << err << " > " << tol;
}

}  // namespace

TEST(AttentionPath, AutomaticChoiceIsBySizeAndWeightsNeedThePlainPath) {
  EXPECT_FALSE(attention_uses_tiles(AttentionPath::automatic, 511, 512, false));
  EXPECT_TRUE(attention_uses_tiles(AttentionPath::automatic, 512, 512, false));
  EXPECT_TRUE(attention_uses_tiles(AttentionPath::automatic, 256, 1024, false));
  EXPECT_FALSE(attention_uses_tiles(AttentionPath::automatic, 4096, 4096, true));
  EXPECT_FALSE(attention_uses_tiles(AttentionPath::plain, 4096, 4096, false));
  EXPECT_TRUE(attention_uses_tiles(AttentionPath::tiled, 3, 3, false));
  EXPECT_FALSE(attention_uses_tiles(AttentionPath::tiled, 3, 3, true));
}

// PyTorch's values (tests/data, made by the committed script of test_position_in_attention.cpp)
// through the tiled path: output, dx and every parameter gradient.
TEST(AttentionPath, TiledMatchesPyTorchWithRopeAndAlibi) {
  const json ref = load_reference("position_in_attention");
  for (const char* name : {"rope", "rope_masked", "alibi", "alibi_masked"}) {
    SCOPED_TRACE(name);
    const json& c = ref[name];
    MultiheadAttention mha(ref["embed_dim"].get<std::size_t>(),
                           ref["num_heads"].get<std::size_t>());
    mha.load_state_dict(state_dict(ref["state_dict"]));
    mha.set_attention_path(AttentionPath::tiled);
    Rng rng(0);
    const std::string kind(name, std::string(name).find('_') == std::string::npos
                                     ? std::string(name).size()
                                     : std::string(name).find('_'));
    auto scheme = make_position_scheme(parse_position_kind(kind), 8, 8, rng);
    mha.set_position(scheme->attention_position());
    const Tensor3 y = mha.forward(tensor<3>(c["x"]), mask2(c["key_padding_mask"]));
    EXPECT_TRUE(AllClose(y, tensor<3>(c["output"]), kModuleAtol, kModuleRtol));
    mha.zero_grad();
    const Tensor3 dx = mha.backward(tensor<3>(c["doutput"]));
    EXPECT_TRUE(AllClose(dx, tensor<3>(c["dx"]), kModuleAtol, kModuleRtol));
    for (const auto& p : mha.parameters()) {
      SCOPED_TRACE(p.name);
      EXPECT_TRUE(AllClose(grad_of(p), array(c["grads"][p.name]), kModuleAtol, kModuleRtol));
    }
  }
}

namespace {

// One forward and backward of a MultiheadAttention in training mode with attention dropout p,
// key padding (sequence 1: its last 20 keys) and a random attention mask.
struct PathRun {
  Tensor3 y, dx;
  std::vector<xt::xarray<float>> grads;
};
PathRun run_path(AttentionPath path, PositionKind kind, float dropout) {
  const std::size_t B = 2, T = 150, D = 16, H = 2;
  MultiheadAttention mha(D, H, dropout, true, /*seed=*/7);
  mha.set_attention_path(path);
  mha.train();
  Rng rng(8);
  auto scheme = make_position_scheme(kind, D, T, rng);
  mha.set_position(scheme->attention_position());
  const Tensor3 x = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const Tensor3 dy = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const Tensor2 mask = random_tensor<Tensor2>(Shape2{T, T}, rng);
  Mask2 padding = xt::zeros<bool>({B, T});
  for (std::size_t t = T - 20; t < T; ++t) padding(1, t) = true;
  PathRun r;
  mha.zero_grad();
  r.y = mha.forward(x, padding, mask);
  r.dx = mha.backward(dy);
  for (const auto& p : mha.parameters()) r.grads.push_back(grad_of(p));
  return r;
}

}  // namespace

// Tiled = plain through the module: the masks and each position scheme; output within 1e-5,
// gradients within 1e-4 (relative, ‖·‖₂), at T = 150 (the kernel tests cover many tiles). In
// training with dropout both paths draw the same factors from one seed (the plain path writes
// them out as a mask, the tiled path draws them per tile): the tests below compare the kernels
// given equal factors, and two modules in training.
TEST(AttentionPath, TiledEqualsPlainThroughTheModule) {
  for (const PositionKind kind : {PositionKind::none, PositionKind::rope, PositionKind::alibi}) {
    SCOPED_TRACE(::testing::Message() << "position kind " << int(kind));
    const PathRun plain = run_path(AttentionPath::plain, kind, 0.0f);
    const PathRun tiled = run_path(AttentionPath::tiled, kind, 0.0f);
    EXPECT_TRUE(RelativelyClose(tiled.y, plain.y, kTiledForwardRel));
    EXPECT_TRUE(RelativelyClose(tiled.dx, plain.dx, kTiledGradRel));
    ASSERT_EQ(tiled.grads.size(), plain.grads.size());
    for (std::size_t i = 0; i < plain.grads.size(); ++i) {
      if (xt::amax(xt::abs(plain.grads[i]))() == 0.0f) continue;  // e.g. a zero-gradient bias
      EXPECT_TRUE(RelativelyClose(tiled.grads[i], plain.grads[i], kTiledGradRel)) << "grad " << i;
    }
  }
}

// Heads on two threads of xencoder's own: the same numbers as on one (each head is computed
// the same way, whichever thread runs it, and draws its dropout from its own stream), and
// OpenBLAS's thread count is restored afterwards.
TEST(AttentionPath, TwoThreadsGiveTheNumbersOfOne) {
  const int before = openblas_get_num_threads();
  openblas_set_num_threads(1);
  const PathRun one = run_path(AttentionPath::tiled, PositionKind::alibi, 0.1f);
  openblas_set_num_threads(2);
  const PathRun two = run_path(AttentionPath::tiled, PositionKind::alibi, 0.1f);
  EXPECT_EQ(openblas_get_num_threads(), 2);
  openblas_set_num_threads(before);
  EXPECT_TRUE(AllClose(two.y, one.y, 0.0, 0.0));
  EXPECT_TRUE(AllClose(two.dx, one.dx, 0.0, 0.0));
}

// A whole layer where attention runs in tiles (T = 1024): there xencoder also splits the large
// GEMMs (projections, feed-forward; 1024 x 768 x 256 multiply-adds and up) over its own two
// threads instead of OpenBLAS's. Forward, input gradient and parameter gradients on 2 threads are
// those of 1 thread up to float rounding (bit for bit under OpenBLAS's AVX-512 and Sandybridge
// kernels; under Haswell's, a block of rows rounds a few elements one unit in the last place
// differently, 3.8e-6 at 9.8 in the feed-forward's weight gradient), and OpenBLAS's thread count is
// restored.
TEST(AttentionPath, LayerInTilesOnTwoThreadsGivesTheNumbersOfOne) {
  EncoderLayerConfig c;
  c.d_model = 256;
  c.nhead = 4;
  c.dim_feedforward = 1024;
  Rng rng(21);
  const Tensor3 x = random_tensor<Tensor3>(Shape3{1, 1024, 256}, rng);
  const Tensor3 dy = random_tensor<Tensor3>(Shape3{1, 1024, 256}, rng);
  ASSERT_TRUE(attention_uses_tiles(AttentionPath::automatic, 1024, 1024, false));
  struct Run {
    Tensor3 y, dx;
    Tensor2 d_in_proj, d_linear1;
  };
  auto run = [&](int threads) {
    openblas_set_num_threads(threads);
    TransformerEncoderLayer layer(c, /*seed=*/3);
    layer.eval();
    Run r;
    r.y = layer.forward(x);
    r.dx = layer.backward(dy);
    r.d_in_proj = layer.self_attn.in_proj_weight_grad;
    r.d_linear1 = layer.linear1.weight_grad;
    return r;
  };
  const int before = openblas_get_num_threads();
  const Run one = run(1), two = run(2);
  EXPECT_EQ(openblas_get_num_threads(), 2);
  openblas_set_num_threads(before);
  EXPECT_TRUE(AllClose(two.y, one.y, kNaiveAtol, kNaiveRtol));
  EXPECT_TRUE(AllClose(two.dx, one.dx, kNaiveAtol, kNaiveRtol));
  EXPECT_TRUE(AllClose(two.d_in_proj, one.d_in_proj, kNaiveAtol, kNaiveRtol));
  EXPECT_TRUE(AllClose(two.d_linear1, one.d_linear1, kNaiveAtol, kNaiveRtol));
}

// Attention dropout drawn tile by tile from a seed (the tiled path's, AttentionInputs::dropout)
// equals the plain path given the same factors as a [B, H, T, T] mask (attention_dropout_mask),
// forward within 1e-5 and gradients within 1e-4 (relative), with key padding and an attention
// mask; the plain path drawing from the same seed gives exactly its own result with the mask.
TEST(AttentionPath, TiledDropoutEqualsPlainWithTheSameMask) {
  const std::size_t B = 2, T = 150, D = 16, H = 2;
  Rng rng(11);
  const Tensor3 q = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const Tensor3 k = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const Tensor3 v = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const Tensor3 dout = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const Tensor2 mask = random_tensor<Tensor2>(Shape2{T, T}, rng);
  Mask2 padding = xt::zeros<bool>({B, T});
  for (std::size_t t = T - 20; t < T; ++t) padding(1, t) = true;
  const AttentionDropout dropout{0.2f, 0x5eed};
  const Tensor4 factors = attention_dropout_mask(dropout, B, H, T, T);
  const Tensor4 no_factors;
  const AttentionInputs drawn{H, padding, mask, no_factors, no_attention_position(), dropout};
  const AttentionInputs given{H, padding, mask, factors};

  const TiledAttentionResult tiled = multi_head_attention_forward_tiled(q, k, v, drawn);
  const MultiHeadAttentionResult plain = multi_head_attention_forward(q, k, v, given, true);
  EXPECT_TRUE(RelativelyClose(tiled.output, plain.output, kTiledForwardRel));
  const MultiHeadAttentionGrads gt =
      multi_head_attention_backward_tiled(dout, q, k, v, tiled, drawn);
  const MultiHeadAttentionGrads gp =
      multi_head_attention_backward(dout, q, k, v, plain.weights, given);
  EXPECT_TRUE(RelativelyClose(gt.q, gp.q, kTiledGradRel)) << "dq";
  EXPECT_TRUE(RelativelyClose(gt.k, gp.k, kTiledGradRel)) << "dk";
  EXPECT_TRUE(RelativelyClose(gt.v, gp.v, kTiledGradRel)) << "dv";

  const MultiHeadAttentionResult plain_drawn = multi_head_attention_forward(q, k, v, drawn, true);
  EXPECT_TRUE(AllClose(plain_drawn.output, plain.output, 0.0, 0.0));
  const MultiHeadAttentionGrads gd =
      multi_head_attention_backward(dout, q, k, v, plain_drawn.weights, drawn);
  EXPECT_TRUE(AllClose(gd.q, gp.q, 0.0, 0.0));
}

// In training, the plain and the tiled path of one module drop the same scores: both draw one
// seed from the module's generator, the tiles draw the factors per tile, the plain path writes
// the same factors out as its mask. Two modules of the same seed, one on each path: the same
// output (1e-5) and the same gradients (1e-4, relative), with a key padding mask.
TEST(AttentionPath, PlainAndTiledDropTheSameScoresInTraining) {
  const std::size_t B = 2, T = 70, D = 16, H = 2;
  MultiheadAttention plain(D, H, /*dropout=*/0.3f, /*bias=*/true, /*seed=*/17);
  MultiheadAttention tiled(D, H, 0.3f, true, 17);
  plain.set_attention_path(AttentionPath::plain);
  tiled.set_attention_path(AttentionPath::tiled);
  plain.train();
  tiled.train();
  Rng rng(13);
  const Tensor3 x = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const Tensor3 dy = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  Mask2 padding = xt::zeros<bool>({B, T});
  for (std::size_t t = T - 9; t < T; ++t) padding(1, t) = true;
  const Tensor3 yp = plain.forward(x, x, x, padding).output;
  const Tensor3 yt = tiled.forward(x, x, x, padding).output;
  EXPECT_TRUE(RelativelyClose(yt, yp, kTiledForwardRel));
  EXPECT_TRUE(RelativelyClose(tiled.backward(dy), plain.backward(dy), kTiledGradRel)) << "dx";
  // and the dropout acted: the module without it gives another output
  MultiheadAttention none(D, H, 0.0f, true, 17);
  none.train();
  EXPECT_FALSE(RelativelyClose(none.forward(x, x, x, padding).output, yp, kTiledForwardRel));
}

// Dropout given twice (a mask and a seed) is refused, naming both; so is p outside [0, 1).
TEST(AttentionPath, DropoutGivenTwiceOrOutOfRangeIsRefused) {
  Rng rng(12);
  const Tensor3 x = random_tensor<Tensor3>(Shape3{1, 6, 8}, rng);
  const Mask2 no_padding;
  const Tensor2 no_mask;
  const Tensor4 factors = attention_dropout_mask({0.5f, 1}, 1, 2, 6, 6);
  const AttentionInputs both{2, no_padding, no_mask, factors, no_attention_position(), {0.5f, 1}};
  std::string msg = what_of([&] { multi_head_attention_forward_tiled(x, x, x, both); });
  EXPECT_NE(msg.find("dropout_mask and dropout (p = 0.5"), std::string::npos) << msg;
  msg = what_of([&] { multi_head_attention_forward(x, x, x, both, false); });
  EXPECT_NE(msg.find("multi_head_attention_forward"), std::string::npos) << msg;
  EXPECT_NE(msg.find("pass one"), std::string::npos) << msg;
  msg = what_of([&] { attention_dropout_mask({1.0f, 1}, 1, 2, 6, 6); });
  EXPECT_NE(msg.find("dropout.p is 1.0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected 0 <= p < 1"), std::string::npos) << msg;
}

// An encoder layer at B·T = 2 · 700 = 1400 rows in inference: attention in tiles (700² >=
// 512²) and the feed-forward block in chunks of 1024 rows, against the reference encoder and
// against the same layer's forward with gradients on (no chunks, plain memory layout).
TEST(AttentionPath, LongInferenceMatchesTheReferenceEncoder) {
  EncoderLayerConfig c;
  c.d_model = 16;
  c.nhead = 2;
  c.dim_feedforward = 32;
  TransformerEncoderLayer layer(c, /*seed=*/3);
  layer.eval();
  Rng rng(4);
  const Tensor3 x = random_tensor<Tensor3>(Shape3{2, 700, 16}, rng);
  Mask2 padding = xt::zeros<bool>({std::size_t(2), std::size_t(700)});
  for (std::size_t t = 650; t < 700; ++t) padding(0, t) = true;
  Tensor3 chunked;
  {
    NoGradGuard no_grad;
    chunked = layer.forward(x, padding);
  }
  const Tensor3 whole = layer.forward(x, padding);
  EXPECT_TRUE(AllClose(chunked, whole, kModuleAtol, kModuleRtol));
  const ReferenceRun ref = reference_run(layer, x, padding);
  EXPECT_TRUE(AllClose(chunked, ref.y, kReferenceAtol, kReferenceRtol));
}

// The tiled backward checks what it is given: an lse of the wrong shape is named, with both
// shapes, before any work.
TEST(AttentionPath, TiledBackwardNamesAWrongLse) {
  Rng rng(5);
  const Tensor3 x = random_tensor<Tensor3>(Shape3{1, 6, 8}, rng);
  const Mask2 no_padding;
  const Tensor2 no_mask;
  const Tensor4 no_dropout;
  const AttentionInputs in{2, no_padding, no_mask, no_dropout};
  TiledAttentionResult saved = multi_head_attention_forward_tiled(x, x, x, in);
  saved.lse = Tensor3::from_shape({1, 2, 5});
  const std::string msg =
      what_of([&] { multi_head_attention_backward_tiled(x, x, x, x, saved, in); });
  EXPECT_NE(msg.find("multi_head_attention_backward_tiled"), std::string::npos) << msg;
  EXPECT_NE(msg.find("saved.lse"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[1, 2, 5]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[1, 2, 6]"), std::string::npos) << msg;
}

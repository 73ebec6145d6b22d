// The reference ops (lib/src/reference/ops.cpp): hand examples, PyTorch's values
// (tests/reference/data/*.json, from generate.py), PyTorch's edge-case behaviour (NaN rows, every
// target ignored), and finite differences of every backward, taken in double.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "support/allclose.hpp"
#include "support/helpers.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/core/random.hpp"
#include "xenc/reference/ops.hpp"

using namespace xenc;
using namespace xenc::test;
namespace ref = xenc::reference;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The reference computes in double from float32 inputs; PyTorch's values are float64 results
// printed as float32, so they agree to float32 rounding.
constexpr double kAtol = 1e-6;
constexpr double kRtol = 1e-5;

template <std::size_t R>
xt::xtensor<double, R> dtensor(const json& j) {
  return xt::xtensor<double, R>(tensor<R>(j));
}

using Shape1 = std::array<std::size_t, 1>;
using Shape2 = std::array<std::size_t, 2>;
using Shape4 = std::array<std::size_t, 4>;

// Central differences of loss at every coordinate of x (in double: h = 1e-5 leaves ~1e-10
// rounding and ~1e-10 truncation), compared with the analytic gradient by the scale-free
// ‖a − n‖ / (‖a‖ + ‖n‖).
template <class T, class G>
double gradient_error(const std::function<double()>& loss, T& x, const G& analytic) {
  const double h = 1e-5;
  double diff2 = 0.0, a2 = 0.0, n2 = 0.0;
  auto a = analytic.begin();
  for (auto it = x.begin(); it != x.end(); ++it, ++a) {
    const double x0 = *it;
    *it = x0 + h;
    const double lp = loss();
    *it = x0 - h;
    const double lm = loss();
    *it = x0;
    const double n = (lp - lm) / (2 * h);
    diff2 += (*a - n) * (*a - n);
    a2 += *a * *a;
    n2 += n * n;
  }
  return std::sqrt(diff2) / (std::sqrt(a2) + std::sqrt(n2));
}
constexpr double kDoubleGradError = 1e-8;

template <class Y, class G>
double dot(const Y& y, const G& g) {
  double s = 0.0;
  auto gi = g.begin();
  for (auto yi = y.begin(); yi != y.end(); ++yi, ++gi) s += *yi * *gi;
  return s;
}

}  // namespace

// ---- matmul, linear -------------------------------------------------------------------------

TEST(ReferenceOps, MatmulHandExample) {
  // [1 2; 3 4] [5; 6] = [1·5 + 2·6; 3·5 + 4·6] = [17; 39]
  const ref::Tensor2d a = {{1, 2}, {3, 4}}, b = {{5}, {6}};
  EXPECT_TRUE(AllClose(ref::matmul(a, b), ref::Tensor2d{{17}, {39}}, 0, 0));
}

TEST(ReferenceOps, LinearMatchesPyTorch) {
  const json j = load_reference("linear");
  const ref::Tensor2d x = ref::rows_of(tensor<3>(j["x"])), dy = ref::rows_of(tensor<3>(j["dy"]));
  const ref::Tensor2d w = dtensor<2>(j["weight"]);
  const ref::Tensor1d b = dtensor<1>(j["bias"]);
  EXPECT_TRUE(
      AllClose(ref::linear_forward(x, w, b), ref::rows_of(tensor<3>(j["y"])), kAtol, kRtol));
  const ref::LinearGrads g = ref::linear_backward(dy, x, w);
  EXPECT_TRUE(AllClose(g.input, ref::rows_of(tensor<3>(j["dx"])), kAtol, kRtol));
  EXPECT_TRUE(AllClose(g.weight, tensor<2>(j["dweight"]), kAtol, kRtol));
  EXPECT_TRUE(AllClose(g.bias, tensor<1>(j["dbias"]), kAtol, kRtol));
}

TEST(ReferenceOps, LinearWithoutBiasAndFiniteDifferences) {
  Rng rng(3);
  ref::Tensor2d x = random_tensor<ref::Tensor2d>(Shape2{4, 5}, rng);
  ref::Tensor2d w = random_tensor<ref::Tensor2d>(Shape2{3, 5}, rng);
  const ref::Tensor2d dy = random_tensor<ref::Tensor2d>(Shape2{4, 3}, rng);
  ref::Tensor1d b = random_tensor<ref::Tensor1d>(Shape1{3}, rng);
  // No bias: y = x Wᵀ exactly.
  EXPECT_TRUE(AllClose(ref::linear_forward(x, w, ref::Tensor1d()), ref::matmul(x, xt::transpose(w)),
                       1e-12, 0));
  const ref::LinearGrads g = ref::linear_backward(dy, x, w);
  auto loss = [&] { return dot(ref::linear_forward(x, w, b), dy); };
  EXPECT_LT(gradient_error(loss, x, g.input), kDoubleGradError);
  EXPECT_LT(gradient_error(loss, w, g.weight), kDoubleGradError);
  EXPECT_LT(gradient_error(loss, b, g.bias), kDoubleGradError);
}

TEST(ReferenceOps, LinearNamesTheShapes) {
  const std::string m = what_of([] {
    ref::linear_forward(ref::Tensor2d::from_shape({2, 4}), ref::Tensor2d::from_shape({3, 5}),
                        ref::Tensor1d());
  });
  EXPECT_NE(
      m.find("reference::linear_forward: weight has shape [3, 5], expected [out, in] with in = 4"),
      std::string::npos)
      << m;
}

// ---- softmax --------------------------------------------------------------------------------

TEST(ReferenceOps, SoftmaxHandExample) {
  // exp(0) : exp(ln 2) = 1 : 2, so [1/3, 2/3]; a -inf entry gets exactly 0.
  const ref::Tensor2d x = {{0.0, std::log(2.0)}, {-kInf, 5.0}};
  EXPECT_TRUE(
      AllClose(ref::softmax_forward(x), ref::Tensor2d{{1.0 / 3, 2.0 / 3}, {0.0, 1.0}}, 1e-15, 0));
}

TEST(ReferenceOps, SoftmaxMatchesPyTorch) {
  const json j = load_reference("softmax");
  ref::Tensor2d x = dtensor<2>(j["x"]);
  const Mask2 mask = mask2(j["mask"]);
  for (std::size_t i = 0; i < x.size(); ++i)
    if (mask.data()[i]) x.data()[i] = -kInf;
  const ref::Tensor2d y = ref::softmax_forward(x);
  EXPECT_TRUE(AllClose(y, tensor<2>(j["y"]), kAtol, kRtol));
  EXPECT_TRUE(
      AllClose(ref::softmax_backward(dtensor<2>(j["dy"]), y), tensor<2>(j["dx"]), kAtol, kRtol));
}

// PyTorch's values (tests/reference/data/nan_rules.json): NaN and +inf rows are NaN, and so are
// the reference's; a row of -inf only is NaN in PyTorch and zeros here.
TEST(ReferenceOps, SoftmaxEdgeRowsMatchPyTorchExceptMaskedRows) {
  const json j = load_reference("nan_rules")["softmax"];
  const ref::Tensor2d x = special_tensor<2>(j["x"]);
  const Tensor2 torch_y = special_tensor<2>(j["y"]);
  const ref::Tensor2d y = ref::softmax_forward(x);
  for (std::size_t i = 0; i < x.shape(0); ++i)
    for (std::size_t c = 0; c < x.shape(1); ++c) {
      bool masked = true;
      for (std::size_t k = 0; k < x.shape(1); ++k) masked = masked && x(i, k) == -kInf;
      if (masked)
        EXPECT_EQ(y(i, c), 0.0) << i << ", " << c;
      else if (std::isnan(torch_y(i, c)))
        EXPECT_TRUE(std::isnan(y(i, c))) << i << ", " << c;
      else
        EXPECT_NEAR(y(i, c), torch_y(i, c), kAtol) << i << ", " << c;
    }
}

// PyTorch 1.13: torch.softmax(torch.tensor([[nan, 1, 2], [nan, -inf, -inf], [inf, 1, 2]]), -1)
// is NaN in every entry of the three rows; a row of -inf only is NaN there too, and zeros here
// (a row masked by the caller: a query whose every key is padding).
TEST(ReferenceOps, SoftmaxPropagatesNaNAndZeroesOnlyFullyMaskedRows) {
  const ref::Tensor2d x = {{kNaN, 1, 2}, {kNaN, -kInf, -kInf}, {kInf, 1, 2}, {-kInf, -kInf, -kInf}};
  const ref::Tensor2d y = ref::softmax_forward(x);
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t c = 0; c < 3; ++c) EXPECT_TRUE(std::isnan(y(r, c))) << r << ", " << c;
  for (std::size_t c = 0; c < 3; ++c) EXPECT_EQ(y(3, c), 0.0);
}

TEST(ReferenceOps, SoftmaxBackwardFiniteDifferences) {
  Rng rng(4);
  ref::Tensor2d x = random_tensor<ref::Tensor2d>(Shape2{3, 5}, rng);
  const ref::Tensor2d dy = random_tensor<ref::Tensor2d>(Shape2{3, 5}, rng);
  const ref::Tensor2d dx = ref::softmax_backward(dy, ref::softmax_forward(x));
  EXPECT_LT(gradient_error([&] { return dot(ref::softmax_forward(x), dy); }, x, dx),
            kDoubleGradError);
}

// ---- layer norm -----------------------------------------------------------------------------

TEST(ReferenceOps, LayerNormMatchesPyTorch) {
  const json j = load_reference("layer_norm");
  for (const char* name : {"plain", "offset"}) {
    SCOPED_TRACE(name);
    const json& c = j["cases"][name];
    const ref::Tensor2d x = ref::rows_of(tensor<3>(c["x"])), dy = ref::rows_of(tensor<3>(c["dy"]));
    const ref::Tensor1d w = dtensor<1>(c["weight"]), b = dtensor<1>(c["bias"]);
    const double eps = c["eps"].get<double>();
    EXPECT_TRUE(AllClose(ref::layer_norm_forward(x, w, b, eps), ref::rows_of(tensor<3>(c["y"])),
                         kAtol, kRtol));
    const ref::LayerNormGrads g = ref::layer_norm_backward(dy, x, w, eps);
    // The offset case (mean ~1000) divides by small deviations: float32 inputs, float32 outputs.
    EXPECT_TRUE(
        AllClose(g.input, ref::rows_of(tensor<3>(c["dx"])), kNormOffsetAtol, kNormOffsetRtol));
    EXPECT_TRUE(AllClose(g.weight, tensor<1>(c["dweight"]), kNormOffsetAtol, kNormOffsetRtol));
    EXPECT_TRUE(AllClose(g.bias, tensor<1>(c["dbias"]), kAtol, kRtol));
  }
}

TEST(ReferenceOps, LayerNormHandExampleAndFiniteDifferences) {
  // x = [1, 3]: mean 2, variance 1, so x̂ = [-1, 1] (eps = 0); y = x̂ · [2, 2] + [0.5, 0.5].
  const ref::Tensor2d hand = ref::layer_norm_forward(ref::Tensor2d{{1, 3}}, ref::Tensor1d{2, 2},
                                                     ref::Tensor1d{0.5, 0.5}, 0.0);
  EXPECT_TRUE(AllClose(hand, ref::Tensor2d{{-1.5, 2.5}}, 1e-15, 0));
  Rng rng(5);
  ref::Tensor2d x = random_tensor<ref::Tensor2d>(Shape2{3, 6}, rng);
  ref::Tensor1d w = random_tensor<ref::Tensor1d>(Shape1{6}, rng);
  ref::Tensor1d b = random_tensor<ref::Tensor1d>(Shape1{6}, rng);
  const ref::Tensor2d dy = random_tensor<ref::Tensor2d>(Shape2{3, 6}, rng);
  const ref::LayerNormGrads g = ref::layer_norm_backward(dy, x, w, 1e-5);
  auto loss = [&] { return dot(ref::layer_norm_forward(x, w, b, 1e-5), dy); };
  EXPECT_LT(gradient_error(loss, x, g.input), kDoubleGradError);
  EXPECT_LT(gradient_error(loss, w, g.weight), kDoubleGradError);
  EXPECT_LT(gradient_error(loss, b, g.bias), kDoubleGradError);
}

// ---- cross-entropy --------------------------------------------------------------------------

TEST(ReferenceOps, CrossEntropyMatchesPyTorch) {
  const json j = load_reference("cross_entropy");
  const ref::Tensor2d z = dtensor<2>(j["logits"]);
  const Index1 t = index1(j["targets"]);
  const std::int64_t ignore = j["ignore_index"].get<std::int64_t>();
  EXPECT_NEAR(ref::cross_entropy_forward(z, t, ignore), j["loss"].get<double>(), 1e-12);
  EXPECT_TRUE(
      AllClose(ref::cross_entropy_backward(z, t, ignore), tensor<2>(j["dlogits"]), kAtol, kRtol));
}

// PyTorch 1.13: F.cross_entropy(z, torch.tensor([-100, -100, -100])) is nan, and its backward
// gives zeros (every row ignored, none contributes).
TEST(ReferenceOps, CrossEntropyWithEveryTargetIgnoredIsNaN) {
  const ref::Tensor2d z = {{1, 2, 3}, {0, 0, 0}, {3, 2, 1}};
  const Index1 t = {-100, -100, -100};
  EXPECT_TRUE(std::isnan(ref::cross_entropy_forward(z, t)));
  EXPECT_TRUE(AllClose(ref::cross_entropy_backward(z, t), xt::zeros<double>({3, 3}), 0, 0));
}

TEST(ReferenceOps, CrossEntropyHandExampleAndFiniteDifferences) {
  // Two equal logits: softmax = [1/2, 1/2], loss = -log(1/2) = ln 2.
  EXPECT_NEAR(ref::cross_entropy_forward(ref::Tensor2d{{0.7, 0.7}}, Index1{1}), std::log(2.0),
              1e-15);
  Rng rng(6);
  ref::Tensor2d z = random_tensor<ref::Tensor2d>(Shape2{4, 5}, rng);
  const Index1 t = {2, -100, 0, 4};
  const ref::Tensor2d dz = ref::cross_entropy_backward(z, t);
  EXPECT_LT(gradient_error([&] { return ref::cross_entropy_forward(z, t); }, z, dz),
            kDoubleGradError);
  const std::string m = what_of([&] { ref::cross_entropy_forward(z, Index1{2, 5, 0, 1}); });
  EXPECT_NE(
      m.find("reference::cross_entropy_forward: targets[1] is 5, expected 0 <= target < C = 5"),
      std::string::npos)
      << m;
}

// ---- attention ------------------------------------------------------------------------------

TEST(ReferenceOps, AttentionMatchesPyTorch) {
  const json j = load_reference("attention");
  const ref::Tensor4d q = dtensor<4>(j["query"]), k = dtensor<4>(j["key"]),
                      v = dtensor<4>(j["value"]);
  const ref::AttentionResult r = ref::scaled_dot_product_attention_forward(
      q, k, v, mask2(j["key_padding_mask"]), dtensor<2>(j["attn_mask"]));
  EXPECT_TRUE(AllClose(r.output, tensor<4>(j["output"]), kAtol, kRtol));
  EXPECT_TRUE(AllClose(r.weights, tensor<4>(j["weights"]), kAtol, kRtol));
  const ref::AttentionGrads g =
      ref::scaled_dot_product_attention_backward(dtensor<4>(j["doutput"]), q, k, v, r.weights);
  EXPECT_TRUE(AllClose(g.query, tensor<4>(j["dquery"]), kAtol, kRtol));
  EXPECT_TRUE(AllClose(g.key, tensor<4>(j["dkey"]), kAtol, kRtol));
  EXPECT_TRUE(AllClose(g.value, tensor<4>(j["dvalue"]), kAtol, kRtol));
}

TEST(ReferenceOps, AttentionWithEveryKeyPaddedGivesZerosAndNaNPropagates) {
  Rng rng(7);
  const ref::Tensor4d q = random_tensor<ref::Tensor4d>(Shape4{1, 1, 3, 2}, rng);
  const ref::Tensor4d k = random_tensor<ref::Tensor4d>(Shape4{1, 1, 2, 2}, rng);
  const Mask2 all_padded = {{true, true}};
  const ref::AttentionResult r = ref::scaled_dot_product_attention_forward(q, k, k, all_padded);
  EXPECT_TRUE(AllClose(r.weights, xt::zeros<double>({1, 1, 3, 2}), 0, 0));
  EXPECT_TRUE(AllClose(r.output, xt::zeros<double>({1, 1, 3, 2}), 0, 0));
  // A NaN in a query gives NaN scores for its row, so NaN weights: not a masked row.
  ref::Tensor4d qn = q;
  qn(0, 0, 1, 0) = kNaN;
  const ref::AttentionResult n = ref::scaled_dot_product_attention_forward(qn, k, k);
  EXPECT_TRUE(std::isnan(n.weights(0, 0, 1, 0)) && std::isnan(n.weights(0, 0, 1, 1)));
  EXPECT_FALSE(std::isnan(n.weights(0, 0, 0, 0)));
}

TEST(ReferenceOps, AttentionBackwardFiniteDifferences) {
  Rng rng(8);
  ref::Tensor4d q = random_tensor<ref::Tensor4d>(Shape4{1, 2, 3, 3}, rng),
                k = random_tensor<ref::Tensor4d>(Shape4{1, 2, 4, 3}, rng),
                v = random_tensor<ref::Tensor4d>(Shape4{1, 2, 4, 3}, rng);
  const ref::Tensor4d dout = random_tensor<ref::Tensor4d>(Shape4{1, 2, 3, 3}, rng);
  const Mask2 mask = {{false, false, true, false}};
  const ref::AttentionResult r = ref::scaled_dot_product_attention_forward(q, k, v, mask);
  const ref::AttentionGrads g =
      ref::scaled_dot_product_attention_backward(dout, q, k, v, r.weights);
  auto loss = [&] {
    return dot(ref::scaled_dot_product_attention_forward(q, k, v, mask).output, dout);
  };
  EXPECT_LT(gradient_error(loss, q, g.query), kDoubleGradError);
  EXPECT_LT(gradient_error(loss, k, g.key), kDoubleGradError);
  EXPECT_LT(gradient_error(loss, v, g.value), kDoubleGradError);
}

TEST(ReferenceOps, SplitAndMergeHeads) {
  // [1, 2, 4] with H = 2: head 0 is columns 0-1, head 1 columns 2-3.
  const ref::Tensor3d x = {{{0, 1, 2, 3}, {4, 5, 6, 7}}};
  const ref::Tensor4d heads = ref::split_heads(x, 2);
  EXPECT_TRUE(AllClose(heads, ref::Tensor4d{{{{0, 1}, {4, 5}}, {{2, 3}, {6, 7}}}}, 0, 0));
  EXPECT_TRUE(AllClose(ref::merge_heads(heads), x, 0, 0));
  EXPECT_NE(what_of([&] { ref::split_heads(x, 3); }).find("must be divisible by num_heads (3)"),
            std::string::npos);
}

// ---- positions ------------------------------------------------------------------------------

TEST(ReferenceOps, SinusoidalMatchesNumPy) {
  const json j = load_reference("positional");
  EXPECT_TRUE(AllClose(ref::sinusoidal_encoding(10, 6), tensor<2>(j["table_d6"]), 1e-7, 0));
  const auto positions = j["positions_d128"].get<std::vector<std::size_t>>();
  const Tensor2 want = tensor<2>(j["table_d128"]);
  for (std::size_t r = 0; r < positions.size(); ++r)
    EXPECT_TRUE(AllClose(xt::view(ref::sinusoidal_encoding(1, 128, positions[r]), 0, xt::all()),
                         xt::view(want, r, xt::all()), 1e-7, 0))
        << "position " << positions[r];
}

TEST(ReferenceOps, PairFrequencyIsTenThousandToTheMinusTwoIOverWidth) {
  // width 8: 10000^(-2i/8) = 10^(-i) exactly in decimal, so 1, 0.1, 0.01, 0.001
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(ref::pair_frequency(i, 8), std::pow(10.0, -double(i)), 1e-15) << "i = " << i;
  // shared by the sinusoidal encoding and RoPE: PE(p, 2i) = sin(p ω_i), and RoPE turns pair i of
  // position p by p ω_i, so rotating (0, 1) gives (-sin(p ω_i), cos(p ω_i))
  const ref::Tensor2d pe = ref::sinusoidal_encoding(8, 8);
  const ref::Tensor2d turned = ref::rope_forward(ref::Tensor2d{{0, 1, 0, 1, 0, 1, 0, 1}}, {7.0});
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(pe(7, 2 * i), std::sin(7.0 * std::pow(10.0, -double(i))), 1e-15);
    EXPECT_NEAR(turned(0, 2 * i), -pe(7, 2 * i), 1e-15);
    EXPECT_NEAR(turned(0, 2 * i + 1), pe(7, 2 * i + 1), 1e-15);
  }
}

TEST(ReferenceOps, AlibiSlopesMatchThePapersCode) {
  const json j = load_reference("position_in_attention");
  for (auto it = j["alibi_slopes"].begin(); it != j["alibi_slopes"].end(); ++it) {
    const std::size_t H = std::stoul(it.key());
    const std::vector<double> want = it.value().get<std::vector<double>>();
    const std::vector<double> got = ref::alibi_slopes(H);
    ASSERT_EQ(got.size(), H);
    for (std::size_t h = 0; h < H; ++h)
      EXPECT_NEAR(got[h], want[h], 1e-15) << "H = " << H << ", h = " << h;
  }
  // bias(i, j) = −m·|i − j|
  EXPECT_TRUE(
      AllClose(ref::alibi_bias(0.5, 2, 3), ref::Tensor2d{{0, -0.5, -1}, {-0.5, 0, -0.5}}, 0, 0));
}

TEST(ReferenceOps, RopeHandExampleAndBackward) {
  // Dh = 2: θ_0 = 1, so position p turns (1, 0) by p radians: (cos p, sin p).
  const ref::Tensor2d y = ref::rope_forward(ref::Tensor2d{{1, 0}, {1, 0}}, {0.0, 0.5});
  EXPECT_TRUE(AllClose(y, ref::Tensor2d{{1, 0}, {std::cos(0.5), std::sin(0.5)}}, 1e-15, 0));
  // The backward is the transpose of the rotation: <R x, g> = <x, Rᵀ g>.
  Rng rng(9);
  ref::Tensor2d x = random_tensor<ref::Tensor2d>(Shape2{4, 6}, rng);
  const ref::Tensor2d g = random_tensor<ref::Tensor2d>(Shape2{4, 6}, rng);
  const std::vector<double> p = {0, 1, 2, 17};
  EXPECT_LT(
      gradient_error([&] { return dot(ref::rope_forward(x, p), g); }, x, ref::rope_backward(g, p)),
      kDoubleGradError);
}

namespace {
// [B·T, C] rows back to [B, T, C].
ref::Tensor3d unrows(const ref::Tensor2d& m, std::size_t B, std::size_t T) {
  ref::Tensor3d t = ref::Tensor3d::from_shape({B, T, m.shape(1)});
  std::copy(m.begin(), m.end(), t.begin());
  return t;
}

// One head's slice [B, 1, T, Dh] of [B, H, T, Dh].
ref::Tensor4d head(const ref::Tensor4d& x, std::size_t h) {
  return xt::view(x, xt::all(), xt::range(h, h + 1), xt::all(), xt::all());
}

// Self-attention with position inside, composed from the reference ops exactly as
// tests/reference/generate.py composes PyTorch's: in-projection, RoPE on q and k or ALiBi on
// the scores, attention with the key padding mask, out-projection.
struct Composed {
  ref::Tensor3d output;
  ref::Tensor4d weights;
};
Composed attention_with_position(const json& j, const json& c, const std::string& scheme) {
  const StateDict s = state_dict(j["state_dict"]);
  const std::size_t H = j["num_heads"].get<std::size_t>();
  const Tensor3 x = tensor<3>(c["x"]);
  const std::size_t B = x.shape(0), T = x.shape(1), D = x.shape(2), Dh = D / H;
  const ref::Tensor2d w_in = s.at("in_proj_weight"), w_out = s.at("out_proj.weight");
  const ref::Tensor1d b_in = s.at("in_proj_bias"), b_out = s.at("out_proj.bias");
  const ref::Tensor2d qkv = ref::linear_forward(ref::rows_of(x), w_in, b_in);  // [B·T, 3D]
  auto part = [&](std::size_t i) {  // q (0), k (1) or v (2) as [B, H, T, Dh]
    const ref::Tensor2d p = xt::view(qkv, xt::all(), xt::range(i * D, (i + 1) * D));
    return ref::split_heads(unrows(p, B, T), H);
  };
  ref::Tensor4d q = part(0), k = part(1), v = part(2);
  if (scheme == "rope") {
    std::vector<double> positions(T);
    for (std::size_t t = 0; t < T; ++t) positions[t] = double(t);
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t h = 0; h < H; ++h) {
        xt::view(q, b, h) = ref::rope_forward(xt::view(q, b, h), positions);
        xt::view(k, b, h) = ref::rope_forward(xt::view(k, b, h), positions);
      }
  }
  const Mask2 mask = mask2(c["key_padding_mask"]);
  Composed out{{}, ref::Tensor4d::from_shape({B, H, T, T})};
  ref::Tensor4d ctx = ref::Tensor4d::from_shape({B, H, T, Dh});
  const std::vector<double> slopes = ref::alibi_slopes(H);
  for (std::size_t h = 0; h < H; ++h) {
    const ref::Tensor2d bias =
        scheme == "alibi" ? ref::alibi_bias(slopes[h], T, T) : ref::Tensor2d();
    const ref::AttentionResult r =
        ref::scaled_dot_product_attention_forward(head(q, h), head(k, h), head(v, h), mask, bias);
    xt::view(ctx, xt::all(), xt::range(h, h + 1)) = r.output;
    xt::view(out.weights, xt::all(), xt::range(h, h + 1)) = r.weights;
  }
  const ref::Tensor2d y = ref::linear_forward(ref::rows_of(ref::merge_heads(ctx)), w_out, b_out);
  out.output = unrows(y, B, T);
  return out;
}
}  // namespace

TEST(ReferenceOps, RopeAndAlibiInsideAttentionMatchPyTorch) {
  const json j = load_reference("position_in_attention");
  for (const std::string scheme : {"rope", "alibi"})
    for (const std::string suffix : {"", "_masked"}) {
      SCOPED_TRACE(scheme + suffix);
      const json& c = j[scheme + suffix];
      const Composed r = attention_with_position(j, c, scheme);
      EXPECT_TRUE(AllClose(r.output, tensor<3>(c["output"]), kAtol, kRtol));
      EXPECT_TRUE(AllClose(r.weights, tensor<4>(c["weights"]), kAtol, kRtol));
    }
}

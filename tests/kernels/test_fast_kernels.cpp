// The fast kernels against their references: the vectorised exp (against double-precision
// std::exp), the row softmax (against reference::softmax_forward), the row layer norm (against
// reference::layer_norm_forward), relu in place, and the modules whose inference path was
// rearranged for speed (one reused score buffer, residual sums in place) against the reference
// encoder (lib/src/reference/encoder_layer.cpp, through tests/support/oracle.hpp).
#include <gtest/gtest.h>
#include <xtensor/xview.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support/allclose.hpp"
#include "support/oracle.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/core/random.hpp"
#include "xenc/nn/multihead_attention.hpp"
#include "xenc/nn/transformer_encoder.hpp"
#include "xenc/ops/activation.hpp"
#include "xenc/ops/attention.hpp"
#include "xenc/ops/layer_norm.hpp"
#include "xenc/ops/linear.hpp"
#include "xenc/ops/softmax.hpp"
#include "xenc/reference/ops.hpp"

extern "C" int openblas_get_num_threads(void);

namespace {

using xenc::Tensor1;
using xenc::Tensor2;
using xenc::Tensor3;
using xenc::Tensor4;

using xenc::test::AllClose;  // support/allclose.hpp: NumPy's |a - e| <= atol + rtol · |e|

// Tolerances: support/tolerances.hpp.
using xenc::test::kExpRelTol;
using xenc::test::kKernelMeanTol;
using xenc::test::kKernelRstdTol;
using xenc::test::kLayerNormAbsTol;
using xenc::test::kLayerNormRelTol;
using xenc::test::kRowSum;
using xenc::test::kSoftmaxAbsTol;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kFltMin = std::numeric_limits<float>::min();  // smallest normal float

Tensor1 exp_of(std::vector<float> xs) {
  Tensor1 t = Tensor1::from_shape({xs.size()});
  std::copy(xs.begin(), xs.end(), t.begin());
  xenc::exp_inplace(t);
  return t;
}

// ---- exp_inplace --------------------------------------------------------------------------------

TEST(FastExp, HandValues) {
  // exp(0) = 1 exactly: k = 0, r = 0, the polynomial is 1, 2^0 = 1.
  // exp(ln 2) = 2, exp(-1) = 0.36787944..., exp(1) = 2.71828182...
  const Tensor1 y = exp_of({0.0f, 0.69314718f, -1.0f, 1.0f});
  EXPECT_EQ(y(0), 1.0f);
  EXPECT_NEAR(y(1), 2.0, 2.0 * kExpRelTol);
  EXPECT_NEAR(y(2), 0.36787944117144233, 0.37 * kExpRelTol);
  EXPECT_NEAR(y(3), 2.718281828459045, 2.72 * kExpRelTol);
}

TEST(FastExp, MatchesStdExpOverTheWholeRange) {
  // A dense sweep of [-87.3, 88.3] (about 700k points, not a multiple of the SIMD width, so
  // the loop's remainder is covered), against exp in double precision.
  const float lo = -87.3f, hi = 88.3f;
  const std::size_t n = 700001;
  Tensor1 x = Tensor1::from_shape({n});
  for (std::size_t i = 0; i < n; ++i) x(i) = lo + (hi - lo) * float(i) / float(n - 1);
  Tensor1 y = x;
  xenc::exp_inplace(y);
  double worst = 0.0;
  float worst_x = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    const double ref = std::exp(double(x(i)));
    const double rel = std::fabs(double(y(i)) - ref) / ref;
    if (rel > worst) {
      worst = rel;
      worst_x = x(i);
    }
  }
  EXPECT_LE(worst, kExpRelTol) << "worst relative error at x = " << worst_x;
}

TEST(FastExp, EdgesGiveZeroInfinityAndNaN) {
  // exp(-inf) = 0 exactly (masked scores); below ln(FLT_MIN) ≈ -87.34 the result is flushed to 0
  // (std::exp gives a subnormal < FLT_MIN there: the absolute difference is < FLT_MIN).
  const Tensor1 y = exp_of({-kInf, -1e30f, -1000.0f, -100.0f, -87.4f, 89.0f, kInf,
                            std::numeric_limits<float>::quiet_NaN()});
  EXPECT_EQ(y(0), 0.0f);
  EXPECT_EQ(y(1), 0.0f);
  EXPECT_EQ(y(2), 0.0f);
  EXPECT_EQ(y(3), 0.0f);
  EXPECT_LT(std::fabs(double(y(4)) - std::exp(-87.4)), double(kFltMin));
  EXPECT_EQ(y(5), kInf);
  EXPECT_EQ(y(6), kInf);
  EXPECT_TRUE(std::isnan(y(7)));
}

// ---- softmax_forward (kernels::softmax_rows) ----------------------------------------------------

TEST(FastSoftmax, MatchesTheReferenceForEveryRowLength) {
  // Row lengths around the SIMD widths (4 and 8 floats) and a long one, with masked (-inf) and
  // very negative entries mixed in.
  xenc::Rng rng(7);
  for (std::size_t cols : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 9u, 15u, 16u, 17u, 33u, 1000u}) {
    SCOPED_TRACE("cols = " + std::to_string(cols));
    Tensor2 x = Tensor2::from_shape({6, cols});
    xenc::fill_normal(x, rng, 0.0f, 4.0f);
    for (std::size_t c = 0; c < cols; c += 3) x(1, c) = -kInf;            // masked keys
    for (std::size_t c = 1; c < cols; c += 4) x(2, c) = -1e30f;           // "almost masked"
    for (std::size_t c = 0; c < cols; ++c) x(3, c) = -200.0f - float(c);  // all far below 0
    x(4, 0) = 80.0f;                                                      // one dominant entry
    Tensor2 y = xenc::softmax_forward(x);
    EXPECT_TRUE(AllClose(y, xenc::reference::softmax_forward(x), kSoftmaxAbsTol, 0.0));
    // masked entries are exactly 0; every row sums to 1 (0 when every entry is masked,
    // as row 1 is for cols = 1)
    for (std::size_t c = 0; c < cols; c += 3) EXPECT_EQ(y(1, c), 0.0f);
    for (std::size_t r = 0; r < 6; ++r) {
      double sum = 0.0;
      bool any_key = false;
      for (std::size_t c = 0; c < cols; ++c) {
        sum += y(r, c);
        any_key = any_key || x(r, c) > -kInf;
      }
      EXPECT_NEAR(sum, any_key ? 1.0 : 0.0, kRowSum) << "row " << r;
    }
  }
}

// (the strided-row and fully-masked-row cases of the kernel: tests/kernels/test_kernels.cpp)

// ---- layer_norm_forward (kernels::layer_norm_rows) ----------------------------------------------

TEST(FastLayerNorm, MatchesTheReferenceAndWorksInPlace) {
  xenc::Rng rng(11);
  for (std::size_t D : {1u, 3u, 4u, 8u, 17u, 64u, 512u}) {
    SCOPED_TRACE("D = " + std::to_string(D));
    Tensor3 x = Tensor3::from_shape({2, 5, D});
    xenc::fill_normal(x, rng, 3.0f, 2.0f);  // mean far from 0: tests the two-pass variance
    Tensor1 w = Tensor1::from_shape({D}), b = Tensor1::from_shape({D});
    xenc::fill_normal(w, rng);
    xenc::fill_normal(b, rng);
    const xenc::reference::Tensor2d ref =
        xenc::reference::layer_norm_forward(xenc::reference::rows_of(x), w, b, 1e-5);
    xenc::LayerNormCache cache;
    const Tensor3 y = xenc::layer_norm_forward(x, w, b, 1e-5f, cache);
    EXPECT_TRUE(AllClose(xenc::reference::rows_of(y), ref, kLayerNormAbsTol, kLayerNormRelTol));
    // the cached statistics against double precision
    for (std::size_t n = 0; n < 10; ++n) {
      double mean = 0.0, var = 0.0;
      for (std::size_t d = 0; d < D; ++d) mean += x.data()[n * D + d];
      mean /= double(D);
      for (std::size_t d = 0; d < D; ++d) var += std::pow(x.data()[n * D + d] - mean, 2);
      var /= double(D);
      EXPECT_NEAR(cache.mean(n), mean, kKernelMeanTol * (1.0 + std::fabs(mean)));
      EXPECT_NEAR(cache.rstd(n), 1.0 / std::sqrt(var + 1e-5),
                  kKernelRstdTol / std::sqrt(var + 1e-5));
    }
    // (in place, y = x, is checked on the kernel in tests/kernels/test_kernels.cpp)
  }
}

TEST(FastRelu, MatchesTheDefinitionOnEveryLength) {
  for (std::size_t n : {1u, 7u, 8u, 9u, 37u}) {
    Tensor1 x = Tensor1::from_shape({n});
    for (std::size_t i = 0; i < n; ++i) x(i) = float(i % 5) - 2.0f;  // -2 -1 0 1 2 ...
    Tensor1 y = x;
    xenc::activation_inplace(xenc::Activation::relu, y);
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(y(i), x(i) > 0.0f ? x(i) : 0.0f);
  }
}

// ---- modules: the inference path against the reference ----------------------------------------

TEST(FastModules, MultiheadAttentionInferenceMatchesNaiveAndKeepsBlasThreads) {
  // T = 96, D = 64, H = 4, B = 2: the no-grad path reuses one [T, T] buffer for all 8 heads.
  xenc::MultiheadAttention mha(64, 4, 0.0f, true, 3);
  xenc::Rng rng(5);
  xenc::fill_normal(mha.in_proj_bias, rng, 0.0f, 0.1f);
  Tensor3 x = Tensor3::from_shape({2, 96, 64});
  xenc::fill_normal(x, rng);
  const Tensor3 ref = xenc::test::reference_run(mha, x, xenc::Mask2()).y;
  const int blas_threads = openblas_get_num_threads();
  Tensor3 y_no_grad;
  {
    xenc::NoGradGuard no_grad;
    y_no_grad = mha.forward(x);
  }
  EXPECT_EQ(openblas_get_num_threads(), blas_threads);
  const Tensor3 y_grad = mha.forward(x);  // keeps P for every head instead of one buffer
  EXPECT_TRUE(AllClose(y_no_grad, ref, xenc::test::kReferenceAtol, xenc::test::kReferenceRtol));
  EXPECT_TRUE(AllClose(y_grad, y_no_grad, 0.0, 0.0));  // same arithmetic, bit for bit
}

TEST(FastModules, EncoderLayerEvalMatchesTheFormulaPostNormAndPreNorm) {
  for (bool norm_first : {false, true}) {
    SCOPED_TRACE(norm_first ? "pre-norm" : "post-norm");
    xenc::EncoderLayerConfig c;
    c.d_model = 32;
    c.nhead = 4;
    c.dim_feedforward = 64;
    c.dropout = 0.1f;  // must be inactive: evaluation mode
    c.norm_first = norm_first;
    xenc::TransformerEncoderLayer layer(c, 9);
    xenc::Rng rng(4);
    xenc::fill_normal(layer.norm1.weight, rng, 1.0f, 0.2f);
    xenc::fill_normal(layer.norm2.bias, rng, 0.0f, 0.2f);
    Tensor3 x = Tensor3::from_shape({2, 7, 32});
    xenc::fill_normal(x, rng);
    // the reference encoder (lib/src/reference/encoder_layer.cpp) computes the formula:
    // post-norm: h = norm1(x + sa(x)); y = norm2(h + ff(h))
    // pre-norm:  h = x + sa(norm1(x)); y = h + ff(norm2(h))
    const Tensor3 ref = xenc::test::reference_run(layer, x, xenc::Mask2()).y;
    Tensor3 y_no_grad;
    {
      xenc::NoGradGuard no_grad;
      y_no_grad = layer.forward(x);
    }
    const Tensor3 y_grad = layer.forward(x);
    EXPECT_TRUE(AllClose(y_no_grad, ref, xenc::test::kReferenceAtol, xenc::test::kReferenceRtol));
    EXPECT_TRUE(AllClose(y_grad, y_no_grad, 0.0, 0.0));
    // training mode with dropout changes the output (dropout really is applied there)
    layer.train();
    const Tensor3 y_train = layer.forward(x);
    EXPECT_FALSE(AllClose(y_train, y_no_grad, xenc::test::kDropoutVisible, 0.0));
  }
}

}  // namespace

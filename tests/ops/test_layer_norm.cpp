// Layer norm over the last axis: biased variance, eps inside the square root (as PyTorch).
#include <gtest/gtest.h>

#include <cmath>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/ops/layer_norm.hpp"
#include "xenc/reference/ops.hpp"

using namespace xenc;
using namespace xenc::test;

// x = [1, 2, 3, 4]: mean = 2.5, var = (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25 (biased),
// y = (x - 2.5) / sqrt(1.25 + eps) = [-1.5, -0.5, 0.5, 1.5] / 1.1180385 (eps = 1e-5)
// with weight [1, 1, 2, 1] and bias [0, 0, 0, 1]: y[2] doubles and y[3] moves up by 1.
TEST(LayerNorm, HandExample) {
  const Tensor2 x = {{1, 2, 3, 4}};
  const Tensor1 w = {1, 1, 2, 1}, b = {0, 0, 0, 1};
  const double s = std::sqrt(1.25 + 1e-5);
  const Tensor2 expected = {
      {float(-1.5 / s), float(-0.5 / s), float(2 * 0.5 / s), float(1.5 / s + 1)}};
  LayerNormCache cache;
  EXPECT_TRUE(AllClose(layer_norm_forward(x, w, b, 1e-5f, cache), expected, kOpAtol, kOpRtol));
  EXPECT_FLOAT_EQ(cache.mean(0), 2.5f);
  EXPECT_NEAR(cache.rstd(0), 1.0 / s, kOpAtol);
}

TEST(LayerNorm, MatchesPyTorch) {
  const json ref = load_reference("layer_norm");
  for (const char* name : {"plain", "offset"}) {
    SCOPED_TRACE(name);
    const json& c = ref["cases"][name];
    const Tensor3 y = layer_norm_forward(tensor<3>(c["x"]), tensor<1>(c["weight"]),
                                         tensor<1>(c["bias"]), c["eps"].get<float>());
    EXPECT_TRUE(AllClose(y, tensor<3>(c["y"]), kNormOffsetAtol, kOpRtol));
  }
}

TEST(LayerNorm, OutputHasZeroMeanAndUnitVariance) {
  Rng rng(8);
  Tensor3 x = random_tensor<Tensor3>(std::array<std::size_t, 3>{3, 4, 64}, rng, 3.0f);
  x += 5.0f;
  const Tensor1 w = xt::ones<float>({64}), b = xt::zeros<float>({64});
  const float eps = 1e-5f;
  const Tensor3 y = layer_norm_forward(x, w, b, eps);
  for (std::size_t r = 0; r < 12; ++r) {
    double mean = 0, var = 0, xm = 0, xv = 0;
    for (std::size_t d = 0; d < 64; ++d) xm += x.data()[r * 64 + d];
    xm /= 64;
    for (std::size_t d = 0; d < 64; ++d) {
      mean += y.data()[r * 64 + d];
      xv += std::pow(x.data()[r * 64 + d] - xm, 2);
    }
    mean /= 64;
    xv /= 64;
    for (std::size_t d = 0; d < 64; ++d) var += std::pow(y.data()[r * 64 + d] - mean, 2);
    var /= 64;
    EXPECT_NEAR(mean, 0.0, kNormMoment) << "row " << r;
    // the biased variance of y is var(x) / (var(x) + eps): 1 up to the eps correction
    EXPECT_NEAR(var, xv / (xv + eps), kNormMoment) << "row " << r;
    EXPECT_NEAR(var, 1.0, kUnitVariance) << "row " << r;
  }
}

TEST(LayerNorm, AgreesWithTheReference) {
  Rng rng(9);
  auto x = random_tensor<Tensor2>(std::array<std::size_t, 2>{37, 48}, rng, 2.0f);
  auto w = random_tensor<Tensor1>(std::array<std::size_t, 1>{48}, rng);
  auto b = random_tensor<Tensor1>(std::array<std::size_t, 1>{48}, rng);
  EXPECT_TRUE(AllClose(layer_norm_forward(x, w, b, 1e-5f),
                       reference::layer_norm_forward(x, w, b, 1e-5), kNaiveAtol, kNaiveRtol));
}

TEST(LayerNorm, BackwardMatchesPyTorch) {
  const json ref = load_reference("layer_norm");
  for (const char* name : {"plain", "offset"}) {
    SCOPED_TRACE(name);
    const json& c = ref["cases"][name];
    const Tensor3 x = tensor<3>(c["x"]);
    const Tensor1 w = tensor<1>(c["weight"]);
    LayerNormCache cache;
    layer_norm_forward(x, w, tensor<1>(c["bias"]), c["eps"].get<float>(), cache);
    const auto g = layer_norm_backward(tensor<3>(c["dy"]), x, w, cache);
    EXPECT_TRUE(AllClose(g.input, tensor<3>(c["dx"]), kNormGradAtol, kNormGradRtol));
    EXPECT_TRUE(AllClose(g.weight, tensor<1>(c["dweight"]), kNormOffsetAtol, kNormOffsetRtol));
    EXPECT_TRUE(AllClose(g.bias, tensor<1>(c["dbias"]), kNormOffsetAtol, kOpRtol));
  }
}

TEST(LayerNorm, GradientsMatchFiniteDifferences) {
  Rng rng(10);
  auto x = random_tensor<Tensor3>(std::array<std::size_t, 3>{2, 3, 6}, rng);
  auto w = random_tensor<Tensor1>(std::array<std::size_t, 1>{6}, rng);
  auto b = random_tensor<Tensor1>(std::array<std::size_t, 1>{6}, rng);
  auto G = random_tensor<Tensor3>(x.shape(), rng);
  LayerNormCache cache;
  layer_norm_forward(x, w, b, 1e-5f, cache);
  const auto g = layer_norm_backward(G, x, w, cache);
  auto loss = [&] { return dot_loss(layer_norm_forward(x, w, b, 1e-5f), G); };
  EXPECT_TRUE(GradientsMatch(loss,
                             {input_target("x", x, g.input), input_target("weight", w, g.weight),
                              input_target("bias", b, g.bias)},
                             kGradOp));
}

TEST(LayerNorm, WrongWeightShapeNamesBothShapes) {
  const Tensor3 x = xt::zeros<float>({2, 3, 6});
  try {
    layer_norm_forward(x, Tensor1(xt::ones<float>({5})), Tensor1(xt::zeros<float>({6})), 1e-5f);
    FAIL() << "expected shape_error";
  } catch (const shape_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("layer_norm_forward: weight has shape [5]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("D = 6"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2, 3, 6]"), std::string::npos) << msg;
  }
  EXPECT_THROW(
      layer_norm_forward(x, Tensor1(xt::ones<float>({6})), Tensor1(xt::zeros<float>({2})), 1e-5f),
      shape_error);
}

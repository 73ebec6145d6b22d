// linear_forward / linear_backward: y = x Wᵀ + b (the loop reference is reference::linear_forward).
#include <gtest/gtest.h>

#include <array>

#include <xtensor/xmanipulation.hpp>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/ops/linear.hpp"
#include "xenc/reference/ops.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
// The plain gradients: linear_backward into zeroed buffers, x flattened to its [N, in] rows.
template <std::size_t R>
LinearGrads<R> gradients(const xt::xtensor<float, R>& grad_y, const xt::xtensor<float, R>& x,
                         const Tensor2& w, bool has_bias) {
  const std::size_t in = w.shape(1);
  const Tensor2 rows = xt::reshape_view(x, std::array<std::size_t, 2>{x.size() / in, in});
  LinearGrads<R> g;
  g.weight = xt::zeros<float>(w.shape());
  if (has_bias) g.bias = xt::zeros<float>({w.shape(0)});
  g.input = linear_backward(grad_y, rows, w, g.weight, g.bias);
  return g;
}
}  // namespace

// x = [1, 2], W = [[1, 0], [0, 1], [1, 1]], b = [0.5, 0, -1]
// y = [1·1 + 2·0 + 0.5, 1·0 + 2·1 + 0, 1·1 + 2·1 - 1] = [1.5, 2, 2]
// backward with dy = [1, 1, 1]: dx = dy W = [1 + 0 + 1, 0 + 1 + 1] = [2, 2],
// dW = dyᵀ x = [[1, 2], [1, 2], [1, 2]], db = [1, 1, 1]
TEST(Linear, HandExample) {
  const Tensor2 x = {{1, 2}};
  const Tensor2 w = {{1, 0}, {0, 1}, {1, 1}};
  const Tensor1 b = {0.5f, 0.0f, -1.0f};
  EXPECT_TRUE(AllClose(linear_forward(x, w, b), Tensor2{{1.5f, 2.0f, 2.0f}}, 0.0, 0.0));
  const auto g = gradients(Tensor2{{1, 1, 1}}, x, w, true);
  EXPECT_TRUE(AllClose(g.input, Tensor2{{2, 2}}, 0.0, 0.0));
  EXPECT_TRUE(AllClose(g.weight, Tensor2{{1, 2}, {1, 2}, {1, 2}}, 0.0, 0.0));
  EXPECT_TRUE(AllClose(g.bias, Tensor1{1, 1, 1}, 0.0, 0.0));
}

TEST(Linear, MatchesPyTorch) {
  const json ref = load_reference("linear");
  const Tensor3 y =
      linear_forward(tensor<3>(ref["x"]), tensor<2>(ref["weight"]), tensor<1>(ref["bias"]));
  EXPECT_TRUE(AllClose(y, tensor<3>(ref["y"]), kOpAtol, kOpRtol));
}

TEST(Linear, AgreesWithTheReferenceWithoutBias) {
  Rng rng(5);
  auto x = random_tensor<Tensor3>(std::array<std::size_t, 3>{3, 7, 16}, rng);
  auto w = random_tensor<Tensor2>(std::array<std::size_t, 2>{24, 16}, rng);
  const reference::Tensor2d expected = reference::linear_forward(reference::rows_of(x), w, {});
  EXPECT_TRUE(AllClose(reference::rows_of(linear_forward(x, w, Tensor1())), expected, kNaiveAtol,
                       kNaiveRtol));
}

TEST(Linear, BackwardMatchesPyTorch) {
  const json ref = load_reference("linear");
  const auto g =
      gradients(tensor<3>(ref["dy"]), tensor<3>(ref["x"]), tensor<2>(ref["weight"]), true);
  EXPECT_TRUE(AllClose(g.input, tensor<3>(ref["dx"]), kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(g.weight, tensor<2>(ref["dweight"]), kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(g.bias, tensor<1>(ref["dbias"]), kOpAtol, kOpRtol));
}

TEST(Linear, GradientsMatchFiniteDifferences) {
  Rng rng(7);
  auto x = random_tensor<Tensor3>(std::array<std::size_t, 3>{2, 3, 5}, rng);
  auto w = random_tensor<Tensor2>(std::array<std::size_t, 2>{4, 5}, rng, 0.5f);
  auto b = random_tensor<Tensor1>(std::array<std::size_t, 1>{4}, rng);
  auto G = random_tensor<Tensor3>(std::array<std::size_t, 3>{2, 3, 4}, rng);
  const auto g = gradients(G, x, w, true);
  auto loss = [&] { return dot_loss(linear_forward(x, w, b), G); };
  EXPECT_TRUE(GradientsMatch(loss,
                             {input_target("x", x, g.input), input_target("weight", w, g.weight),
                              input_target("bias", b, g.bias)},
                             kGradOp));
}

// The backward accumulates as a module needs (PyTorch accumulates .grad): dW and db are added to
// what the buffers held, dx does not depend on them; a [B, T, out] gradient against [B·T, in] rows.
TEST(Linear, BackwardAddsIntoTheGradientBuffers) {
  Rng rng(9);
  auto x = random_tensor<Tensor3>(std::array<std::size_t, 3>{2, 3, 5}, rng);
  auto w = random_tensor<Tensor2>(std::array<std::size_t, 2>{4, 5}, rng);
  auto G = random_tensor<Tensor3>(std::array<std::size_t, 3>{2, 3, 4}, rng);
  const auto g = gradients(G, x, w, true);
  const Tensor2 x_rows = xt::reshape_view(x, std::array<std::size_t, 2>{6, 5});
  Tensor2 weight_grad = random_tensor<Tensor2>(std::array<std::size_t, 2>{4, 5}, rng);
  Tensor1 bias_grad = random_tensor<Tensor1>(std::array<std::size_t, 1>{4}, rng);
  const Tensor2 weight_before = weight_grad;
  const Tensor1 bias_before = bias_grad;
  const Tensor3 dx = linear_backward(G, x_rows, w, weight_grad, bias_grad);
  EXPECT_TRUE(AllClose(dx, g.input, kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(weight_grad, Tensor2(weight_before + g.weight), kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(bias_grad, Tensor1(bias_before + g.bias), kOpAtol, kOpRtol));
  // without a bias gradient (empty): only dW accumulates
  Tensor1 no_bias;
  linear_backward(G, x_rows, w, weight_grad, no_bias);
  EXPECT_TRUE(AllClose(weight_grad, Tensor2(weight_before + 2.0f * g.weight), kOpAtol, kOpRtol));
  // a gradient buffer of the wrong shape is named
  Tensor2 wrong = xt::zeros<float>({5, 4});
  try {
    linear_backward(G, x_rows, w, wrong, bias_grad);
    FAIL() << "expected shape_error";
  } catch (const shape_error& e) {
    EXPECT_STREQ(e.what(),
                 "linear_backward: weight_grad has shape [5, 4], expected "
                 "weight's shape [4, 5]");
  }
}

TEST(Linear, WrongInputAndBiasShapesNameBothShapes) {
  const Tensor2 w = xt::zeros<float>({4, 5});
  try {
    linear_forward(Tensor3(xt::zeros<float>({2, 3, 6})), w, Tensor1(xt::zeros<float>({4})));
    FAIL() << "expected shape_error";
  } catch (const shape_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("linear_forward"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2, 3, 6]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("in = 5"), std::string::npos) << msg;
  }
  try {
    linear_forward(Tensor2(xt::zeros<float>({2, 5})), w, Tensor1(xt::zeros<float>({3})));
    FAIL() << "expected shape_error";
  } catch (const shape_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("linear_forward: bias has shape [3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("out = 4"), std::string::npos) << msg;
  }
  Tensor2 dw = xt::zeros<float>({4, 5});
  Tensor1 db = xt::zeros<float>({4});
  EXPECT_THROW(linear_backward(Tensor2(xt::zeros<float>({2, 3})), Tensor2(xt::zeros<float>({2, 5})),
                               w, dw, db),
               shape_error);
}

// The checker itself can fail: a gradient off by a factor, or with one wrong entry, is caught.
TEST(Linear, GradientCheckerRejectsWrongGradients) {
  Rng rng(8);
  auto x = random_tensor<Tensor2>(std::array<std::size_t, 2>{3, 4}, rng);
  auto w = random_tensor<Tensor2>(std::array<std::size_t, 2>{2, 4}, rng);
  auto G = random_tensor<Tensor2>(std::array<std::size_t, 2>{3, 2}, rng);
  const auto g = gradients(G, x, w, false);
  auto loss = [&] { return dot_loss(linear_forward(x, w, Tensor1()), G); };
  EXPECT_TRUE(GradientsMatch(loss, {input_target("x", x, g.input)}, kGradOp));
  const Tensor2 scaled = 1.01f * g.input;
  EXPECT_FALSE(GradientsMatch(loss, {input_target("x", x, scaled)}, kGradOp));
  Tensor2 one_wrong = g.input;
  one_wrong(1, 2) += 0.05f;
  EXPECT_FALSE(GradientsMatch(loss, {input_target("x", x, one_wrong)}, kGradOp));
}

// ReLU and GELU (erf form).
#include <gtest/gtest.h>

#include <cmath>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/ops/activation.hpp"

using namespace xenc;
using namespace xenc::test;

// relu([-1, 0.5, 2]) = [0, 0.5, 2]
// gelu(1) = 1/2 · (1 + erf(1/√2)) = 0.5 · 1.6826895 = 0.8413447;  gelu(-1) = -1 + 0.8413447 =
// -0.1586553 gelu'(1) = Φ(1) + 1 · φ(1) = 0.8413447 + 0.2419707 = 1.0833155
TEST(Activation, HandExample) {
  const Tensor1 x = {-1.0f, 0.5f, 2.0f};
  EXPECT_TRUE(AllClose(relu_forward(x), Tensor1{0.0f, 0.5f, 2.0f}, 0.0, 0.0));
  EXPECT_TRUE(AllClose(relu_backward(Tensor1{1, 1, 1}, x), Tensor1{0, 1, 1}, 0.0, 0.0));
  const Tensor1 g = gelu_forward(Tensor1{1.0f, -1.0f});
  EXPECT_NEAR(g(0), 0.8413447, kOpAtol);
  EXPECT_NEAR(g(1), -0.1586553, kOpAtol);
  EXPECT_NEAR(gelu_backward(Tensor1{1.0f}, Tensor1{1.0f})(0), 1.0833155, kOpAtol);
}

TEST(Activation, MatchesPyTorch) {
  const json ref = load_reference("activation");
  const Tensor1 x = tensor<1>(ref["x"]), dy = tensor<1>(ref["dy"]);
  EXPECT_TRUE(AllClose(relu_forward(x), tensor<1>(ref["relu"]["y"]), 0.0, 0.0));
  EXPECT_TRUE(AllClose(relu_backward(dy, x), tensor<1>(ref["relu"]["dx"]), 0.0, 0.0));
  EXPECT_TRUE(AllClose(gelu_forward(x), tensor<1>(ref["gelu"]["y"]), kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(gelu_backward(dy, x), tensor<1>(ref["gelu"]["dx"]), kOpAtol, kOpRtol));
  EXPECT_TRUE(AllClose(activation_forward(Activation::gelu, x), gelu_forward(x), 0.0, 0.0));
}

TEST(Activation, GradientsMatchFiniteDifferences) {
  Rng rng(12);
  auto x = random_tensor<Tensor2>(std::array<std::size_t, 2>{4, 6}, rng, 2.0f);
  for (auto& v : x)
    if (std::fabs(v) < 0.1f) v = 0.5f;  // keep relu's kink out of the finite-difference steps
  auto G = random_tensor<Tensor2>(x.shape(), rng);
  for (Activation a : {Activation::relu, Activation::gelu}) {
    SCOPED_TRACE(to_string(a));
    const Tensor2 dx = activation_backward(a, G, x);
    auto loss = [&] { return dot_loss(activation_forward(a, x), G); };
    EXPECT_TRUE(GradientsMatch(loss, {input_target("x", x, dx)}, kGradOp));
  }
}

TEST(Activation, InplaceKernelsMatchTheFunctions) {
  Rng rng(13);
  auto x = random_tensor<Tensor1>(std::array<std::size_t, 1>{50}, rng, 3.0f);
  Tensor1 r = x, g = x;
  activation_inplace(Activation::relu, r);
  activation_inplace(Activation::gelu, g);
  EXPECT_TRUE(AllClose(r, relu_forward(x), 0.0, 0.0));
  EXPECT_TRUE(AllClose(g, gelu_forward(x), 0.0, 0.0));
}

// Backward writes dx into the gradient it is given: moved in, no new buffer. 50 elements: the
// vector loop and its tail; relu's backward is dy where x > 0 (x = 0 gives 0, as PyTorch).
TEST(Activation, BackwardReusesAMovedGradientsBuffer) {
  Rng rng(14);
  auto x = random_tensor<Tensor1>(std::array<std::size_t, 1>{50}, rng, 3.0f);
  x(7) = 0.0f;
  const auto dy = random_tensor<Tensor1>(std::array<std::size_t, 1>{50}, rng);
  for (Activation a : {Activation::relu, Activation::gelu}) {
    SCOPED_TRACE(to_string(a));
    Tensor1 g = dy;
    const float* buffer = g.data();
    const Tensor1 dx = activation_backward(a, std::move(g), x);
    EXPECT_EQ(dx.data(), buffer);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float expected = a == Activation::relu
                                 ? (x(i) > 0.0f ? dy(i) : 0.0f)
                                 : gelu_backward(Tensor1{dy(i)}, Tensor1{x(i)})(0);
      EXPECT_EQ(dx(i), expected) << "i = " << i;
    }
  }
}

TEST(Activation, UnknownNameAndShapeMismatchAreClearErrors) {
  EXPECT_EQ(parse_activation("gelu"), Activation::gelu);
  try {
    parse_activation("tanh");
    FAIL() << "expected config_error";
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("\"tanh\""), std::string::npos) << e.what();
  }
  try {
    relu_backward(Tensor1(xt::zeros<float>({3})), Tensor1(xt::zeros<float>({4})));
    FAIL() << "expected shape_error";
  } catch (const shape_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("relu_backward"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[4]"), std::string::npos) << msg;
  }
}

// feed_forward_in_chunks (ops/feed_forward.hpp): act(x W1ᵀ + b1) W2ᵀ + b2 on chunks of rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "support/allclose.hpp"
#include "support/helpers.hpp"
#include "xenc/core/error.hpp"
#include "xenc/core/random.hpp"
#include "xenc/ops/feed_forward.hpp"
#include "xenc/ops/linear.hpp"
#include "xenc/reference/ops.hpp"

using namespace xenc;
using namespace xenc::test;

// Read and written in place, against the formula in double (reference::linear_forward, the
// activation written out), and, bit for bit, against linear_forward and the activation on a copy of
// each chunk's rows (the same GEMMs): chunks of 512 rows over B·T = 1400 cross the sequences'
// boundary and end short.
TEST(FeedForwardInChunks, EqualsTheFormulaAndEachChunksLinearsBitForBit) {
  const std::size_t B = 2, T = 700, in = 24, F = 40, out = 16, C = 512;
  Rng rng(8);
  const Tensor3 x = random_tensor<Tensor3>(std::array<std::size_t, 3>{B, T, in}, rng);
  const Tensor2 w1 = random_tensor<Tensor2>(std::array<std::size_t, 2>{F, in}, rng, 0.3f);
  const Tensor2 w2 = random_tensor<Tensor2>(std::array<std::size_t, 2>{out, F}, rng, 0.3f);
  const Tensor1 b1 = random_tensor<Tensor1>(std::array<std::size_t, 1>{F}, rng);
  const Tensor1 b2 = random_tensor<Tensor1>(std::array<std::size_t, 1>{out}, rng);
  for (Activation act : {Activation::relu, Activation::gelu})
    for (bool bias : {true, false}) {
      SCOPED_TRACE(::testing::Message() << to_string(act) << (bias ? ", bias" : ", no bias"));
      const Tensor1 c1 = bias ? b1 : Tensor1(), c2 = bias ? b2 : Tensor1();
      const Tensor3 y = feed_forward_in_chunks(x, w1, c1, act, w2, c2, C);
      ASSERT_EQ(y.shape(), (std::array<std::size_t, 3>{B, T, out}));
      // the formula, in double
      const auto no_bias_d = [](std::size_t n) {
        return reference::Tensor1d(xt::zeros<double>({n}));
      };
      reference::Tensor2d h =
          reference::linear_forward(reference::rows_of(x), reference::rows_of(w1),
                                    bias ? reference::Tensor1d(b1) : no_bias_d(F));
      for (double& v : h)
        v = act == Activation::relu ? std::max(v, 0.0)
                                    : 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
      const reference::Tensor2d expected = reference::linear_forward(
          h, reference::rows_of(w2), bias ? reference::Tensor1d(b2) : no_bias_d(out));
      const Tensor2 expected_f = xt::cast<float>(expected);
      const Tensor2 y_rows = xt::reshape_view(y, std::array<std::size_t, 2>{B * T, out});
      EXPECT_TRUE(AllClose(y_rows, expected_f, 1e-5, 1e-4));
      // each chunk's rows copied out, through the two linears and the activation
      const Tensor2 x_rows = xt::reshape_view(x, std::array<std::size_t, 2>{B * T, in});
      for (std::size_t r0 = 0; r0 < B * T; r0 += C) {
        const std::size_t r1 = std::min(B * T, r0 + C);
        const Tensor2 chunk = xt::view(x_rows, xt::range(r0, r1), xt::all());
        Tensor2 u = linear_forward(chunk, w1, c1);
        activation_inplace(act, u);
        const Tensor2 v = linear_forward(u, w2, c2);
        const Tensor2 got = xt::view(y_rows, xt::range(r0, r1), xt::all());
        EXPECT_EQ(got, v) << "rows " << r0 << " .. " << r1;
      }
    }
}

TEST(FeedForwardInChunks, WrongShapesAndAChunkOfNoRowsAreRefusedByName) {
  const Tensor3 x = xt::zeros<float>({1, 4, 6});
  const Tensor2 w1 = xt::zeros<float>({8, 6}), w2 = xt::zeros<float>({6, 8});
  const Tensor1 none;
  std::string msg =
      what_of([&] { feed_forward_in_chunks(x, w1, none, Activation::relu, w2, none, 0); });
  EXPECT_NE(msg.find("feed_forward_in_chunks: chunk_rows is 0, expected >= 1"), std::string::npos)
      << msg;
  EXPECT_THROW(feed_forward_in_chunks(x, w1, none, Activation::relu, w2, none, 0), config_error);
  msg = what_of([&] {
    feed_forward_in_chunks(x, w1, none, Activation::relu, Tensor2(xt::zeros<float>({6, 7})), none,
                           2);
  });
  EXPECT_NE(msg.find("feed_forward_in_chunks: w2 has shape [6, 7]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("F = 8"), std::string::npos) << msg;
  msg = what_of([&] {
    feed_forward_in_chunks(Tensor3(xt::zeros<float>({1, 4, 5})), w1, none, Activation::gelu, w2,
                           none, 2);
  });
  EXPECT_NE(msg.find("feed_forward_in_chunks: x has shape [1, 4, 5]"), std::string::npos) << msg;
  msg = what_of([&] {
    feed_forward_in_chunks(x, w1, none, Activation::relu, w2, Tensor1(xt::zeros<float>({5})), 2);
  });
  EXPECT_NE(msg.find("feed_forward_in_chunks: b2 has shape [5]"), std::string::npos) << msg;
}

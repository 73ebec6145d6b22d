// SGD and Adam against torch.optim, and gradient clipping.
#include <gtest/gtest.h>

#include <cmath>

#include "support/allclose.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/nn/optim.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
// Runs `steps` steps on loss = Σ c p², whose gradient is 2 c p.
template <class Opt>
Tensor1 run(Tensor1 p, const Tensor1& c, int steps, Opt make) {
  Tensor1 g = xt::zeros<float>(p.shape());
  auto opt = make(ParameterList{make_parameter("p", p, g)});
  for (int s = 0; s < steps; ++s) {
    opt.zero_grad();
    for (std::size_t i = 0; i < p.size(); ++i) g(i) = 2.0f * c(i) * p(i);
    opt.step();
  }
  return p;
}
}  // namespace

// One SGD step, lr 0.1, on p = 1 with c = 1: g = 2, p = 1 - 0.1 · 2 = 0.8.
// One Adam step moves every coordinate by lr (m̂ / √v̂ = g / |g| = ±1): p = 1 - 0.1 = 0.9.
TEST(Optim, HandExample) {
  const Tensor1 p = {1.0f, -2.0f}, c = {1.0f, 1.0f};
  EXPECT_TRUE(AllClose(run(p, c, 1, [](ParameterList l) { return SGD(l, 0.1f); }), Tensor1{0.8f, -1.6f}, kFloatRound, 0.0));
  EXPECT_TRUE(AllClose(run(p, c, 1, [](ParameterList l) { return Adam(l, 0.1f); }), Tensor1{0.9f, -1.9f}, kOpAtol, 0.0));
}

TEST(Optim, MatchesTorchOptim) {
  const json ref = load_reference("optim");
  const Tensor1 p0 = tensor<1>(ref["p0"]), c = tensor<1>(ref["c"]);
  const int steps = ref["steps"];
  EXPECT_TRUE(AllClose(run(p0, c, steps, [](ParameterList l) { return Adam(l, 0.1f); }),
                       tensor<1>(ref["adam"]), kOptimAtol, kOptimRtol));
  EXPECT_TRUE(AllClose(run(p0, c, steps, [](ParameterList l) { return Adam(l, 0.05f, 0.9f, 0.999f, 1e-8f, 0.1f); }),
                       tensor<1>(ref["adam_wd"]), kOptimAtol, kOptimRtol));
  EXPECT_TRUE(AllClose(run(p0, c, steps, [](ParameterList l) { return SGD(l, 0.1f, 0.9f); }),
                       tensor<1>(ref["sgd_momentum"]), kOptimAtol, kOptimRtol));
}

// Global norm of [3, 4] is 5: clipped to 1 gives [0.6, 0.8]; below the limit nothing changes.
TEST(Optim, ClipGradNormScalesToTheLimit) {
  Tensor1 v = {0, 0}, g = {3, 4};
  const ParameterList params{make_parameter("v", v, g)};
  EXPECT_FLOAT_EQ(clip_grad_norm(params, 10.0f), 5.0f);
  EXPECT_TRUE(AllClose(g, Tensor1{3, 4}, 0.0, 0.0));
  EXPECT_FLOAT_EQ(clip_grad_norm(params, 1.0f), 5.0f);
  EXPECT_TRUE(AllClose(g, Tensor1{0.6f, 0.8f}, kOpAtol, 0.0));
}

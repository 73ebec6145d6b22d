// SGD and Adam against torch.optim, and gradient clipping.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>

#include "support/allclose.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
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
  EXPECT_TRUE(AllClose(run(p, c, 1, [](ParameterList l) { return SGD(l, 0.1f); }),
                       Tensor1{0.8f, -1.6f}, kFloatRound, 0.0));
  EXPECT_TRUE(AllClose(run(p, c, 1, [](ParameterList l) { return Adam(l, 0.1f); }),
                       Tensor1{0.9f, -1.9f}, kOpAtol, 0.0));
}

TEST(Optim, MatchesTorchOptim) {
  const json ref = load_reference("optim");
  const Tensor1 p0 = tensor<1>(ref["p0"]), c = tensor<1>(ref["c"]);
  const int steps = ref["steps"];
  EXPECT_TRUE(AllClose(run(p0, c, steps, [](ParameterList l) { return Adam(l, 0.1f); }),
                       tensor<1>(ref["adam"]), kOptimAtol, kOptimRtol));
  EXPECT_TRUE(AllClose(
      run(p0, c, steps, [](ParameterList l) { return Adam(l, 0.05f, 0.9f, 0.999f, 1e-8f, 0.1f); }),
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

// ---- AdamW, the schedule, and parameters whose gradient is not allocated yet ---------------

namespace {
// AdamW for `steps` steps on loss = Σ c p² + Σ q³ / 3 (grad p = 2 c p, grad q = q²).
std::pair<Tensor1, Tensor2> run_adamw(Tensor1 p, Tensor2 q, const Tensor1& c, int steps,
                                      const json& cfg) {
  Tensor1 gp = xt::zeros<float>(p.shape());
  Tensor2 gq = xt::zeros<float>(q.shape());
  AdamW opt({make_parameter("p", p, gp), make_parameter("q", q, gq)}, cfg["lr"].get<float>(),
            cfg["betas"][0].get<float>(), cfg["betas"][1].get<float>(), cfg["eps"].get<float>(),
            cfg["weight_decay"].get<float>());
  for (int s = 0; s < steps; ++s) {
    opt.zero_grad();
    for (std::size_t i = 0; i < p.size(); ++i) gp(i) = 2.0f * c(i) * p(i);
    for (std::size_t i = 0; i < q.size(); ++i) gq.data()[i] = q.data()[i] * q.data()[i];
    opt.step();
  }
  return {p, q};
}
}  // namespace

// One AdamW step, lr 0.1, wd 0.5 on p = 1 with g = 2: decay first, p = 1 - 0.1 · 0.5 · 1 = 0.95,
// then the Adam step moves it by lr (m̂ / √v̂ = 1): 0.95 - 0.1 = 0.85. Adam's L2 decay instead
// adds wd · p to g, which leaves m̂ / √v̂ = 1: 1 - 0.1 = 0.9.
TEST(Optim, AdamWHandExample) {
  Tensor1 p = {1.0f}, g = {2.0f};
  AdamW opt({make_parameter("p", p, g)}, 0.1f, 0.9f, 0.999f, 1e-8f, 0.5f);
  opt.step();
  EXPECT_NEAR(p(0), 0.85f, kOptimHandStep);
  Tensor1 p2 = {1.0f}, g2 = {2.0f};
  Adam adam({make_parameter("p", p2, g2)}, 0.1f, 0.9f, 0.999f, 1e-8f, 0.5f);
  adam.step();
  EXPECT_NEAR(p2(0), 0.9f, kOptimHandStep);
}

TEST(Optim, AdamWMatchesTorchOneAndTenSteps) {
  const json ref = load_reference("adamw");
  const Tensor1 p0 = tensor<1>(ref["p0"]), c = tensor<1>(ref["c"]);
  const Tensor2 q0 = tensor<2>(ref["q0"]);
  for (const auto& [name, run] : ref["runs"].items()) {
    for (int steps : {1, 10}) {
      SCOPED_TRACE(name + ", " + std::to_string(steps) + " steps");
      const auto [p, q] = run_adamw(p0, q0, c, steps, run["config"]);
      EXPECT_TRUE(
          AllClose(p, tensor<1>(run["p_" + std::to_string(steps)]), kAdamWAtol, kAdamWRtol));
      EXPECT_TRUE(
          AllClose(q, tensor<2>(run["q_" + std::to_string(steps)]), kAdamWAtol, kAdamWRtol));
    }
  }
}

// Warm-up over 4 steps to 1.0: steps 0..3 give 0.25, 0.5, 0.75, 1; then cosine to 0.1 over
// steps 4..8: p = 0, 1/4, 1/2, 3/4, 1 gives 0.1 + 0.9 · (1 + cos(πp)) / 2 = 1, 0.868198, 0.55,
// 0.231802, 0.1; later steps stay at 0.1.
TEST(Optim, WarmupCosineSchedule) {
  const WarmupCosine s(1.0f, 4, 8, 0.1f);
  const std::vector<float> expected = {0.25f,     0.5f,  0.75f,     1.0f, 1.0f,
                                       0.868198f, 0.55f, 0.231802f, 0.1f, 0.1f};
  for (std::size_t step = 0; step < expected.size(); ++step)
    EXPECT_NEAR(s(step), expected[step], kScheduleHandValue) << "step " << step;
  EXPECT_THROW(WarmupCosine(1.0f, 9, 8), config_error);
  EXPECT_THROW(WarmupCosine(0.0f, 1, 8), config_error);
  EXPECT_THROW(WarmupCosine(1.0f, 1, 8, 2.0f), config_error);
}

// A parameter whose gradient buffer does not exist yet (no backward reached it) is skipped by
// step(), zero_grad() and clip_grad_norm_, as PyTorch skips .grad = None.
TEST(Optim, SkipsUnallocatedGradients) {
  Tensor1 a = {1.0f, 2.0f}, ga;  // ga empty: not allocated
  Tensor1 b = {3.0f}, gb = {4.0f};
  const ParameterList params{make_parameter("a", a, ga), make_parameter("b", b, gb)};
  EXPECT_EQ(static_cast<float*>(params[0].grad), nullptr);
  AdamW opt(params, 0.1f);
  opt.zero_grad();
  EXPECT_EQ(gb(0), 0.0f);
  gb(0) = 4.0f;
  EXPECT_FLOAT_EQ(clip_grad_norm_(params, 100.0f), 4.0f);
  opt.step();
  EXPECT_EQ(a, (Tensor1{1.0f, 2.0f}));  // untouched, not even decayed
  EXPECT_NE(b(0), 3.0f);
  // once allocated (by a backward), the view taken before sees it
  ensure_grad(ga, a);
  EXPECT_EQ(static_cast<float*>(params[0].grad), ga.data());
  EXPECT_THROW(clip_grad_norm_(params, 0.0f), config_error);
}

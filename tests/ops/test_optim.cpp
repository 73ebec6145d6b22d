// sgd_update and adam_update: one parameter's SGD / Adam / AdamW step in one pass
// (lib/src/kernels/optim.cpp), against the update written element by element in double here; and
// their error paths.
// (The optimisers that call it are checked against torch.optim in tests/nn/test_optim.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/ops/optim.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
// The update of ops/optim.hpp, element by element in double.
void adam_reference(Tensor1& theta, const Tensor1& grad, Tensor1& m, Tensor1& v,
                    const AdamCoefficients& c) {
  for (std::size_t i = 0; i < theta.size(); ++i) {
    const double t = double(theta(i)) * c.decay;
    const double g = double(grad(i)) + double(c.l2) * t;
    const double mi = double(c.beta1) * m(i) + (1.0 - c.beta1) * g;
    const double vi = double(c.beta2) * v(i) + (1.0 - c.beta2) * g * g;
    m(i) = float(mi);
    v(i) = float(vi);
    theta(i) = float(t - c.step_size * mi / (std::sqrt(vi) / c.bias_correction2_sqrt + c.eps));
  }
}

// This thread's floating-point mode is the caller's again after an update: half the smallest
// normal float is a denormal, not 0.
void expect_caller_keeps_denormals() {
  volatile float half = 0.5f, smallest = std::numeric_limits<float>::min();
  EXPECT_EQ(std::fpclassify(smallest * half), FP_SUBNORMAL);
}

// The SGD update of ops/optim.hpp, element by element in double.
void sgd_reference(Tensor1& theta, const Tensor1& grad, Tensor1& vel, float lr, float momentum) {
  for (std::size_t i = 0; i < theta.size(); ++i) {
    const double vi = double(momentum) * vel(i) + grad(i);
    vel(i) = float(vi);
    theta(i) = float(theta(i) - double(lr) * vi);
  }
}
}  // namespace

// 37 elements: the vector loop's full blocks and its scalar tail; three steps, with momentum
// and without.
TEST(SgdUpdate, MatchesTheFormulaInDouble) {
  for (float momentum : {0.9f, 0.0f}) {
    SCOPED_TRACE(momentum);
    Rng rng(11);
    Tensor1 theta = random_tensor<Tensor1>(std::array<std::size_t, 1>{37}, rng);
    Tensor1 grad = random_tensor<Tensor1>(std::array<std::size_t, 1>{37}, rng);
    Tensor1 vel = random_tensor<Tensor1>(std::array<std::size_t, 1>{37}, rng, 0.1f);
    Tensor1 theta_ref = theta, vel_ref = vel;
    const ParameterRef p = make_parameter("w", theta, grad);
    for (int t = 1; t <= 3; ++t) {
      sgd_update(p, vel, 0.05f, momentum);
      sgd_reference(theta_ref, grad, vel_ref, 0.05f, momentum);
    }
    EXPECT_TRUE(AllClose(theta, theta_ref, kOpAtol, kOpRtol));
    EXPECT_TRUE(AllClose(vel, vel_ref, kOpAtol, kOpRtol));
  }
}

// A velocity that decays below the smallest normal float is 0, not a denormal, as Adam's moments
// are; the caller's arithmetic keeps its denormals.
TEST(SgdUpdate, VelocityBelowTheSmallestNormalIsZeroAndTheCallerKeepsDenormals) {
  const float tiny = std::numeric_limits<float>::min();  // 2^-126
  // element 0: no gradient, a velocity just above 2^-126 that 0.9 takes below it;
  // element 1: an ordinary one
  Tensor1 theta = {1.0f, 1.0f}, grad = {0.0f, 0.1f}, vel = {1.05f * tiny, 0.5f};
  Tensor1 theta_ref = theta, vel_ref = vel;
  sgd_update(make_parameter("w", theta, grad), vel, 0.01f, 0.9f);
  sgd_reference(theta_ref, grad, vel_ref, 0.01f, 0.9f);
  EXPECT_EQ(std::fpclassify(vel_ref(0)), FP_SUBNORMAL);  // what IEEE arithmetic gives
#if defined(__SSE__)
  EXPECT_EQ(vel(0), 0.0f);
#endif
  EXPECT_EQ(theta(0), theta_ref(0));  // lr times a denormal is below θ's ulp
  EXPECT_NEAR(vel(1), vel_ref(1), 1e-7f);
  EXPECT_NEAR(theta(1), theta_ref(1), 1e-7f);
  expect_caller_keeps_denormals();
}

TEST(SgdUpdate, RejectsAVelocityOfAnotherSizeAndAMissingGradient) {
  Tensor1 theta = {1.0f, 2.0f}, grad = {0.5f, 0.5f}, no_grad;
  Tensor1 vel = xt::zeros<float>({2}), vel3 = xt::zeros<float>({3});
  try {
    sgd_update(make_parameter("w", theta, grad), vel3, 0.1f, 0.9f);
    ADD_FAILURE() << "no exception";
  } catch (const shape_error& e) {
    EXPECT_STREQ(e.what(), "sgd_update: velocity has shape [3], expected [2] (the size of w)");
  }
  EXPECT_THROW(sgd_update(make_parameter("w", theta, no_grad), vel, 0.1f, 0.9f), std::logic_error);
  EXPECT_EQ(theta, (Tensor1{1.0f, 2.0f}));  // nothing changed
  EXPECT_EQ(vel3, (Tensor1{0.0f, 0.0f, 0.0f}));
}

// 37 elements: the vector loop's full blocks and its scalar tail; AdamW (decay) and Adam (L2),
// three steps from non-zero moments.
TEST(AdamUpdate, MatchesTheFormulaInDouble) {
  for (bool decoupled : {true, false}) {
    SCOPED_TRACE(decoupled ? "AdamW" : "Adam");
    Rng rng(7);
    Tensor1 theta = random_tensor<Tensor1>(std::array<std::size_t, 1>{37}, rng);
    Tensor1 grad = random_tensor<Tensor1>(std::array<std::size_t, 1>{37}, rng);
    Tensor1 m = random_tensor<Tensor1>(std::array<std::size_t, 1>{37}, rng, 0.1f);
    Tensor1 v = xt::abs(random_tensor<Tensor1>(std::array<std::size_t, 1>{37}, rng, 0.1f));
    Tensor1 theta_ref = theta, m_ref = m, v_ref = v;
    const ParameterRef p = make_parameter("w", theta, grad);
    const float lr = 0.01f, wd = 0.1f;
    for (int t = 1; t <= 3; ++t) {
      const AdamCoefficients c{0.9f,
                               0.999f,
                               1e-8f,
                               decoupled ? 1.0f - lr * wd : 1.0f,
                               decoupled ? 0.0f : wd,
                               float(lr / (1.0 - std::pow(0.9, t))),
                               float(std::sqrt(1.0 - std::pow(0.999, t)))};
      adam_update(p, m, v, c);
      adam_reference(theta_ref, grad, m_ref, v_ref, c);
    }
    EXPECT_TRUE(AllClose(theta, theta_ref, kOpAtol, kOpRtol));
    EXPECT_TRUE(AllClose(m, m_ref, kOpAtol, kOpRtol));
    EXPECT_TRUE(AllClose(v, v_ref, kOpAtol, kOpRtol));
  }
}

// A moment that decays below the smallest normal float (2^-126) is 0, not a denormal: Intel's
// cores take a microcode assist for each operation on one (kernels/optim.cpp). The flush is the
// update's own: the caller's arithmetic keeps its denormals after the call.
TEST(AdamUpdate, MomentsBelowTheSmallestNormalAreZeroAndTheCallerKeepsDenormals) {
  const float tiny = std::numeric_limits<float>::min();  // 2^-126
  // element 0: no gradient, m and v just above 2^-126, so β1 m and β2 v fall below it;
  // element 1: an ordinary one; element 2: a gradient whose square is below it
  Tensor1 theta = {1.0f, 1.0f, 1.0f}, grad = {0.0f, 0.1f, 1e-20f};
  Tensor1 m = {1.05f * tiny, 0.5f, 0.0f}, v = {1.0005f * tiny, 0.25f, 0.0f};
  Tensor1 theta_ref = theta, m_ref = m, v_ref = v;
  const AdamCoefficients c{0.9f, 0.999f, 1e-8f, 1.0f, 0.0f, 0.01f, 1.0f};
  adam_update(make_parameter("w", theta, grad), m, v, c);
  adam_reference(theta_ref, grad, m_ref, v_ref, c);
  EXPECT_EQ(std::fpclassify(m_ref(0)), FP_SUBNORMAL);  // what IEEE arithmetic gives
  EXPECT_EQ(std::fpclassify(v_ref(0)), FP_SUBNORMAL);
#if defined(__SSE__)
  EXPECT_EQ(m(0), 0.0f);
  EXPECT_EQ(v(0), 0.0f);
  EXPECT_EQ(v(2), 0.0f);  // (1 - β2) · 1e-40
#endif
  EXPECT_EQ(theta(0), theta_ref(0));  // the step the denormals would have given is below θ's ulp
  EXPECT_TRUE(AllClose(theta, theta_ref, kOpAtol, kOpRtol));
  EXPECT_NEAR(m(1), m_ref(1), 1e-7f);
  EXPECT_NEAR(v(1), v_ref(1), 1e-7f);
  expect_caller_keeps_denormals();
}

TEST(AdamUpdate, RejectsMomentsOfAnotherSizeAndAMissingGradient) {
  Tensor1 theta = {1.0f, 2.0f}, grad = {0.5f, 0.5f}, no_grad;
  Tensor1 m = xt::zeros<float>({2}), v = xt::zeros<float>({2}), v3 = xt::zeros<float>({3});
  const AdamCoefficients c{0.9f, 0.999f, 1e-8f, 1.0f, 0.0f, 0.1f, 1.0f};
  try {
    adam_update(make_parameter("w", theta, grad), m, v3, c);
    ADD_FAILURE() << "no exception";
  } catch (const shape_error& e) {
    EXPECT_STREQ(e.what(), "adam_update: v has shape [3], expected [2] (the size of w)");
  }
  EXPECT_THROW(adam_update(make_parameter("w", theta, no_grad), m, v, c), std::logic_error);
  EXPECT_EQ(theta, (Tensor1{1.0f, 2.0f}));  // nothing changed
}

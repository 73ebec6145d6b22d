// Finite-difference gradient checks (the ggml test-backend-ops / mlpack CheckGradient idea).
//
// A scalar loss L(θ) is built from a forward pass, usually L = Σ G ⊙ y with a fixed random G,
// so that backward(G) gives the analytic gradient dL/dθ. For every coordinate θ_j we also take
//     n_j = (-L(θ + 2h e_j) + 8 L(θ + h e_j) - 8 L(θ - h e_j) + L(θ - 2h e_j)) / (12 h)
// (truncation error O(h⁴), so h can be large enough to keep float32 rounding noise small),
// with L accumulated in double. Each named target (an input or a parameter) is judged by the
// scale-free error
//     err = ‖a − n‖ / max(‖a‖ + ‖n‖, floor)
// which is 0 for a perfect match, about 1 for unrelated vectors, and does not care whether the
// gradient is large or small (the floor only guards gradients that are truly zero).
// Set XENC_GRADCHECK_VERBOSE=1 to print every target's error, also when the check passes.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "support/allclose.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/parameter.hpp"
#include "xenc/core/random.hpp"
#include "xenc/core/tensor.hpp"
#include "xenc/nn/module.hpp"

namespace xenc::test {

/// Coordinates to perturb and the analytic gradient backward gave for them.
struct GradTarget {
  std::string name;
  float* value = nullptr;  ///< size floats, perturbed in place (and restored)
  std::size_t size = 0;
  std::vector<double> analytic;
};

/// A target for a tensor input x with analytic gradient dx (same shape).
template <class T, class G>
GradTarget input_target(const std::string& name, T& x, const G& dx) {
  GradTarget t;
  t.name = name;
  t.value = x.data();
  t.size = x.size();
  t.analytic.assign(dx.begin(), dx.end());
  return t;
}

/// One target per parameter of `module`, with the gradients its backward accumulated.
inline std::vector<GradTarget> parameter_targets(Module& module, const std::string& prefix = "") {
  std::vector<GradTarget> out;
  for (const ParameterRef& p : module.parameters()) {
    GradTarget t;
    t.name = prefix + p.name;
    t.value = p.value;
    t.size = p.size();
    if (const float* g = p.grad)
      t.analytic.assign(g, g + p.size());
    else
      t.analytic.assign(p.size(), 0.0);  // no backward reached it: zero gradient
    out.push_back(std::move(t));
  }
  return out;
}

/// Targets whose values live in `values_of` (the module the loss runs) and whose analytic
/// gradients come from `grads_of` (a copy that ran forward and backward): for modules whose
/// forward draws from a generator (dropout), each evaluation runs on a fresh copy so that
/// every call sees the same mask.
inline std::vector<GradTarget> parameter_targets(Module& values_of, Module& grads_of) {
  std::vector<GradTarget> out = parameter_targets(values_of);
  const std::vector<GradTarget> g = parameter_targets(grads_of);
  for (std::size_t i = 0; i < out.size(); ++i) out[i].analytic = g.at(i).analytic;
  return out;
}

/// Σ g ⊙ y in double: the loss whose gradient with respect to y is g.
template <class Y, class G>
double dot_loss(const Y& y, const G& g) {
  double s = 0.0;
  auto gi = g.begin();
  for (auto yi = y.begin(); yi != y.end(); ++yi, ++gi) s += double(*yi) * double(*gi);
  return s;
}

// random_tensor<T>(shape, rng, std): xenc/core/random.hpp.

struct GradCheckEntry {
  std::string name;
  double error = 0.0, norm_analytic = 0.0, norm_numeric = 0.0;
  std::size_t worst = 0;
  double worst_analytic = 0.0, worst_numeric = 0.0;
};

/// The numeric gradient of `loss` for every coordinate of `t` (restores the values).
inline std::vector<double> numeric_gradient(const std::function<double()>& loss,
                                            const GradTarget& t, double h) {
  std::vector<double> n(t.size);
  for (std::size_t j = 0; j < t.size; ++j) {
    const float x0 = t.value[j];
    auto at = [&](double k) {
      t.value[j] = static_cast<float>(double(x0) + k * h);
      return loss();
    };
    const double lp2 = at(2), lp1 = at(1), lm1 = at(-1), lm2 = at(-2);
    t.value[j] = x0;
    n[j] = (-lp2 + 8.0 * lp1 - 8.0 * lm1 + lm2) / (12.0 * h);
  }
  return n;
}

inline GradCheckEntry compare_gradient(const GradTarget& t, const std::vector<double>& n,
                                       double floor) {
  GradCheckEntry e;
  e.name = t.name;
  double diff2 = 0.0, a2 = 0.0, n2 = 0.0, worst = -1.0;
  for (std::size_t j = 0; j < t.size; ++j) {
    const double d = t.analytic[j] - n[j];
    diff2 += d * d;
    a2 += t.analytic[j] * t.analytic[j];
    n2 += n[j] * n[j];
    if (std::fabs(d) > worst) {
      worst = std::fabs(d);
      e.worst = j;
      e.worst_analytic = t.analytic[j];
      e.worst_numeric = n[j];
    }
  }
  e.norm_analytic = std::sqrt(a2);
  e.norm_numeric = std::sqrt(n2);
  e.error = std::sqrt(diff2) / std::max(e.norm_analytic + e.norm_numeric, floor);
  return e;
}

/// Checks every target; fails listing each target whose error exceeds tol.
inline ::testing::AssertionResult GradientsMatch(const std::function<double()>& loss,
                                                 const std::vector<GradTarget>& targets, double tol,
                                                 double h = kGradStep, double floor = kGradFloor) {
  std::ostringstream ok, bad;
  ok.precision(3);
  bad.precision(6);
  bool pass = true;
  if (targets.empty()) return ::testing::AssertionFailure() << "no gradient targets";
  for (const GradTarget& t : targets) {
    if (t.analytic.size() != t.size)
      return ::testing::AssertionFailure() << t.name << ": analytic gradient has "
                                           << t.analytic.size() << " entries, expected " << t.size;
    const GradCheckEntry e = compare_gradient(t, numeric_gradient(loss, t, h), floor);
    ok << "\n  " << e.name << ": error " << e.error << " (|a| " << e.norm_analytic << ")";
    if (!(e.error <= tol)) {
      pass = false;
      bad << "\n  " << e.name << " (" << t.size << " values): error " << e.error << " > " << tol
          << "; |analytic| = " << e.norm_analytic << ", |numeric| = " << e.norm_numeric
          << "; worst at [" << e.worst << "]: analytic " << e.worst_analytic << ", numeric "
          << e.worst_numeric;
    }
  }
  if (std::getenv("XENC_GRADCHECK_VERBOSE")) std::printf("gradient check:%s\n", ok.str().c_str());
  if (!pass) return ::testing::AssertionFailure() << "gradient check failed:" << bad.str();
  return ::testing::AssertionSuccess() << "gradients match:" << ok.str();
}

/// N(0, scale²) values for every parameter of `m` (PyTorch zero-initialises biases, which would
/// hide a bias used in the wrong place).
inline void fill_parameters_normal(Module& m, Rng& rng, float scale) {
  for (auto& p : m.parameters())
    for (std::size_t i = 0; i < p.size(); ++i) p.value[i] = scale * rng.normal();
}

/// Gradient check of a module with one input x: backward(G) after forward(x, forward_args...)
/// against finite differences of Σ G ⊙ forward(x, forward_args...), for every parameter and x.
/// forward_args: what follows x in forward (a padding mask, an attention mask).
template <class M, class... Args>
::testing::AssertionResult ModuleGradientsMatch(M& module, Tensor3& x, const Tensor3& G, double tol,
                                                const Args&... forward_args) {
  module.zero_grad();
  module.forward(x, forward_args...);
  const Tensor3 dx = module.backward(G);
  auto targets = parameter_targets(module);
  targets.push_back(input_target("x", x, dx));
  auto loss = [&] { return dot_loss(module.forward(x, forward_args...), G); };
  return GradientsMatch(loss, targets, tol);
}

/// Gradient check of a module with dropout on, in training mode: each evaluation of the loss
/// runs on a fresh copy of `work`, so every forward draws the same mask from the same generator
/// state. Also checks that the mask changes the output (not the evaluation path in disguise).
/// Loss: Σ forward(x) ⊙ G. The finite differences perturb `work`'s parameters and `x` in place.
template <class M>
void ExpectDropoutGradientsMatch(M& work, Tensor3& x, const Tensor3& G, double tol) {
  M a = work;
  a.zero_grad();
  const Tensor3 y_train = a.forward(x);
  const Tensor3 dx = a.backward(G);
  auto targets = parameter_targets(work, a);
  targets.push_back(input_target("x", x, dx));
  auto loss = [&] {
    M m = work;
    return dot_loss(m.forward(x), G);
  };
  EXPECT_TRUE(GradientsMatch(loss, targets, tol));
  M e = work;
  e.eval();
  EXPECT_GT(max_abs_diff(y_train, e.forward(x)), kDropoutVisible);
}

}  // namespace xenc::test

// Exercise test_layer_norm_forward: the student writes the test. The student's check of a layer
// norm forward runs against the correct one (it must accept it) and against each of the museum's
// layer norm exhibits (it should reject them); the score is the share it rejects
// (test_support.hpp). This file lists the candidates; the grader computes each, the student's
// process only calls them.
//
// @exercise test_layer_norm_forward
// @order 21
// @points 1
// @function bool test_layer_norm_forward(const xenc::grade::LayerNormForwardFn& layer_norm_forward)
// @doc Your test of a layer norm forward (the function of the exercise layer_norm_forward,
// @doc Tensor2(const Tensor2& x, const Tensor1& weight, const Tensor1& bias, float eps)): return
// @doc true when `layer_norm_forward` is right, false (or throw) when it is wrong. The grader runs
// @doc it on a correct layer norm, which it must accept, and on each published mistake of the
// @doc museum (xenc-pe-pitfalls), which it should reject. Your points are the share of mistakes it
// @doc catches; the report names the ones it missed. A test that rejects the correct layer norm
// @doc scores 0; a run that crashes or hangs gives no verdict (it neither accepts nor catches).
// @doc The function under test takes x: [N, D], weight, bias: [D] with N, D >= 1 and at most
// @doc 1048576 values (others throw, whichever function it is).
// @using xenc::grade::LayerNormForwardFn
// @stub     return true when layer_norm_forward(x, weight, bias, eps) is right on inputs of your
// @stub     choice, false when it is not
// @notebook ### Exercise: a test that catches a wrong layer norm
// @notebook
// @notebook Here you write the test, not the function: `test_layer_norm_forward(layer_norm_forward)` receives a layer norm forward `(x, weight, bias, eps)` and returns `true` when it is right, `false` (or throws) when it is wrong. The check runs your test on a correct layer norm, which it must accept, and on each published layer norm mistake of the museum (`xenc-pe-pitfalls`), which it should reject; your score is the share of mistakes it catches, and the report names the ones it missed, never their code. Call it on inputs of your choice and compare with values you worked out by hand, with a tolerance (float32 rounds). The next cell grades a weak test the same way: see what its report says, then write a stronger one.
// @notebook_stub return true when layer_norm_forward(x, weight, bias, eps) is right on inputs of
// @notebook_stub your choice, false when it is not
// @notebook_weak // a weak test: one row, x = [1, 3], eps = 0: mean 2, variance 1, so y = [-1, 1]
// @notebook_weak const xenc::Tensor2 y =
// @notebook_weak     layer_norm_forward(xenc::Tensor2{{1, 3}}, xenc::Tensor1{1, 1}, xenc::Tensor1{0, 0}, 0.0f);
// @notebook_weak return std::fabs(y(0, 0) + 1) < 1e-5f && std::fabs(y(0, 1) - 1) < 1e-5f;
#include "../test_support.hpp"

namespace xenc::grade {

using namespace support;
using testing::Candidate;

namespace {
using LayerNorm = Tensor2 (*)(const Tensor2&, const Tensor1&, const Tensor1&, float);

// The function under test, whichever candidate: the inputs checked first, the same for all.
LayerNormForwardFn guarded(LayerNorm f) {
  return [f](const Tensor2& x, const Tensor1& weight, const Tensor1& bias, float eps) {
    testing::check_sizes("layer_norm_forward", "x", x);
    const std::size_t D = x.shape()[1];
    for (const auto& [name, t] : {std::pair{"weight", &weight}, std::pair{"bias", &bias}})
      if (t->size() != D)
        throw std::invalid_argument("layer_norm_forward: " + std::string(name) + " has " +
                                    std::to_string(t->size()) +
                                    " values, expected D = " + std::to_string(D));
    return f(x, weight, bias, eps);
  };
}

Tensor2 correct(const Tensor2& x, const Tensor1& weight, const Tensor1& bias, float eps) {
  return testing::to_float<2>(ref::layer_norm(ref::from(x), to_vec(weight), to_vec(bias), eps));
}

std::vector<Candidate<signature::layer_norm_forward>> candidates() {
  return {{std::nullopt, guarded(correct)},
          {Pitfall::layer_norm_unbiased_variance, guarded(pitfalls::layer_norm_unbiased_variance)},
          {Pitfall::layer_norm_eps_outside_sqrt, guarded(pitfalls::layer_norm_eps_outside_sqrt)},
          {Pitfall::layer_norm_unbiased_std_eps_outside,
           guarded(pitfalls::layer_norm_unbiased_std_eps_outside)}};
}

const RegisterExercise registered{
    testing::tester(spec::test_layer_norm_forward(), "layer_norm_forward", candidates)};
}  // namespace

ExerciseResult check_test_layer_norm_forward(const TestLayerNormForwardFn& student) {
  return testing::check_here<signature::layer_norm_forward>(
      "test_layer_norm_forward", "layer_norm_forward", candidates(), student);
}

}  // namespace xenc::grade

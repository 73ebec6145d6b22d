// Exercise test_softmax: the student writes the test. The student's check of a softmax runs
// against the correct softmax (it must accept it) and against each of the museum's softmax
// exhibits (it should reject them); the score is the share it rejects (test_support.hpp). This
// file lists the candidates; the grader computes each, the student's process only calls them.
//
// @exercise test_softmax
// @order 20
// @points 1
// @function bool test_softmax(const xenc::grade::SoftmaxFn& softmax)
// @doc Your test of a softmax (the function of the exercise softmax, Tensor2(const Tensor2& x)):
// @doc return true when `softmax` is right, false (or throw) when it is wrong. The grader runs it
// @doc on a correct softmax, which it must accept, and on each published mistake of the museum
// @doc (xenc-pe-pitfalls), which it should reject. Your points are the share of mistakes it
// @doc catches; the report names the ones it missed. A test that rejects the correct softmax
// @doc scores 0; a run that crashes or hangs gives no verdict (it neither accepts nor catches).
// @doc The softmax under test takes x: [N, C] with N, C >= 1 and at most 1048576 values (others
// @doc throw, whichever softmax it is).
// @using xenc::grade::SoftmaxFn
// @stub     return true when softmax(x) is right on inputs of your choice, false when it is not
// @notebook ### Exercise: a test that catches a wrong softmax
// @notebook
// @notebook Here you write the test, not the function: `test_softmax(softmax)` receives a softmax and returns `true` when it is right, `false` (or throws) when it is wrong. The check runs your test on a correct softmax, which it must accept, and on each published softmax mistake of the museum (`xenc-pe-pitfalls`), which it should reject; your score is the share of mistakes it catches, and the report names the ones it missed, never their code. Call it on inputs of your choice and compare with values you worked out by hand, with a tolerance (float32 rounds). The next cell grades a weak test the same way: see what its report says, then write a stronger one.
// @notebook_stub return true when softmax(x) is right on inputs of your choice, false when it is not
// @notebook_weak // a weak test: it checks only that each row sums to 1
// @notebook_weak const xenc::Tensor2 y = softmax(xenc::Tensor2{{1, 2, 3}, {0, 5, 1}});
// @notebook_weak for (std::size_t r = 0; r < 2; ++r)
// @notebook_weak   if (std::fabs(y(r, 0) + y(r, 1) + y(r, 2) - 1.0f) > 1e-5f) return false;
// @notebook_weak return true;
#include "../test_support.hpp"

namespace xenc::grade {

using namespace support;
using testing::Candidate;

namespace {
// The function under test, whichever candidate: the input checked first, the same for all.
SoftmaxFn guarded(Tensor2 (*f)(const Tensor2&)) {
  return [f](const Tensor2& x) {
    testing::check_sizes("softmax", "x", x);
    return f(x);
  };
}

Tensor2 correct(const Tensor2& x) { return testing::to_float<2>(ref::softmax(ref::from(x))); }

std::vector<Candidate<signature::softmax>> candidates() {
  return {{std::nullopt, guarded(correct)},
          {Pitfall::softmax_without_max, guarded(pitfalls::softmax_without_max)},
          {Pitfall::softmax_wrong_axis, guarded(pitfalls::softmax_wrong_axis)}};
}

const RegisterExercise registered{testing::tester(spec::test_softmax(), "softmax", candidates)};
}  // namespace

ExerciseResult check_test_softmax(const TestSoftmaxFn& student) {
  return testing::check_here<signature::softmax>("test_softmax", "softmax", candidates(), student);
}

}  // namespace xenc::grade

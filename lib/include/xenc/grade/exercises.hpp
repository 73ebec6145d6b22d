// Graded exercises: a check for each piece of an encoder a student writes by hand.
//
// Each check takes the student's function (a std::function with the signature documented
// below), calls it on fixed inputs and returns an ExerciseResult (xenc/grade/result.hpp):
//   1. a hand example, whose arithmetic is in the comment of lib/src/grade/exercises/<name>.cpp;
//   2. reference values computed from the formula in double precision;
//   3. invariants (rows sum to 1, masked weights exactly 0, mean 0 / variance 1, round trips);
//   4. edge cases: large logits, a fully masked row, an odd D, T = 1;
//   5. for backward exercises, a finite-difference gradient check:
//      err = ‖a − n‖ / (‖a‖ + ‖n‖) <= 1e-4 with n from central differences of the reference
//      forward in double.
// Values are compared as |computed - expected| <= 1e-5 + 1e-4 · |expected| (float32 student code
// against double references; attention weights on padding keys must be exactly 0); NaN matches
// only NaN, inf only the same inf.
// When a check fails and the student's output equals the output of an exhibit of the pitfall
// museum (xenc/grade/pitfalls.hpp) on the same input, the hint names that mistake and its fix.
// Exceptions thrown by the student's function are caught and reported as a failed check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "xenc/core/error.hpp"  // config_error, which the exercises may throw
#include "xenc/core/tensor.hpp"
#include "xenc/grade/result.hpp"
#include "xenc/ops/attention.hpp"
#include "xenc/ops/layer_norm.hpp"
#include "xenc/ops/linear.hpp"

// Each exercise's declarations are generated from its file, lib/src/grade/exercises/<name>.cpp, the
// one place an exercise is written (its `// @` lines; cmake/XencExercises.cmake): its types, its
// function type <Name>Fn = std::function<...>, ExerciseResult check_<name>(const <Name>Fn&), the
// function type signature::<name> (the template's child.cpp declares the student's function from
// it: `namespace assignment { xenc::grade::signature::softmax softmax; }`) and the list
// XENC_GRADE_EXERCISES(X) of every exercise's name in teaching order.
#include "xenc/grade/exercise_types.hpp"

namespace xenc::grade {

namespace wire {
struct Caller;    // xenc/grade/wire.hpp
struct Launcher;  // xenc/grade/wire.hpp
}  // namespace wire

/// An exercise as the registry knows it. Each exercise's file (lib/src/grade/exercises/<name>.cpp)
/// registers itself with a static RegisterExercise; the template's grade program, the notebooks'
/// cells and the teacher's settings read the registry.
struct ExerciseInfo {
  std::string name;       ///< "softmax": the file exercises/softmax.cpp and the check check_softmax
  std::string signature;  ///< the function the student writes
  double points = 1.0;    ///< default points (the teacher's settings may change them)
  int order = 0;          ///< teaching order
  std::string doc;        ///< the formula, shapes and errors (the header's documentation)
  /// Runs the exercise's checks on the student's function in another process: each call of the
  /// student's function goes through the caller (xenc/grade/wire.hpp), and the verdict is
  /// computed here. Set by the exercise's registration.
  std::function<ExerciseResult(wire::Caller&)> check_remote;
  /// A test-writing exercise (test_softmax, ...): the student writes a check of a function, and
  /// `tests` names that function ("softmax"); empty for an exercise where the student writes the
  /// function itself.
  std::string tests;
  /// (A test-writing exercise, instead of check_remote.) Runs the student's check against the
  /// correct function and against each of its museum exhibits, each run a fresh process of the
  /// student's program started by the launcher (xenc/grade/wire.hpp), in a shuffled order; the
  /// function under test is computed here, and the student's process only says whether its check
  /// accepted. The verdict is computed here. Set by the exercise's registration.
  std::function<ExerciseResult(wire::Launcher&)> check_runs;
};
/// The registered exercises, in teaching order.
const std::vector<ExerciseInfo>& exercises();
/// The exercise of that name, or nullptr.
const ExerciseInfo* find_exercise(const std::string& name);
struct RegisterExercise {
  explicit RegisterExercise(ExerciseInfo info);
};

}  // namespace xenc::grade

// spec::<name>(): each exercise's entry as its file's `// @` lines give it (name, signature,
// points, order, doc), generated like exercise_types.hpp.
#include "xenc/grade/exercise_specs.hpp"

namespace xenc::grade {

/// Hidden checks: when a seed is set, each exercise adds checks whose inputs are drawn from it
/// (CheckResult::hidden; reports show neither their inputs nor their values). The child process
/// of xenc/grade/runner.hpp sets it from the teacher's settings.
void set_hidden_seed(std::optional<std::uint64_t> seed);
std::optional<std::uint64_t> hidden_seed();

/// Checks run in the caller's own process (check_softmax(fn), a notebook's check cell) call the
/// student's function (check_test_softmax(test): the student's test) in a forked child, under
/// these limits, with the grader's sandbox (xenc/grade/sandbox.hpp's run_forked): a crash, an
/// abort, a hang or a memory blow-up there costs only that check, reported as "crashed with
/// SIGSEGV (segmentation fault)" or "exceeded the time limit of 10 s", and the caller (the kernel)
/// lives on with its state. Off: it runs in the caller's process (to debug it there). `grade`
/// runs the student's function in a sandboxed process of its own instead.
struct CheckIsolation {
  bool on = true;
  double time_seconds = 10.0;     ///< wall clock per call (the CPU limit is this + 1 s)
  std::size_t memory_mib = 2048;  ///< address space the call may add to the caller's
};
void set_check_isolation(const CheckIsolation& isolation);
const CheckIsolation& check_isolation();

}  // namespace xenc::grade

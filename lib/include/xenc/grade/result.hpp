// What a grader check returns, and the report a student reads.
//
// Every check_* function of xenc/grade/exercises.hpp returns an ExerciseResult: one CheckResult
// per check (hand example, reference values, invariants, edge cases, finite differences). Nothing
// here aborts or exits, so the same calls work in a notebook kernel and in a compiled program.
//
//     auto r = xenc::grade::check_softmax(my_softmax);
//     xenc::grade::print_report(std::cout, r);     // ✔/✘ per check, values, hints
//     return r.passed() ? 0 : 1;
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace xenc::grade {

/// One check of one exercise.
struct CheckResult {
  std::string name;  ///< "hand example", "edge case: large logits", ...
  bool passed = false;
  std::string input;             ///< the input, in words and values
  std::string expected;          ///< the expected values (or behaviour)
  std::string computed;          ///< what the student's function gave (or threw)
  std::string first_difference;  ///< "y[0, 2]: expected 0.665241, computed nan" (empty if none)
  std::string hint;              ///< what to do; names the known mistake when one matched
  std::string known_mistake;     ///< the pitfall's title when the output equals an exhibit's
  bool hidden = false;           ///< a hidden check (teacher's seed): its input is not shown
};

/// All checks of one exercise.
struct ExerciseResult {
  std::string exercise;   ///< "softmax"
  std::string signature;  ///< the function the student writes
  std::vector<CheckResult> checks;

  bool passed() const;  ///< every check passed (false when there are none)
  std::size_t num_passed() const;
  /// Every check failed because the function threw "... not implemented" (the stub as handed out).
  bool still_stub() const;
};

/// The report: a heading with the signature and "k of n checks passed", then one ✔/✘ line per
/// check; for a failed check its input, expected and computed values, the first difference and
/// the hint.
void print_report(std::ostream& os, const ExerciseResult& result);
std::string report(const ExerciseResult& result);

/// One line per exercise ("✔ softmax  6 of 6 checks passed") and a total line.
void print_summary(std::ostream& os, const std::vector<ExerciseResult>& results);

}  // namespace xenc::grade

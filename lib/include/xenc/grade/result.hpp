// What a grader check returns, and the report a student reads.
//
// Every check_* function of xenc/grade/exercises.hpp returns an ExerciseResult: one CheckResult
// per check (hand example, reference values, invariants, edge cases, finite differences). Nothing
// here aborts or exits, so the same calls work in a notebook kernel and in a compiled program.
//
//     auto r = xenc::grade::check_softmax(my_softmax);
//     xenc::grade::print_report(std::cout, r);     // ✔/✘ per check, values, hints
//     xenc::grade::print_report(std::cout, r, xenc::grade::HintLevel::off);  // values, no hints
//     return r.passed() ? 0 : 1;
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace xenc::grade {

/// How much a failed check says beyond its values: the hint (full), its short form (brief: the
/// known mistake's title, or the hint's first sentence), or nothing (off). The teacher's
/// settings choose it ("hints" in grading.json, xenc/grade/runner.hpp); the grade program's
/// reports and the notebooks' check cells show the same.
enum class HintLevel { full, brief, off };

/// "full", "brief" or "off" -> the level. Throws xenc::config_error (a std::invalid_argument)
/// naming the text and the three levels.
HintLevel parse_hint_level(const std::string& text);
/// The level's name ("full", "brief", "off"). Throws xenc::config_error for a value outside the
/// enum (a cast from a bad integer).
std::string hint_level_name(HintLevel level);

/// One check of one exercise.
struct CheckResult {
  std::string name;  ///< "hand example", "edge case: large logits", ...
  bool passed = false;
  std::string input;             ///< the input, in words and values
  std::string expected;          ///< the expected values (or behaviour)
  std::string computed;          ///< what the student's function gave (or threw)
  std::string first_difference;  ///< "y[0, 2]: expected 0.665241, computed nan" (empty if none)
  std::string hint;  ///< what to do; names the known mistake when one matched (passed: its own)
  std::string known_mistake;  ///< the pitfall's title when the output equals an exhibit's
  bool hidden = false;        ///< a hidden check (teacher's seed): its input is not shown
  /// Counts toward the points. False for a test-writing exercise's run on the correct function:
  /// it earns nothing itself, and when it fails every other check of the exercise fails with it.
  bool scored = true;
};

/// All checks of one exercise.
struct ExerciseResult {
  std::string exercise;   ///< "softmax"
  std::string signature;  ///< the function the student writes
  std::vector<CheckResult> checks;

  bool passed() const;  ///< every check passed (false when there are none)
  std::size_t num_passed() const;
  std::size_t num_scored() const;         ///< the checks that count toward the points
  std::size_t num_scored_passed() const;  ///< those that passed
  /// Every check failed because the function threw "... not implemented" (the stub as handed out).
  bool still_stub() const;
};

/// The first sentence of a text (a hint's brief form): up to the first period followed by a
/// space, except a period inside (), [], {} or `code`, one of a range's ".." or "...", or one
/// that ends an abbreviation (e.g., i.e., cf., vs., etc.); the whole text when none ends earlier.
std::string first_sentence(const std::string& text);

/// The hint of a failed check as `level` shows it: the whole hint (full), the known mistake's title
/// or the hint's first sentence (brief), "" (off). A hidden check's hint is "" unless it names a
/// known mistake. Throws xenc::config_error for a level outside the enum.
std::string hint_text(const CheckResult& check, HintLevel level);

/// A test-writing exercise's score (one whose checks include one that is not scored: the run on
/// the correct function): "score: 1 of 2 mistakes caught (50% of the points), missed: <title>",
/// the titles of the scored checks that failed ("catches: " dropped; several joined by "; "), or
/// ", none missed"; when the unscored check failed, "score: 0 of 2 mistakes caught (none counts
/// until your check accepts the correct function)". "" for an exercise whose checks are all
/// scored.
std::string test_score(const ExerciseResult& result);

/// The report: a heading with the signature and "k of n checks passed" (then, for a test-writing
/// exercise, its test_score line), then one ✔/✘ line per check; for a failed check its input,
/// expected and computed values and the first difference.
/// After the list, the failed checks' hints as `hints` shows them (hint_text), each hint once
/// ("  hint: ..."); when the failed checks have different hints, each says which checks it is for
/// ("  hint for \"name\", \"name\": ..."). A failed hidden check shows no input and no values.
/// Throws xenc::config_error for a level outside the enum, before printing anything.
void print_report(std::ostream& os, const ExerciseResult& result, HintLevel hints);
/// The same with full hints.
void print_report(std::ostream& os, const ExerciseResult& result);
std::string report(const ExerciseResult& result, HintLevel hints = HintLevel::full);

/// One line per exercise ("✔ softmax  6 of 6 checks passed") and a total line.
void print_summary(std::ostream& os, const std::vector<ExerciseResult>& results);

}  // namespace xenc::grade

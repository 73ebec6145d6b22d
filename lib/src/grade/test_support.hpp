// What every test-writing exercise (exercises/test_<name>.cpp) shares: the student writes a check
// of a function, and the grader runs that check against the correct function and against each of
// the function's museum exhibits (xenc/grade/pitfalls.hpp). The check must accept the correct
// function; the score is the share of exhibits it rejects. Internal to the grader.
//
// The candidates are computed in the grader, never in the student's process: a check run in the
// sandbox calls a stand-in whose calls come here (xenc/grade/wire.hpp, run_test), each candidate in
// a fresh process, in a shuffled order, so that nothing but the candidate's behaviour tells the
// check which one it tests. Every input the check sends is validated here first (shapes, at most
// kMaxValues values per tensor), the same way for every candidate, so that a hostile input can
// neither crash the grader nor tell the candidates apart; and every call computes every
// candidate, so that its time does not tell them apart either.
#pragma once

#include <algorithm>
#include <exception>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "exercise_support.hpp"

namespace xenc::grade::testing {

using pitfalls::Pitfall;

/// The most values one tensor passed to the function under test may hold.
inline constexpr std::size_t kMaxValues = std::size_t(1) << 20;

/// A function the student's check runs against: the correct one (no pitfall) or an exhibit.
template <class Sig>
struct Candidate {
  std::optional<Pitfall> pitfall;
  std::function<Sig> fn;
};

/// What the student's check did on one candidate: a verdict (accepted or not) or none.
struct RunVerdict {
  bool verdict = false;  ///< false: no verdict (crashed, hung, broke the protocol); see said
  bool accepted = false;
  std::string said;  ///< "returned false", the exception it threw, or why there was no verdict
};

/// The sizes of a tensor passed to the function under test: every size at least 1, at most
/// kMaxValues values. Throws std::invalid_argument or std::length_error (the same for every
/// candidate) naming the function and the argument.
template <class E>
void check_sizes(const std::string& function, const std::string& name, const E& t) {
  for (std::size_t d : t.shape())
    if (d == 0)
      throw std::invalid_argument(function + ": " + name + " has an empty axis (every size must " +
                                  "be at least 1 here)");
  if (t.size() > kMaxValues)
    throw std::length_error(function + ": " + name + " has " + std::to_string(t.size()) +
                            " values, more than the grader computes (" +
                            std::to_string(kMaxValues) + ")");
}

/// An Array of the oracle as a float tensor of rank R.
template <std::size_t R>
xt::xtensor<float, R> to_float(const ref::Array& a) {
  std::array<std::size_t, R> shape{};
  std::copy_n(a.shape.begin(), std::min(R, a.shape.size()), shape.begin());
  xt::xtensor<float, R> t = xt::xtensor<float, R>::from_shape(shape);
  std::transform(a.data.begin(), a.data.end(), t.begin(), [](double v) { return float(v); });
  return t;
}

/// The student's check run from this process (the notebooks, the unit tests): in a forked child
/// under the check isolation's limits (set_check_isolation, xenc/grade/exercises.hpp), as every
/// check cell runs the student's code, so that a check that crashes or hangs gives no verdict and
/// the caller (the notebook's kernel) lives on; in this process when isolation is off.
template <class Sig>
RunVerdict run_here(const std::function<bool(const std::function<Sig>&)>& test,
                    const std::function<Sig>& fn) {
  try {
    const detail::Output out = detail::isolated([&test, &fn] {
      return detail::Output{detail::Field{"accepted", {1}, {test(fn) ? 1.0 : 0.0}}};
    });
    const bool ok = out.at(0).data.at(0) != 0.0;
    return {true, ok, ok ? "" : "returned false"};
  } catch (const detail::ChildFailure& e) {
    return {false, false, e.what()};
  } catch (...) {
    return {true, false, detail::describe_exception(std::current_exception())};
  }
}

/// The report of a test-writing exercise: a check "the correct <function> passes your check"
/// (not scored), then one "catches: <title>" check per exhibit, in the table's order. An exhibit
/// counts as caught when the check rejected it and accepted the correct function; a run without a
/// verdict (crash, hang) is neither an acceptance of the correct function nor a catch.
ExerciseResult test_result(const std::string& exercise, const std::string& function,
                           const RunVerdict& correct,
                           const std::vector<std::pair<Pitfall, RunVerdict>>& exhibits);

/// Candidate k as the student's check sees it: every call computes every candidate's output on
/// the same inputs and returns the k-th (or rethrows its exception), so that the time a call takes
/// does not tell the candidates apart.
template <class Sig>
struct AllOf;
template <class R, class... A>
struct AllOf<R(A...)> {
  static std::function<R(A...)> make(const std::vector<Candidate<R(A...)>>& candidates,
                                     std::size_t k) {
    std::vector<std::function<R(A...)>> all;
    for (const Candidate<R(A...)>& c : candidates) all.push_back(c.fn);
    return [all, k](A... args) -> R {
      std::optional<R> chosen;
      std::exception_ptr error;
      for (std::size_t i = 0; i < all.size(); ++i) {
        try {
          R out = all[i](args...);
          if (i == k) chosen = std::move(out);
        } catch (...) {
          if (i == k) error = std::current_exception();
        }
      }
      if (error) std::rethrow_exception(error);
      return std::move(*chosen);
    };
  }
};

/// Runs the check (run_one) on every candidate, in a shuffled order, and reports it.
template <class Sig>
ExerciseResult grade_test(const std::string& exercise, const std::string& function,
                          const std::vector<Candidate<Sig>>& candidates,
                          const std::function<RunVerdict(const std::function<Sig>&)>& run_one) {
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::shuffle(order.begin(), order.end(), std::mt19937(std::random_device{}()));
  std::vector<RunVerdict> verdicts(candidates.size());
  for (std::size_t i : order) verdicts[i] = run_one(AllOf<Sig>::make(candidates, i));
  RunVerdict correct;
  std::vector<std::pair<Pitfall, RunVerdict>> exhibits;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].pitfall)
      exhibits.emplace_back(*candidates[i].pitfall, verdicts[i]);
    else
      correct = verdicts[i];
  }
  return test_result(exercise, function, correct, exhibits);
}

/// The in-process check of a test-writing exercise (check_test_<name>).
template <class Sig>
ExerciseResult check_here(const std::string& exercise, const std::string& function,
                          const std::vector<Candidate<Sig>>& candidates,
                          const std::function<bool(const std::function<Sig>&)>& test) {
  return grade_test<Sig>(exercise, function, candidates,
                         [&test](const std::function<Sig>& fn) { return run_here(test, fn); });
}

/// A test-writing exercise's registration: its checks run in fresh processes of the student's
/// program (the launcher), the candidates computed here.
template <class Sig>
ExerciseInfo tester(ExerciseInfo info, const std::string& function,
                    std::vector<Candidate<Sig>> (*candidates)()) {
  info.tests = function;
  const std::string exercise = info.name;
  info.check_runs = [exercise, function, candidates](wire::Launcher& launcher) {
    return grade_test<Sig>(
        exercise, function, candidates(), [&launcher](const std::function<Sig>& fn) {
          wire::TestVerdict t;
          bool answered = false;
          const std::string why = launcher.run([&](wire::Caller& c) {
            t = wire::run_test(c, fn);
            answered = true;
          });
          if (!why.empty() || !answered)
            return RunVerdict{false, false, why.empty() ? "gave no verdict" : why};
          return RunVerdict{true, t.accepted, t.said.substr(0, 400)};
        });
  };
  return info;
}

}  // namespace xenc::grade::testing

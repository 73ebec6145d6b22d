// The grader's machinery (internal): outputs as named fields of doubles, comparison with the first
// differing index, formatting, and the three kinds of check (values, "must throw", finite
// differences). Exercises (exercises.cpp) only describe inputs, references and exhibits.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "xenc/core/tensor.hpp"
#include "xenc/grade/pitfalls.hpp"
#include "xenc/grade/result.hpp"

namespace xenc::grade::detail {

/// One named output of a function: "weights" with shape [B, H, Tq, Tk] and its values.
struct Field {
  std::string name;
  std::vector<std::size_t> shape;
  std::vector<double> data;
};
using Output = std::vector<Field>;

template <class E>
Field field(const std::string& name, const E& t) {
  Field f;
  f.name = name;
  f.shape.assign(t.shape().begin(), t.shape().end());
  for (auto v : t) f.data.push_back(double(v));
  return f;
}
inline Field scalar(const std::string& name, double v) { return Field{name, {}, {v}}; }

struct Tolerance {
  double atol = 1e-5;
  double rtol = 1e-4;
};

/// Where two outputs first differ.
struct Difference {
  std::string text;  ///< "name[i, j]: expected a, computed b", "name: shape [..], expected [..]"
  bool at_value = false;  ///< the difference is a value (field, index), not a shape
  std::size_t field = 0, index = 0;
};
/// text is empty when equal within tol (NaN only equals NaN, inf only the same inf).
Difference find_difference(const Output& expected, const Output& computed, Tolerance tol);
inline std::string first_difference(const Output& expected, const Output& computed, Tolerance tol) {
  return find_difference(expected, computed, tol).text;
}

/// "name [2, 3] = [0.0900306, 0.244728, ...]" for each field, at most max_values values each;
/// around a value difference the window starts a few values before its index.
std::string format(const Output& out, std::size_t max_values = 12,
                   const Difference* around = nullptr);

/// An exhibit of the museum run on the check's input.
struct Exhibit {
  pitfalls::Pitfall pitfall;
  std::function<Output()> run;
};

/// A check on values: measure(student()) must equal expected (or expected_from(student raw)).
struct ValueCheck {
  ValueCheck(std::string name_, std::string input_, std::function<Output()> student_,
             Output expected_)
      : name(std::move(name_)),
        input(std::move(input_)),
        student(std::move(student_)),
        expected(std::move(expected_)) {}
  std::string name;
  std::string input;
  std::function<Output()> student;
  Output expected;
  std::string expected_text;  ///< shown instead of format(expected) when set
  /// what is compared: the student's output itself when empty
  std::function<Output(const Output&)> measure;
  /// the expected value as a function of the student's raw output (for self-consistency
  /// invariants such as "the same for every p"); used instead of `expected` when set
  std::function<Output(const Output&)> expected_from;
  std::vector<Exhibit> exhibits;
  std::string hint;  ///< when no exhibit matches
  Tolerance tol;
};
CheckResult run(const ValueCheck& c);

/// A check that the student's function throws std::invalid_argument (or a subclass).
struct ThrowCheck {
  std::string name;
  std::string input;
  std::function<void()> student;
  std::string expected;
  std::string hint;
  /// exhibits that throw; when the student's exception has the same type, the hint names it
  std::vector<std::pair<pitfalls::Pitfall, std::function<void()>>> exhibits;
};
CheckResult run(const ThrowCheck& c);

/// A finite-difference check of one gradient: analytic (from the student's backward) against
/// central differences of `loss` (the reference forward in double) around `point`.
/// err = ‖a − n‖ / (‖a‖ + ‖n‖) must be <= 1e-4.
struct GradCheck {
  std::string name;
  std::string input;
  std::string gradient_name;  ///< "dx"
  std::vector<std::size_t> shape;
  std::function<Output()>
      student;  ///< the student's backward; the field named gradient_name is used
  std::function<double(const std::vector<double>&)> loss;
  std::vector<double> point;
  std::vector<Exhibit> exhibits;
  std::string hint;
};
CheckResult run(const GradCheck& c);

/// The process that ran the student's function (a forked child, set_check_isolation) ended
/// without answering: crashed, timed out, ran out of memory or exited. what(): the sandbox's
/// sentence ("crashed with SIGSEGV (segmentation fault)").
struct ChildFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Runs f (the student's function, or what calls it) in a forked child when check isolation is on
/// and the calls are not already remote; its Output, or the exception it threw (of the same
/// standard kind), comes back. Throws ChildFailure when the child ended without answering.
Output isolated(const std::function<Output()>& f);

/// While one lives, the student's function is a stand-in whose calls already go to another
/// process (exercise_support.hpp's remote): isolated() then calls f here.
struct RemoteCalls {
  RemoteCalls();
  ~RemoteCalls();
  RemoteCalls(const RemoteCalls&) = delete;
  RemoteCalls& operator=(const RemoteCalls&) = delete;
};

/// The message of the exception the student's code threw, for a report.
std::string describe_exception(std::exception_ptr e);

/// Values as "[1, 2, 3]" (%.6g).
std::string list(const std::vector<double>& v);

}  // namespace xenc::grade::detail

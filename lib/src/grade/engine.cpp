// The grader's machinery: run a check, catch what the student's code throws, compare with the
// first differing index, and look for a museum exhibit with the same output to name the mistake.
#include "engine.hpp"

#include "xenc/grade/exercises.hpp"
#include "xenc/grade/sandbox.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <typeinfo>

namespace xenc::grade::detail {

namespace {

std::string num(double v) {
  if (std::isnan(v)) return "nan";  // printf may write "-nan"
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// "[1, 0, 2]": the row-major multi-index of flat position i.
std::string index_str(const std::vector<std::size_t>& shape, std::size_t i) {
  if (shape.empty()) return "";
  std::vector<std::size_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] == 0 ? 0 : i % shape[d];
    i = shape[d] == 0 ? 0 : i / shape[d];
  }
  return shape_str(idx);
}

bool close(double expected, double computed, Tolerance tol) {
  if (std::isnan(expected) || std::isnan(computed))
    return std::isnan(expected) && std::isnan(computed);
  if (std::isinf(expected) || std::isinf(computed)) return expected == computed;
  return std::fabs(computed - expected) <= tol.atol + tol.rtol * std::fabs(expected);
}

// Runs an exhibit; an exhibit that throws on this input matches nothing.
bool exhibit_matches(const Exhibit& e, const Output& student, Tolerance tol) {
  try {
    return first_difference(e.run(), student, tol).empty();
  } catch (...) {
    return false;
  }
}

void set_known_mistake(CheckResult& r, pitfalls::Pitfall p) {
  const pitfalls::PitfallInfo& info = pitfalls::describe(p);
  r.known_mistake = info.title;
  r.hint =
      "this is a known mistake, " + info.title + ": " + info.mistake + ". Fix: " + info.fix + ".";
}

}  // namespace

std::string list(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + num(v[i]);
  return s + "]";
}

Difference find_difference(const Output& expected, const Output& computed, Tolerance tol) {
  Difference d;
  if (expected.size() != computed.size()) {
    d.text =
        std::to_string(computed.size()) + " outputs, expected " + std::to_string(expected.size());
    return d;
  }
  for (std::size_t f = 0; f < expected.size(); ++f) {
    const Field& e = expected[f];
    const Field& c = computed[f];
    if (e.shape != c.shape || e.data.size() != c.data.size()) {
      d.text = e.name + ": shape " + shape_str(c.shape) + ", expected " + shape_str(e.shape);
      return d;
    }
    for (std::size_t i = 0; i < e.data.size(); ++i)
      if (!close(e.data[i], c.data[i], tol)) {
        d.text = e.name + index_str(e.shape, i) + ": expected " + num(e.data[i]) + ", computed " +
                 num(c.data[i]);
        d.at_value = true, d.field = f, d.index = i;
        return d;
      }
  }
  return d;
}

std::string format(const Output& out, std::size_t max_values, const Difference* around) {
  std::string s;
  for (std::size_t k = 0; k < out.size(); ++k) {
    const Field& f = out[k];
    if (!s.empty()) s += "; ";
    s += f.name;
    if (f.shape.empty()) {
      s += " = " + (f.data.empty() ? std::string("?") : num(f.data[0]));
      continue;
    }
    // the window: from the start, or from a few values before the first difference
    std::size_t start = 0;
    if (around && around->at_value && around->field == k && around->index >= 4 &&
        f.data.size() > max_values)
      start = std::min(around->index - 4, f.data.size() - max_values);
    const std::size_t end = std::min(f.data.size(), start + max_values);
    s += " " + shape_str(f.shape) + " = [";
    if (start > 0) s += "... ";
    for (std::size_t i = start; i < end; ++i) s += (i > start ? ", " : "") + num(f.data[i]);
    if (end < f.data.size()) s += ", ...";
    s += "]";
    if (start > 0 || end < f.data.size())
      s += " (values " + std::to_string(start) + ".." + std::to_string(end - 1) + " of " +
           std::to_string(f.data.size()) + ", row-major)";
  }
  return s;
}

// ---- the student's function in a forked child (set_check_isolation) ---------------------------

namespace {
thread_local int g_remote_calls = 0;

void put_output(wire::Writer& w, const Output& out) {
  w.raw(std::uint64_t(out.size()));
  for (const Field& f : out) {
    w.raw(std::uint64_t(f.name.size()));
    w.bytes(f.name.data(), f.name.size());
    w.raw(std::uint64_t(f.shape.size()));
    for (std::size_t d : f.shape) w.raw(std::uint64_t(d));
    w.raw(std::uint64_t(f.data.size()));
    w.bytes(f.data.data(), f.data.size() * sizeof(double));
  }
}

Output get_output(wire::Reader& r) {
  Output out(r.count(1));
  for (Field& f : out) {
    f.name.resize(r.count(1));
    r.bytes(f.name.data(), f.name.size());
    f.shape.resize(r.count(sizeof(std::uint64_t)));
    for (std::size_t& d : f.shape) d = std::size_t(r.raw<std::uint64_t>());
    f.data.resize(r.count(sizeof(double)));
    r.bytes(f.data.data(), f.data.size() * sizeof(double));
  }
  return out;
}
}  // namespace

RemoteCalls::RemoteCalls() { ++g_remote_calls; }
RemoteCalls::~RemoteCalls() { --g_remote_calls; }

Output isolated(const std::function<Output()>& f) {
  const CheckIsolation& iso = check_isolation();
  if (!iso.on || g_remote_calls > 0) return f();
  Limits limits;
  limits.time_seconds = iso.time_seconds;
  limits.memory_mib = iso.memory_mib;
  std::string answer;
  const Outcome o = run_forked(
      [&f](int fd) {
        wire::Writer w;
        try {
          const Output out = f();
          w.raw(std::uint8_t(wire::Status::returned));
          put_output(w, out);
        } catch (...) {
          const auto [status, what] = wire::classify_current_exception();
          w = wire::Writer();
          w.raw(std::uint8_t(status));
          w.raw(std::uint64_t(what.size()));
          w.bytes(what.data(), what.size());
        }
        wire::write_all(fd, w.str().data(), w.str().size());
      },
      limits, answer);
  if (!o.answered || answer.empty()) {
    Outcome told = o;
    told.answered = o.answered && !answer.empty();
    throw ChildFailure(describe_outcome(told, limits));
  }
  wire::Reader r(answer);
  const auto status = wire::Status(r.raw<std::uint8_t>());
  if (status != wire::Status::returned) {
    std::string what(r.count(1), '\0');
    r.bytes(what.data(), what.size());
    wire::rethrow(status, what);
  }
  Output out = get_output(r);
  r.expect_end();
  return out;
}

std::string describe_exception(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const ChildFailure& ex) {
    return ex.what();
  } catch (const std::exception& ex) {
    return std::string("threw an exception: ") + ex.what();
  } catch (...) {
    return "threw an exception that is not a std::exception";
  }
}

namespace {
// The hint for a student function whose process ended without answering (ChildFailure).
std::string hint_for_child_failure() {
  return "your function ran in a process of its own, which ended without answering: nothing "
         "else was lost. Fix what the line above names (an index outside a tensor? a loop that "
         "never ends? a tensor far larger than its input?), then run the check again.";
}

// The hint for a student function that threw.
std::string hint_for_exception(const std::string& what) {
  if (what.find("not implemented") != std::string::npos)
    return "the function is still the stub: implement it.";
  return "your function threw on this input: fix the error above (a wrong index or shape?).";
}
// A failed check's hint: the first exhibit whose output equals the student's names the mistake;
// otherwise the check's own hint.
void explain_failure(CheckResult& r, const std::vector<Exhibit>& exhibits, const Output& raw,
                     Tolerance tol, const std::string& hint) {
  for (const Exhibit& e : exhibits)
    if (exhibit_matches(e, raw, tol)) return set_known_mistake(r, e.pitfall);
  r.hint = hint;
}

// Garbage output: a NaN or an infinity where the expected value is finite, on a check whose
// inputs are all finite (no "inf" or "nan" in its input), so no masked row or overflow of the
// input explains it. Its own hint, then the check's.
void explain_garbage(CheckResult& r, const Output& expected, const Output& measured) {
  if (!r.known_mistake.empty() || r.input.find("inf") != std::string::npos ||
      r.input.find("nan") != std::string::npos)
    return;
  for (std::size_t f = 0; f < expected.size() && f < measured.size(); ++f)
    for (std::size_t i = 0; i < expected[f].data.size() && i < measured[f].data.size(); ++i)
      if (std::isfinite(expected[f].data[i]) && !std::isfinite(measured[f].data[i])) {
        r.hint = "your output holds " + num(measured[f].data[i]) + " (in " + measured[f].name +
                 ") where a finite value is expected, and every input here is finite: a 0/0, an "
                 "exp that overflows, or an entry never written. " +
                 r.hint;
        return;
      }
}

// Calls the student's function; false (with the exception in the result) when it threw.
bool call_student(const std::function<Output()>& student, Output& raw, CheckResult& r) {
  try {
    raw = isolated(student);
    return true;
  } catch (const ChildFailure& e) {
    r.computed = e.what();
    r.hint = hint_for_child_failure();
    return false;
  } catch (...) {
    r.computed = describe_exception(std::current_exception());
    r.hint = hint_for_exception(r.computed);
    return false;
  }
}

}  // namespace

CheckResult run(const ValueCheck& c) {
  CheckResult r;
  r.name = c.name;
  r.input = c.input;
  r.expected = c.expected_text.empty() ? format(c.expected) : c.expected_text;
  const std::string prefix = c.expected_text.empty() ? "" : c.expected_text + ": ";
  Output raw;
  if (!call_student(c.student, raw, r)) return r;
  Output measured, expected;
  try {
    // (each may call the student's function again: isolated, as the first call)
    measured = c.measure ? isolated([&] { return c.measure(raw); }) : raw;
    expected = c.expected_from ? isolated([&] { return c.expected_from(raw); }) : c.expected;
    const Difference d = find_difference(expected, measured, c.tol);
    // values shown around the first difference; a text-only expectation stays as written
    if (c.expected_from || c.expected_text.empty()) r.expected = prefix + format(expected, 12, &d);
    r.computed = format(measured, 12, &d);
    r.first_difference = d.text;
  } catch (const ChildFailure& e) {
    r.computed = e.what();
    r.hint = hint_for_child_failure();
    return r;
  } catch (...) {
    // measuring can call the student's function again (shift invariance) or index its output
    r.computed = describe_exception(std::current_exception());
    r.hint = hint_for_exception(r.computed);
    return r;
  }
  r.passed = r.first_difference.empty();
  r.hint = c.hint;  // a passed check keeps its own hint (the report shows only a failed one's)
  if (!r.passed) {
    explain_failure(r, c.exhibits, raw, c.tol, c.hint);
    explain_garbage(r, expected, measured);
  }
  return r;
}

CheckResult run(const ThrowCheck& c) {
  CheckResult r;
  r.name = c.name;
  r.input = c.input;
  r.expected = c.expected;
  try {
    isolated([&] {
      c.student();
      return Output{};
    });
    r.computed = "returned without throwing";
    r.hint = c.hint;
    return r;
  } catch (const ChildFailure& e) {
    r.computed = e.what();
    r.hint = hint_for_child_failure();
    return r;
  } catch (const std::invalid_argument& e) {
    r.computed = std::string("threw std::invalid_argument: ") + e.what();
    r.passed = true;
    r.hint = c.hint;
    return r;
  } catch (const std::exception& e) {
    r.computed = std::string("threw an exception that is not a std::invalid_argument: ") + e.what();
    for (const auto& [pitfall, exhibit] : c.exhibits) {
      try {
        exhibit();
      } catch (const std::exception& x) {
        if (typeid(x) == typeid(e)) {
          set_known_mistake(r, pitfall);
          return r;
        }
      }
    }
    r.hint = c.hint;
    return r;
  } catch (...) {
    r.computed = "threw an exception that is not a std::exception";
    r.hint = c.hint;
    return r;
  }
}

CheckResult run(const GradCheck& c) {
  CheckResult r;
  r.name = c.name;
  r.input = c.input;
  Output raw;
  if (!call_student(c.student, raw, r)) return r;
  // the numeric gradient: central differences of the double-precision loss, h = 1e-4
  // (truncation O(h²) ~ 1e-8 relative; rounding ~ 1e-16 / 1e-4 = 1e-12)
  const double h = 1e-4;
  std::vector<double> numeric(c.point.size());
  std::vector<double> p = c.point;
  for (std::size_t j = 0; j < p.size(); ++j) {
    const double x0 = p[j];
    p[j] = x0 + h;
    const double lp = c.loss(p);
    p[j] = x0 - h;
    const double lm = c.loss(p);
    p[j] = x0;
    numeric[j] = (lp - lm) / (2 * h);
  }
  const Output expected = {Field{c.gradient_name, c.shape, numeric}};
  r.expected = "numeric gradient (central differences): " + format(expected);
  const Field* analytic = nullptr;
  for (const Field& f : raw)
    if (f.name == c.gradient_name) analytic = &f;
  if (!analytic) {
    r.computed = "no " + c.gradient_name;
    return r;
  }
  const Difference d = find_difference(expected, {*analytic}, Tolerance{1e-5, 1e-3});
  r.expected = "numeric gradient (central differences): " + format(expected, 12, &d);
  r.computed = "your gradient: " + format({*analytic}, 12, &d);
  if (analytic->data.size() != numeric.size()) {
    r.first_difference = c.gradient_name + ": shape " + shape_str(analytic->shape) + ", expected " +
                         shape_str(c.shape);
    r.hint = c.hint;
    return r;
  }
  double diff2 = 0, a2 = 0, n2 = 0;
  for (std::size_t j = 0; j < numeric.size(); ++j) {
    const double delta = analytic->data[j] - numeric[j];
    diff2 += delta * delta, a2 += analytic->data[j] * analytic->data[j],
        n2 += numeric[j] * numeric[j];
  }
  const double denom = std::sqrt(a2) + std::sqrt(n2);  // scalar
  // both zero is a match; NaN anywhere is not
  const double err = denom == 0 ? (diff2 == 0 ? 0.0 : 1.0) : std::sqrt(diff2) / denom;  // scalar
  r.passed = err <= 1e-4;  // NaN compares false: fails
  r.expected += "  (error ‖a − n‖/(‖a‖ + ‖n‖) must be <= 0.0001)";
  r.computed += "  (error " + num(err) + ")";
  r.hint = c.hint;
  if (r.passed) return r;
  r.first_difference = d.text;
  explain_failure(r, c.exhibits, raw, Tolerance{}, c.hint);
  return r;
}

}  // namespace xenc::grade::detail

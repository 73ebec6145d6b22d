// The report of a test-writing exercise (test_support.hpp): the student's check on the correct
// function (it must accept it), then one check per museum exhibit (it should reject it).
#include "test_support.hpp"

namespace xenc::grade::testing {

namespace {
// What a run gave, in the report's words.
std::string said(const RunVerdict& v) {
  if (!v.verdict) return "no verdict: your program " + v.said;
  return v.accepted ? "your check returned true" : "your check " + v.said;
}
}  // namespace

ExerciseResult test_result(const std::string& exercise, const std::string& function,
                           const RunVerdict& correct,
                           const std::vector<std::pair<Pitfall, RunVerdict>>& exhibits) {
  ExerciseResult r = support::start(exercise);
  const bool accepts_correct = correct.verdict && correct.accepted;
  const bool stub = correct.said.find("not implemented") != std::string::npos;
  const std::string article =
      std::string("aeiou").find(function.at(0)) != std::string::npos ? "an " : "a ";
  CheckResult c;
  c.name = "the correct " + function + " passes your check";
  c.scored = false;
  c.passed = accepts_correct;
  c.input = "your check, run on a correct " + function;
  c.expected = "your check returns true";
  c.computed = said(correct);
  // (a passed check keeps its hint too, as every check does; a report shows a failed one's)
  c.hint = stub ? "the check is still the stub: implement it."
                : "a check that rejects the correct " + function +
                      " catches nothing: none of the mistakes below counts until it accepts "
                      "the correct one. Compare with a tolerance (float32 rounds), and only on "
                      "inputs the function is documented for. A check that crashes or hangs "
                      "gives no verdict.";
  r.checks.push_back(c);
  for (const auto& [pitfall, v] : exhibits) {
    const pitfalls::PitfallInfo& info = pitfalls::describe(pitfall);
    CheckResult e;
    e.name = "catches: " + info.title;
    e.passed = accepts_correct && v.verdict && !v.accepted;
    e.input = "your check, run on " + article + function +
              " with this published mistake (the museum's exhibit; its code is not shown)";
    e.expected = "your check rejects it (returns false or throws)";
    if (!accepts_correct)
      e.computed = "not counted: your check does not accept the correct " + function + " (" +
                   said(correct) + ")";
    else if (!v.verdict)
      e.computed = said(v) + " (a run without a verdict catches nothing)";
    else
      e.computed = v.accepted ? "your check returned true: it missed this mistake" : said(v);
    e.hint = stub ? "the check is still the stub: implement it."
                  : "the mistake: " + info.mistake + ". An input on which it differs from the " +
                        "correct " + function + " catches it.";
    r.checks.push_back(e);
  }
  return r;
}

}  // namespace xenc::grade::testing

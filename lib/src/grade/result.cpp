// The student's report: ✔/✘ per check; for a failed check the values and a hint.
#include "xenc/grade/result.hpp"

#include <sstream>

namespace xenc::grade {

bool ExerciseResult::passed() const { return !checks.empty() && num_passed() == checks.size(); }

std::size_t ExerciseResult::num_passed() const {
  std::size_t n = 0;
  for (const CheckResult& c : checks) n += c.passed;
  return n;
}

bool ExerciseResult::still_stub() const {
  if (checks.empty()) return false;
  for (const CheckResult& c : checks)
    if (c.passed || c.computed.find("not implemented") == std::string::npos) return false;
  return true;
}

void print_report(std::ostream& os, const ExerciseResult& r) {
  os << (r.passed() ? "✔ " : "✘ ") << r.exercise << ": " << r.num_passed() << " of "
     << r.checks.size() << " checks passed\n";
  os << "  " << r.signature << "\n";
  for (const CheckResult& c : r.checks) {
    os << "  " << (c.passed ? "✔ " : "✘ ") << c.name << "\n";
    if (c.passed) continue;
    if (c.hidden) {  // a hidden check keeps its input and values to itself (the runner's rule too)
      os << "      a hidden check (inputs drawn from the teacher's seed; not shown)\n";
      if (!c.known_mistake.empty()) os << "      hint: " << c.hint << "\n";
      continue;
    }
    os << "      input:    " << c.input << "\n";
    os << "      expected: " << c.expected << "\n";
    os << "      computed: " << c.computed << "\n";
    if (!c.first_difference.empty()) os << "      first difference: " << c.first_difference << "\n";
    if (!c.hint.empty()) os << "      hint: " << c.hint << "\n";
  }
}

std::string report(const ExerciseResult& r) {
  std::ostringstream os;
  print_report(os, r);
  return os.str();
}

void print_summary(std::ostream& os, const std::vector<ExerciseResult>& results) {
  std::size_t passed = 0, checks = 0, exercises_passed = 0;
  for (const ExerciseResult& r : results) {
    os << (r.passed() ? "✔ " : "✘ ") << r.exercise << "  " << r.num_passed() << " of "
       << r.checks.size() << " checks passed\n";
    passed += r.num_passed();
    checks += r.checks.size();
    exercises_passed += r.passed();
  }
  os << exercises_passed << " of " << results.size() << " exercises passed (" << passed << " of "
     << checks << " checks)\n";
}

}  // namespace xenc::grade

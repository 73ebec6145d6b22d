// The student's report: ✔/✘ per check, the values of each failed check, then the hints, each once.
#include "xenc/grade/result.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <utility>
#include <vector>

#include "xenc/core/error.hpp"

namespace xenc::grade {

bool ExerciseResult::passed() const { return !checks.empty() && num_passed() == checks.size(); }

std::size_t ExerciseResult::num_passed() const {
  std::size_t n = 0;
  for (const CheckResult& c : checks) n += c.passed;
  return n;
}

std::size_t ExerciseResult::num_scored() const {
  std::size_t n = 0;
  for (const CheckResult& c : checks) n += c.scored;
  return n;
}

std::size_t ExerciseResult::num_scored_passed() const {
  std::size_t n = 0;
  for (const CheckResult& c : checks) n += c.scored && c.passed;
  return n;
}

bool ExerciseResult::still_stub() const {
  if (checks.empty()) return false;
  for (const CheckResult& c : checks)
    if (c.passed || c.computed.find("not implemented") == std::string::npos) return false;
  return true;
}

HintLevel parse_hint_level(const std::string& text) {
  if (text == "full") return HintLevel::full;
  if (text == "brief") return HintLevel::brief;
  if (text == "off") return HintLevel::off;
  throw config_error("parse_hint_level: \"" + text + "\" is not a hint level, expected \"full\", " +
                     "\"brief\" or \"off\"");
}

std::string hint_level_name(HintLevel level) {
  switch (level) {
    case HintLevel::full:
      return "full";
    case HintLevel::brief:
      return "brief";
    case HintLevel::off:
      return "off";
  }
  throw config_error("hint level " + std::to_string(int(level)) +
                     " is not one of HintLevel::full (0), brief (1) or off (2)");
}

std::string first_sentence(const std::string& text) {
  // abbreviations whose period does not end a sentence (the word before the period, lower case)
  static const char* const kAbbreviations[] = {"e.g", "i.e", "cf",  "vs",
                                               "etc", "eq",  "fig", "resp"};
  int depth = 0;  // inside (), [], {} or `...`
  bool code = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '`') code = !code;
    if (code) continue;
    if (ch == '(' || ch == '[' || ch == '{') ++depth;
    if ((ch == ')' || ch == ']' || ch == '}') && depth > 0) --depth;
    if (ch != '.' || depth > 0) continue;
    // a sentence ends at a period followed by a space, never inside ".." or "..." (a range)
    if (i + 1 >= text.size() || text[i + 1] != ' ' || (i > 0 && text[i - 1] == '.')) continue;
    std::size_t w = i;
    while (w > 0 && text[w - 1] != ' ' && text[w - 1] != '(') --w;
    std::string word = text.substr(w, i - w);
    for (char& k : word) k = char(std::tolower(static_cast<unsigned char>(k)));
    bool abbreviation = false;
    for (const char* a : kAbbreviations) abbreviation = abbreviation || word == a;
    if (!abbreviation) return text.substr(0, i + 1);
  }
  return text;
}

std::string hint_text(const CheckResult& c, HintLevel level) {
  hint_level_name(level);  // throws for a level outside the enum
  // a hidden check shows a hint only when it names a known mistake
  if (level == HintLevel::off || (c.hidden && c.known_mistake.empty())) return "";
  if (level == HintLevel::brief) {
    if (!c.known_mistake.empty()) return "a known mistake: " + c.known_mistake + ".";
    return first_sentence(c.hint);
  }
  return c.hint;
}

std::string test_score(const ExerciseResult& r) {
  const std::size_t scored = r.num_scored(), caught = r.num_scored_passed();
  if (scored == r.checks.size()) return "";
  std::string s =
      "score: " + std::to_string(caught) + " of " + std::to_string(scored) + " mistakes caught";
  const bool accepts_correct = std::all_of(
      r.checks.begin(), r.checks.end(), [](const CheckResult& c) { return c.scored || c.passed; });
  if (!accepts_correct) return s + " (none counts until your check accepts the correct function)";
  s += " (" + std::to_string(scored == 0 ? 0 : (100 * caught + scored / 2) / scored) +
       "% of the points)";
  std::string missed;
  for (const CheckResult& c : r.checks) {
    if (!c.scored || c.passed) continue;
    const std::string prefix = "catches: ";
    missed += (missed.empty() ? "" : "; ") +
              (c.name.rfind(prefix, 0) == 0 ? c.name.substr(prefix.size()) : c.name);
  }
  return s + (missed.empty() ? ", none missed" : ", missed: " + missed);
}

void print_report(std::ostream& os, const ExerciseResult& r, HintLevel hints) {
  hint_level_name(hints);  // a bad level throws before anything is printed
  os << (r.passed() ? "✔ " : "✘ ") << r.exercise << ": " << r.num_passed() << " of "
     << r.checks.size() << " checks passed\n";
  os << "  " << r.signature << "\n";
  const std::string score = test_score(r);
  if (!score.empty()) os << "  " << score << "\n";
  for (const CheckResult& c : r.checks) {
    os << "  " << (c.passed ? "✔ " : "✘ ") << c.name << "\n";
    if (c.passed) continue;
    // a hidden check keeps its input and values to itself (the runner's rule too)
    if (c.hidden) {
      os << "      a hidden check (inputs drawn from the teacher's seed; not shown)\n";
    } else {
      os << "      input:    " << c.input << "\n";
      os << "      expected: " << c.expected << "\n";
      os << "      computed: " << c.computed << "\n";
      if (!c.first_difference.empty())
        os << "      first difference: " << c.first_difference << "\n";
    }
  }
  // The hints after the list, each once: the stub's hint, or one mistake that fails several checks,
  // would otherwise repeat under every check and bury the values. When the failed checks have
  // different hints, each names the checks it is for.
  std::vector<std::pair<std::string, std::vector<std::string>>> distinct;  // hint, its checks
  for (const CheckResult& c : r.checks) {
    if (c.passed) continue;
    const std::string h = hint_text(c, hints);
    if (h.empty()) continue;
    auto same =
        std::find_if(distinct.begin(), distinct.end(), [&](const auto& d) { return d.first == h; });
    if (same == distinct.end())
      distinct.push_back({h, {c.name}});
    else
      same->second.push_back(c.name);
  }
  for (const auto& [h, names] : distinct) {
    if (distinct.size() == 1) {
      os << "  hint: " << h << "\n";
      continue;
    }
    os << "  hint for";
    for (std::size_t i = 0; i < names.size(); ++i)
      os << (i == 0 ? " \"" : ", \"") << names[i] << "\"";
    os << ": " << h << "\n";
  }
}

void print_report(std::ostream& os, const ExerciseResult& r) {
  print_report(os, r, HintLevel::full);
}

std::string report(const ExerciseResult& r, HintLevel hints) {
  std::ostringstream os;
  print_report(os, r, hints);
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

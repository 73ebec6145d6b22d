// The grade program: builds each exercise in the sandbox, runs the student's function there
// through the call channel (xenc/grade/wire.hpp), computes every verdict itself and writes the
// report (text, JSON, Gradescope results.json, JUnit XML).
#include "xenc/grade/runner.hpp"

#include "paths.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>

#include "xenc/core/error.hpp"
#include "xenc/grade/cache.hpp"
#include "xenc/grade/exercises.hpp"

namespace xenc::grade {

namespace fs = std::filesystem;
using nlohmann::json;

// ---- settings -----------------------------------------------------------------------------------

namespace {
// The machine's memory in MiB (the largest memory limit a setting may ask for).
std::size_t machine_mib() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? std::size_t(pages) / 1024 * std::size_t(page) / 1024
                               : std::size_t(1) << 20;
}
}  // namespace

Settings read_settings(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw config_error("read_settings: cannot open '" + path + "'");
  const std::string where = "read_settings: '" + path + "': ";
  std::error_code ec;
  const auto bytes = fs::file_size(path, ec);
  constexpr std::uintmax_t kMaxBytes = 1 << 20;
  if (!ec && bytes > kMaxBytes)
    throw config_error(where + "the file is " + std::to_string(bytes) +
                       " bytes, more than a settings file may be (1 MiB)");
  std::string text(std::size_t(ec ? 0 : bytes), '\0');
  in.read(text.data(), std::streamsize(text.size()));
  // each object's keys, to refuse a key written twice (JSON readers keep the last one silently)
  std::vector<std::vector<std::string>> keys;
  std::string duplicate;
  const json::parser_callback_t no_duplicates = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == json::parse_event_t::key && !keys.empty()) {
      const std::string k = parsed.get<std::string>();
      if (std::find(keys.back().begin(), keys.back().end(), k) != keys.back().end() &&
          duplicate.empty())
        duplicate = k;
      keys.back().push_back(k);
    }
    return true;
  };
  json j;
  try {
    j = json::parse(text, no_duplicates);
  } catch (const json::parse_error& e) {
    throw config_error(where + "is not valid JSON (the first error is at byte " +
                       std::to_string(e.byte) + ")");
  } catch (const json::exception&) {
    throw config_error(where + "is not valid JSON");
  }
  if (!duplicate.empty())
    throw config_error(where + "the key \"" + duplicate + "\" is written twice");
  if (!j.is_object()) throw config_error(where + "must hold a JSON object");
  Settings s;
  auto bad = [&](const std::string& key, const std::string& expected) {
    return config_error(
        where + "\"" + key + "\" is " +
        j.at(key).dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 80) +
        ", expected " + expected);
  };
  auto number_in = [](const json& v, double lo, double hi, bool lo_open) {
    if (!v.is_number()) return false;
    const double x = v.get<double>();
    return std::isfinite(x) && (lo_open ? x > lo : x >= lo) && x <= hi;
  };
  const std::size_t max_mib = machine_mib();
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    if (key == "exercises") {
      if (!v.is_object()) throw bad(key, "an object {\"name\": points, ...}");
      for (auto e = v.begin(); e != v.end(); ++e)
        if (!find_exercise(e.key()))
          throw config_error(where + "\"exercises\": unknown exercise \"" + e.key().substr(0, 80) +
                             "\"");
      for (const ExerciseInfo& e : exercises())
        if (v.contains(e.name)) {
          const json& p = v.at(e.name);
          if (!number_in(p, 0, 1e6, false))
            throw config_error(where + "\"exercises\": the points of \"" + e.name + "\" are " +
                               p.dump().substr(0, 80) + ", expected a number in [0, 1000000]");
          s.exercises.emplace_back(e.name, p.get<double>());
        }
    } else if (key == "hints") {
      try {
        s.hints = parse_hint_level(v.is_string() ? v.get<std::string>() : "");
      } catch (const config_error&) {
        throw bad(key, "\"full\", \"brief\" or \"off\"");
      }
    } else if (key == "hidden_seed") {
      // an integer that fits 64 bits: JSON readers turn a larger one into an inexact double
      if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
        throw bad(key, "an integer in [0, 18446744073709551615]");
      s.hidden_seed = v.get<std::uint64_t>();
    } else if (key == "library_calls") {
      if (!v.is_boolean()) throw bad(key, "true or false");
      s.library_calls = v.get<bool>();
    } else if (key == "time_limit_seconds") {
      if (!number_in(v, 0, 3600, true)) throw bad(key, "a number of seconds in (0, 3600]");
      s.limits.time_seconds = v.get<double>();
    } else if (key == "compile_time_limit_seconds") {
      if (!number_in(v, 0, 3600, true)) throw bad(key, "a number of seconds in (0, 3600]");
      s.compile_seconds = v.get<double>();
    } else if (key == "memory_limit_mib") {
      if (!(v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0)) ||
          v.get<std::uint64_t>() < 64 || v.get<std::uint64_t>() > max_mib)
        throw bad(key, "an integer in [64, " + std::to_string(max_mib) +
                           "] (MiB; this machine has " + std::to_string(max_mib) + ")");
      s.limits.memory_mib = v.get<std::size_t>();
    } else if (key == "process_limit") {
      if (!(v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0)) ||
          v.get<std::uint64_t>() < 1 || v.get<std::uint64_t>() > 4096)
        throw bad(key, "an integer in [1, 4096]");
      s.limits.processes = v.get<std::size_t>();
    } else {
      throw config_error(where + "unknown key \"" + key.substr(0, 80) +
                         "\" (known: exercises, hints, hidden_seed, library_calls, "
                         "time_limit_seconds, compile_time_limit_seconds, memory_limit_mib, "
                         "process_limit)");
    }
  }
  return s;
}

// ---- formats ------------------------------------------------------------------------------------

double Graded::points_per_check() const {
  return result.num_scored() == 0 ? 0.0 : max_points / double(result.num_scored());
}
double Graded::check_points(const CheckResult& c) const {
  return c.passed && c.scored ? points_per_check() : 0.0;
}
double Graded::check_max_points(const CheckResult& c) const {
  return c.scored ? points_per_check() : 0.0;
}

namespace {

std::string points_str(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", p);
  return buf;
}

// What a failed check says, as lines; a hidden check keeps its values to itself.
std::vector<std::string> check_details(const CheckResult& c, HintLevel hints) {
  std::vector<std::string> lines;
  if (c.passed) return lines;
  if (c.hidden) {
    lines.push_back("a hidden check (inputs drawn from the teacher's seed; not shown)");
  } else {
    lines.push_back("input:    " + c.input);
    lines.push_back("expected: " + c.expected);
    lines.push_back("computed: " + c.computed);
    if (!c.first_difference.empty()) lines.push_back("first difference: " + c.first_difference);
  }
  const std::string h = hint_text(c, hints);
  if (!h.empty()) lines.push_back("hint: " + h);
  return lines;
}

std::string status_line(const Graded& g) {
  if (!g.failure.empty()) return g.failure;
  if (g.result.still_stub()) return "not implemented yet (the stub throws)";
  return std::to_string(g.result.num_passed()) + " of " + std::to_string(g.result.checks.size()) +
         " checks passed";
}

// One exercise's report as lines, the one source of every format's text: the text report
// prints them (indented), the JSON reports hold them ("report"), Gradescope's tests and JUnit's
// failures carry them as their output.
struct ExerciseLines {
  std::string head;                // "✘ softmax: 1 of 2 checks passed (1 of 2 points)"
  std::vector<std::string> notes;  // its output, for an exercise without a verdict; else its
                                   // signature
  std::vector<std::vector<std::string>> checks;  // per check: "✔ name" or "✘ name", then details
  std::vector<std::string> all() const {
    std::vector<std::string> a = {head};
    a.insert(a.end(), notes.begin(), notes.end());
    for (const auto& c : checks) a.insert(a.end(), c.begin(), c.end());
    return a;
  }
};

ExerciseLines exercise_lines(const Graded& g, HintLevel hints) {
  ExerciseLines e;
  e.head = std::string(g.passed() ? "✔ " : "✘ ") + g.exercise + ": " + status_line(g) + " (" +
           points_str(g.points) + " of " + points_str(g.max_points) + " points)";
  // short for a stub or an exercise without a verdict: its output at most
  if (!g.failure.empty() || g.result.still_stub()) {
    if (!g.output.empty() && !g.failure.empty()) {
      e.notes.push_back("its output:");
      std::istringstream lines(g.output.substr(0, 600));
      for (std::string l; std::getline(lines, l);) e.notes.push_back("  " + l);
    }
    return e;
  }
  e.notes.push_back(g.result.signature);
  if (!g.note.empty()) e.notes.push_back(g.note);
  for (const CheckResult& c : g.result.checks) {
    std::vector<std::string> lines = {(c.passed ? "✔ " : "✘ ") + c.name};
    for (const std::string& l : check_details(c, hints)) lines.push_back(l);
    e.checks.push_back(lines);
  }
  return e;
}

std::string summary_line(const std::vector<Graded>& graded) {
  double total = 0, max_total = 0;
  std::size_t passed = 0;
  for (const Graded& g : graded) total += g.points, max_total += g.max_points, passed += g.passed();
  return std::to_string(passed) + " of " + std::to_string(graded.size()) + " exercises passed, " +
         points_str(total) + " of " + points_str(max_total) + " points";
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

std::string text_report(const std::vector<Graded>& graded, HintLevel hints) {
  std::ostringstream os;
  for (const Graded& g : graded) {
    const ExerciseLines e = exercise_lines(g, hints);
    os << e.head << "\n";
    for (const std::string& l : e.notes) os << "  " << l << "\n";
    for (const auto& c : e.checks)
      for (std::size_t i = 0; i < c.size(); ++i) os << (i ? "      " : "  ") << c[i] << "\n";
  }
  os << summary_line(graded) << "\n";
  return os.str();
}

std::string status_of(const Graded& g) {
  if (!g.failure.empty()) return "failed: " + g.failure;
  if (g.result.still_stub()) return "not implemented";
  if (g.passed()) return "passed";
  return g.note.empty() ? "failed" : "failed: " + g.note;
}

json json_report(const std::vector<Graded>& graded, HintLevel hints) {
  json ex = json::array();
  double total = 0, max_total = 0;
  bool all = true;
  for (const Graded& g : graded) {
    const ExerciseLines lines = exercise_lines(g, hints);
    json checks = json::array();
    for (std::size_t i = 0; i < g.result.checks.size(); ++i) {
      const CheckResult& c = g.result.checks[i];
      json k = {{"name", c.name},
                {"report", i < lines.checks.size() ? lines.checks[i] : std::vector<std::string>()},
                {"passed", c.passed},
                {"hidden", c.hidden},
                {"points", g.check_points(c)},
                {"max_points", g.check_max_points(c)}};
      if (!c.passed && !c.hidden)
        k.update({{"input", c.input},
                  {"expected", c.expected},
                  {"computed", c.computed},
                  {"first_difference", c.first_difference}});
      if (!c.passed) k["hint"] = hint_text(c, hints);
      if (!c.passed && !c.known_mistake.empty() && hints != HintLevel::off)
        k["known_mistake"] = c.known_mistake;
      checks.push_back(k);
    }
    ex.push_back({{"name", g.exercise},
                  {"status", status_of(g)},
                  {"passed", g.passed()},
                  {"points", g.points},
                  {"max_points", g.max_points},
                  {"failure", g.failure},
                  {"output", g.output},
                  {"seconds", g.seconds},
                  {"report", lines.all()},
                  {"checks", checks}});
    total += g.points, max_total += g.max_points, all = all && g.passed();
  }
  return {{"passed", all},
          {"points", total},
          {"max_points", max_total},
          {"summary", summary_line(graded)},
          {"exercises", ex}};
}

// Gradescope's autograder results.json (https://gradescope-autograders.readthedocs.io/en/latest/
// specs/, "Output format"): every top-level field it documents but the leaderboard's (which only
// a leaderboard assignment reads): score, execution_time (seconds: the exercises' programs' run
// time here; grade's own run replaces it with its wall clock), output (the exercises' heads and
// the summary) with output_format "text", test_output_format and test_name_format "text",
// visibility "visible" (the assignment's own release setting still applies), stdout_visibility
// "hidden" (run_autograder's stdout is grade's diagnostics, for the teacher), extra_data (points,
// max_points, passed), then one test per check (name, score, max_score, status "passed"/"failed",
// output, visibility "visible"/"hidden"); an exercise without a verdict is one failed test
// holding all its points.
json gradescope_report(const std::vector<Graded>& graded, HintLevel hints) {
  json tests = json::array();
  double total = 0;
  for (const Graded& g : graded) {
    total += g.points;
    const ExerciseLines lines = exercise_lines(g, hints);
    if (!g.failure.empty() || g.result.checks.empty() || g.result.still_stub()) {
      tests.push_back({{"name", g.exercise},
                       {"score", g.points},
                       {"max_score", g.max_points},
                       {"status", "failed"},
                       {"output", joined(lines.all())},
                       {"visibility", "visible"}});
      continue;
    }
    for (std::size_t i = 0; i < g.result.checks.size(); ++i) {
      const CheckResult& c = g.result.checks[i];
      const std::string out = joined(lines.checks[i]);
      tests.push_back({{"name", g.exercise + ": " + c.name},
                       {"score", g.check_points(c)},
                       {"max_score", g.check_max_points(c)},
                       {"status", c.passed ? "passed" : "failed"},
                       {"output", out},
                       {"visibility", c.hidden ? "hidden" : "visible"}});
    }
  }
  // the exercises' own lines (each head, its signature), then the summary, above the tests
  std::string output;
  for (const Graded& g : graded) {
    const ExerciseLines lines = exercise_lines(g, hints);
    if (!lines.checks.empty()) output += lines.head + "\n" + joined(lines.notes);
  }
  double seconds = 0, max_total = 0;
  bool all = !graded.empty();
  for (const Graded& g : graded) seconds += g.seconds, max_total += g.max_points;
  for (const Graded& g : graded) all = all && g.passed();
  return {{"score", total},
          {"execution_time", std::ceil(seconds)},
          {"output", output + summary_line(graded) + "\n"},
          {"output_format", "text"},
          {"test_output_format", "text"},
          {"test_name_format", "text"},
          {"visibility", "visible"},
          {"stdout_visibility", "hidden"},
          {"extra_data", {{"points", total}, {"max_points", max_total}, {"passed", all}}},
          {"tests", tests}};
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

// JUnit XML as CI servers read it: one testsuite per exercise, one testcase per check.
std::string junit_report(const std::vector<Graded>& graded, HintLevel hints) {
  std::ostringstream os;
  std::size_t tests = 0, failures = 0;
  // an exercise without a verdict, or a stub, is one failed test
  auto one_test = [](const Graded& g) {
    return !g.failure.empty() || g.result.checks.empty() || g.result.still_stub();
  };
  for (const Graded& g : graded) {
    tests += one_test(g) ? 1 : g.result.checks.size();
    failures += one_test(g) ? 1 : g.result.checks.size() - g.result.num_passed();
  }
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"xencoder grade\" tests=\""
     << tests << "\" failures=\"" << failures << "\">\n";
  for (const Graded& g : graded) {
    const ExerciseLines lines = exercise_lines(g, hints);
    if (one_test(g)) {
      os << "  <testsuite name=\"" << xml_escape(g.exercise) << "\" tests=\"1\" failures=\"1\">\n"
         << "    <testcase classname=\"" << xml_escape(g.exercise) << "\" name=\"build and run\">\n"
         << "      <failure message=\"" << xml_escape(status_line(g)) << "\">"
         << xml_escape(joined(lines.all())) << "</failure>\n"
         << "    </testcase>\n  </testsuite>\n";
      continue;
    }
    os << "  <testsuite name=\"" << xml_escape(g.exercise) << "\" tests=\""
       << g.result.checks.size() << "\" failures=\""
       << g.result.checks.size() - g.result.num_passed() << "\" time=\"" << g.seconds << "\">\n";
    std::vector<std::string> head = {lines.head};
    head.insert(head.end(), lines.notes.begin(), lines.notes.end());
    os << "    <system-out>" << xml_escape(joined(head)) << "</system-out>\n";
    for (std::size_t i = 0; i < g.result.checks.size(); ++i) {
      const CheckResult& c = g.result.checks[i];
      os << "    <testcase classname=\"" << xml_escape(g.exercise) << "\" name=\""
         << xml_escape(c.name) << "\"";
      const std::string body = joined(lines.checks[i]);
      if (c.passed) {
        os << "><system-out>" << xml_escape(body) << "</system-out></testcase>\n";
        continue;
      }
      os << ">\n      <failure message=\""
         << xml_escape(c.hidden ? "hidden check failed" : c.first_difference) << "\">"
         << xml_escape(body) << "</failure>\n    </testcase>\n";
    }
    os << "  </testsuite>\n";
  }
  os << "</testsuites>\n";
  return os.str();
}

}  // namespace

std::string format_report(const std::vector<Graded>& graded, Format format, HintLevel hints) {
  switch (format) {
    case Format::json:
      return json_report(graded, hints).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    case Format::gradescope:
      return gradescope_report(graded, hints).dump(2, ' ', false, json::error_handler_t::replace) +
             "\n";
    case Format::junit:
      return junit_report(graded, hints);
    case Format::text:
      break;
  }
  return text_report(graded, hints);
}

// ---- messages a student can act on -------------------------------------------------------------

std::vector<std::string> undefined_references(const std::string& link_log) {
  std::vector<std::string> found;
  std::istringstream in(link_log);
  for (std::string line; std::getline(in, line);) {
    std::string name;
    for (const std::string marker : {"undefined reference to ", "undefined symbol: "}) {
      const std::size_t at = line.find(marker);
      if (at == std::string::npos) continue;
      name = line.substr(at + marker.size());
      // GNU ld quotes the name `...' (older) or '...' (newer)
      if (!name.empty() && (name.front() == '`' || name.front() == '\'')) name.erase(0, 1);
      while (!name.empty() && (name.back() == '\'' || name.back() == '\r' || name.back() == ' '))
        name.pop_back();
      break;
    }
    if (!name.empty() && std::find(found.begin(), found.end(), name) == found.end())
      found.push_back(name);
  }
  return found;
}

namespace {
// A demangled function's qualified name, without its parameters: "assignment::softmax".
std::string function_name(const std::string& demangled) {
  int depth = 0;
  for (std::size_t i = 0; i < demangled.size(); ++i) {
    if (demangled[i] == '<') ++depth;
    if (demangled[i] == '>' && depth > 0) --depth;
    if (demangled[i] == '(' && depth == 0 && i > 0) return demangled.substr(0, i);
  }
  return demangled;
}
}  // namespace

std::string missing_function_message(const std::string& link_log, const std::string& exercise,
                                     const std::string& signature) {
  const std::vector<std::string> missing = undefined_references(link_log);
  if (missing.empty()) return "";
  const std::string file = "exercises/" + exercise + ".cpp";
  for (const std::string& m : missing)
    if (function_name(m) == "assignment::" + exercise)
      return file + " does not define assignment::" + exercise + ", the function `" + signature +
             "` (renamed, misspelled, outside namespace assignment, or with other parameter "
             "types?)";
  return file + " calls " + function_name(missing.front()) +
         ", which is declared but defined nowhere (write its body, or remove the call)";
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::vector<StrayFile> stray_files(const std::string& dir,
                                   const std::vector<std::string>& exercises) {
  std::vector<StrayFile> strays;
  std::error_code ec;
  if (exercises.empty() || !fs::is_directory(dir, ec)) return strays;
  auto lower = [](std::string t) {
    for (char& ch : t) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return t;
  };
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    const std::string file = entry.path().filename().string();
    bool exercise = false;
    for (const std::string& e : exercises) exercise = exercise || file == e + ".cpp";
    if (exercise) continue;
    StrayFile f{file, exercises.front() + ".cpp"};
    std::size_t best = edit_distance(lower(file), lower(f.closest));
    for (const std::string& e : exercises) {
      const std::size_t d = edit_distance(lower(file), lower(e + ".cpp"));
      if (d < best) best = d, f.closest = e + ".cpp";
    }
    strays.push_back(f);
  }
  std::sort(strays.begin(), strays.end(),
            [](const StrayFile& a, const StrayFile& b) { return a.file < b.file; });
  return strays;
}

std::string stray_message(const StrayFile& f, const std::string& folder) {
  return folder + f.file +
         " is not an exercise of this assignment and was not graded (did you "
         "mean " +
         folder + f.closest + "?)";
}

// ---- the parent ---------------------------------------------------------------------------------

namespace {

// Gradescope's execution_time: this run's wall clock (compiling included), whole seconds up.
std::string with_execution_time(const std::string& report,
                                std::chrono::steady_clock::time_point started) {
  json j = json::parse(report);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
  j["execution_time"] = std::ceil(took.count());
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

// Per exercise that did not pass, the museum exhibits named by its failed checks (each once).
json named_mistakes(const std::vector<Graded>& graded) {
  json by_exercise = json::object();
  for (const Graded& g : graded) {
    std::vector<std::string> titles;
    for (const CheckResult& c : g.result.checks)
      if (!c.passed && !c.known_mistake.empty() &&
          std::find(titles.begin(), titles.end(), c.known_mistake) == titles.end())
        titles.push_back(c.known_mistake);
    if (!titles.empty()) by_exercise[g.exercise] = titles;
  }
  return by_exercise;
}

// The first line of a build log that names an error (the compiler's, the linker's or the
// library-calls policy's), else the last non-empty line.
std::string first_error(const std::string& log) {
  std::istringstream in(log);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find("error") != std::string::npos && line.find("make") != 0 &&
        line.find("gmake") != 0 && line.find("ninja: build stopped") == std::string::npos)
      return line;
    if (!line.empty()) last = line;
  }
  return last;
}

struct Options {
  Format format = Format::text;
  bool both = false;  // --format both: {"json": ..., "text": ...} for xenc-grade-all
  std::string output, text_output, settings, submission, scratch, logs, cache;
  std::optional<double> time_limit;
  std::optional<std::size_t> memory_limit;
  bool list = false;
  std::vector<std::string> chosen;
};

const char* kUsage =
    "usage: grade [--format text|json|gradescope|junit|both] [--output FILE] [--text-output FILE]\n"
    "             [--settings FILE] [--submission DIR] [--scratch DIR] [--logs DIR] [--cache DIR]\n"
    "             [--time-limit SECONDS] [--memory-limit MIB] [--list] [exercise ...]\n"
    "Builds and grades each exercise in its own sandbox. --submission: the folder whose\n"
    "exercises/<name>.cpp are graded (default: this template's); --scratch: where each exercise\n"
    "is built (default: BUILD/grade-scratch); --logs: where failed builds' logs go (default:\n"
    "BUILD/grade-logs); --cache: keep each linked program there and reuse it when the file,\n"
    "the commands and everything they read are the same (default: none, every file compiled);\n"
    "--format both: the json and text reports in one JSON object.\n"
    "Exit code: 0 when every check of every chosen exercise passed, 1 when one did not, 2 for a\n"
    "usage or settings error.\n";

// Parses the command line; throws std::invalid_argument with the message for the user.
Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--format") {
      const std::string f = value();
      if (f == "text")
        o.format = Format::text;
      else if (f == "json")
        o.format = Format::json;
      else if (f == "gradescope")
        o.format = Format::gradescope;
      else if (f == "junit")
        o.format = Format::junit;
      else if (f == "both")
        o.format = Format::json, o.both = true;
      else
        throw std::invalid_argument("--format " + f +
                                    ": expected text, json, gradescope, junit or both");
    } else if (a == "--output") {
      o.output = value();
    } else if (a == "--text-output") {
      o.text_output = value();
    } else if (a == "--settings") {
      o.settings = value();
    } else if (a == "--submission") {
      o.submission = value();
    } else if (a == "--scratch") {
      o.scratch = value();
    } else if (a == "--logs") {
      o.logs = value();
    } else if (a == "--cache") {
      o.cache = value();
    } else if (a == "--time-limit") {
      const std::string v = value();
      char* end = nullptr;
      const double t = std::strtod(v.c_str(), &end);
      if (*end || !(t > 0 && t <= 3600))
        throw std::invalid_argument("--time-limit " + v + ": expected seconds in (0, 3600]");
      o.time_limit = t;
    } else if (a == "--memory-limit") {
      const std::string v = value();
      char* end = nullptr;
      errno = 0;
      const unsigned long long m = std::strtoull(v.c_str(), &end, 10);
      if (*end || v.empty() || v[0] == '-' || errno == ERANGE || m < 64 || m > (1ull << 24))
        throw std::invalid_argument("--memory-limit " + v + ": expected MiB in [64, 16777216]");
      o.memory_limit = std::size_t(m);
    } else if (a == "--list") {
      o.list = true;
    } else if (a == "--help" || a == "-h") {
      throw std::invalid_argument("");
    } else if (!a.empty() && a[0] == '-') {
      throw std::invalid_argument("unknown option " + a);
    } else {
      o.chosen.push_back(a);
    }
  }
  return o;
}

// Splits a command line as CMake writes it (compile_commands.json, link.txt): words separated by
// blanks, with "..." and '...' quoting and backslash escapes.
std::vector<std::string> split_command(const std::string& s) {
  std::vector<std::string> words;
  std::string w;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < s.size())
        w += s[++i];
      else
        w += c;
    } else if (c == '"' || c == '\'') {
      quote = c, in_word = true;
    } else if (c == '\\' && i + 1 < s.size()) {
      w += s[++i], in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(w), w.clear(), in_word = false;
    } else {
      w += c, in_word = true;
    }
  }
  if (in_word) words.push_back(w);
  return words;
}

using detail::under;

// Every absolute path a command names (include and library folders, objects, libraries) outside
// /usr, bound read-only into the sandbox. The template's own folder is not: only its
// exercises.hpp is (its grading.json stays out of sight).
void bind_paths(const std::vector<std::string>& words, const std::string& template_dir,
                const std::string& scratch, Box& box) {
  std::vector<std::string> paths;
  for (const std::string& w : words) {
    // the run-time search path: the folders of the shared libraries
    if (w.rfind("-Wl,-rpath,", 0) == 0) {
      std::istringstream dirs(w.substr(11));
      for (std::string d; std::getline(dirs, d, ':');) paths.push_back(d);
      continue;
    }
    // a shared library: its folder (the loader looks for its soname, a link beside it)
    if (w.find(".so") != std::string::npos && w[0] == '/') {
      paths.push_back(fs::path(w).parent_path().string());
      continue;
    }
    paths.push_back(w);
    // a precompiled header (-include FILE): GCC reads FILE.gch beside it
    std::error_code ec;
    if (!w.empty() && w[0] == '/' && fs::exists(w + ".gch", ec)) paths.push_back(w + ".gch");
  }
  for (const std::string& w : paths) {
    std::string p = w;
    for (const char* flag : {"-I", "-L", "-isystem"})
      if (p.rfind(flag, 0) == 0) p = p.substr(std::strlen(flag));
    if (p.empty() || p[0] != '/' || under(p, "/usr") || under(p, scratch)) continue;
    std::error_code ec;
    if (!fs::exists(p, ec)) continue;
    if (fs::path(p).lexically_normal() == fs::path(template_dir).lexically_normal()) {
      const std::string header = (fs::path(template_dir) / "exercises.hpp").string();
      if (fs::exists(header, ec)) box.read_only.push_back(header);
      continue;
    }
    box.read_only.push_back(fs::path(p).lexically_normal().string());
  }
  std::sort(box.read_only.begin(), box.read_only.end());
  box.read_only.erase(std::unique(box.read_only.begin(), box.read_only.end()), box.read_only.end());
}

// xencoder's shared libraries and its full include folder (xenc/), when they are installed under
// /usr, which every sandbox sees: with "library_calls": false they are hidden from the compile, the
// link and the run (elsewhere they are not bound at all). Found from this library's own file.
std::vector<std::string> library_files() {
  std::vector<std::string> files;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&grade_main), &info) == 0 || !info.dli_fname) return files;
  std::error_code ec;
  const fs::path self = fs::canonical(info.dli_fname, ec);
  if (ec || !under(self, "/usr")) return files;
  const fs::path dir = self.parent_path();
  for (const char* lib : {"libxencoder.so", "libxencoder_io.so", "libxencoder_viz.so"}) {
    const fs::path real = fs::canonical(dir / lib, ec);
    if (!ec) files.push_back(real.string());
  }
  if (std::find(files.begin(), files.end(), self.string()) == files.end())
    files.push_back(self.string());
  for (const char* up : {"../include/xenc", "../../include/xenc"}) {
    const fs::path inc = fs::canonical(dir / up, ec);
    if (!ec && fs::is_directory(inc, ec)) files.push_back(inc.string());
  }
  return files;
}

// The compile and link limits: generous for a compiler, but bounded (a template bomb or
// `#include </dev/zero>` ends at them).
Limits build_limits() {
  Limits l;
  l.time_seconds = 120;  // Settings::compile_seconds, set by the caller
  l.memory_mib = 2048;
  l.output_bytes = 1 << 16;
  l.processes = 16;
  l.file_mib = 512;
  return l;
}

// Where one student's grading reads and writes (cache: the build cache's folder, or empty).
struct Places {
  std::string submission;
  fs::path scratch, logs, cache;
};

struct Built {
  std::string program;  ///< the linked grade-<name>
  std::string failure;  ///< why not: "does not compile: ..." (empty when built)
  Box box;              ///< what it may read when it runs
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// With "library_calls": false, why a compile failed when the exercise reached for xencoder's
// operations: an #include of a header the tensors' include folder does not have (a call of a
// function declared there is refused before the link by cmake/library_calls.cmake, and would not
// link: grade-<name> is linked against xencoder::tensors alone). Empty otherwise.
std::string policy_failure(const std::string& log, const std::string& name) {
  const std::string why =
      "library calls are not allowed in this assignment (grading.json: \"library_calls\": "
      "false): exercises/" +
      name + ".cpp ";
  const std::string allowed =
      ". Write it with your own loops on the tensors; xenc::Tensor*, xenc::config_error and "
      "xenc::Rng are allowed (grade-" +
      name + " is linked against xencoder::tensors alone)";
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    const std::size_t missing = line.find(": No such file or directory");
    const std::size_t fatal = line.find("fatal error: ");
    if (missing != std::string::npos && fatal != std::string::npos && fatal < missing) {
      std::string header = line.substr(fatal + 13, missing - fatal - 13);
      if (header.find("xenc/") != std::string::npos) {
        header = header.substr(header.find("xenc/"));
        return why + "includes " + header + ", which is not provided" + allowed;
      }
    }
  }
  return "";
}

// With "library_calls": false, the note for an exercise whose object calls the dynamic loader
// (dlopen, dlsym: undefined symbols of the object, named in its string table): they find nothing
// of xencoder, which is neither linked nor in the sandbox. "" otherwise.
std::string loader_note(const fs::path& object, const std::string& name) {
  const std::string bytes = read_text(object);
  std::string calls;
  for (const char* f : {"dlopen", "dlmopen", "dlsym", "dlvsym"})
    if (bytes.find(std::string(1, '\0') + f + std::string(1, '\0')) != std::string::npos)
      calls += (calls.empty() ? "" : " and ") + std::string(f);
  if (calls.empty()) return "";
  return "exercises/" + name + ".cpp calls " + calls +
         ", which find nothing of xencoder here: library calls are not allowed in this assignment "
         "(grading.json: \"library_calls\": false), and the library is neither linked nor "
         "visible when your code runs";
}

// Writes a failed build's log and returns the failure sentence.
std::string build_failure(const std::string& log, const std::string& step, const Project& p,
                          const std::string& submission, const fs::path& logs,
                          const std::string& name, bool library_calls = true) {
  std::error_code ec;
  fs::create_directories(logs, ec);
  std::ofstream(logs / (name + ".log")) << log;
  // paths relative to the submission, as the student sees them
  std::string err = first_error(log);
  for (const std::string& root : {submission + "/", p.source_dir + "/"})
    for (std::size_t at; (at = err.find(root)) != std::string::npos;) err.erase(at, root.size());
  // The compiler's own words for running out of memory carry byte counts that differ from run
  // to run; the report says what happened, so a regrade gives the same CSV.
  if (err.find("out of memory allocating") != std::string::npos ||
      err.find("virtual memory exhausted") != std::string::npos)
    err = "the compiler ran out of memory (the compile's limit is " +
          std::to_string(build_limits().memory_mib) + " MiB)";
  const std::string where = " (the whole log: " + (logs / (name + ".log")).string() + ")";
  if (!library_calls) {
    const std::string policy = policy_failure(log, name);
    if (!policy.empty()) return policy + where;
  }
  // the policy's own sentence, without the "error: " the symbol check's message starts with
  const std::size_t policy_at = err.find("library calls are not allowed");
  if (policy_at != std::string::npos) return err.substr(policy_at) + where;
  // a link that failed on a function: its name, not the linker's "ld returned 1"
  const ExerciseInfo* e = find_exercise(name);
  const std::string missing =
      step == "does not link: " ? missing_function_message(log, name, e ? e->signature : name) : "";
  if (!missing.empty()) return step + missing + where;
  return step + err + where;
}

// The compile and link commands of exercises/<name>.cpp, as CMake wrote them for the template
// (compile_commands.json and the link line), with this student's source, object and program in
// place. Both empty when the template's build has none.
struct Commands {
  std::vector<std::string> compile, link;
};

Commands exercise_commands(const Project& p, const Settings& settings, const fs::path& source,
                           const fs::path& object, const fs::path& program,
                           const std::string& name) {
  // "library_calls": false: the template's tensors-only variant (its include folder has no ops/
  // or nn/ header, its program is linked against xencoder::tensors alone)
  const std::string variant = settings.library_calls ? "exercise_" : "exercise_tensors_";
  const std::string target_dir = variant + name + ".dir/";
  const std::string linked = settings.library_calls ? "grade-" + name : "grade-tensors-" + name;
  std::vector<std::string> compile;
  try {
    const json db = json::parse(read_text(fs::path(p.build_dir) / "compile_commands.json"));
    const fs::path wanted = fs::path(p.source_dir) / "exercises" / (name + ".cpp");
    for (const json& e : db) {
      if (fs::path(e.at("file").get<std::string>()).lexically_normal() != wanted.lexically_normal())
        continue;
      std::vector<std::string> words = e.contains("arguments")
                                           ? e.at("arguments").get<std::vector<std::string>>()
                                           : split_command(e.at("command").get<std::string>());
      for (const std::string& w : words)
        if (w.find(target_dir) != std::string::npos) compile = words;
    }
  } catch (const json::exception&) {
    compile.clear();
  }
  const fs::path link_file = fs::path(p.build_dir) / "CMakeFiles" / (linked + ".dir") / "link.txt";
  Commands c;
  if (compile.empty() || !fs::exists(link_file)) return c;
  for (std::size_t i = 0; i < compile.size(); ++i) {
    const std::string& w = compile[i];
    if (i == 0 && fs::path(w).filename().string().find("ccache") != std::string::npos) continue;
    if (w == "-o" || w == "-c" || w == "-MT" || w == "-MF") {
      if (w == "-o") c.compile.insert(c.compile.end(), {"-o", object.string()});
      if (w == "-c") c.compile.insert(c.compile.end(), {"-c", source.string()});
      ++i;
      continue;
    }
    if (w == "-MD" || w == "-MMD") continue;
    c.compile.push_back(w);
  }
  const std::vector<std::string> line = split_command(read_text(link_file));
  const std::string own_object = target_dir + "exercises/" + name + ".cpp.o";
  for (std::size_t i = 0; i < line.size(); ++i) {
    const std::string& w = line[i];
    if (w == "-o" && i + 1 < line.size()) {
      c.link.insert(c.link.end(), {"-o", program.string()});
      ++i;
    } else if (w.size() >= own_object.size() &&
               w.compare(w.size() - own_object.size(), own_object.size(), own_object) == 0) {
      c.link.push_back(object.string());
    } else if (!w.empty() && w[0] != '-' && w[0] != '/' && i > 0) {
      c.link.push_back((fs::path(p.build_dir) / w).lexically_normal().string());
    } else {
      c.link.push_back(w);
    }
  }
  return c;
}

// A file's or folder's witness in a cache key, computed once per run: a file's digest, a
// folder's stamp (xenc/grade/cache.hpp).
const std::string& witness(const std::string& path, bool folder) {
  static std::map<std::string, std::string> known;
  auto [it, fresh] = known.try_emplace(path);
  if (fresh) it->second = folder ? tree_stamp(path) : file_digest(path);
  return it->second;
}

// The whole text a cached grade-<name> is stored under: the commands (this student's paths
// replaced by names), the student's file byte for byte, and a witness of everything else the
// build read: each file and folder the commands name (the template's child object, xencoder's
// libraries and headers, the template's exercises.hpp), the compiler, the library-calls policy,
// and Debian's package list (the system's headers and libraries). "" when the file is unreadable.
std::string cache_key(const Project& p, const Commands& c, const fs::path& source,
                      const fs::path& object, const fs::path& program) {
  std::string key = "xenc grade cache 1\n", submitted;
  std::ifstream in(source, std::ios::binary);
  std::ostringstream s;
  if (!(s << in.rdbuf())) return "";
  submitted = s.str();
  std::vector<std::string> named;
  for (const auto* words : {&c.compile, &c.link}) {
    key += words == &c.compile ? "compile:" : "\nlink:";
    for (const std::string& w : *words) {
      key += ' ';
      if (w == source.string() || w == object.string() || w == program.string()) {
        key += w == source.string() ? "@SOURCE" : w == object.string() ? "@OBJECT" : "@PROGRAM";
        continue;
      }
      key += w;
      std::string path = w;
      for (const char* flag : {"-I", "-L", "-isystem", "-Wl,-rpath,"})
        if (path.rfind(flag, 0) == 0) path = path.substr(std::strlen(flag));
      if (!path.empty() && path[0] == '/') named.push_back(path);
    }
  }
  key += "\n";
  std::error_code ec;
  named.push_back(fs::canonical(c.compile.at(0), ec).string());
  named.push_back((fs::path(p.source_dir) / "cmake" / "library_calls.cmake").string());
  for (const std::string& path : named) {
    if (fs::path(path).lexically_normal() == fs::path(p.source_dir).lexically_normal()) {
      // the template's folder: the sandbox sees its exercises.hpp alone
      const std::string header = (fs::path(path) / "exercises.hpp").string();
      key += "file " + header + " " + witness(header, false) + "\n";
    } else if (fs::is_directory(path, ec)) {
      if (!under(path, "/usr")) key += "folder " + path + " " + witness(path, true) + "\n";
    } else if (fs::is_regular_file(path, ec)) {
      key += "file " + path + " " + witness(path, false) + "\n";
      // a precompiled header beside it: large, so its size and time (the template's build is
      // made again, and so is it, when anything it was made from changes)
      struct stat gch{};
      if (::stat((path + ".gch").c_str(), &gch) == 0)
        key += "pch " + path + ".gch " + std::to_string(gch.st_size) + " " +
               std::to_string(gch.st_mtim.tv_sec) + "." + std::to_string(gch.st_mtim.tv_nsec) +
               "\n";
    }
  }
  struct stat st{};
  if (::stat("/var/lib/dpkg/status", &st) == 0)
    key += "packages " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) +
           "." + std::to_string(st.st_mtim.tv_nsec) + "\n";
  return key + "source " + std::to_string(submitted.size()) + "\n" + submitted;
}

// Compiles the submission's exercises/<name>.cpp and links grade-<name> in the scratch folder,
// each step in the sandbox, the template's child object prebuilt. With a cache, a program built
// before from the same key (cache_key) is copied in instead, and a new one is stored right after
// its link, before it first runs.
Built build_exercise(const Project& p, const Settings& settings, const Places& at,
                     const std::string& name) {
  Built b;
  const fs::path scratch = at.scratch / name;
  std::error_code ec;
  fs::remove_all(scratch, ec);
  fs::create_directories(scratch, ec);
  if (::geteuid() == 0 && ::chown(scratch.c_str(), 65534, 65534) != 0) {
    b.failure = "could not prepare its scratch folder " + scratch.string();
    return b;
  }
  const fs::path source = fs::path(at.submission) / "exercises" / (name + ".cpp");
  const fs::path object = scratch / (name + ".o");
  const fs::path program = scratch / ("grade-" + name);
  const Commands c = exercise_commands(p, settings, source, object, program, name);
  if (c.compile.empty()) {
    b.failure =
        "cannot be built: the template's build has no compile command or link line for "
        "it (configure it again with the Unix Makefiles generator)";
    return b;
  }
  const std::vector<std::string>& cc = c.compile;
  Box box;
  box.namespaces = true;
  box.scratch = scratch.string();
  if (!settings.library_calls) box.hidden = library_files();
  bind_paths(cc, p.source_dir, scratch.string(), box);
  box.read_only.push_back(source.string());
  Box lbox;
  lbox.namespaces = true;
  lbox.scratch = scratch.string();
  lbox.hidden = box.hidden;
  bind_paths(c.link, p.source_dir, scratch.string(), lbox);
  // the run: the student's program, from its scratch folder read-only, as one process
  b.box = lbox;
  b.box.scratch_read_only = true;
  b.box.one_process = true;
  // the cache, never where the student's process may write (without namespaces, it could)
  const std::optional<ProgramCache> cache = at.cache.empty() || !namespaces_unavailable().empty()
                                                ? std::nullopt
                                                : std::optional<ProgramCache>(at.cache.string());
  const std::string key = cache ? cache_key(p, c, source, object, program) : "";
  // with "library_calls": false the object is kept too: its calls of the dynamic loader explain
  // a failure (loader_note), and a regrade from the cache must say the same
  const std::string object_key =
      key.empty() || settings.library_calls ? "" : key + "the object file\n";
  if (!key.empty() && cache->fetch(key, program.string()) &&
      (object_key.empty() || cache->fetch(object_key, object.string()))) {
    b.program = program.string();
    return b;
  }
  Limits limits = build_limits();
  limits.time_seconds = settings.compile_seconds;
  Outcome o = run_isolated(cc[0], cc, limits, {}, box);
  if (!(o.exited && o.exit_code == 0)) {
    b.failure = build_failure(o.output + (o.timed_out ? "\nerror: the compile exceeded its time "
                                                        "limit\n"
                                                      : ""),
                              "does not compile: ", p, at.submission, at.logs, name,
                              settings.library_calls);
    return b;
  }
  // the library-calls policy (cmake/library_calls.cmake looks at the object's symbols)
  const fs::path policy = fs::path(p.source_dir) / "cmake" / "library_calls.cmake";
  if (!settings.library_calls && fs::exists(policy)) {
    Box pbox = box;
    pbox.read_only = {policy.string(), p.cmake};
    o = run_isolated(p.cmake,
                     {p.cmake, "-DNM=nm", "-DEXERCISE=" + name, "-DOBJECTS=" + object.string(),
                      "-P", policy.string()},
                     limits, {}, pbox);
    if (!(o.exited && o.exit_code == 0)) {
      b.failure = build_failure(o.output, "", p, at.submission, at.logs, name);
      return b;
    }
  }
  o = run_isolated(c.link[0], c.link, limits, {}, lbox);
  if (!(o.exited && o.exit_code == 0)) {
    b.failure = build_failure(o.output, "does not link: ", p, at.submission, at.logs, name,
                              settings.library_calls);
    return b;
  }
  // stored before it first runs: no student's process has touched the program yet
  if (!key.empty()) cache->store(key, program.string());
  if (!object_key.empty()) cache->store(object_key, object.string());
  b.program = program.string();
  // the run writes nothing here: bound read-only in the namespaces, and given back to root
  // (from nobody, who built it) for the fallback without them
  if (::geteuid() == 0) {
    bool mine = ::chown(scratch.c_str(), 0, 0) == 0;
    for (const auto& f : fs::directory_iterator(scratch, ec))
      mine = ::lchown(f.path().c_str(), 0, 0) == 0 && mine;
    if (!mine || ec) b.failure = "could not take back its scratch folder " + scratch.string();
  }
  return b;
}

// The points earned: the passed checks' share, 0 without a verdict.
void score(Graded& g) {
  g.points = g.failure.empty() ? g.points_per_check() * double(g.result.num_scored_passed()) : 0.0;
}

// A test-writing exercise's runs: each a fresh process of the student's program in its sandbox,
// with the exercise's limits; a run that ends badly gives its reason and no verdict.
class SandboxLauncher : public wire::Launcher {
 public:
  SandboxLauncher(const Built& b, const Limits& limits, const std::vector<std::string>& env)
      : built_(b), limits_(limits), env_(env) {}
  std::string run(const std::function<void(wire::Caller&)>& body) override {
    Session child(built_.program, {built_.program}, limits_, env_, built_.box);
    std::string error;
    try {
      body(child);
    } catch (const std::exception& x) {
      error = x.what();
    }
    const Outcome o = child.finish();
    seconds += o.seconds;
    if (output.size() < limits_.output_bytes) output += o.output;
    std::string why = describe_outcome(o, limits_);
    if (why.empty() && !error.empty()) why = "could not be graded: " + error;
    return why;
  }
  double seconds = 0.0;
  std::string output;

 private:
  const Built& built_;
  Limits limits_;
  std::vector<std::string> env_;
};

// A test-writing exercise (ExerciseInfo::check_runs): the student's check, run once per
// candidate in a fresh process; its runs without a verdict are in its report, not a failure.
void grade_test_runs(Graded& g, const ExerciseInfo& e, const Built& b, const Settings& settings,
                     const std::vector<std::string>& env) {
  SandboxLauncher launcher(b, settings.limits, env);
  try {
    g.result = e.check_runs(launcher);
  } catch (const std::exception& x) {
    g.failure = std::string("could not be graded: ") + x.what();
  }
  g.seconds = launcher.seconds;
  g.output = launcher.output.substr(0, settings.limits.output_bytes);
}

// One exercise: built in its sandbox, then checked here through calls answered by the student's
// process, which never sees a verdict.
Graded grade_one(const Project& project, const Settings& settings, const Places& at,
                 const ExerciseInfo& e, double points) {
  // one BLAS thread: a child's memory is then its own arrays, whatever the machine's cores
  const std::vector<std::string> env = {"OPENBLAS_NUM_THREADS=1"};
  Graded g;
  g.exercise = e.name;
  g.signature = e.signature;
  g.max_points = points;
  const fs::path handed = fs::path(at.submission) / "exercises" / (e.name + ".cpp");
  Built b;
  if (!fs::exists(handed))
    b.failure = "not handed in (no exercises/" + e.name + ".cpp)";
  else
    b = build_exercise(project, settings, at, e.name);
  g.failure = b.failure;
  // the object is still in the scratch folder: its calls of the dynamic loader explain a failure
  if (g.failure.empty() && !settings.library_calls)
    g.note = loader_note(at.scratch / e.name / (e.name + ".o"), e.name);
  if (g.failure.empty() && e.check_runs) {
    grade_test_runs(g, e, b, settings, env);
  } else if (g.failure.empty()) {
    Session child(b.program, {b.program}, settings.limits, env, b.box);
    try {
      g.result = e.check_remote(child);
    } catch (const std::exception& x) {
      g.failure = std::string("could not be graded: ") + x.what();
    }
    const Outcome o = child.finish();
    g.seconds = o.seconds;
    g.output = o.output;
    if (o.output_truncated) g.output += "\n[output shortened]";
    if (g.failure.empty()) g.failure = describe_outcome(o, settings.limits);
    // a check that ran out of memory names the limit
    for (const CheckResult& c : g.result.checks)
      if (g.failure.empty() && c.computed.find("std::bad_alloc") != std::string::npos)
        g.failure = "exceeded the memory limit of " + std::to_string(settings.limits.memory_mib) +
                    " MiB (std::bad_alloc) in check '" + c.name + "'";
    if (!g.failure.empty()) g.result.checks.clear();
  }
  score(g);
  if (g.passed()) g.note.clear();
  return g;
}

// The exercises to grade: the settings' (with their points) or every registered one, in teaching
// order, that has a file in the template's exercises/.
std::vector<std::pair<ExerciseInfo, double>> exercise_plan(const Project& project,
                                                           const Settings& settings) {
  std::vector<std::pair<ExerciseInfo, double>> plan;
  for (const ExerciseInfo& e : exercises()) {
    double points = e.points;
    bool wanted = settings.exercises.empty();
    for (const auto& [name, p] : settings.exercises)
      if (name == e.name) wanted = true, points = p;
    if (wanted && fs::exists(fs::path(project.source_dir) / "exercises" / (e.name + ".cpp")))
      plan.emplace_back(e, points);
  }
  return plan;
}

// Every file of the submission's exercises/ that is not a registered exercise, with the closest
// of the graded ones (a misnamed file is not graded: the student must hear why; the file of an
// exercise the settings leave out is no mistake): as JSON, and as the report's lines.
json strays_of(const std::string& submission,
               const std::vector<std::pair<ExerciseInfo, double>>& plan, std::string& lines) {
  std::vector<std::string> names;
  for (const auto& [e, points] : plan) names.push_back(e.name);
  std::vector<std::string> registered;
  for (const ExerciseInfo& e : exercises()) registered.push_back(e.name);
  const std::string dir = submission + "/exercises";
  const std::vector<StrayFile> near_graded = stray_files(dir, names);
  std::vector<StrayFile> found;
  for (StrayFile f : stray_files(dir, registered)) {
    for (const StrayFile& g : near_graded)
      if (g.file == f.file) f.closest = g.closest;
    found.push_back(f);
  }
  json strays = json::array();
  for (const StrayFile& f : found) {
    lines += stray_message(f, "exercises/") + "\n";
    strays.push_back({{"file", "exercises/" + f.file},
                      {"closest", "exercises/" + f.closest},
                      {"message", stray_message(f, "exercises/")}});
  }
  return strays;
}

}  // namespace

int grade_main(int argc, char** argv, const Project& project) {
  Options opt;
  try {
    opt = parse(argc, argv);
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    (msg.empty() ? std::cout : std::cerr) << (msg.empty() ? "" : "grade: " + msg + "\n") << kUsage;
    return msg.empty() ? 0 : 2;
  }
  Settings settings;
  const std::string settings_path = !opt.settings.empty()
                                        ? opt.settings
                                        : (fs::path(project.source_dir) / "grading.json").string();
  if (!opt.settings.empty() || fs::exists(settings_path)) {
    try {
      settings = read_settings(settings_path);
    } catch (const std::invalid_argument& e) {
      std::cerr << "grade: " << e.what() << "\n";
      return 2;
    }
  }
  if (opt.time_limit) settings.limits.time_seconds = *opt.time_limit;
  if (opt.memory_limit) settings.limits.memory_mib = *opt.memory_limit;
  const std::string submission =
      fs::absolute(opt.submission.empty() ? project.source_dir : opt.submission)
          .lexically_normal()
          .string();
  const fs::path scratch = fs::absolute(
      opt.scratch.empty() ? fs::path(project.build_dir) / "grade-scratch" : fs::path(opt.scratch));
  const fs::path logs = fs::absolute(opt.logs.empty() ? fs::path(project.build_dir) / "grade-logs"
                                                      : fs::path(opt.logs));

  const auto started = std::chrono::steady_clock::now();
  const fs::path cache = opt.cache.empty() ? fs::path() : fs::absolute(opt.cache);

  const auto plan = exercise_plan(project, settings);
  if (opt.list) {
    for (const auto& [e, points] : plan) std::cout << e.name << "\n";
    return 0;
  }
  for (const std::string& name : opt.chosen) {
    bool known = false;
    for (const auto& [e, points] : plan) known = known || e.name == name;
    if (!known) {
      std::cerr << "grade: unknown exercise '" << name << "' (grade --list shows the names)\n";
      return 2;
    }
  }

  // Orphans of the sandboxes (bwrap's first process, when the sandbox ends) are reaped here, not
  // left to a pid 1 that may not reap them.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  auto reap_orphans = [] {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  };
  // The hidden seed stays here: the checks run in this process and send the student's process
  // the inputs drawn from it.
  set_hidden_seed(settings.hidden_seed);
  std::vector<Graded> graded;
  std::error_code ec;
  fs::create_directories(scratch, ec);
  for (const auto& [e, points] : plan) {
    bool wanted = opt.chosen.empty();
    for (const std::string& name : opt.chosen) wanted = wanted || name == e.name;
    if (!wanted) continue;
    Graded g = grade_one(project, settings, {submission, scratch, logs, cache}, e, points);
    fs::remove_all(scratch / e.name, ec);
    reap_orphans();
    graded.push_back(g);
  }

  std::string stray_lines;
  const json strays = strays_of(submission, plan, stray_lines);
  // one line when the sandbox's namespaces are missing: never silently
  const std::string& no_namespaces = namespaces_unavailable();
  std::string report = format_report(graded, opt.format, settings.hints);
  std::string text = opt.text_output.empty() && !opt.both
                         ? std::string()
                         : format_report(graded, Format::text, settings.hints);
  text += stray_lines;
  if (opt.format == Format::text) report += stray_lines;
  if (opt.format == Format::json && !strays.empty()) {
    json j = json::parse(report);
    j["not_exercises"] = strays;
    report = j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  }
  const std::string caveats = sandbox_caveats();
  text += caveats;
  if (opt.format == Format::text) report += caveats;
  if (opt.format == Format::gradescope) report = with_execution_time(report, started);
  if (opt.both) {
    json j = json::parse(report);
    if (!no_namespaces.empty()) j["sandbox"] = no_namespaces;
    if (!strays.empty()) j["not_exercises"] = strays;
    // for xenc-grade-all's CSV: the exhibits named, whatever the student's hint level
    report = json{{"json", j}, {"text", text}, {"mistakes", named_mistakes(graded)}}.dump(
                 -1, ' ', false, json::error_handler_t::replace) +
             "\n";
  }
  if (opt.output.empty()) std::cout << report;
  for (const auto& [path, body] :
       {std::pair{opt.output, report}, std::pair{opt.text_output, text}}) {
    if (path.empty()) continue;
    std::ofstream out(path);
    out << body;
    if (!out) {
      std::cerr << "grade: cannot write " << path << "\n";
      return 2;
    }
  }
  for (const Graded& g : graded)
    if (!g.passed()) return 1;
  return 0;
}

}  // namespace xenc::grade

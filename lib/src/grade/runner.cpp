// The grade program's two halves: the child that grades one exercise and writes its verdict on
// the private channel, and the parent that builds, runs and scores each exercise on its own and
// writes the report (text, JSON, Gradescope results.json, JUnit XML).
#include "xenc/grade/runner.hpp"

#include <fcntl.h>
#include <unistd.h>

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
#include "xenc/grade/exercises.hpp"

namespace xenc::grade {

namespace fs = std::filesystem;
using nlohmann::json;

// ---- the verdict (child -> parent)
// ----------------------------------------------------------------

std::string verdict_json(const ExerciseResult& r) {
  json checks = json::array();
  for (const CheckResult& c : r.checks)
    checks.push_back({{"name", c.name},
                      {"passed", c.passed},
                      {"input", c.input},
                      {"expected", c.expected},
                      {"computed", c.computed},
                      {"first_difference", c.first_difference},
                      {"hint", c.hint},
                      {"known_mistake", c.known_mistake},
                      {"hidden", c.hidden}});
  // invalid UTF-8 in a student's exception message is replaced, not a reason to lose the verdict
  return json{{"exercise", r.exercise}, {"signature", r.signature}, {"checks", checks}}.dump(
      -1, ' ', false, json::error_handler_t::replace);
}

ExerciseResult parse_verdict(const std::string& text) {
  try {
    const json j = json::parse(text);
    ExerciseResult r;
    r.exercise = j.at("exercise").get<std::string>();
    r.signature = j.at("signature").get<std::string>();
    for (const json& c : j.at("checks")) {
      CheckResult k;
      k.name = c.at("name").get<std::string>();
      k.passed = c.at("passed").get<bool>();
      k.input = c.at("input").get<std::string>();
      k.expected = c.at("expected").get<std::string>();
      k.computed = c.at("computed").get<std::string>();
      k.first_difference = c.at("first_difference").get<std::string>();
      k.hint = c.at("hint").get<std::string>();
      k.known_mistake = c.at("known_mistake").get<std::string>();
      k.hidden = c.at("hidden").get<bool>();
      r.checks.push_back(k);
    }
    return r;
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("parse_verdict: not a verdict: ") + e.what());
  }
}

// ---- the child
// --------------------------------------------------------------------------------------

namespace {

// The value of an environment variable, then gone from sight: unsetenv only drops the pointer,
// and the bytes stay in the block the process started with, which /proc/self/environ shows to
// anyone in the process (student code included). So the whole "NAME=value" is zeroed first.
std::optional<std::string> take_env(const char* name) {
  char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  std::string taken(value);
  char* entry = value - std::strlen(name) - 1;  // getenv points just past "NAME="
  std::memset(entry, 0, std::strlen(name) + 1 + taken.size());
  ::unsetenv(name);
  return taken;
}

}  // namespace

int child_main(const std::function<ExerciseResult()>& grade) {
  // Take the channel and the seed out of sight before any student code runs: erase both
  // variables and move the descriptor to a number drawn at run time.
  int fd = -1;
  if (const auto v = take_env("XENC_GRADE_VERDICT_FD")) {
    const int given = std::atoi(v->c_str());
    std::random_device rd;
    fd = ::fcntl(given, F_DUPFD_CLOEXEC, 100 + int(rd() % 800));
    ::close(given);
  }
  if (const auto s = take_env("XENC_GRADE_HIDDEN_SEED"))
    set_hidden_seed(std::strtoull(s->c_str(), nullptr, 10));
  const ExerciseResult r = grade();
  if (fd < 0) {  // started by hand: the text report
    print_report(std::cout, r);
    return r.passed() ? 0 : 1;
  }
  const std::string text = verdict_json(r);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return 3;
    done += std::size_t(n);
  }
  ::close(fd);
  return 0;
}

// ---- settings
// ---------------------------------------------------------------------------------------

Settings read_settings(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw config_error("read_settings: cannot open '" + path + "'");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {
    throw config_error("read_settings: '" + path + "' is not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw config_error("read_settings: '" + path + "' must hold a JSON object");
  Settings s;
  auto bad = [&](const std::string& key, const std::string& expected) {
    return config_error("read_settings: '" + path + "': \"" + key + "\" is " + j.at(key).dump() +
                        ", expected " + expected);
  };
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    if (key == "exercises") {
      if (!v.is_object()) throw bad(key, "an object {\"name\": points, ...}");
      for (const ExerciseInfo& e : exercises())
        if (v.contains(e.name)) {
          const json& p = v.at(e.name);
          if (!p.is_number() || p.get<double>() < 0)
            throw config_error("read_settings: '" + path + "': the points of \"" + e.name +
                               "\" are " + p.dump() + ", expected a number >= 0");
          s.exercises.emplace_back(e.name, p.get<double>());
        }
      for (auto e = v.begin(); e != v.end(); ++e) {
        bool known = false;
        for (const ExerciseInfo& x : exercises()) known = known || x.name == e.key();
        if (!known)
          throw config_error("read_settings: '" + path + "': unknown exercise \"" + e.key() + "\"");
      }
    } else if (key == "hints") {
      try {
        s.hints = parse_hint_level(v.is_string() ? v.get<std::string>() : "");
      } catch (const config_error&) {
        throw bad(key, "\"full\", \"brief\" or \"off\"");
      }
    } else if (key == "hidden_seed") {
      if (!v.is_number_unsigned()) throw bad(key, "an integer >= 0");
      s.hidden_seed = v.get<std::uint64_t>();
    } else if (key == "library_calls") {
      if (!v.is_boolean()) throw bad(key, "true or false");
      s.library_calls = v.get<bool>();
    } else if (key == "time_limit_seconds") {
      if (!v.is_number() || v.get<double>() <= 0 || v.get<double>() > 3600)
        throw bad(key, "a number of seconds in (0, 3600]");
      s.limits.time_seconds = v.get<double>();
    } else if (key == "memory_limit_mib") {
      if (!v.is_number_unsigned() || v.get<std::size_t>() < 64)
        throw bad(key, "an integer >= 64 (MiB)");
      s.limits.memory_mib = v.get<std::size_t>();
    } else {
      throw config_error("read_settings: '" + path + "': unknown key \"" + key +
                         "\" (known: exercises, hints, hidden_seed, library_calls, "
                         "time_limit_seconds, memory_limit_mib)");
    }
  }
  return s;
}

// ---- formats
// ----------------------------------------------------------------------------------------

double Graded::points_per_check() const {
  return result.checks.empty() ? 0.0 : max_points / double(result.checks.size());
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

std::string text_report(const std::vector<Graded>& graded, HintLevel hints) {
  std::ostringstream os;
  double total = 0, max_total = 0;
  std::size_t passed = 0;
  for (const Graded& g : graded) {
    total += g.points, max_total += g.max_points, passed += g.passed();
    const std::string pts =
        " (" + points_str(g.points) + " of " + points_str(g.max_points) + " points)";
    os << (g.passed() ? "✔ " : "✘ ") << g.exercise << ": " << status_line(g) << pts << "\n";
    // short for a stub or an exercise without a verdict: one line
    if (!g.failure.empty() || g.result.still_stub()) {
      if (!g.output.empty() && !g.failure.empty()) {
        std::string out = g.output.substr(0, 600);
        os << "  its output:\n";
        std::istringstream lines(out);
        for (std::string l; std::getline(lines, l);) os << "    " << l << "\n";
      }
      continue;
    }
    os << "  " << g.result.signature << "\n";
    for (const CheckResult& c : g.result.checks) {
      os << "  " << (c.passed ? "✔ " : "✘ ") << c.name << "\n";
      for (const std::string& l : check_details(c, hints)) os << "      " << l << "\n";
    }
  }
  os << passed << " of " << graded.size() << " exercises passed, " << points_str(total) << " of "
     << points_str(max_total) << " points\n";
  return os.str();
}

std::string status_of(const Graded& g) {
  if (!g.failure.empty()) return "failed: " + g.failure;
  if (g.result.still_stub()) return "not implemented";
  return g.passed() ? "passed" : "failed";
}

json json_report(const std::vector<Graded>& graded, HintLevel hints) {
  json ex = json::array();
  double total = 0, max_total = 0;
  bool all = true;
  for (const Graded& g : graded) {
    json checks = json::array();
    for (const CheckResult& c : g.result.checks) {
      json k = {{"name", c.name},
                {"passed", c.passed},
                {"hidden", c.hidden},
                {"points", c.passed ? g.points_per_check() : 0.0},
                {"max_points", g.points_per_check()}};
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
                  {"checks", checks}});
    total += g.points, max_total += g.max_points, all = all && g.passed();
  }
  return {{"passed", all}, {"points", total}, {"max_points", max_total}, {"exercises", ex}};
}

// Gradescope's autograder results.json: top-level score, then one test per check (name, score,
// max_score, status "passed"/"failed", output, visibility "visible"/"hidden"); an exercise
// without a verdict is one failed test holding all its points.
json gradescope_report(const std::vector<Graded>& graded, HintLevel hints) {
  json tests = json::array();
  double total = 0;
  for (const Graded& g : graded) {
    total += g.points;
    if (!g.failure.empty() || g.result.checks.empty() || g.result.still_stub()) {
      tests.push_back({{"name", g.exercise},
                       {"score", g.points},
                       {"max_score", g.max_points},
                       {"status", "failed"},
                       {"output", status_line(g)},
                       {"visibility", "visible"}});
      continue;
    }
    for (const CheckResult& c : g.result.checks) {
      std::string out;
      for (const std::string& l : check_details(c, hints)) out += l + "\n";
      tests.push_back({{"name", g.exercise + ": " + c.name},
                       {"score", c.passed ? g.points_per_check() : 0.0},
                       {"max_score", g.points_per_check()},
                       {"status", c.passed ? "passed" : "failed"},
                       {"output", out},
                       {"visibility", c.hidden ? "hidden" : "visible"}});
    }
  }
  return {{"score", total},
          {"output", "Graded by xencoder's grader, each exercise in its own process."},
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
  for (const Graded& g : graded) {
    const std::size_t n = g.failure.empty() ? std::max<std::size_t>(g.result.checks.size(), 1) : 1;
    tests += n;
    failures += g.failure.empty() ? (g.result.checks.empty() ? 1 : n - g.result.num_passed()) : 1;
  }
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"xencoder grade\" tests=\""
     << tests << "\" failures=\"" << failures << "\">\n";
  for (const Graded& g : graded) {
    if (!g.failure.empty() || g.result.checks.empty()) {
      os << "  <testsuite name=\"" << xml_escape(g.exercise) << "\" tests=\"1\" failures=\"1\">\n"
         << "    <testcase classname=\"" << xml_escape(g.exercise) << "\" name=\"build and run\">\n"
         << "      <failure message=\"" << xml_escape(status_line(g)) << "\"/>\n"
         << "    </testcase>\n  </testsuite>\n";
      continue;
    }
    os << "  <testsuite name=\"" << xml_escape(g.exercise) << "\" tests=\""
       << g.result.checks.size() << "\" failures=\""
       << g.result.checks.size() - g.result.num_passed() << "\" time=\"" << g.seconds << "\">\n";
    for (const CheckResult& c : g.result.checks) {
      os << "    <testcase classname=\"" << xml_escape(g.exercise) << "\" name=\""
         << xml_escape(c.name) << "\"";
      if (c.passed) {
        os << "/>\n";
        continue;
      }
      std::string body;
      for (const std::string& l : check_details(c, hints)) body += l + "\n";
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

// ---- the parent
// -------------------------------------------------------------------------------------

namespace {

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
  std::string output, text_output, settings;
  std::optional<double> time_limit;
  std::optional<std::size_t> memory_limit;
  bool list = false;
  std::vector<std::string> chosen;
};

const char* kUsage =
    "usage: grade [--format text|json|gradescope|junit] [--output FILE] [--text-output FILE]\n"
    "             [--settings FILE]\n"
    "             [--time-limit SECONDS] [--memory-limit MIB] [--list] [exercise ...]\n"
    "Builds and grades each exercise in its own process. Exit code: 0 when every check of every\n"
    "chosen exercise passed, 1 when one did not, 2 for a usage or settings error.\n";

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
      else
        throw std::invalid_argument("--format " + f + ": expected text, json, gradescope or junit");
    } else if (a == "--output") {
      o.output = value();
    } else if (a == "--text-output") {
      o.text_output = value();
    } else if (a == "--settings") {
      o.settings = value();
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
      const unsigned long long m = std::strtoull(v.c_str(), &end, 10);
      if (*end || m < 64)
        throw std::invalid_argument("--memory-limit " + v + ": expected MiB >= 64");
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

// Builds grade-<name>; the failure text when it does not build.
std::string build_exercise(const Project& p, const std::string& name) {
  Limits build_limits;
  build_limits.time_seconds = 900;
  build_limits.memory_mib = 1 << 16;
  build_limits.output_bytes = 1 << 20;
  const Outcome b = run_isolated(
      p.cmake, {p.cmake, "--build", p.build_dir, "--target", "grade-" + name}, build_limits);
  if (b.exited && b.exit_code == 0) return "";
  const fs::path logs = fs::path(p.build_dir) / "grade-logs";
  std::error_code ec;
  fs::create_directories(logs, ec);
  std::ofstream(logs / (name + ".log")) << b.output;
  // paths relative to the template, as the student sees them
  std::string err = first_error(b.output);
  const std::string root = p.source_dir + "/";
  for (std::size_t at; (at = err.find(root)) != std::string::npos;) err.erase(at, root.size());
  const std::string where = " (the whole log: " + (logs / (name + ".log")).string() + ")";
  if (err.find("library calls are not allowed") != std::string::npos) return err + where;
  return "does not compile: " + err + where;
}

// The points earned: the passed checks' share, 0 without a verdict.
void score(Graded& g) {
  g.points = g.failure.empty() ? g.points_per_check() * double(g.result.num_passed()) : 0.0;
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

  // The exercises: the settings' (with points) or every registered one, in teaching order, that
  // has a file in exercises/.
  std::vector<std::pair<ExerciseInfo, double>> plan;
  for (const ExerciseInfo& e : exercises()) {
    double points = e.points;
    bool wanted = settings.exercises.empty();
    for (const auto& [name, p] : settings.exercises)
      if (name == e.name) wanted = true, points = p;
    if (wanted && fs::exists(fs::path(project.source_dir) / "exercises" / (e.name + ".cpp")))
      plan.emplace_back(e, points);
  }
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

  // one BLAS thread: a child's memory is then its own arrays, whatever the student's machine's
  // cores
  std::vector<std::string> env = {"OPENBLAS_NUM_THREADS=1"};
  if (settings.hidden_seed)
    env.push_back("XENC_GRADE_HIDDEN_SEED=" + std::to_string(*settings.hidden_seed));
  std::vector<Graded> graded;
  for (const auto& [e, points] : plan) {
    bool wanted = opt.chosen.empty();
    for (const std::string& name : opt.chosen) wanted = wanted || name == e.name;
    if (!wanted) continue;
    Graded g;
    g.exercise = e.name;
    g.signature = e.signature;
    g.max_points = points;
    g.failure = build_exercise(project, e.name);
    if (g.failure.empty()) {
      const std::string program = (fs::path(project.build_dir) / ("grade-" + e.name)).string();
      const Outcome o = run_isolated(program, {program}, settings.limits, env);
      g.seconds = o.seconds;
      g.output = o.output;
      if (o.output_truncated) g.output += "\n[output shortened]";
      g.failure = describe_outcome(o, settings.limits);
      if (g.failure.empty()) {
        try {
          g.result = parse_verdict(o.verdict);
          if (g.result.exercise != e.name) g.failure = "delivered a verdict for another exercise";
        } catch (const std::invalid_argument&) {
          g.failure = "delivered an unreadable verdict";
        }
      }
      // a check that ran out of memory names the limit
      for (const CheckResult& c : g.result.checks)
        if (g.failure.empty() && c.computed.find("std::bad_alloc") != std::string::npos)
          g.failure = "exceeded the memory limit of " + std::to_string(settings.limits.memory_mib) +
                      " MiB (std::bad_alloc) in check '" + c.name + "'";
      if (!g.failure.empty()) g.result.checks.clear();
    }
    score(g);
    graded.push_back(g);
  }

  const std::string report = format_report(graded, opt.format, settings.hints);
  if (opt.output.empty()) std::cout << report;
  for (const auto& [path, text] :
       {std::pair{opt.output, report},
        std::pair{opt.text_output, opt.text_output.empty()
                                       ? ""
                                       : format_report(graded, Format::text, settings.hints)}}) {
    if (path.empty()) continue;
    std::ofstream out(path);
    out << text;
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

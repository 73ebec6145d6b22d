// See class_report.hpp.
#include "class_report.hpp"

#include <xenc/viz/svg.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "../shared/similarity_pages.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using xenc::viz::xml_escape;

namespace xenc_grade_all {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// "1 point", "0.5 points", "2 points"
std::string points(double v) { return number(v) + (v == 1 ? " point" : " points"); }

// A bar's label: three significant digits (0.143 for 1/7 of a point), so that labels stay short.
std::string bar_label(double v) {
  std::ostringstream s;
  s << std::setprecision(3) << v;
  return s.str();
}

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

ExerciseOutcome parse_exercise(const json& e) {
  ExerciseOutcome x;
  x.name = e.at("name").get<std::string>();
  x.status = e.at("status").get<std::string>();
  x.failure = e.value("failure", std::string());
  x.points = e.at("points").get<double>();
  x.max_points = e.at("max_points").get<double>();
  for (const json& c : e.at("checks"))
    x.checks.push_back({c.at("name").get<std::string>(), c.at("passed").get<bool>(),
                        c.value("known_mistake", std::string())});
  return x;
}

}  // namespace

StudentOutcome parse_student(const StudentAnswer& answer) {
  StudentOutcome s;
  s.who = answer.who;
  if (!answer.failure.empty()) {
    s.not_graded = answer.failure;
    return s;
  }
  try {
    const json parsed = json::parse(answer.answer);  // kept: the loop holds references into it
    for (const json& e : parsed.at("json").at("exercises"))
      s.exercises.push_back(parse_exercise(e));
  } catch (const json::exception&) {
    s.exercises.clear();
    s.not_graded = "grade's answer is not JSON";
  }
  return s;
}

std::string failure_kind(const std::string& failure) {
  if (starts_with(failure, "does not compile") || starts_with(failure, "does not link"))
    return "did not compile";
  if (starts_with(failure, "exceeded the time limit") ||
      starts_with(failure, "exceeded the CPU time limit"))
    return "timed out";
  if (starts_with(failure, "crashed")) return "crashed";
  if (starts_with(failure, "exceeded the memory limit")) return "ran out of memory";
  return "failed to run";
}

namespace {

// One exercise over the graded students: scores, checks, and its exhibits and failures.
ExerciseSummary summarize_exercise(const std::vector<StudentOutcome>& students,
                                   const std::string& name) {
  ExerciseSummary ex;
  ex.name = name;
  std::map<long long, std::size_t> bins;  // points in millionths -> students
  auto key = [](double p) { return std::llround(p * 1e6); };
  std::size_t most_checks = 0;
  double total = 0;
  for (const StudentOutcome& s : students)
    for (const ExerciseOutcome& e : s.exercises) {
      if (e.name != name) continue;
      ++ex.students, total += e.points, ++bins[key(e.points)];
      ex.max_points = std::max(ex.max_points, e.max_points);
      ex.passed += e.status == "passed";
      most_checks = std::max(most_checks, e.checks.size());
      for (const CheckOutcome& c : e.checks) {
        auto it = std::find_if(ex.checks.begin(), ex.checks.end(),
                               [&](const CheckRate& r) { return r.name == c.name; });
        if (it == ex.checks.end()) it = ex.checks.insert(ex.checks.end(), {c.name, 0, 0});
        ++it->ran, it->passed += c.passed;
      }
    }
  if (ex.students) ex.mean = total / static_cast<double>(ex.students);
  for (std::size_t k = 0; k <= most_checks; ++k)
    bins.emplace(key(ex.max_points * static_cast<double>(k) / static_cast<double>(most_checks)), 0);
  if (most_checks == 0) bins.emplace(key(ex.max_points), 0);
  for (const auto& [points, n] : bins) ex.distribution.push_back({double(points) / 1e6, n});
  return ex;
}

void add_exhibits(const StudentOutcome& s, std::vector<ExhibitCount>& exhibits) {
  for (const ExerciseOutcome& e : s.exercises) {
    std::set<std::string> titles;
    for (const CheckOutcome& c : e.checks)
      if (!c.passed && !c.known_mistake.empty()) titles.insert(c.known_mistake);
    for (const std::string& t : titles) {
      auto it = std::find_if(exhibits.begin(), exhibits.end(), [&](const ExhibitCount& x) {
        return x.exercise == e.name && x.title == t;
      });
      if (it == exhibits.end()) it = exhibits.insert(exhibits.end(), {e.name, t, {}});
      it->students.push_back(s.who);
    }
  }
}

}  // namespace

ClassSummary summarize(const std::vector<StudentOutcome>& students,
                       const std::vector<std::string>& names) {
  ClassSummary c;
  c.students = students.size();
  for (const StudentOutcome& s : students) {
    if (!s.not_graded.empty()) {
      c.needs_look.push_back({s.who, "", "not graded", s.not_graded});
      continue;
    }
    ++c.graded;
    add_exhibits(s, c.exhibits);
    for (const std::string& n : names)
      for (const ExerciseOutcome& e : s.exercises)
        if (e.name == n && !e.failure.empty() && !starts_with(e.failure, "not handed in"))
          c.needs_look.push_back({s.who, n, failure_kind(e.failure), e.failure});
  }
  for (const std::string& n : names) c.exercises.push_back(summarize_exercise(students, n));
  std::stable_sort(c.exhibits.begin(), c.exhibits.end(),
                   [](const ExhibitCount& a, const ExhibitCount& b) {
                     if (a.students.size() != b.students.size())
                       return a.students.size() > b.students.size();
                     return std::tie(a.exercise, a.title) < std::tie(b.exercise, b.title);
                   });
  return c;
}

std::pair<int, int> most_failed_check(const ClassSummary& summary) {
  std::pair<int, int> best = {-1, -1};
  std::size_t most = 0;
  for (std::size_t i = 0; i < summary.exercises.size(); ++i)
    for (std::size_t j = 0; j < summary.exercises[i].checks.size(); ++j) {
      const CheckRate& r = summary.exercises[i].checks[j];
      if (r.ran - r.passed > most) most = r.ran - r.passed, best = {int(i), int(j)};
    }
  return best;
}

namespace {

// The flagged pairs of the graded exercises, their pages written into out/pairs.
struct Similarity {
  xenc::grade::SimilarityOptions options;
  std::vector<xenc_assignment::ExerciseReport> reports;
  std::vector<xenc_assignment::Skipped> skipped;
  std::string error;  // the comparison could not run (a stub over the size cap)
};

Similarity compare(const ReportInputs& in) {
  Similarity s;
  try {
    for (auto& ex :
         xenc_assignment::compare_class(in.template_dir, in.submissions, s.options, s.skipped))
      if (std::find(in.names.begin(), in.names.end(), ex.name) != in.names.end())
        s.reports.push_back(std::move(ex));
  } catch (const std::exception& e) {
    s.error = e.what();
  }
  fs::remove_all(in.out / "pairs");
  fs::create_directories(in.out / "pairs");
  for (const auto& ex : s.reports)
    for (std::size_t n = 0; n < ex.pairs.size(); ++n)
      std::ofstream(in.out / xenc_assignment::pair_page_path(ex.name, n + 1))
          << xenc_assignment::pair_page(ex, ex.pairs[n]);
  return s;
}

json exercises_json(const ClassSummary& c) {
  json out = json::array();
  for (const ExerciseSummary& e : c.exercises) {
    json bins = json::array(), checks = json::array();
    for (const Bin& b : e.distribution)
      bins.push_back({{"points", b.points}, {"students", b.students}});
    for (const CheckRate& r : e.checks)
      checks.push_back({{"name", r.name},
                        {"passed", r.passed},
                        {"ran", r.ran},
                        {"pass_rate", r.ran ? double(r.passed) / double(r.ran) : 0.0}});
    out.push_back({{"name", e.name},
                   {"max_points", e.max_points},
                   {"students", e.students},
                   {"passed", e.passed},
                   {"mean", e.mean},
                   {"distribution", bins},
                   {"checks", checks}});
  }
  return out;
}

json similarity_json(const Similarity& s) {
  json exercises = json::array(), skipped = json::array();
  for (const auto& ex : s.reports) {
    json pairs = json::array();
    for (std::size_t n = 0; n < ex.pairs.size(); ++n) {
      json p =
          xenc_assignment::pair_json(ex.pairs[n], xenc_assignment::pair_page_path(ex.name, n + 1));
      p.erase("regions_a"), p.erase("regions_b");
      pairs.push_back(p);
    }
    exercises.push_back(
        {{"exercise", ex.name}, {"submissions", ex.submissions.size()}, {"pairs", pairs}});
  }
  for (const auto& k : s.skipped)
    skipped.push_back({{"student", k.student}, {"exercise", k.exercise}, {"reason", k.reason}});
  return {{"notice", xenc_assignment::kSimilarityNotice},
          {"k", s.options.k},
          {"w", s.options.w},
          {"threshold", s.options.threshold},
          {"min_shared", s.options.min_shared},
          {"max_common", s.options.max_common},
          {"error", s.error},
          {"exercises", exercises},
          {"skipped", skipped}};
}

json class_json(const ClassSummary& c, const Similarity& s, bool mistakes_named) {
  json exhibits = json::array(), look = json::array(), most = nullptr;
  for (const ExhibitCount& x : c.exhibits)
    exhibits.push_back({{"exercise", x.exercise},
                        {"title", x.title},
                        {"count", x.students.size()},
                        {"students", x.students}});
  for (const NeedsLook& n : c.needs_look)
    look.push_back(
        {{"student", n.student}, {"exercise", n.exercise}, {"kind", n.kind}, {"detail", n.detail}});
  const auto [i, j] = most_failed_check(c);
  if (i >= 0) {
    const CheckRate& r = c.exercises[i].checks[j];
    most = {{"exercise", c.exercises[i].name},
            {"check", r.name},
            {"failed", r.ran - r.passed},
            {"ran", r.ran}};
  }
  return {{"students", c.students},
          {"graded", c.graded},
          {"exercises", exercises_json(c)},
          {"most_failed_check", most},
          {"mistakes_named", mistakes_named},
          {"exhibits", exhibits},
          {"need_a_look", look},
          {"similarity", similarity_json(s)}};
}

// --- the page ------------------------------------------------------------------------------------

std::string inline_svg(const std::string& svg) {
  // the XML declaration does not belong inside HTML
  return starts_with(svg, "<?xml") ? svg.substr(svg.find('\n') + 1) : svg;
}

std::string exercise_section(const ExerciseSummary& e) {
  std::ostringstream h;
  h << "<h3>" << xml_escape(e.name) << " (" << points(e.max_points) << ")</h3><p>";
  if (e.students == 0) return h.str() + "No graded student has this exercise.</p>";
  h << plural(e.students, "graded student", "graded students") << ": " << e.passed
    << " passed every check; the mean is " << number(std::round(e.mean * 100) / 100) << " of "
    << points(e.max_points) << ".</p>";
  std::vector<std::string> labels;
  std::vector<double> counts;
  for (const Bin& b : e.distribution)
    labels.push_back(bar_label(b.points)), counts.push_back(double(b.students));
  xenc::viz::BarChartOptions o;
  o.title = e.name + ": students per score";
  o.x_label = "points";
  o.y_label = "students";
  o.height = 260;
  return h.str() + inline_svg(xenc::viz::bar_chart_svg(labels, counts, o));
}

std::string checks_section(const ClassSummary& c) {
  std::ostringstream h;
  h << "<h2>Checks</h2><p>";
  const auto [i, j] = most_failed_check(c);
  if (i < 0) {
    h << "Every check that ran passed for every student.</p>";
  } else {
    const CheckRate& r = c.exercises[i].checks[j];
    h << "The check failed most: " << xml_escape(c.exercises[i].name) << "'s &ldquo;"
      << xml_escape(r.name) << "&rdquo;, failed by " << r.ran - r.passed << " of " << r.ran
      << " students whose " << xml_escape(c.exercises[i].name) << " ran.</p>";
  }
  h << "<table><tr><th>exercise</th><th>check</th><th>passed</th><th>pass rate</th></tr>";
  for (const ExerciseSummary& e : c.exercises)
    for (const CheckRate& r : e.checks)
      h << "<tr><td>" << xml_escape(e.name) << "</td><td>" << xml_escape(r.name) << "</td><td>"
        << r.passed << " of " << r.ran << "</td><td>"
        << xenc_assignment::percent(r.ran ? double(r.passed) / double(r.ran) : 0.0) << "</td></tr>";
  return h.str() + "</table>";
}

std::string exhibits_section(const ClassSummary& c, bool mistakes_named) {
  std::ostringstream h;
  h << "<h2>Known mistakes</h2><p>";
  if (!mistakes_named)
    return h.str() +
           "grading.json sets \"hints\": \"off\", so grade names no known mistake and this "
           "report cannot count them.</p>";
  if (c.exhibits.empty())
    return h.str() + "No failed check's output equalled a museum exhibit's.</p>";
  h << plural(c.exhibits.size(), "known published mistake was", "known published mistakes were")
    << " made (a failed check's output equalled the museum exhibit's):</p><table><tr>"
    << "<th>mistake</th><th>exercise</th><th>students</th><th>who</th></tr>";
  for (const ExhibitCount& x : c.exhibits) {
    std::string who;
    for (const std::string& s : x.students) who += (who.empty() ? "" : ", ") + xml_escape(s);
    h << "<tr><td>" << xml_escape(x.title) << "</td><td>" << xml_escape(x.exercise) << "</td><td>"
      << x.students.size() << "</td><td>" << who << "</td></tr>";
  }
  return h.str() + "</table>";
}

std::string needs_look_section(const ClassSummary& c) {
  std::ostringstream h;
  h << "<h2>Students who need a look</h2><p>";
  if (c.needs_look.empty()) return h.str() + "Every exercise of every student ran.</p>";
  std::set<std::string> who;
  for (const NeedsLook& n : c.needs_look) who.insert(n.student);
  h << plural(who.size(), "student has", "students have") << " an exercise that did not run to a "
    << "verdict, or no grades:</p><table><tr><th>student</th><th>exercise</th><th>what</th>"
    << "<th>grade's note</th></tr>";
  for (const NeedsLook& n : c.needs_look)
    h << "<tr><td>" << xml_escape(n.student) << "</td><td>" << xml_escape(n.exercise) << "</td><td>"
      << n.kind << "</td><td><pre>" << xml_escape(n.detail.substr(0, 400)) << "</pre></td></tr>";
  return h.str() + "</table>";
}

std::string similarity_section(const Similarity& s) {
  std::ostringstream h, rows;
  std::size_t flagged = 0;
  for (const auto& ex : s.reports)
    for (std::size_t n = 0; n < ex.pairs.size(); ++n, ++flagged) {
      const auto& p = ex.pairs[n];
      rows << "<tr><td>" << xml_escape(ex.name) << "</td><td>" << xml_escape(p.a) << "</td><td>"
           << xml_escape(p.b) << "</td><td>" << xenc_assignment::percent(p.overlap_a) << "</td><td>"
           << xenc_assignment::percent(p.overlap_b) << "</td><td><a href=\""
           << xml_escape(xenc_assignment::pair_page_path(ex.name, n + 1))
           << "\">side by side</a></td></tr>";
    }
  h << "<h2>Similar submissions</h2><p class=\"notice\">" << xenc_assignment::kSimilarityNotice
    << "</p><p>";
  if (!s.error.empty()) return h.str() + "Not compared: " + xml_escape(s.error) + "</p>";
  h << plural(flagged, "pair", "pairs") << " flagged (k = " << s.options.k
    << ", w = " << s.options.w << ", threshold " << xenc_assignment::percent(s.options.threshold)
    << "; as xenc-grade-similar's defaults).</p>";
  for (const auto& k : s.skipped)
    h << "<p>Skipped " << xml_escape(k.student) << "'s " << xml_escape(k.exercise)
      << ".cpp: " << xml_escape(k.reason) << "</p>";
  if (flagged == 0) return h.str();
  return h.str() + "<table><tr><th>exercise</th><th>a</th><th>b</th><th>of a's in b</th>" +
         "<th>of b's in a</th><th></th></tr>" + rows.str() + "</table>";
}

std::string class_html(const ClassSummary& c, const Similarity& s, bool mistakes_named) {
  std::ostringstream h;
  h << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Class report</title>"
    << xenc_assignment::kPageStyle << "</head><body><h1>Class report</h1><p>"
    << plural(c.students, "student", "students") << ", " << c.graded << " graded. Every number "
    << "here is from grade's own results.</p><h2>Scores per exercise</h2>";
  for (const ExerciseSummary& e : c.exercises) h << exercise_section(e);
  h << checks_section(c) << exhibits_section(c, mistakes_named) << needs_look_section(c)
    << similarity_section(s) << "</body></html>\n";
  return h.str();
}

}  // namespace

void write_class_report(const ReportInputs& in, const std::vector<StudentAnswer>& answers) {
  std::vector<StudentOutcome> students;
  for (const StudentAnswer& a : answers) students.push_back(parse_student(a));
  const ClassSummary c = summarize(students, in.names);
  const Similarity s = compare(in);
  std::ofstream(in.out / "class.json")
      << class_json(c, s, in.mistakes_named).dump(2, ' ', false, json::error_handler_t::replace)
      << "\n";
  std::ofstream(in.out / "class.html") << class_html(c, s, in.mistakes_named);
  std::cout << "wrote " << (in.out / "class.html").string() << " and "
            << (in.out / "class.json").string() << " (the class report)\n";
}

}  // namespace xenc_grade_all

// xenc-grade-all's class report (apps/assignment/grade_all/class_report.hpp): the aggregation of
// grade's answers, on answers written by hand in grade's JSON (--format both), so every count
// below is known by construction.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "../../apps/assignment/grade_all/class_report.hpp"

using nlohmann::json;
namespace report = xenc_grade_all;

namespace {

json check(const std::string& name, bool passed, const std::string& mistake = "") {
  json c = {{"name", name}, {"passed", passed}};
  if (!mistake.empty()) c["known_mistake"] = mistake;
  return c;
}

json exercise(const std::string& name, double points, double max_points, const std::string& status,
              const json& checks, const std::string& failure = "") {
  return {{"name", name},     {"points", points},   {"max_points", max_points},
          {"status", status}, {"failure", failure}, {"checks", checks}};
}

report::StudentAnswer answer(const std::string& who, const json& exercises) {
  return {who, json{{"json", {{"exercises", exercises}}}, {"text", ""}}.dump(), ""};
}

// Four students of softmax (2 points, 4 checks) and merge_heads (1 point, 2 checks).
std::vector<report::StudentOutcome> made_up_class() {
  const json all_softmax = json::array({check("hand example", true), check("reference", true),
                                        check("large logits", true), check("masked row", true)});
  const json no_max =
      json::array({check("hand example", true), check("reference", true),
                   check("large logits", false, "softmax without the max subtraction"),
                   check("masked row", false, "softmax without the max subtraction")});
  const json merge_ok = json::array({check("hand example", true), check("round trip", true)});
  const json merge_half = json::array(
      {check("hand example", true), check("round trip", false, "heads not transposed")});
  std::vector<report::StudentAnswer> answers = {
      answer("ann", {exercise("softmax", 2, 2, "passed", all_softmax),
                     exercise("merge_heads", 1, 1, "passed", merge_ok)}),
      answer("bob", {exercise("softmax", 1, 2, "failed", no_max),
                     exercise("merge_heads", 0.5, 1, "failed", merge_half)}),
      answer("cat", {exercise("softmax", 1, 2, "failed", no_max),
                     exercise("merge_heads", 0, 1, "failed: crashed with SIGSEGV", json::array(),
                              "crashed with SIGSEGV (segmentation fault)")}),
      {"dan", "", "grade exited with code 3"},
  };
  std::vector<report::StudentOutcome> out;
  for (const auto& a : answers) out.push_back(report::parse_student(a));
  return out;
}

}  // namespace

TEST(ClassReport, ParsesGradesAnswer) {
  const auto s = made_up_class();
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[1].not_graded, "");
  ASSERT_EQ(s[1].exercises.size(), 2u);
  EXPECT_EQ(s[1].exercises[0].checks[2].known_mistake, "softmax without the max subtraction");
  EXPECT_EQ(s[3].not_graded, "grade exited with code 3");
  EXPECT_EQ(report::parse_student({"eve", "{not json", ""}).not_graded,
            "grade's answer is not JSON");
  EXPECT_EQ(report::parse_student({"eve", R"({"json": {}})", ""}).not_graded,
            "grade's answer is not JSON");
}

TEST(ClassReport, ScoreDistributionOverEveryPossibleScore) {
  const auto c = report::summarize(made_up_class(), {"softmax", "merge_heads"});
  EXPECT_EQ(c.students, 4u);
  EXPECT_EQ(c.graded, 3u);
  ASSERT_EQ(c.exercises.size(), 2u);
  const auto& sm = c.exercises[0];
  EXPECT_EQ(sm.students, 3u);
  EXPECT_EQ(sm.passed, 1u);
  EXPECT_DOUBLE_EQ(sm.mean, (2.0 + 1.0 + 1.0) / 3.0);
  // 4 checks of 2 points: 0, 0.5, 1, 1.5, 2; ann 2, bob and cat 1
  ASSERT_EQ(sm.distribution.size(), 5u);
  const double points[] = {0, 0.5, 1, 1.5, 2};
  const std::size_t students[] = {0, 0, 2, 0, 1};
  for (int i = 0; i < 5; ++i) {
    EXPECT_DOUBLE_EQ(sm.distribution[i].points, points[i]);
    EXPECT_EQ(sm.distribution[i].students, students[i]) << "at " << points[i];
  }
  // merge_heads: ann 1, bob 0.5, cat 0 (crashed)
  const auto& mh = c.exercises[1];
  ASSERT_EQ(mh.distribution.size(), 3u);
  for (const auto& b : mh.distribution) EXPECT_EQ(b.students, 1u) << "at " << b.points;
}

TEST(ClassReport, PassRatesAndTheCheckFailedMost) {
  const auto c = report::summarize(made_up_class(), {"softmax", "merge_heads"});
  const auto& checks = c.exercises[0].checks;
  ASSERT_EQ(checks.size(), 4u);
  EXPECT_EQ(checks[0].name, "hand example");
  EXPECT_EQ(checks[0].passed, 3u);
  EXPECT_EQ(checks[2].name, "large logits");
  EXPECT_EQ(checks[2].passed, 1u);
  EXPECT_EQ(checks[2].ran, 3u);
  // merge_heads' round trip ran for ann and bob only (cat's crashed before any verdict)
  EXPECT_EQ(c.exercises[1].checks[1].ran, 2u);
  EXPECT_EQ(c.exercises[1].checks[1].passed, 1u);
  // large logits and masked row both failed twice: the first in order wins
  EXPECT_EQ(report::most_failed_check(c), (std::pair<int, int>{0, 2}));
  EXPECT_EQ(report::most_failed_check(report::summarize({}, {"softmax"})),
            (std::pair<int, int>{-1, -1}));
}

TEST(ClassReport, ExhibitsCountEachStudentOnce) {
  const auto c = report::summarize(made_up_class(), {"softmax", "merge_heads"});
  ASSERT_EQ(c.exhibits.size(), 2u);
  EXPECT_EQ(c.exhibits[0].title, "softmax without the max subtraction");
  EXPECT_EQ(c.exhibits[0].exercise, "softmax");
  EXPECT_EQ(c.exhibits[0].students, (std::vector<std::string>{"bob", "cat"}));
  EXPECT_EQ(c.exhibits[1].title, "heads not transposed");
  EXPECT_EQ(c.exhibits[1].students, (std::vector<std::string>{"bob"}));
}

TEST(ClassReport, NeedsALookNamesCrashesAndTheUngraded) {
  const auto c = report::summarize(made_up_class(), {"softmax", "merge_heads"});
  ASSERT_EQ(c.needs_look.size(), 2u);
  EXPECT_EQ(c.needs_look[0].student, "cat");
  EXPECT_EQ(c.needs_look[0].exercise, "merge_heads");
  EXPECT_EQ(c.needs_look[0].kind, "crashed");
  EXPECT_EQ(c.needs_look[1].student, "dan");
  EXPECT_EQ(c.needs_look[1].kind, "not graded");
  EXPECT_EQ(c.needs_look[1].detail, "grade exited with code 3");
}

TEST(ClassReport, FailureKinds) {
  EXPECT_EQ(report::failure_kind("does not compile: exercises/softmax.cpp:8:12: error: x"),
            "did not compile");
  EXPECT_EQ(report::failure_kind("does not link: undefined reference"), "did not compile");
  EXPECT_EQ(
      report::failure_kind("exceeded the time limit of 5 s (an infinite loop?) and was killed"),
      "timed out");
  EXPECT_EQ(report::failure_kind("exceeded the CPU time limit of 20 s and was killed"),
            "timed out");
  EXPECT_EQ(report::failure_kind("crashed with SIGABRT (abort)"), "crashed");
  EXPECT_EQ(
      report::failure_kind("exceeded the memory limit of 512 MiB (std::bad_alloc) and stopped"),
      "ran out of memory");
  EXPECT_EQ(report::failure_kind("exited with code 3"), "failed to run");
}

// The page's words and bar labels for made_up_class (above) and a 1-point exercise of 7 checks:
// "1 point", never "1 points"; a bar of 1/7 of a point labelled 0.143, not 0.142857.
TEST(ClassReport, PageSaysPointOrPointsAndShortBarLabels) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("class_report_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "submissions");
  json seven = json::array();
  for (int i = 0; i < 7; ++i) seven.push_back(check("check " + std::to_string(i), i != 0));
  const std::vector<report::StudentAnswer> answers = {
      answer("ann", {exercise("softmax", 2, 2, "passed", json::array({check("a", true)})),
                     exercise("split_heads", 6.0 / 7, 1, "failed", seven)})};
  testing::internal::CaptureStdout();
  report::write_class_report(
      {dir, dir / "template", dir / "submissions", {"softmax", "split_heads"}}, answers);
  testing::internal::GetCapturedStdout();
  std::ifstream in(dir / "class.html");
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("<h3>softmax (2 points)</h3>"), std::string::npos);
  EXPECT_NE(html.find("<h3>split_heads (1 point)</h3>"), std::string::npos);
  EXPECT_NE(html.find("the mean is 0.86 of 1 point."), std::string::npos);
  EXPECT_NE(html.find(">0.143<"), std::string::npos);
  EXPECT_EQ(html.find("0.142857"), std::string::npos);
  EXPECT_EQ(html.find("1 points"), std::string::npos);
  fs::remove_all(dir);
}

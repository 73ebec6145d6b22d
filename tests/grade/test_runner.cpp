// The grader's process isolation (xenc/grade/sandbox.hpp) and its reports and settings
// (xenc/grade/runner.hpp), without a compiler: /bin/sh plays the child. The template checks
// (check_*.cmake) run the same machinery on compiled student code.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "xenc/core/error.hpp"
#include "xenc/grade/exercises.hpp"
#include "xenc/grade/runner.hpp"
#include "xenc/grade/sandbox.hpp"

namespace {

namespace grade = xenc::grade;
using nlohmann::json;

grade::Outcome sh(const std::string& script, grade::Limits limits = {}) {
  return grade::run_isolated("/bin/sh", {"/bin/sh", "-c", script}, limits);
}

// ---- isolation --------------------------------------------------------------------------------

TEST(Sandbox, TheVerdictChannelIsNotStdout) {
  const grade::Outcome o =
      sh("echo printed; echo '{\"fake\": 1}' 1>&2; echo verdict >&$XENC_GRADE_VERDICT_FD");
  EXPECT_TRUE(o.exited);
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_EQ(o.verdict, "verdict\n");
  EXPECT_EQ(o.output, "printed\n{\"fake\": 1}\n");
  EXPECT_EQ(grade::describe_outcome(o, {}), "");
}

// A descriptor the grader inherited from whoever started it (here a pipe without close-on-exec,
// as a course platform's log or a terminal would be) is closed in the child: the student's code
// can write only to its captured output and to the verdict channel.
TEST(Sandbox, InheritedDescriptorsAreClosedInTheChild) {
  int inherited[2];
  ASSERT_EQ(::pipe(inherited), 0);
  const std::string fd = std::to_string(inherited[1]);
  const grade::Outcome o = sh("if { echo leaked >&" + fd +
                              "; } 2>/dev/null; then echo open; else echo closed; fi; "
                              "echo verdict >&$XENC_GRADE_VERDICT_FD");
  ::close(inherited[1]);
  char buf[16];
  const ssize_t n = ::read(inherited[0], buf, sizeof buf);
  ::close(inherited[0]);
  EXPECT_EQ(n, 0) << "the child wrote to descriptor " << fd;
  EXPECT_EQ(o.output, "closed\n");
  EXPECT_EQ(o.verdict, "verdict\n");
}

TEST(Sandbox, ASegfaultIsNamed) {
  const grade::Outcome o = sh("kill -SEGV $$");
  EXPECT_EQ(o.signal, SIGSEGV);
  EXPECT_EQ(grade::describe_outcome(o, {}).rfind("crashed with SIGSEGV (segmentation fault", 0), 0u)
      << grade::describe_outcome(o, {});
}

TEST(Sandbox, AnAbortIsNamed) {
  const grade::Outcome o = sh("kill -ABRT $$");
  EXPECT_EQ(grade::describe_outcome(o, {}).rfind("crashed with SIGABRT (abort", 0), 0u);
}

TEST(Sandbox, AHangIsKilledAtTheWallClockLimit) {
  grade::Limits limits;
  limits.time_seconds = 1.0;
  const grade::Outcome o = sh("while :; do :; done", limits);
  EXPECT_TRUE(o.timed_out);
  EXPECT_EQ(o.signal, SIGKILL);
  EXPECT_GE(o.seconds, 1.0);
  EXPECT_LT(o.seconds, 10.0);  // killed, not waited for (generous: the machine may be loaded)
  EXPECT_EQ(grade::describe_outcome(o, limits),
            "exceeded the time limit of 1 s (an infinite loop?) and was killed");
}

TEST(Sandbox, ASleepingGrandchildDoesNotHoldTheParent) {
  // the child's process group is killed: a background sleeper keeps no pipe open afterwards
  grade::Limits limits;
  limits.time_seconds = 1.0;
  const grade::Outcome o = sh("sleep 30 & sleep 30", limits);
  EXPECT_TRUE(o.timed_out);
  EXPECT_LT(o.seconds, 10.0);
}

TEST(Sandbox, TheMemoryLimitIsTheAddressSpace) {
  // the limit is RLIMIT_AS in MiB, as the child sees it
  grade::Limits limits;
  limits.memory_mib = 300;
  const grade::Outcome o = sh("ulimit -v", limits);
  EXPECT_EQ(o.output, std::to_string(300 * 1024) + "\n");
}

TEST(Sandbox, ExitingWithoutAVerdictFails) {
  EXPECT_EQ(grade::describe_outcome(sh("echo '11 of 11 exercises passed'; exit 0"), {}),
            "exited with code 0 without a verdict (did the code call exit() or std::quick_exit?)");
}

TEST(Sandbox, OutputIsCappedButDrained) {
  grade::Limits limits;
  limits.output_bytes = 100;
  const grade::Outcome o = sh("yes | head -c 1000000; echo done >&$XENC_GRADE_VERDICT_FD", limits);
  EXPECT_EQ(o.output.size(), 100u);
  EXPECT_TRUE(o.output_truncated);
  EXPECT_EQ(o.verdict, "done\n");
}

// ---- verdicts ---------------------------------------------------------------------------------

TEST(Verdict, RoundTrips) {
  grade::ExerciseResult r;
  r.exercise = "softmax";
  r.signature = "Tensor2 softmax(const Tensor2& x)";
  grade::CheckResult c;
  c.name = "hand example";
  c.input = "x [1] = [\"quoted\"]";
  c.hint = "ü";
  c.hidden = true;
  r.checks = {c};
  const grade::ExerciseResult back = grade::parse_verdict(grade::verdict_json(r));
  EXPECT_EQ(back.exercise, r.exercise);
  ASSERT_EQ(back.checks.size(), 1u);
  EXPECT_EQ(back.checks[0].input, c.input);
  EXPECT_EQ(back.checks[0].hint, c.hint);
  EXPECT_TRUE(back.checks[0].hidden);
  EXPECT_THROW(grade::parse_verdict("11 of 11 exercises passed"), std::invalid_argument);
}

// ---- reports ----------------------------------------------------------------------------------

// Two exercises: one with a passed and a failed hidden check (2 points), one that crashed (3).
std::vector<grade::Graded> two_exercises() {
  grade::Graded a;
  a.exercise = "softmax";
  a.max_points = 2;
  grade::CheckResult pass, hidden;
  pass.name = "hand example";
  pass.passed = true;
  hidden.name = "hidden: reference values on the teacher's inputs";
  hidden.hidden = true;
  hidden.expected = "y [2, 2] = [0.1, 0.9, 0.5, 0.5]";
  hidden.computed = "y [2, 2] = [0.2, 0.8, 0.5, 0.5]";
  hidden.hint = "y[r, c] = exp(x[r, c] - max_r) / Σ exp(...). One row at a time.";
  a.result.exercise = "softmax";
  a.result.checks = {pass, hidden};
  a.points = 1;
  grade::Graded b;
  b.exercise = "merge_heads";
  b.max_points = 3;
  b.failure = "crashed with SIGSEGV (segmentation fault)";
  return {a, b};
}

TEST(Report, GradescopeFollowsTheResultsJsonSchema) {
  const json j = json::parse(
      grade::format_report(two_exercises(), grade::Format::gradescope, grade::HintLevel::full));
  EXPECT_EQ(j.at("score").get<double>(), 1.0);
  ASSERT_EQ(j.at("tests").size(), 3u);  // two checks + one failed exercise
  double sum = 0;
  for (const json& t : j.at("tests")) {
    EXPECT_TRUE(t.at("name").is_string());
    EXPECT_TRUE(t.at("output").is_string());
    const std::string status = t.at("status").get<std::string>();
    EXPECT_TRUE(status == "passed" || status == "failed") << status;
    const std::string vis = t.at("visibility").get<std::string>();
    EXPECT_TRUE(vis == "visible" || vis == "hidden") << vis;
    sum += t.at("max_score").get<double>();
  }
  EXPECT_EQ(sum, 5.0);
  EXPECT_EQ(j["tests"][1]["visibility"], "hidden");
  EXPECT_EQ(j["tests"][1]["output"].get<std::string>().find("0.9"), std::string::npos)
      << "a hidden check shows values";
  EXPECT_EQ(j["tests"][2]["score"], 0.0);
  EXPECT_EQ(j["tests"][2]["max_score"], 3.0);
}

TEST(Report, JsonHasPointsPerCheckAndHidesHiddenValues) {
  const json j = json::parse(
      grade::format_report(two_exercises(), grade::Format::json, grade::HintLevel::brief));
  EXPECT_EQ(j["points"], 1.0);
  EXPECT_EQ(j["max_points"], 5.0);
  EXPECT_FALSE(j["passed"].get<bool>());
  const json& hidden = j["exercises"][0]["checks"][1];
  EXPECT_EQ(hidden["max_points"], 1.0);
  EXPECT_FALSE(hidden.contains("input"));
  EXPECT_FALSE(hidden.contains("computed"));
  EXPECT_EQ(j["exercises"][1]["status"], "failed: crashed with SIGSEGV (segmentation fault)");
}

TEST(Report, TextHintLevels) {
  auto graded = two_exercises();
  graded[0].result.checks[1].hidden = false;
  graded[0].result.checks[1].input = "x [2, 2] = [1, 2, 3, 3]";
  const std::string full =
      grade::format_report(graded, grade::Format::text, grade::HintLevel::full);
  const std::string brief =
      grade::format_report(graded, grade::Format::text, grade::HintLevel::brief);
  const std::string off = grade::format_report(graded, grade::Format::text, grade::HintLevel::off);
  EXPECT_NE(full.find("hint: y[r, c] = exp(x[r, c] - max_r) / Σ exp(...). One row at a time."),
            std::string::npos)
      << full;
  EXPECT_NE(brief.find("hint: y[r, c] = exp(x[r, c] - max_r) / Σ exp(...).\n"), std::string::npos)
      << brief;
  EXPECT_EQ(off.find("hint:"), std::string::npos) << off;
  EXPECT_NE(full.find("✘ merge_heads: crashed with SIGSEGV (segmentation fault) (0 of 3 points)"),
            std::string::npos);
  EXPECT_NE(full.find("0 of 2 exercises passed, 1 of 5 points"), std::string::npos) << full;
}

TEST(Report, JunitCountsFailures) {
  const std::string x =
      grade::format_report(two_exercises(), grade::Format::junit, grade::HintLevel::full);
  EXPECT_NE(x.find("<testsuites name=\"xencoder grade\" tests=\"3\" failures=\"2\">"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<failure message=\"hidden check failed\">"), std::string::npos) << x;
}

// ---- settings ---------------------------------------------------------------------------------

// read_settings on `text`, written to a file of this test's own and removed after (ctest runs
// the tests side by side, and a teacher's /tmp/grading.json is not ours to overwrite).
grade::Settings read_settings_text(const std::string& text) {
  const std::string path = ::testing::TempDir() + "xenc_test_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                           std::to_string(::getpid()) + ".json";
  std::ofstream(path) << text;
  struct Remove {
    const std::string& path;
    ~Remove() { std::remove(path.c_str()); }
  } remove{path};
  return grade::read_settings(path);
}

TEST(Settings, ReadsEveryKey) {
  const grade::Settings s = read_settings_text(
      R"({"exercises": {"attention": 3, "softmax": 2}, "hints": "off", "hidden_seed": 7,
          "library_calls": false, "time_limit_seconds": 2.5, "memory_limit_mib": 128})");
  ASSERT_EQ(s.exercises.size(), 2u);
  EXPECT_EQ(s.exercises[0].first, "softmax");  // teaching order, not the file's
  EXPECT_EQ(s.exercises[1].second, 3.0);
  EXPECT_EQ(s.hints, grade::HintLevel::off);
  EXPECT_EQ(s.hidden_seed, 7u);
  EXPECT_FALSE(s.library_calls);
  EXPECT_EQ(s.limits.time_seconds, 2.5);
  EXPECT_EQ(s.limits.memory_mib, 128u);
}

TEST(Settings, RefusesTyposWithTheKeyAndTheExpectation) {
  auto message = [](const std::string& text) {
    try {
      read_settings_text(text);
    } catch (const xenc::config_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(R"({"hint": "off"})").find("unknown key \"hint\""), std::string::npos);
  EXPECT_NE(message(R"({"exercises": {"softmaxx": 1}})").find("unknown exercise \"softmaxx\""),
            std::string::npos);
  EXPECT_NE(message(R"({"hints": "some"})")
                .find("\"hints\" is \"some\", expected \"full\", \"brief\" or \"off\""),
            std::string::npos);
  EXPECT_NE(message(R"({"memory_limit_mib": 10})").find("expected an integer >= 64 (MiB)"),
            std::string::npos);
  EXPECT_NE(message("{").find("is not valid JSON"), std::string::npos);
}

// ---- the registry -----------------------------------------------------------------------------

TEST(Registry, TwelveExercisesInTeachingOrder) {
  const auto& list = grade::exercises();
  ASSERT_EQ(list.size(), 12u);
  EXPECT_EQ(list.front().name, "sinusoidal_table");
  EXPECT_EQ(list.back().name, "online_softmax_tile");
  for (std::size_t i = 1; i < list.size(); ++i) EXPECT_LT(list[i - 1].order, list[i].order);
  ASSERT_NE(grade::find_exercise("rope"), nullptr);
  EXPECT_EQ(grade::find_exercise("rope")->signature.rfind("Tensor2 rope(", 0), 0u);
  EXPECT_EQ(grade::find_exercise("rotary"), nullptr);
}

}  // namespace

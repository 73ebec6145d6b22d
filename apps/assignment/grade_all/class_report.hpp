// xenc-grade-all's class report: DIR/class.json and DIR/class.html beside grades.csv, the
// teacher's view of the class. Every number comes from grade's answers on its pipe (the same
// JSON grades.csv is written from), never from a file a student's process could write:
//   - per exercise, the distribution of the points (a bar chart from xenc::viz);
//   - per check, how many of the students whose exercise ran passed it, and the check failed most;
//   - per museum exhibit grade named (a failed check whose output equals a known published
//     mistake, xenc/grade/pitfalls.hpp), the students who made that mistake;
//   - the students who need a look: an exercise that crashed, timed out, did not compile, ran out
//     of memory or failed otherwise, and the students grade could not grade;
//   - the flagged pairs of xenc/grade/similarity.hpp on the same submissions, with the pages of
//     xenc-grade-similar (DIR/pairs/<exercise>-<n>.html). It flags, it does not judge.
// The aggregation (parse_student, summarize) is separate from the writing, for tests.
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace xenc_grade_all {

/// What grade sent back for one student: its answer (the JSON of --format both), or why grade
/// itself failed (then the student is not graded).
struct StudentAnswer {
  std::string who, answer, failure;
};

struct CheckOutcome {
  std::string name;
  bool passed = false;
  std::string known_mistake;  ///< the exhibit's title when the output equalled one
};

struct ExerciseOutcome {
  std::string name, status, failure;  ///< failure: why it has no verdict ("crashed with ...")
  double points = 0, max_points = 0;
  std::vector<CheckOutcome> checks;
};

struct StudentOutcome {
  std::string who;
  std::string not_graded;  ///< non-empty: why the student has no grades
  std::vector<ExerciseOutcome> exercises;
};

/// A student's outcome from grade's answer. Never throws: a failed grade or an answer that is not
/// the expected JSON makes the student "not graded", with the reason.
StudentOutcome parse_student(const StudentAnswer& answer);

/// "did not compile" (does not compile or link), "timed out" (wall clock or CPU time),
/// "crashed" (a signal), "ran out of memory", or "failed to run" for any other failure.
std::string failure_kind(const std::string& failure);

/// How many students scored `points` of an exercise.
struct Bin {
  double points = 0;
  std::size_t students = 0;
};
struct CheckRate {
  std::string name;
  std::size_t passed = 0, ran = 0;  ///< ran: the students whose report has this check
};
struct ExerciseSummary {
  std::string name;
  double max_points = 0, mean = 0;
  std::size_t students = 0, passed = 0;  ///< graded students; those who passed every check
  std::vector<Bin> distribution;  ///< every score a check's points allow (0, M/n, ..., M), and
                                  ///< any other score seen, ascending
  std::vector<CheckRate> checks;  ///< in grade's order
};
struct ExhibitCount {
  std::string exercise, title;
  std::vector<std::string> students;  ///< each once, in the class's order
};
struct NeedsLook {
  std::string student, exercise, kind, detail;  ///< exercise "" when the student was not graded
};
struct ClassSummary {
  std::size_t students = 0, graded = 0;
  std::vector<ExerciseSummary> exercises;  ///< in the order of `names`
  std::vector<ExhibitCount> exhibits;      ///< most students first, then by exercise and title
  std::vector<NeedsLook> needs_look;       ///< in the class's order, then the exercises'
};

/// The class's numbers over the graded students, for the exercises `names` (grade's order).
ClassSummary summarize(const std::vector<StudentOutcome>& students,
                       const std::vector<std::string>& names);

/// The check failed by most students (the first in exercise and check order on a tie): its
/// exercise's index and its index, or {-1, -1} when no check failed.
std::pair<int, int> most_failed_check(const ClassSummary& summary);

/// Where the report reads the submissions and the stubs (for the similarity part) and whether
/// grade named known mistakes (it does not with "hints": "off").
struct ReportInputs {
  std::filesystem::path out, template_dir, submissions;
  std::vector<std::string> names;
  bool mistakes_named = true;
};

/// Writes out/class.json, out/class.html and out/pairs/, and prints where.
void write_class_report(const ReportInputs& in, const std::vector<StudentAnswer>& answers);

}  // namespace xenc_grade_all

// xenc-grade-all's options, as records (apps/common/options.hpp). main.cpp reads this list; the
// --help test (OptionRecords.EveryHelpFlagIsARecord) compares it with the program.
#pragma once

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "../../common/options.hpp"

namespace grade_all {

// The command line, after parsing.
struct Options {
  std::string submissions, settings, output = "grades", template_dir, prefix, cache;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  bool list_exercises = false;
  std::vector<std::string> only;  // --only: regrade these students, keep the other rows
  std::string gradescope_bundle, source, assignment = "xencoder assignment";
};

inline std::vector<xenc_app::OptionRecord<Options>> option_records() {
  using namespace xenc_app;
  return {
      {"SUBMISSIONS_DIR", "submissions", nullptr,
       "one sub-folder per student (required, unless --exercises)", text(), absent(),
       XENC_FIELD(Options, submissions)},
      {"--exercises", "exercises", nullptr,
       "print the registered exercises as JSON (name, signature, points, teaching order; with "
       "--settings: the chosen ones, their points, the ones left out and the hint level) and exit",
       flag(), absent(), XENC_FIELD(Options, list_exercises)},
      {"--settings", "settings", nullptr,
       "the teacher's grading.json (exercises, points, hints, hidden checks, library calls, "
       "limits)",
       text(), absent(), XENC_FIELD(Options, settings)},
      {"--output", "output", nullptr, "where grades.csv and the reports go", text(), absent(),
       XENC_FIELD(Options, output)},
      {"--template", "template", nullptr,
       "the assignment template (default: the folder of --settings when it holds an assignment, "
       "a CMakeLists.txt and exercises/; else the installed one, "
       "<prefix>/share/xencoder/assignment/template)",
       text(), absent(), XENC_FIELD(Options, template_dir)},
      {"--prefix", "prefix", nullptr,
       "where xencoder is installed (default: this program's prefix, the folder above its bin/)",
       text(), absent(), XENC_FIELD(Options, prefix)},
      {"--jobs", "jobs", nullptr, "students graded at a time (default: one per core)",
       whole(1, 1024), absent(), XENC_FIELD(Options, jobs)},
      {"--cache", "cache", nullptr,
       "the build cache: the template's build and each linked exercise program, reused when "
       "nothing they were made from changed (default: DIR/cache; only with the sandbox's "
       "namespaces)",
       text(), absent(), XENC_FIELD(Options, cache)},
      {"--only", "only", nullptr,
       "regrade only these students (folder names in SUBMISSIONS_DIR) and keep every other row "
       "of DIR/grades.csv and the others' reports",
       list(), absent(), XENC_FIELD(Options, only)},
      {"--assignment-name", "assignment_name", nullptr,
       "the grade column's name in canvas.csv and moodle.csv", text(), absent(),
       XENC_FIELD(Options, assignment)},
      {"--gradescope-bundle", "gradescope_bundle", nullptr,
       "write Gradescope's autograder zip (setup.sh, run_autograder, the template with "
       "--settings as its grading.json, xencoder's source) to this file and exit",
       text(), absent(), XENC_FIELD(Options, gradescope_bundle)},
      {"--source", "source", nullptr,
       "xencoder's source tree, for --gradescope-bundle (default: the tree this program was "
       "built from)",
       text(), absent(), XENC_FIELD(Options, source)},
  };
}

}  // namespace grade_all

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
  };
}

}  // namespace grade_all

// xenc-grade-all --gradescope-bundle: Gradescope's autograder zip for the teacher's template and
// settings (setup.sh and run_autograder from apps/assignment/gradescope/, installed as
// <prefix>/share/xencoder/assignment/gradescope).
#pragma once

#include <filesystem>
#include <string>

namespace xenc_grade_all {

/// What goes into the zip.
struct BundleInputs {
  std::filesystem::path template_dir;  ///< the assignment template (its build/ is left out)
  std::filesystem::path settings;      ///< grading.json, written as template/grading.json (or none)
  std::filesystem::path
      source_dir;  ///< xencoder's source tree (git's files, when it is a checkout)
  std::filesystem::path scripts_dir;  ///< setup.sh and run_autograder
};

/// Writes `zip`: setup.sh and run_autograder at its root (Gradescope's specification:
/// https://gradescope-autograders.readthedocs.io/en/latest/specs/), template/ and xencoder/.
/// Returns the number of xencoder's files in it. Needs the `zip` program. Throws
/// std::runtime_error naming what is missing (a folder, a script, zip) or zip's output.
std::size_t write_gradescope_bundle(const std::filesystem::path& zip, const BundleInputs& in);

}  // namespace xenc_grade_all

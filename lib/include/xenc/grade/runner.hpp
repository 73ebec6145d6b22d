// Grading a submission exercise by exercise, each in its own process, and the report formats.
//
// Two programs:
//   - the child, one per exercise (the assignment template's `grade-<name>`, built from the
//     student's one file and child.cpp): it only answers calls, with the student's function
//     (xenc/grade/wire.hpp, serve). It never runs a check and never sees the hidden seed. What the
//     student's code prints goes to a captured buffer and never counts.
//   - the parent (the template's `grade`, which never loads student code): grade_main compiles
//     and links each exercise's child on its own, in the sandbox of xenc/grade/sandbox.hpp (a
//     file that does not compile fails that exercise alone, with the compiler's first error),
//     runs the exercise's checks here with each call of the student's function sent to the child
//     under the time, memory and process limits, decides every verdict, and writes the report as
//     text, JSON, Gradescope results.json or JUnit XML.
// The teacher's settings (grading.json next to the template's CMakeLists.txt, see read_settings)
// choose the exercises and their points, the hint level, hidden checks, the library-calls policy
// and the limits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xenc/grade/result.hpp"
#include "xenc/grade/sandbox.hpp"

namespace xenc::grade {

// HintLevel (full, brief, off) is in xenc/grade/result.hpp, beside print_report, which shows it
// as the reports below do.

/// The teacher's settings. As a file (JSON), every key optional:
///     { "exercises": {"softmax": 2, "attention": 3},   // which, with their points (default: all,
///     1 each)
///       "hints": "full" | "brief" | "off",
///       "hidden_seed": 1234,                          // adds hidden checks drawn from this seed
///       "library_calls": false,                       // student code may not call xenc:: ops/nn
///       "time_limit_seconds": 10, "memory_limit_mib": 512,
///       "compile_time_limit_seconds": 120, "process_limit": 32 }
/// Every number is range-checked (points finite in [0, 1e6], the memory limit at most the
/// machine's memory, the seed within 64 bits), a key written twice is an error, and a file over
/// 1 MiB is refused.
struct Settings {
  std::vector<std::pair<std::string, double>> exercises;  ///< empty: every registered exercise
  HintLevel hints = HintLevel::full;
  std::optional<std::uint64_t> hidden_seed;
  bool library_calls = true;
  Limits limits;
  double compile_seconds = 120;  ///< the wall-clock limit of one exercise's compile (and link)
};

/// Reads a settings file. Throws xenc::config_error naming the file, the key and the value
/// expected (never a JSON library's own message) (unknown keys and unknown exercise names are
/// errors too: a typo must not pass silently).
Settings read_settings(const std::string& path);

/// One exercise as graded in its own process.
struct Graded {
  std::string exercise;
  std::string signature;
  double max_points = 1.0;
  double points = 0.0;
  /// empty when the child delivered a verdict; otherwise why there is none or why it does not
  /// count: "does not compile: ...", "crashed with SIGSEGV ...", "exceeded the time limit ..."
  std::string failure;
  /// why it failed when the grader knows more than its checks say (with "library_calls": false,
  /// a call of dlopen or dlsym, which find nothing); "" otherwise. Costs no points by itself.
  std::string note;
  ExerciseResult result;  ///< the checks (empty when there is no verdict)
  std::string output;     ///< what the student's code printed (captured, shortened)
  double seconds = 0.0;
  bool passed() const { return failure.empty() && result.passed(); }
  /// The points of one check: max_points shared equally among the exercise's checks that count
  /// (CheckResult::scored; all but a test-writing exercise's run on the correct function).
  double points_per_check() const;
  /// What check c earns (points_per_check when it passed and counts, else 0) and could earn.
  double check_points(const CheckResult& c) const;
  double check_max_points(const CheckResult& c) const;
};

enum class Format { text, json, gradescope, junit };

/// The report of a whole submission in one format. Hidden checks show no input and no values in
/// any format; hints follow `hints`.
std::string format_report(const std::vector<Graded>& graded, Format format, HintLevel hints);

/// The functions a failed link's log names as undefined (GNU ld's "undefined reference to
/// `f(int)'", lld's "undefined symbol: f(int)"), demangled as the linker prints them, each once,
/// in the order of the log.
std::vector<std::string> undefined_references(const std::string& link_log);

/// The sentence for a link that failed on undefined functions of exercises/<exercise>.cpp, "" when
/// the log names none: the exercise's own function missing ("exercises/softmax.cpp does not define
/// assignment::softmax, the function `Tensor2 softmax(const Tensor2& x)` ..."), else the first
/// other function that is declared but defined nowhere.
std::string missing_function_message(const std::string& link_log, const std::string& exercise,
                                     const std::string& signature);

/// Levenshtein's edit distance of a and b, on bytes (insertions, deletions, substitutions).
std::size_t edit_distance(const std::string& a, const std::string& b);

/// A file of a submission that is not one of its exercises, with the exercise file closest to its
/// name (by edit distance, ignoring case).
struct StrayFile {
  std::string file;     ///< its name, as handed in: "Softmax.cpp"
  std::string closest;  ///< "softmax.cpp"
};

/// The regular files of `dir` whose name is not <name>.cpp for one of `exercises`, sorted by name.
std::vector<StrayFile> stray_files(const std::string& dir,
                                   const std::vector<std::string>& exercises);

/// The report's sentence for a stray file in `folder` ("exercises/"): "exercises/Softmax.cpp is
/// not an exercise of this assignment and was not graded (did you mean exercises/softmax.cpp?)".
std::string stray_message(const StrayFile& f, const std::string& folder);

/// Where the parent finds the template's source and build trees and CMake.
struct Project {
  std::string source_dir;  ///< holds exercises/<name>.cpp and (optionally) grading.json
  std::string build_dir;   ///< where `cmake --build` makes grade-<name>
  std::string cmake;       ///< the cmake program (absolute path)
};

/// The parent program: `grade [--format F] [--output FILE] [--text-output FILE] [--settings FILE]
/// [--time-limit S] [--memory-limit MIB] [--list] [exercise ...]`. Exit code 0 when every check of
/// every chosen exercise passed, 1 when one did not, 2 for a usage or settings error.
int grade_main(int argc, char** argv, const Project& project);

}  // namespace xenc::grade

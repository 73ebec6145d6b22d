// The similarity report's shared half, used by xenc-grade-similar (apps/assignment/similar/) and
// by xenc-grade-all's class report (apps/assignment/grade_all/class_report.cpp): reading a
// class's files per exercise, the notice every output opens with, and the side-by-side page of a
// flagged pair. The method is xenc/grade/similarity.hpp's.
#pragma once

#include <xenc/grade/similarity.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace xenc_assignment {

/// What every output says first: the report's limits, in one place.
extern const char* const kSimilarityNotice;

/// The pages' style sheet (<style>...</style>), inline: a page needs no network.
extern const char* const kPageStyle;

/// A file not compared, and why ("300000 bytes, more than the limit of 65536 (--max-bytes)").
struct Skipped {
  std::string student, exercise, reason;
};

/// One exercise: its submissions (the students who handed in a file) and the flagged pairs.
struct ExerciseReport {
  std::string name;
  std::vector<xenc::grade::Submission> submissions;
  std::vector<xenc::grade::SimilarPair> pairs;
};

/// The exercises (the stubs in template_dir/exercises, sorted by name) and, per exercise, the
/// files handed in (class_dir/<student>/exercises/<name>.cpp or <student>/<name>.cpp, each file's
/// size checked before it is read: a larger one is skipped and named in `skipped`), then the
/// flagged pairs. Throws std::runtime_error when a stub is over options.max_file_bytes.
std::vector<ExerciseReport> compare_class(const std::filesystem::path& template_dir,
                                          const std::filesystem::path& class_dir,
                                          const xenc::grade::SimilarityOptions& options,
                                          std::vector<Skipped>& skipped);

/// "91%" (a share in [0, 1], no decimals).
std::string percent(double share);

/// The page of one flagged pair of `ex`: the notice, the overlaps and both files side by side,
/// the shared code in <mark> (every text escaped).
std::string pair_page(const ExerciseReport& ex, const xenc::grade::SimilarPair& p);

/// A pair as similarity.json holds it (a, b, overlap_a, overlap_b, shared, fingerprints_a,
/// fingerprints_b, regions_a, regions_b, page).
nlohmann::json pair_json(const xenc::grade::SimilarPair& p, const std::string& page);

/// "pairs/<exercise>-<n>.html": the n-th (from 1) flagged pair's page, relative to the report.
std::string pair_page_path(const std::string& exercise, std::size_t n);

}  // namespace xenc_assignment

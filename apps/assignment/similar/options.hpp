// xenc-grade-similar's options, as records (apps/common/options.hpp): the folders, and the
// similarity settings (xenc::grade::SimilarityOptions) as one group that a program comparing
// submissions embeds. main.cpp reads this list; the --help test compares it with the program.
#pragma once

#include <xenc/grade/similarity.hpp>

#include <string>
#include <vector>

#include "../../common/options.hpp"

namespace grade_similar {

struct CommandLine {
  std::string submissions;
  std::string template_dir;  ///< empty: the installed template
  std::string output = "similarity";
  xenc::grade::SimilarityOptions similarity;
};

/// The similarity settings (MOSS's winnowing: k, w, and when a pair is flagged), for any options
/// `O` with a member `similarity` of type xenc::grade::SimilarityOptions.
template <class O>
std::vector<xenc_app::OptionRecord<O>> similarity_records() {
  using namespace xenc_app;
  return {
      {"--threshold", "threshold", "threshold",
       "flag a pair when at least this share of either file's fingerprints is in the other",
       real(0.01, 1.0), absent(), XENC_FIELD(O, similarity.threshold)},
      {"-k", "k", "k", "k-gram length in tokens: shorter shared runs never match", whole(1, 1000),
       absent(), XENC_FIELD(O, similarity.k)},
      {"-w", "w", "w", "window length: any shared run of at least w + k - 1 tokens is found",
       whole(1, 1000), absent(), XENC_FIELD(O, similarity.w)},
      {"--min-shared", "min_shared", "min_shared",
       "a flagged pair shares at least this many fingerprints", whole(1, 1000000), absent(),
       XENC_FIELD(O, similarity.min_shared)},
      {"--max-common", "max_common", "max_common",
       "a fingerprint in more than this many submissions of an exercise is ignored, as the "
       "stub's (MOSS's -m); 0: no limit",
       whole(0, 1000000), absent(), XENC_FIELD(O, similarity.max_common)},
      {"--max-bytes", "max_bytes", "max_file_bytes",
       "a larger file is skipped (and named), not compared", whole(1, double(1 << 30)), absent(),
       XENC_FIELD(O, similarity.max_file_bytes)},
  };
}

inline std::vector<xenc_app::OptionRecord<CommandLine>> option_records() {
  using namespace xenc_app;
  return records_of<CommandLine>({
      {{"SUBMISSIONS_DIR", "submissions", nullptr, "one sub-folder per student (as xenc-grade-all)",
        required(text()), absent(), XENC_FIELD(CommandLine, submissions)},
       {"--template", "template", nullptr,
        "the assignment template whose exercises/ holds the stubs (default: the installed one, "
        "<prefix>/share/xencoder/assignment/template)",
        text(), absent(), XENC_FIELD(CommandLine, template_dir)},
       {"--output", "output", nullptr, "where similarity.json and the HTML pages go", text(),
        absent(), XENC_FIELD(CommandLine, output)}},
      similarity_records<CommandLine>(),
  });
}

}  // namespace grade_similar

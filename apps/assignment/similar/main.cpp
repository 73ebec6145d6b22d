// xenc-grade-similar: flags pairs of submissions whose code for an exercise is nearly the same
// once the handed-out stub is removed (xenc/grade/similarity.hpp: MOSS's winnowing over
// normalised tokens, so renamed variables and reformatting do not hide a copy). It flags, it
// does not judge: a flagged pair is for a person to read side by side.
//
//     xenc-grade-similar SUBMISSIONS_DIR [--template DIR] [--output DIR] [--threshold 0.5]
//                        [-k 12] [-w 8] [--min-shared 5] [--max-common 10]
//                        [--max-bytes 65536]
//
// The folders are xenc-grade-all's: SUBMISSIONS_DIR/<student>/exercises/<name>.cpp (or
// <student>/<name>.cpp), one exercise per file of the template's exercises/, whose file is the
// stub. An exercise a student did not hand in is not compared. Writes DIR/similarity.json,
// DIR/similarity.html (the flagged pairs) and DIR/pairs/<exercise>-<n>.html (one pair side by
// side, the shared code highlighted).
#include <CLI/CLI.hpp>
#include <xenc/grade/similarity.hpp>
#include <xenc/viz/svg.hpp>  // xml_escape

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "../../common/cli.hpp"
#include "../shared/similarity_pages.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
namespace grade = xenc::grade;

namespace {

using xenc::viz::xml_escape;
using namespace xenc_assignment;

std::string index_page(const std::string& rows, const grade::SimilarityOptions& options,
                       std::size_t flagged) {
  std::ostringstream h;
  h << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Similar submissions</title>"
    << kPageStyle << "</head><body><h1>Similar submissions</h1><p class=\"notice\">"
    << kSimilarityNotice << "</p><p>k = " << options.k << ", w = " << options.w << ", threshold "
    << percent(options.threshold) << ": " << flagged << (flagged == 1 ? " pair" : " pairs")
    << " flagged.</p><table><tr><th>exercise</th><th>a</th><th>b</th><th>of a's in b</th>"
    << "<th>of b's in a</th><th></th></tr>" << rows << "</table></body></html>\n";
  return h.str();
}

// Step 3: the report on stdout, similarity.json, similarity.html and one page per pair.
void write_report(const fs::path& out, const std::vector<ExerciseReport>& reports,
                  const std::vector<Skipped>& skipped, const grade::SimilarityOptions& options) {
  fs::remove_all(out / "pairs");
  fs::create_directories(out / "pairs");
  std::cout << kSimilarityNotice << "\n";
  std::cout << "Settings: k = " << options.k << " tokens, w = " << options.w
            << " (any shared run of " << options.k + options.w - 1
            << " tokens or more is found), threshold " << percent(options.threshold)
            << ", at least " << options.min_shared << " shared fingerprints, "
            << (options.max_common == 0
                    ? std::string("no fingerprint ignored as common.\n")
                    : "fingerprints in more than " + std::to_string(options.max_common) +
                          " submissions ignored as common.\n");
  json jexercises = json::array();
  std::ostringstream rows;
  std::size_t flagged = 0;
  for (const ExerciseReport& ex : reports) {
    std::cout << ex.name << ": " << ex.pairs.size() << (ex.pairs.size() == 1 ? " pair" : " pairs")
              << " flagged among " << ex.submissions.size() << " submissions\n";
    json jpairs = json::array();
    for (std::size_t n = 0; n < ex.pairs.size(); ++n, ++flagged) {
      const grade::SimilarPair& p = ex.pairs[n];
      const std::string page = pair_page_path(ex.name, n + 1);
      std::ofstream(out / page) << pair_page(ex, p);
      std::cout << "  " << p.a << " and " << p.b << ": " << percent(p.overlap_a) << " of " << p.a
                << "'s fingerprints in " << p.b << "'s, " << percent(p.overlap_b) << " of " << p.b
                << "'s in " << p.a << "'s (" << page << ")\n";
      jpairs.push_back(pair_json(p, page));
      rows << "<tr><td>" << xml_escape(ex.name) << "</td><td>" << xml_escape(p.a) << "</td><td>"
           << xml_escape(p.b) << "</td><td>" << percent(p.overlap_a) << "</td><td>"
           << percent(p.overlap_b) << "</td><td><a href=\"" << page
           << "\">side by side</a></td></tr>";
    }
    jexercises.push_back(
        {{"exercise", ex.name}, {"submissions", ex.submissions.size()}, {"pairs", jpairs}});
  }
  json jskipped = json::array();
  for (const Skipped& s : skipped) {
    std::cout << "skipped " << s.student << "'s " << s.exercise << ".cpp: " << s.reason << "\n";
    jskipped.push_back({{"student", s.student}, {"exercise", s.exercise}, {"reason", s.reason}});
  }
  const json report = {{"notice", kSimilarityNotice},
                       {"k", options.k},
                       {"w", options.w},
                       {"threshold", options.threshold},
                       {"min_shared", options.min_shared},
                       {"max_common", options.max_common},
                       {"exercises", jexercises},
                       {"skipped", jskipped}};
  std::ofstream(out / "similarity.json")
      << report.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  std::ofstream(out / "similarity.html") << index_page(rows.str(), options, flagged);
  std::cout << "wrote " << (out / "similarity.json").string() << ", "
            << (out / "similarity.html").string() << " and " << flagged << " side-by-side "
            << (flagged == 1 ? "page" : "pages") << " in " << (out / "pairs").string() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Flags pairs of submissions whose code for an exercise is nearly the same once the "
      "template's stub is removed (winnowed token fingerprints, as MOSS). It flags, it "
      "does not judge."};
  xenc_app::add_version(app, "xenc-grade-similar");
  std::string submissions, template_dir, output = "similarity";
  grade::SimilarityOptions options;
  app.add_option("SUBMISSIONS_DIR", submissions, "one sub-folder per student (as xenc-grade-all)")
      ->required()
      ->check(CLI::ExistingDirectory);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path installed_template = (ec ? fs::current_path() : exe.parent_path()) / ".." /
                                      "share" / "xencoder" / "assignment" / "template";
  app.add_option("--template", template_dir,
                 "the assignment template whose exercises/ holds the stubs (default: the "
                 "installed one, " +
                     installed_template.lexically_normal().string() + ")");
  app.add_option("--output", output, "where similarity.json and the HTML pages go")
      ->capture_default_str();
  app.add_option("--threshold", options.threshold,
                 "flag a pair when at least this share of either file's fingerprints is in the "
                 "other")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  app.add_option("-k", options.k, "k-gram length in tokens: shorter shared runs never match")
      ->check(xenc_app::whole_range(1, 1000))
      ->capture_default_str();
  app.add_option("-w", options.w,
                 "window length: any shared run of at least w + k - 1 tokens is found")
      ->check(xenc_app::whole_range(1, 1000))
      ->capture_default_str();
  app.add_option("--min-shared", options.min_shared,
                 "a flagged pair shares at least this many fingerprints")
      ->check(xenc_app::whole_range(1, 1000000))
      ->capture_default_str();
  app.add_option("--max-common", options.max_common,
                 "a fingerprint in more than this many submissions of an exercise is ignored, "
                 "as the stub's (MOSS's -m); 0: no limit")
      ->check(xenc_app::whole_range(0, 1000000))
      ->capture_default_str();
  app.add_option("--max-bytes", options.max_file_bytes,
                 "a larger file is skipped (and named), not compared")
      ->check(xenc_app::whole_range(1, std::int64_t(1) << 30))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (template_dir.empty()) template_dir = installed_template.lexically_normal().string();
  if (!fs::is_directory(fs::path(template_dir) / "exercises")) {
    std::cerr << "xenc-grade-similar: no exercises/ folder in the template " << template_dir
              << " (give --template DIR)\n";
    return 2;
  }
  std::vector<Skipped> skipped;
  std::vector<ExerciseReport> reports;
  try {
    reports = compare_class(template_dir, submissions, options, skipped);
  } catch (const std::exception& e) {
    std::cerr << "xenc-grade-similar: " << e.what() << "\n";
    return 2;
  }
  write_report(output, reports, skipped, options);
  return 0;
}

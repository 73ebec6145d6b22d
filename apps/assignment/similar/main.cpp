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
#include "options.hpp"

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
                  const std::vector<Skipped>& skipped, const grade::SimilarityOptions& options,
                  const json& settings) {
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
  json report = settings;  // the records' echo (options.hpp)
  report["notice"] = kSimilarityNotice;
  report["exercises"] = jexercises;
  report["skipped"] = jskipped;
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
  grade_similar::CommandLine o;
  const auto records = grade_similar::option_records();
  xenc_app::add_options(app, o, records);
  CLI11_PARSE(app, argc, argv);
  if (!fs::is_directory(o.submissions)) {
    std::cerr << "xenc-grade-similar: SUBMISSIONS_DIR " << o.submissions
              << " is not a folder (one sub-folder per student)\n";
    return 2;
  }
  if (o.template_dir.empty()) {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    o.template_dir = ((ec ? fs::current_path() : exe.parent_path()) / ".." / "share" / "xencoder" /
                      "assignment" / "template")
                         .lexically_normal()
                         .string();
  }
  if (!fs::is_directory(fs::path(o.template_dir) / "exercises")) {
    std::cerr << "xenc-grade-similar: no exercises/ folder in the template " << o.template_dir
              << " (give --template DIR)\n";
    return 2;
  }
  std::vector<Skipped> skipped;
  std::vector<ExerciseReport> reports;
  try {
    reports = compare_class(o.template_dir, o.submissions, o.similarity, skipped);
  } catch (const std::exception& e) {
    std::cerr << "xenc-grade-similar: " << e.what() << "\n";
    return 2;
  }
  write_report(o.output, reports, skipped, o.similarity, xenc_app::echo_options(o, records));
  return 0;
}

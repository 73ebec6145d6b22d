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
#include "options.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
namespace grade = xenc::grade;

namespace {

// What every output says first: the report's limits, in one place.
const char* const kNotice =
    "This report flags, it does not judge: a flagged pair shares much of its code once the "
    "template's stub is removed, and two correct solutions of a short exercise can be alike. "
    "Read each pair side by side before drawing any conclusion.";

struct Skipped {
  std::string student, exercise, reason;
};

// One exercise: its submissions (the students who handed in a file) and the flagged pairs.
struct ExerciseReport {
  std::string name;
  std::vector<grade::Submission> submissions;
  std::vector<grade::SimilarPair> pairs;
};

// At most cap + 1 bytes of a file: one that grows after its size was checked (or reports none,
// as /proc's do) still cannot make us read more.
std::string read_at_most(const fs::path& p, std::size_t cap) {
  std::ifstream in(p, std::ios::binary);
  std::string s(cap + 1, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return s;
}

std::string percent(double share) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(0) << share * 100.0 << "%";
  return s.str();
}

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A source as HTML, the regions inside <mark>.
std::string highlighted(const std::string& source, const std::vector<grade::Region>& regions) {
  std::string out;
  std::size_t at = 0;
  for (const grade::Region& r : regions) {
    out += html_escape(source.substr(at, r.begin - at));
    out += "<mark>" + html_escape(source.substr(r.begin, r.end - r.begin)) + "</mark>";
    at = r.end;
  }
  return out + html_escape(source.substr(at));
}

const char* const kStyle =
    "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:.3em .6em;vertical-align:top}"
    "pre{font-size:12px;margin:0;white-space:pre-wrap}mark{background:#ffe08a}"
    ".notice{background:#eef4ff;border:1px solid #99b;padding:.6em;max-width:60em}</style>";

std::string pair_page(const ExerciseReport& ex, const grade::SimilarPair& p) {
  auto source_of = [&](const std::string& who) {
    for (const grade::Submission& s : ex.submissions)
      if (s.student == who) return s.source;
    return std::string();
  };
  std::ostringstream h;
  h << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" << html_escape(ex.name) << ": "
    << html_escape(p.a) << " and " << html_escape(p.b) << "</title>" << kStyle
    << "</head><body><h1>" << html_escape(ex.name) << ": " << html_escape(p.a) << " and "
    << html_escape(p.b) << "</h1><p class=\"notice\">" << kNotice << "</p><p>"
    << percent(p.overlap_a) << " of " << html_escape(p.a) << "'s fingerprints are in "
    << html_escape(p.b) << "'s file, " << percent(p.overlap_b) << " of " << html_escape(p.b)
    << "'s in " << html_escape(p.a) << "'s (" << p.shared
    << " shared). Highlighted: code both files have, the stub's removed.</p><table><tr><th>"
    << html_escape(p.a) << "</th><th>" << html_escape(p.b) << "</th></tr><tr><td><pre>"
    << highlighted(source_of(p.a), p.regions_a) << "</pre></td><td><pre>"
    << highlighted(source_of(p.b), p.regions_b) << "</pre></td></tr></table></body></html>\n";
  return h.str();
}

json regions_json(const std::vector<grade::Region>& regions) {
  json out = json::array();
  for (const grade::Region& r : regions) out.push_back({r.begin, r.end});
  return out;
}

json pair_json(const grade::SimilarPair& p, const std::string& page) {
  return {{"a", p.a},
          {"b", p.b},
          {"overlap_a", p.overlap_a},
          {"overlap_b", p.overlap_b},
          {"shared", p.shared},
          {"fingerprints_a", p.fingerprints_a},
          {"fingerprints_b", p.fingerprints_b},
          {"regions_a", regions_json(p.regions_a)},
          {"regions_b", regions_json(p.regions_b)},
          {"page", page}};
}

std::string index_page(const std::string& rows, const grade::SimilarityOptions& options,
                       std::size_t flagged) {
  std::ostringstream h;
  h << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Similar submissions</title>"
    << kStyle << "</head><body><h1>Similar submissions</h1><p class=\"notice\">" << kNotice
    << "</p><p>k = " << options.k << ", w = " << options.w << ", threshold "
    << percent(options.threshold) << ": " << flagged << (flagged == 1 ? " pair" : " pairs")
    << " flagged.</p><table><tr><th>exercise</th><th>a</th><th>b</th><th>of a's in b</th>"
    << "<th>of b's in a</th><th></th></tr>" << rows << "</table></body></html>\n";
  return h.str();
}

// Steps 1 and 2: the exercises (the template's stubs) and the students, sorted; per exercise the
// files handed in (each file's size checked before it is read: a larger one is skipped), then
// the flagged pairs.
std::vector<ExerciseReport> compare_class(const fs::path& template_dir, const fs::path& class_dir,
                                          const grade::SimilarityOptions& options,
                                          std::vector<Skipped>& skipped) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(template_dir / "exercises"))
    if (e.path().extension() == ".cpp") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  std::vector<fs::path> students;
  for (const auto& e : fs::directory_iterator(class_dir))
    if (e.is_directory()) students.push_back(e.path());
  std::sort(students.begin(), students.end());
  std::vector<ExerciseReport> reports;
  for (const std::string& name : names) {
    ExerciseReport ex;
    ex.name = name;
    for (const fs::path& student : students) {
      fs::path handed = student / "exercises" / (name + ".cpp");
      if (!fs::is_regular_file(handed)) handed = student / (name + ".cpp");
      if (!fs::is_regular_file(handed)) continue;
      const std::string who = student.filename().string();
      const std::uintmax_t bytes = fs::file_size(handed);
      std::string source;
      if (bytes <= options.max_file_bytes) source = read_at_most(handed, options.max_file_bytes);
      if (bytes > options.max_file_bytes || source.size() > options.max_file_bytes) {
        skipped.push_back({who, name,
                           std::to_string(std::max<std::uintmax_t>(bytes, source.size())) +
                               " bytes, more than the limit of " +
                               std::to_string(options.max_file_bytes) + " (--max-bytes)"});
        continue;
      }
      ex.submissions.push_back({who, std::move(source)});
    }
    const fs::path stub_file = template_dir / "exercises" / (name + ".cpp");
    const std::string stub = read_at_most(stub_file, options.max_file_bytes);
    if (stub.size() > options.max_file_bytes)
      throw std::runtime_error("the template's stub " + stub_file.string() + " has " +
                               std::to_string(fs::file_size(stub_file)) +
                               " bytes, more than the limit of " +
                               std::to_string(options.max_file_bytes) + " (--max-bytes)");
    ex.pairs = grade::similar_pairs(ex.submissions, stub, options);
    reports.push_back(std::move(ex));
  }
  return reports;
}

// Step 3: the report on stdout, similarity.json, similarity.html and one page per pair.
void write_report(const fs::path& out, const std::vector<ExerciseReport>& reports,
                  const std::vector<Skipped>& skipped, const grade::SimilarityOptions& options,
                  const json& settings) {
  fs::remove_all(out / "pairs");
  fs::create_directories(out / "pairs");
  std::cout << kNotice << "\n";
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
      const std::string page = "pairs/" + ex.name + "-" + std::to_string(n + 1) + ".html";
      std::ofstream(out / page) << pair_page(ex, p);
      std::cout << "  " << p.a << " and " << p.b << ": " << percent(p.overlap_a) << " of " << p.a
                << "'s fingerprints in " << p.b << "'s, " << percent(p.overlap_b) << " of " << p.b
                << "'s in " << p.a << "'s (" << page << ")\n";
      jpairs.push_back(pair_json(p, page));
      rows << "<tr><td>" << html_escape(ex.name) << "</td><td>" << html_escape(p.a) << "</td><td>"
           << html_escape(p.b) << "</td><td>" << percent(p.overlap_a) << "</td><td>"
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
  report["notice"] = kNotice;
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

// See similarity_pages.hpp.
#include "similarity_pages.hpp"

#include <xenc/viz/svg.hpp>  // xml_escape

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;
using nlohmann::json;
namespace grade = xenc::grade;
using xenc::viz::xml_escape;

namespace xenc_assignment {

const char* const kSimilarityNotice =
    "This report flags, it does not judge: a flagged pair shares much of its code once the "
    "template's stub is removed, and two correct solutions of a short exercise can be alike. "
    "Read each pair side by side before drawing any conclusion.";

const char* const kPageStyle =
    "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:.3em .6em;vertical-align:top}"
    "pre{font-size:12px;margin:0;white-space:pre-wrap}mark{background:#ffe08a}"
    ".notice{background:#eef4ff;border:1px solid #99b;padding:.6em;max-width:60em}</style>";

namespace {

// At most cap + 1 bytes of a file: one that grows after its size was checked (or reports none,
// as /proc's do) still cannot make us read more.
std::string read_at_most(const fs::path& p, std::size_t cap) {
  std::ifstream in(p, std::ios::binary);
  std::string s(cap + 1, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return s;
}

// A source as HTML, the regions inside <mark>.
std::string highlighted(const std::string& source, const std::vector<grade::Region>& regions) {
  std::string out;
  std::size_t at = 0;
  for (const grade::Region& r : regions) {
    out += xml_escape(source.substr(at, r.begin - at));
    out += "<mark>" + xml_escape(source.substr(r.begin, r.end - r.begin)) + "</mark>";
    at = r.end;
  }
  return out + xml_escape(source.substr(at));
}

json regions_json(const std::vector<grade::Region>& regions) {
  json out = json::array();
  for (const grade::Region& r : regions) out.push_back({r.begin, r.end});
  return out;
}

// One exercise's files handed in, in the students' order.
std::vector<grade::Submission> handed_in(const std::string& name,
                                         const std::vector<fs::path>& students,
                                         const grade::SimilarityOptions& options,
                                         std::vector<Skipped>& skipped) {
  std::vector<grade::Submission> out;
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
    out.push_back({who, std::move(source)});
  }
  return out;
}

}  // namespace

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
    ex.submissions = handed_in(name, students, options, skipped);
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

std::string percent(double share) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(0) << share * 100.0 << "%";
  return s.str();
}

std::string pair_page(const ExerciseReport& ex, const grade::SimilarPair& p) {
  auto source_of = [&](const std::string& who) {
    for (const grade::Submission& s : ex.submissions)
      if (s.student == who) return s.source;
    return std::string();
  };
  std::ostringstream h;
  h << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" << xml_escape(ex.name) << ": "
    << xml_escape(p.a) << " and " << xml_escape(p.b) << "</title>" << kPageStyle
    << "</head><body><h1>" << xml_escape(ex.name) << ": " << xml_escape(p.a) << " and "
    << xml_escape(p.b) << "</h1><p class=\"notice\">" << kSimilarityNotice << "</p><p>"
    << percent(p.overlap_a) << " of " << xml_escape(p.a) << "'s fingerprints are in "
    << xml_escape(p.b) << "'s file, " << percent(p.overlap_b) << " of " << xml_escape(p.b)
    << "'s in " << xml_escape(p.a) << "'s (" << p.shared
    << " shared). Highlighted: code both files have, the stub's removed.</p><table><tr><th>"
    << xml_escape(p.a) << "</th><th>" << xml_escape(p.b) << "</th></tr><tr><td><pre>"
    << highlighted(source_of(p.a), p.regions_a) << "</pre></td><td><pre>"
    << highlighted(source_of(p.b), p.regions_b) << "</pre></td></tr></table></body></html>\n";
  return h.str();
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

std::string pair_page_path(const std::string& exercise, std::size_t n) {
  return "pairs/" + exercise + "-" + std::to_string(n) + ".html";
}

}  // namespace xenc_assignment

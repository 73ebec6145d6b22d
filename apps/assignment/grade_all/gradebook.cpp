#include "gradebook.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace xenc_grade_all {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::vector<CsvRecord> parse_csv(const std::string& text) {
  std::vector<CsvRecord> records;
  CsvRecord rec;
  std::string field;
  bool quoted = false, after_quote = false;
  std::size_t start = 0;
  auto end_record = [&](std::size_t end) {
    rec.fields.push_back(field);
    rec.raw = text.substr(start, end - start);
    records.push_back(rec);
    rec = CsvRecord{}, field.clear(), after_quote = false, start = end;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c != '"') {
        field += c;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        field += '"', ++i;
      } else {
        quoted = false, after_quote = true;
      }
    } else if (c == ',') {
      rec.fields.push_back(field), field.clear(), after_quote = false;
    } else if (c == '\n') {
      if (!field.empty() && field.back() == '\r' && !after_quote) field.pop_back();
      end_record(i + 1);
    } else if (c == '"' && field.empty() && !after_quote) {
      quoted = true;
    } else if (after_quote && c != '\r') {
      throw std::invalid_argument("parse_csv: text after a closing quote at byte " +
                                  std::to_string(i) + ", expected a comma or a line break");
    } else if (!after_quote) {
      field += c;
    }
  }
  if (quoted)
    throw std::invalid_argument("parse_csv: a quoted field is not closed at the end of the text (" +
                                std::to_string(text.size()) + " bytes)");
  if (start < text.size()) end_record(text.size());
  return records;
}

std::string merge_grades(const std::string& old_csv, const std::string& header,
                         const std::map<std::string, std::string>& fresh) {
  std::map<std::string, std::string> rows;
  const std::vector<CsvRecord> old = parse_csv(old_csv);
  if (!old.empty() && old.front().raw != header)
    throw std::runtime_error("the existing grades.csv has the columns\n  " + old.front().raw +
                             "and this run's are\n  " + header +
                             "so its rows cannot be kept: grade every student (without --only), or "
                             "write to another --output");
  for (std::size_t i = 1; i < old.size(); ++i)
    if (!old[i].fields.empty() && !fresh.count(old[i].fields.front()))
      rows[old[i].fields.front()] = old[i].raw;
  for (const auto& [who, row] : fresh) rows[who] = row;
  std::string out = header;
  for (const auto& [who, row] : rows) out += row;
  return out;
}

std::string fnv1a_hex(const std::string& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

namespace {
std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

std::string settings_stamp(const fs::path& settings, const fs::path& template_dir) {
  std::string stamp = settings.empty() ? std::string("settings:none")
                                       : settings.filename().string() + ":" +
                                             fnv1a_hex(file_bytes(settings)).substr(0, 8);
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(template_dir);
       it != fs::recursive_directory_iterator(); ++it) {
    const fs::path rel = fs::relative(it->path(), template_dir);
    if (it->is_directory() && rel == "build") it.disable_recursion_pending();
    if (it->is_regular_file() && *rel.begin() != "build") files.push_back(rel);
  }
  std::sort(files.begin(), files.end());
  std::string all;
  for (const fs::path& f : files) {
    const std::string body = file_bytes(template_dir / f);
    all += f.generic_string() + '\0' + std::to_string(body.size()) + '\0' + body;
  }
  return stamp + " template:" + fnv1a_hex(all).substr(0, 8);
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string cut_status(const std::string& status, std::size_t limit) {
  if (status.size() <= limit) return status;
  // at the last space within the limit, so that no word (and no UTF-8 character) is split;
  // without one, at the last character boundary
  std::size_t at = status.rfind(' ', limit);
  if (at == std::string::npos || at == 0) {
    at = limit;
    while (at > 0 && (static_cast<unsigned char>(status[at]) & 0xC0) == 0x80) --at;
  }
  return status.substr(0, at) + " ...";
}

std::string exercise_note(const std::string& exercise, const std::string& status,
                          const std::vector<std::string>& mistakes) {
  std::string note = exercise + ": " + cut_status(status, 160);
  if (mistakes.empty()) return note;
  note += " (the known mistake: ";
  for (std::size_t i = 0; i < mistakes.size(); ++i) note += (i ? "; " : "") + mistakes[i];
  return note + ")";
}

namespace {
// Each student's folder name and points from grades.csv's text.
std::vector<std::pair<std::string, std::string>> students_points(const std::string& grades_csv) {
  const std::vector<CsvRecord> records = parse_csv(grades_csv);
  if (records.empty() || records.front().fields.size() < 2 ||
      records.front().fields[0] != "student" || records.front().fields[1] != "points")
    throw std::runtime_error(
        "grades.csv does not start with the columns student,points (its first line: " +
        (records.empty() ? std::string("none") : records.front().raw) + ")");
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 1; i < records.size(); ++i)
    if (records[i].fields.size() >= 2) out.emplace_back(records[i].fields[0], records[i].fields[1]);
  return out;
}
}  // namespace

std::string canvas_csv(const std::string& grades_csv, const std::string& assignment) {
  std::string out = "Student,ID,SIS User ID,SIS Login ID,Section," + csv_field(assignment) + "\n";
  for (const auto& [who, points] : students_points(grades_csv))
    out += csv_field(who) + ",,," + csv_field(who) + ",," + points + "\n";
  return out;
}

std::string moodle_csv(const std::string& grades_csv, const std::string& assignment) {
  std::string out = "username," + csv_field(assignment) + "\n";
  for (const auto& [who, points] : students_points(grades_csv))
    out += csv_field(who) + "," + points + "\n";
  return out;
}

}  // namespace xenc_grade_all

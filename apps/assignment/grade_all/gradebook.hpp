// xenc-grade-all's tables: grades.csv (written, read back and merged on a regrade with --only),
// its per-row stamp (when and with which settings a row was graded) and the course platforms'
// gradebooks made from it (Canvas, Moodle). Pure functions of text, so test_grade_gradebook
// checks them without grading anyone.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace xenc_grade_all {

/// A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s);

/// A CSV text split into records: each record's exact bytes (with its line ending) and its
/// fields. A quoted field may hold commas, doubled quotes and line breaks. Throws
/// std::invalid_argument ("parse_csv: ...") for a quote left open or text after a closing quote.
struct CsvRecord {
  std::string raw;
  std::vector<std::string> fields;
};
std::vector<CsvRecord> parse_csv(const std::string& text);

/// grades.csv after a regrade of some students: `header` (the header line, with its newline),
/// then every row of `old_csv` whose student (first field) is not in `fresh`, byte for byte, and
/// every row of `fresh` (student -> row, with its newline), ordered by student name. An empty
/// `old_csv` keeps nothing. Throws std::runtime_error when `old_csv`'s header is not `header`
/// (other exercises or columns: its rows cannot be kept), naming both.
std::string merge_grades(const std::string& old_csv, const std::string& header,
                         const std::map<std::string, std::string>& fresh);

/// FNV-1a, 64 bits, as 16 hex digits (the settings' stamp; not a cryptographic hash).
std::string fnv1a_hex(const std::string& bytes);

/// The settings stamp of a row: "grading.json:<hash> template:<hash>" (the settings file's name
/// and the first 8 hex digits of its content's hash; "none" without settings), the template's
/// hash over every file's relative path and content, in path order, its build/ folder left out.
std::string settings_stamp(const std::filesystem::path& settings,
                           const std::filesystem::path& template_dir);

/// Now, UTC, ISO 8601 to the second: "2026-11-27T14:05:09Z".
std::string utc_now();

/// `status` when it has at most `limit` bytes; else its text up to the last space within the
/// limit (no word and no UTF-8 character split; without a space, up to the last character
/// boundary), then " ...": the full text is in the student's report.
std::string cut_status(const std::string& status, std::size_t limit);

/// The notes of one exercise that did not pass: "softmax: failed" and, when the grader named a
/// museum exhibit, " (the known mistake: <title>[; <title>...])"; the status is cut to at most
/// 160 bytes (cut_status).
std::string exercise_note(const std::string& exercise, const std::string& status,
                          const std::vector<std::string>& mistakes);

/// Canvas's gradebook import from grades.csv's text: "Student,ID,SIS User ID,SIS Login ID,
/// Section,<assignment>", one row per student with the folder name as Student and SIS Login ID
/// and the points (empty when not graded: Canvas leaves that grade as it is). Throws
/// std::runtime_error when grades.csv has no "student" and "points" columns.
std::string canvas_csv(const std::string& grades_csv, const std::string& assignment);

/// Moodle's CSV grade import: "username,<assignment>", one row per student (the folder name,
/// then the points, empty when not graded). Throws as canvas_csv.
std::string moodle_csv(const std::string& grades_csv, const std::string& assignment);

}  // namespace xenc_grade_all

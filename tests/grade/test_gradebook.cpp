// xenc-grade-all's tables (apps/assignment/grade_all/gradebook.hpp): CSV fields and records as
// RFC 4180 writes them (the expected fields are what Python's csv module reads from the same
// text), the merge of a regrade (the other rows byte for byte), the settings stamp (FNV-1a's
// published test vectors), the notes naming a museum exhibit, and the Canvas and Moodle files.
#include <gtest/gtest.h>

#include <unistd.h>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <stdexcept>
#include <string>

#include "../../apps/assignment/grade_all/gradebook.hpp"

namespace fs = std::filesystem;
using namespace xenc_grade_all;

namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

TEST(Gradebook, CsvFieldQuotesOnlyWhenNeeded) {
  EXPECT_EQ(csv_field("a_correct"), "a_correct");
  EXPECT_EQ(csv_field("x, y"), "\"x, y\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
}

TEST(Gradebook, ParseCsvKeepsEachRecordsBytes) {
  // Python: csv.reader -> [['student', 'notes'], ['a', 'x, "y"\nz'], ['b', '']]
  const std::string text = "student,notes\na,\"x, \"\"y\"\"\nz\"\nb,\n";
  const std::vector<CsvRecord> r = parse_csv(text);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].fields, (std::vector<std::string>{"student", "notes"}));
  EXPECT_EQ(r[1].fields, (std::vector<std::string>{"a", "x, \"y\"\nz"}));
  EXPECT_EQ(r[1].raw, "a,\"x, \"\"y\"\"\nz\"\n");
  EXPECT_EQ(r[2].fields, (std::vector<std::string>{"b", ""}));
  EXPECT_EQ(r[0].raw + r[1].raw + r[2].raw, text);
  // a last line without its newline is still a record
  EXPECT_EQ(parse_csv("a,1").at(0).fields, (std::vector<std::string>{"a", "1"}));
}

TEST(Gradebook, ParseCsvRefusesBrokenQuotes) {
  EXPECT_EQ(message_of([] { parse_csv("a,\"open\n"); }),
            "parse_csv: a quoted field is not closed at the end of the text (8 bytes)");
  EXPECT_EQ(message_of([] { parse_csv("a,\"x\"y\n"); }),
            "parse_csv: text after a closing quote at byte 5, expected a comma or a line break");
}

const std::string header = "student,points,softmax,notes,graded_at,settings\n";

TEST(Gradebook, MergeKeepsTheOtherRowsByteForByte) {
  const std::string a = "a_correct,2,2,,2026-11-27T10:00:00Z,grading.json:11111111 template:2\n";
  const std::string b = "b_wrong,1,1,\"softmax: failed\nsecond line\",2026-11-27T10:00:01Z,s\n";
  const std::string c = "c_crash,0,0,\"softmax: failed, crashed\",2026-11-27T10:00:02Z,s\n";
  const std::string b2 = "b_wrong,2,2,,2026-11-27T11:00:00Z,s\n";
  const std::string d = "d_new,0,0,,2026-11-27T11:00:01Z,s\n";
  EXPECT_EQ(merge_grades(header + a + b + c, header, {{"b_wrong", b2}, {"d_new", d}}),
            header + a + b2 + c + d);
  // nothing to merge with: the fresh rows alone, by name
  EXPECT_EQ(merge_grades("", header, {{"d_new", d}, {"b_wrong", b2}}), header + b2 + d);
}

TEST(Gradebook, MergeRefusesOtherColumns) {
  const std::string old =
      "student,points,softmax,attention,notes,graded_at,settings\na,1,1,0,,t,s\n";
  const std::string m = message_of([&] { merge_grades(old, header, {}); });
  EXPECT_NE(m.find("student,points,softmax,attention,notes"), std::string::npos) << m;
  EXPECT_NE(m.find("this run's are\n  student,points,softmax,notes"), std::string::npos) << m;
  EXPECT_NE(m.find("grade every student (without --only)"), std::string::npos) << m;
}

TEST(Gradebook, Fnv1aPublishedVectors) {
  EXPECT_EQ(fnv1a_hex(""), "cbf29ce484222325");
  EXPECT_EQ(fnv1a_hex("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(fnv1a_hex("foobar"), "85944171f73967e8");
}

TEST(Gradebook, SettingsStampNamesTheFileAndFollowsTheTemplate) {
  const fs::path dir = fs::temp_directory_path() / ("test_gradebook_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "template" / "exercises");
  fs::create_directories(dir / "template" / "build");
  std::ofstream(dir / "my_grading.json") << "{\"hints\": \"off\"}\n";  // FNV-1a: e72a3293...
  std::ofstream(dir / "template" / "CMakeLists.txt") << "project(a)\n";
  std::ofstream(dir / "template" / "exercises" / "softmax.cpp") << "stub\n";
  const std::string s1 = settings_stamp(dir / "my_grading.json", dir / "template");
  EXPECT_TRUE(std::regex_match(s1, std::regex("my_grading\\.json:e72a3293 template:[0-9a-f]{8}")))
      << s1;
  std::ofstream(dir / "template" / "build" / "grade") << "built\n";  // build/ does not count
  EXPECT_EQ(settings_stamp(dir / "my_grading.json", dir / "template"), s1);
  std::ofstream(dir / "template" / "exercises" / "softmax.cpp") << "stub changed\n";
  const std::string s2 = settings_stamp(dir / "my_grading.json", dir / "template");
  EXPECT_EQ(s2.substr(0, 22), s1.substr(0, 22));
  EXPECT_NE(s2, s1);
  EXPECT_EQ(settings_stamp("", dir / "template").substr(0, 23), "settings:none template:");
  fs::remove_all(dir);
}

TEST(Gradebook, UtcNowIsIso8601) {
  const std::string now = utc_now();
  ASSERT_TRUE(std::regex_match(now, std::regex("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ")))
      << now;
  std::tm tm{};
  strptime(now.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  EXPECT_LE(std::abs(double(timegm(&tm) - std::time(nullptr))), 60.0) << now;
}

TEST(Gradebook, ExerciseNoteNamesTheMistake) {
  EXPECT_EQ(exercise_note("softmax", "failed", {}), "softmax: failed");
  EXPECT_EQ(exercise_note("softmax", "failed", {"softmax without the max subtraction"}),
            "softmax: failed (the known mistake: softmax without the max subtraction)");
  EXPECT_EQ(exercise_note("attention", "failed", {"mask after the softmax", "no 1/√Dh scale"}),
            "attention: failed (the known mistake: mask after the softmax; no 1/√Dh scale)");
  EXPECT_EQ(exercise_note("x", std::string(300, 'e'), {}), "x: " + std::string(160, 'e') + " ...");
}

TEST(Gradebook, LongStatusIsCutBetweenWords) {
  const std::string words = "failed: does not link: exercises/merge_heads.cpp does not define";
  EXPECT_EQ(cut_status(words, 100), words);
  EXPECT_EQ(cut_status(words, 30), "failed: does not link: ...");
  EXPECT_EQ(cut_status(words, 21), "failed: does not ...");  // "link:" ends at byte 22
  // no space: cut at a character boundary, never inside "é" (2 bytes) or "✘" (3 bytes)
  EXPECT_EQ(cut_status("ééééé", 5), "éé ...");
  EXPECT_EQ(cut_status("✘✘✘", 4), "✘ ...");
}

const std::string grades =
    "student,points,max_points,softmax,notes,graded_at,settings\n"
    "a_correct,2,2,2,,t,s\n"
    "\"doe, jane\",1.5,2,1.5,\"softmax: failed\nx\",t,s\n"
    "e_killed,,,,\"not graded: grade was killed\",t,s\n";

TEST(Gradebook, CanvasImportColumns) {
  EXPECT_EQ(canvas_csv(grades, "Assignment 1"),
            "Student,ID,SIS User ID,SIS Login ID,Section,Assignment 1\n"
            "a_correct,,,a_correct,,2\n"
            "\"doe, jane\",,,\"doe, jane\",,1.5\n"
            "e_killed,,,e_killed,,\n");
}

TEST(Gradebook, MoodleImportColumns) {
  EXPECT_EQ(moodle_csv(grades, "xencoder, part 1"),
            "username,\"xencoder, part 1\"\n"
            "a_correct,2\n"
            "\"doe, jane\",1.5\n"
            "e_killed,\n");
  EXPECT_EQ(message_of([] { moodle_csv("name,score\na,1\n", "x"); }),
            "grades.csv does not start with the columns student,points (its first line: "
            "name,score\n)");
}

}  // namespace

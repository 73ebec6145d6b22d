// xenc-grade-all: grades a folder of submissions, one sub-folder per student, into a CSV of points
// and one report per student.
//
//     xenc-grade-all SUBMISSIONS_DIR [--settings grading.json] [--output DIR]
//                    [--template DIR] [--prefix XENCODER_PREFIX] [--only STUDENT...]
//                    [--assignment-name NAME]
//     xenc-grade-all --exercises [--settings grading.json]
//     xenc-grade-all --gradescope-bundle OUT.zip [--template DIR] [--settings grading.json]
//                    [--source XENCODER_SOURCE_DIR]
//
// --exercises prints the grader's registry as JSON, with the teacher's settings applied: the one
// list the notebooks' exercise cells are made from and checked against
// (notebooks/tools/course_cells.py --registry), so one grading.json makes the class's notebooks:
//     {"exercises": [{"name": "softmax", "signature": "...", "points": 2, "order": 1}, ...],
//      "not_selected": ["sinusoidal_table", ...],   // registered, left out by the settings
//      "hints": "full" | "brief" | "off"}
//
// The template is --template, else the folder of --settings when it is an assignment (the
// teacher's copy: its exercises are the course's when grading.json has no "exercises"), else the
// installed one; --exercises lists the exercises that folder holds.
// A submission is SUBMISSIONS_DIR/<student>/exercises/<name>.cpp (or <student>/<name>.cpp);
// an exercise a student did not hand in is graded as the template's stub. The template is copied
// and built once (the trusted grade program and each exercise's child object), and kept in the
// cache (--cache, default DIR/cache) with each linked exercise program, so a regrade compiles only
// what changed (xenc/grade/cache.hpp);
// each student's files are copied into a folder of their own, and grade compiles, links and runs
// each exercise in its own sandbox (xenc/grade/sandbox.hpp: bubblewrap's namespaces where it
// starts), sends it each check's inputs and decides every verdict itself, so a student's code can
// neither forge a grade nor touch another student, the settings or the reports. One student per
// core is graded at a time (--jobs). grade answers on its stdout only; this program writes
// DIR/grades.csv, DIR/<student>.txt (the report the student reads) and DIR/<student>.json, after
// removing the student's reports of an earlier run. A failed build's log:
// DIR/grade-logs/<student>/<name>.log. Each CSV row says when (UTC) and with which settings it
// was graded; --only regrades the students named and keeps the other rows byte for byte.
// DIR/canvas.csv and DIR/moodle.csv are the platforms' gradebook imports, made from grades.csv
// (gradebook.hpp). From the same answers, the class report: DIR/class.html and DIR/class.json
// (class_report.hpp). --gradescope-bundle writes Gradescope's autograder zip (bundle.hpp).
#include <CLI/CLI.hpp>
#include <xenc/grade/cache.hpp>
#include <xenc/grade/exercises.hpp>
#include <xenc/grade/runner.hpp>
#include <xenc/grade/sandbox.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/cli.hpp"
#include "bundle.hpp"
#include "class_report.hpp"
#include "gradebook.hpp"
#include "options.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Runs a build step (no tight limits: compilers need memory and time); its output on failure.
bool run_step(const std::vector<std::string>& args, std::string& output) {
  xenc::grade::Limits limits;
  limits.time_seconds = 1800;
  limits.memory_mib = std::size_t(1) << 16;
  limits.output_bytes = std::size_t(1) << 20;
  const xenc::grade::Outcome o = xenc::grade::run_isolated(args[0], args, limits);
  output = o.output;
  return o.exited && o.exit_code == 0;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

using xenc_grade_all::csv_field;

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

fs::path self_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() : exe.parent_path();
}

using grade_all::Options;

// --exercises: the registry as JSON with the teacher's settings applied (the chosen exercises
// with their points, and the names of the others: a notebook leaves those out, and still refuses
// a name the registry does not know). Returns the exit code.
int print_exercises(const std::string& settings, const std::vector<std::string>& in_template) {
  xenc::grade::Settings chosen;
  try {
    if (!settings.empty()) chosen = xenc::grade::read_settings(settings);
  } catch (const std::invalid_argument& e) {
    std::cerr << "xenc-grade-all: " << e.what() << "\n";
    return 2;
  }
  json list = json::array(), not_selected = json::array();
  for (const xenc::grade::ExerciseInfo& e : xenc::grade::exercises()) {
    double points = e.points;
    bool wanted = chosen.exercises.empty() &&
                  (in_template.empty() ||
                   std::find(in_template.begin(), in_template.end(), e.name) != in_template.end());
    for (const auto& [name, p] : chosen.exercises)
      if (name == e.name) wanted = true, points = p;
    if (wanted)
      list.push_back(
          {{"name", e.name}, {"signature", e.signature}, {"points", points}, {"order", e.order}});
    else
      not_selected.push_back(e.name);
  }
  std::cout << json{{"exercises", list},
                    {"not_selected", not_selected},
                    {"hints", xenc::grade::hint_level_name(chosen.hints)}}
                   .dump(1)
            << "\n";
  return 0;
}

// The exercises a template folder holds: the names of its exercises/*.cpp (none when it is not a
// template: no CMakeLists.txt or no exercises/).
std::vector<std::string> template_exercises(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::exists(dir / "CMakeLists.txt", ec) || !fs::is_directory(dir / "exercises", ec))
    return names;
  for (const auto& e : fs::directory_iterator(dir / "exercises", ec))
    if (e.path().extension() == ".cpp") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// What step 1 leaves for grading: the folders, the exercises' names and stubs, grade's path and
// the settings' arguments, the exercises grade grades (in its order).
struct Prepared {
  fs::path out, work, build, programs;  // programs: grade's build cache (empty: none)
  std::vector<std::string> names;
  std::map<std::string, std::string> stubs;
  std::string grade;
  std::vector<std::string> settings_args, graded_names;
  std::string stamp;  // the settings column of every row graded now (gradebook.hpp)
};

// What the template's build depends on: the template's files (not a grading.json), xencoder's
// installed headers, CMake files and libraries under the prefix, CMake, and Debian's package list.
std::string template_stamp(const Options& o, const std::string& cmake) {
  std::vector<std::string> lines;
  for (const auto& e : fs::recursive_directory_iterator(o.template_dir)) {
    const fs::path rel = fs::relative(e.path(), o.template_dir);
    if (!e.is_regular_file() || rel == "grading.json" || *rel.begin() == "build") continue;
    lines.push_back(rel.string() + " " + xenc::grade::file_digest(e.path().string()));
  }
  std::sort(lines.begin(), lines.end());
  std::string all = "prefix " + o.prefix + "\ncmake " + xenc::grade::file_digest(cmake) + "\n";
  for (const std::string& l : lines) all += l + "\n";
  const fs::path prefix(o.prefix);
  for (const fs::path& dir : {prefix / "include" / "xenc", prefix / "lib" / "cmake"})
    all += dir.string() + " " + xenc::grade::tree_stamp(dir.string()) + "\n";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(prefix / "lib", ec))
    if (e.path().filename().string().rfind("libxencoder", 0) == 0 && e.is_regular_file())
      all += e.path().string() + " " + xenc::grade::file_digest(e.path().string()) + "\n";
  struct stat st{};
  if (::stat("/var/lib/dpkg/status", &st) == 0)
    all +=
        "packages " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "\n";
  return all;
}

// 1. one copy of the template, configured and built once (the trusted half: grade and each
// exercise's child object), kept in the cache (DIR/cache/template) and built again only when the
// template, xencoder's install or the toolchain changed (template_stamp). Without the sandbox's
// namespaces a student's process could write there, so then it is built afresh in DIR/work and
// no cache is used. No student's process ever sees this folder, the settings or the reports:
// each exercise is compiled, linked and run in its own sandbox. Throws runtime_error with the
// message to print when the template does not build or grade cannot list its exercises.
Prepared prepare(const Options& o) {
  const std::string cmake = fs::exists(XENC_CMAKE) ? XENC_CMAKE : "/usr/bin/cmake";
  Prepared p;
  p.out = fs::absolute(o.output);
  fs::remove_all(p.out / "work");
  fs::create_directories(p.out / "work");
  // others may pass through (the sandbox binds a student's files from here as nobody when root
  // grades) but not list it
  const fs::perms pass = fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec;
  fs::permissions(p.out / "work", pass);
  const bool cached = xenc::grade::namespaces_unavailable().empty();
  const fs::path home = cached ? fs::absolute(o.cache) / "template" : p.out / "work";
  p.work = home / "assignment";
  p.build = home / "build";
  if (cached) {
    // a cache folder made here may be passed through, as DIR/work; one given is left as it is
    if (fs::create_directories(home.parent_path())) fs::permissions(home.parent_path(), pass);
    fs::create_directories(home);
    // one xenc-grade-all at a time per cache (held until this process ends)
    const int lock =
        ::open((home.parent_path() / "lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock < 0 || ::flock(lock, LOCK_EX) != 0)
      throw std::runtime_error("cannot lock the cache " + home.parent_path().string() + "\n");
    fs::permissions(home, pass);
    p.programs = home.parent_path() / "programs";
  }
  const std::string stamp = template_stamp(o, cmake);
  const bool reuse = cached && read_file(home / "stamp") == stamp && fs::exists(p.build / "grade");
  if (!reuse) {
    fs::remove(home / "stamp");
    fs::remove_all(p.work);
    fs::remove_all(p.build);
    fs::create_directories(p.work);
    // the template's files, its cmake/ and exercises/ (not a build, the settings, or the class's
    // submissions and grades, which a teacher's assignment folder may hold)
    for (const auto& e : fs::directory_iterator(o.template_dir)) {
      const std::string name = e.path().filename().string();
      if (e.is_regular_file() && name != "grading.json")
        fs::copy(e.path(), p.work / name);
      else if (e.is_directory() && (name == "cmake" || name == "exercises"))
        fs::copy(e.path(), p.work / name, fs::copy_options::recursive);
    }
  }
  for (const auto& e : fs::directory_iterator(p.work / "exercises"))
    if (e.path().extension() == ".cpp") p.names.push_back(e.path().stem().string());
  std::sort(p.names.begin(), p.names.end());
  for (const std::string& n : p.names) p.stubs[n] = read_file(p.work / "exercises" / (n + ".cpp"));
  std::string log;
  if (!reuse &&
      (!run_step({cmake, "-S", p.work.string(), "-B", p.build.string(), "-G", "Unix Makefiles",
                  "-DCMAKE_PREFIX_PATH=" + o.prefix},
                 log) ||
       !run_step({cmake, "--build", p.build.string(), "--", "-j" + std::to_string(o.jobs)}, log)))
    throw std::runtime_error("the template does not build against " + o.prefix + ":\n" + log);
  if (cached && !reuse) std::ofstream(home / "stamp", std::ios::binary) << stamp;
  p.grade = (p.build / "grade").string();
  if (!o.settings.empty()) p.settings_args = {"--settings", fs::absolute(o.settings).string()};
  std::vector<std::string> args = {p.grade, "--list"};
  args.insert(args.end(), p.settings_args.begin(), p.settings_args.end());
  std::string list;
  if (!run_step(args, list)) throw std::runtime_error("grade --list failed:\n" + list);
  std::istringstream in(list);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) p.graded_names.push_back(l);
  return p;
}

// One student's outcome: grade's answer, or why grade itself failed.
struct Row {
  std::string who, answer, failure;
};

// 2. one student: their files (or the stubs) copied into a folder of their own, graded by grade,
// which writes nothing but its answer on stdout; the reports are written by write_results.
Row grade_student(const Prepared& p, const fs::path& student,
                  const std::vector<std::string>& forwarded) {
  Row row;
  row.who = student.filename().string();
  // the earlier run's reports go first: a student whose grading fails never keeps them
  for (const char* ext : {".txt", ".json"}) fs::remove(p.out / (row.who + ext));
  const fs::path mine = p.out / "work" / "students" / row.who;
  fs::remove_all(mine);
  fs::create_directories(mine / "src" / "exercises");
  for (const std::string& n : p.names) {
    fs::path handed = student / "exercises" / (n + ".cpp");
    if (!fs::exists(handed)) handed = student / (n + ".cpp");
    std::ofstream(mine / "src" / "exercises" / (n + ".cpp"), std::ios::binary)
        << (fs::exists(handed) && !fs::is_directory(handed) ? read_file(handed) : p.stubs.at(n));
  }
  // a file that is not an exercise (Softmax.cpp, softmax.cc, softmax_é.cpp) becomes an empty file
  // of that name, so that grade names it, with the closest exercise, in the student's report
  const bool nested = fs::is_directory(student / "exercises");
  for (const xenc::grade::StrayFile& f :
       xenc::grade::stray_files((nested ? student / "exercises" : student).string(), p.names)) {
    const std::string ext = fs::path(f.file).extension().string();
    const bool source = ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".c++" ||
                        ext == ".C" || ext == ".cp" || ext == ".CPP" || ext == ".h" ||
                        ext == ".hpp" || ext == ".c";
    if (nested || source) std::ofstream(mine / "src" / "exercises" / f.file);
  }
  std::vector<std::string> args = {p.grade,
                                   "--format",
                                   "both",
                                   "--submission",
                                   (mine / "src").string(),
                                   "--scratch",
                                   (mine / "scratch").string(),
                                   "--logs",
                                   (p.out / "grade-logs" / row.who).string()};
  if (!p.programs.empty()) args.insert(args.end(), {"--cache", p.programs.string()});
  args.insert(args.end(), p.settings_args.begin(), p.settings_args.end());
  xenc::grade::Limits limits;
  limits.time_seconds = 3600;
  limits.memory_mib = std::size_t(1) << 16;
  limits.output_bytes = std::size_t(1) << 26;
  limits.file_mib = std::size_t(1) << 20;
  const xenc::grade::Outcome o = xenc::grade::run_isolated(p.grade, args, limits, forwarded);
  if (!o.exited || o.exit_code > 1)
    row.failure = "grade " + (o.exited ? "exited with code " + std::to_string(o.exit_code)
                                       : xenc::grade::describe_outcome(o, limits));
  row.answer = o.output;
  fs::remove_all(mine / "scratch");
  return row;
}

// Every student, `jobs` at a time (by default one per core).
std::vector<Row> grade_students(const Prepared& p, const std::vector<fs::path>& students,
                                unsigned jobs) {
  std::vector<Row> rows(students.size());
  // the sandbox's switches, which grade reads too (its report's Sandbox: lines are this output's)
  std::vector<std::string> forwarded;
  for (const char* name : {"XENC_GRADE_NO_NAMESPACES", "XENC_GRADE_NO_LANDLOCK"})
    if (const char* off = std::getenv(name)) forwarded.push_back(std::string(name) + "=" + off);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next++) < students.size();)
      rows[i] = grade_student(p, students[i], forwarded);
  };
  std::vector<std::thread> others;
  for (unsigned j = 1; j < jobs && j < students.size(); ++j) others.emplace_back(worker);
  worker();
  for (std::thread& t : others) t.join();
  return rows;
}

// One student's row of grades.csv and their two reports, from grade's answer; prints their
// line. Throws runtime_error (the CSV's note) when the student was not graded.
void write_student(const Prepared& p, const Row& row, std::ostream& table) {
  if (!row.failure.empty()) throw std::runtime_error(row.failure);
  json both;
  try {
    both = json::parse(row.answer);
  } catch (const json::exception&) {
    throw std::runtime_error("grade's answer is not JSON");
  }
  const json& r = both.at("json");
  const double points = r.at("points").get<double>();
  const double max_points = r.at("max_points").get<double>();
  std::map<std::string, std::pair<double, std::string>> by_name;
  for (const json& e : r.at("exercises"))
    by_name[e.at("name").get<std::string>()] = {e.at("points").get<double>(),
                                                e.at("status").get<std::string>()};
  std::ofstream(p.out / (row.who + ".json"))
      << r.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  std::ofstream(p.out / (row.who + ".txt")) << both.at("text").get<std::string>();
  table << "," << number(points) << "," << number(max_points);
  // the museum exhibits grade named, per exercise, whatever the students' hint level
  const json mistakes = both.value("mistakes", json::object());
  std::string notes;
  for (const std::string& n : p.graded_names) {
    table << "," << number(by_name[n].first);
    const std::string& st = by_name[n].second;
    if (st == "passed") continue;
    const std::vector<std::string> named =
        mistakes.value(n, json::array()).get<std::vector<std::string>>();
    notes += (notes.empty() ? "" : "; ") + xenc_grade_all::exercise_note(n, st, named);
  }
  table << "," << csv_field(notes);
  std::cout << row.who << ": " << number(points) << " of " << number(max_points) << " points\n";
  if (r.contains("not_exercises"))
    for (const json& f : r.at("not_exercises"))
      std::cout << "  " << row.who << ": " << f.at("message").get<std::string>() << "\n";
}

// grades.csv's header line: the student, the points, one column per graded exercise, the notes,
// when and with which settings the row was graded.
std::string grades_header(const Prepared& p) {
  std::string header = "student,points,max_points";
  for (const std::string& n : p.graded_names) header += "," + n;
  return header + ",notes,graded_at,settings\n";
}

// The students' folders to grade: all of SUBMISSIONS_DIR's, or --only's (each must be one of
// them). Throws runtime_error naming a folder that is not there.
std::vector<fs::path> chosen_students(const Options& o) {
  std::vector<fs::path> students;
  for (const std::string& who : o.only) {
    if (who.empty() || who.find('/') != std::string::npos ||
        !fs::is_directory(fs::path(o.submissions) / who))
      throw std::runtime_error("--only " + who + ": no student folder " +
                               (fs::path(o.submissions) / who).string());
    students.push_back(fs::path(o.submissions) / who);
  }
  if (o.only.empty())
    for (const auto& e : fs::directory_iterator(o.submissions))
      if (e.is_directory()) students.push_back(e.path());
  std::sort(students.begin(), students.end());
  students.erase(std::unique(students.begin(), students.end()), students.end());
  return students;
}

// --gradescope-bundle: the autograder zip (bundle.hpp). Returns the exit code.
int write_bundle(const Options& o, const fs::path& installed_template) {
  xenc_grade_all::BundleInputs in;
  in.template_dir =
      o.template_dir.empty() ? installed_template.lexically_normal() : fs::path(o.template_dir);
  in.settings = o.settings;
  in.source_dir = o.source;
  const fs::path installed_scripts =
      self_dir() / ".." / "share" / "xencoder" / "assignment" / "gradescope";
  in.scripts_dir = fs::exists(installed_scripts) ? installed_scripts.lexically_normal()
                                                 : fs::path(XENC_GRADESCOPE_SOURCE_DIR);
  try {
    if (!fs::exists(in.template_dir / "CMakeLists.txt"))
      throw std::runtime_error("no assignment template in " + in.template_dir.string() +
                               " (give --template DIR)");
    const std::size_t n = xenc_grade_all::write_gradescope_bundle(o.gradescope_bundle, in);
    std::cout << "wrote " << o.gradescope_bundle << ": setup.sh, run_autograder, the template of "
              << in.template_dir.string()
              << (o.settings.empty() ? "" : " with " + o.settings + " as its grading.json")
              << " and " << n << " files of xencoder's source (" << in.source_dir.string() << ")\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "xenc-grade-all: --gradescope-bundle: " << e.what() << "\n";
    return 2;
  }
}

// 3. grades.csv and the reports, written here from what grade decided: these students' rows,
// each stamped with when and with which settings it was graded, merged with the other rows of
// an earlier grades.csv (gradebook.hpp: kept byte for byte; all of them are these students'
// unless --only), and the Canvas and Moodle gradebooks made from it. Returns the number of
// students not graded; throws runtime_error when the earlier grades.csv's columns differ.
int write_results(const Prepared& p, const std::vector<Row>& rows, const Options& o) {
  const std::string header = grades_header(p);
  int failures = 0;
  std::map<std::string, std::string> fresh;
  for (const Row& row : rows) {
    std::ostringstream table;
    table << csv_field(row.who);
    try {
      write_student(p, row, table);
    } catch (const std::exception& e) {
      ++failures;
      table << ",,";
      for (std::size_t i = 0; i < p.graded_names.size(); ++i) table << ",";
      table << "," << csv_field(std::string("not graded: ") + e.what());
      std::cout << row.who << ": not graded (" << e.what() << ")\n";
    }
    table << "," << xenc_grade_all::utc_now() << "," << csv_field(p.stamp) << "\n";
    fresh[row.who] = table.str();
  }
  const std::string earlier = o.only.empty() ? std::string() : read_file(p.out / "grades.csv");
  const std::string merged = xenc_grade_all::merge_grades(earlier, header, fresh);
  std::ofstream(p.out / "grades.csv", std::ios::binary) << merged;
  std::ofstream(p.out / "canvas.csv", std::ios::binary)
      << xenc_grade_all::canvas_csv(merged, o.assignment);
  std::ofstream(p.out / "moodle.csv", std::ios::binary)
      << xenc_grade_all::moodle_csv(merged, o.assignment);
  return failures;
}

// 4. class.html and class.json beside grades.csv, from the same answers (class_report.hpp). Each
// student's answer is kept in DIR/answers/<student>.json (written here, from grade's pipe), so
// that after a regrade with --only the report still covers the whole class: the students graded
// now with their new answers, the others with their kept ones. A run without --only starts the
// folder afresh, so a student who left the class leaves the report too.
void write_class(const Prepared& p, const std::vector<Row>& rows, const Options& o) {
  xenc_grade_all::ReportInputs in{p.out, p.work, fs::absolute(o.submissions), p.graded_names};
  if (!o.settings.empty())
    in.mistakes_named = xenc::grade::read_settings(o.settings).hints != xenc::grade::HintLevel::off;
  const fs::path kept = p.out / "answers";
  if (o.only.empty()) fs::remove_all(kept);
  fs::create_directories(kept);
  std::map<std::string, xenc_grade_all::StudentAnswer> by_student;
  for (const auto& e : fs::directory_iterator(kept)) {
    if (e.path().extension() != ".json") continue;
    try {
      const json j = json::parse(read_file(e.path()));
      const std::string who = j.at("student").get<std::string>();
      by_student[who] = {who, j.at("answer").get<std::string>(),
                         j.at("failure").get<std::string>()};
    } catch (const std::exception&) {
      // an unreadable kept answer: that student is left out until graded again
    }
  }
  for (const Row& r : rows) {
    by_student[r.who] = {r.who, r.answer, r.failure};
    std::ofstream(kept / (r.who + ".json"), std::ios::binary)
        << json{{"student", r.who}, {"answer", r.answer}, {"failure", r.failure}}.dump(
               -1, ' ', false, json::error_handler_t::replace);
  }
  std::vector<xenc_grade_all::StudentAnswer> answers;
  for (auto& [who, a] : by_student) answers.push_back(std::move(a));
  xenc_grade_all::write_class_report(in, answers);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Grades a folder of submissions (one sub-folder per student) with the assignment "
      "template's grade program, each exercise in its own process, into DIR/grades.csv "
      "and one report per student."};
  xenc_app::add_version(app, "xenc-grade-all");
  Options o;
  xenc_app::add_options(app, o, grade_all::option_records());
  CLI11_PARSE(app, argc, argv);
  if (!o.settings.empty() && !fs::is_regular_file(o.settings)) {
    std::cerr << "xenc-grade-all: --settings " << o.settings << " is not a file\n";
    return 2;
  }
  if (o.cache.empty()) o.cache = (fs::path(o.output) / "cache").string();
  if (o.source.empty()) o.source = XENC_SOURCE_DIR;
  // the teacher's folder: without --template, the settings' folder when it is an assignment (its
  // CMakeLists.txt and exercises/), so that its exercises are the course's
  if (o.template_dir.empty() && !o.settings.empty()) {
    const fs::path folder = fs::absolute(o.settings).parent_path();
    if (!template_exercises(folder).empty()) o.template_dir = folder.string();
  }
  if (o.list_exercises)
    return print_exercises(o.settings, o.template_dir.empty() ? std::vector<std::string>{}
                                                              : template_exercises(o.template_dir));
  const fs::path installed_template =
      self_dir() / ".." / "share" / "xencoder" / "assignment" / "template";
  if (!o.gradescope_bundle.empty()) return write_bundle(o, installed_template);
  if (o.submissions.empty()) {
    std::cerr << "xenc-grade-all: SUBMISSIONS_DIR is required (or --exercises)\n" << app.help();
    return 2;
  }
  if (!fs::is_directory(o.submissions)) {
    std::cerr << "xenc-grade-all: SUBMISSIONS_DIR " << o.submissions
              << " is not a folder (one sub-folder per student)\n";
    return 2;
  }
  if (o.template_dir.empty()) o.template_dir = installed_template.lexically_normal().string();
  if (o.prefix.empty()) o.prefix = (self_dir() / "..").lexically_normal().string();
  if (!fs::exists(fs::path(o.template_dir) / "CMakeLists.txt")) {
    std::cerr << "xenc-grade-all: no assignment template in " << o.template_dir
              << " (give --template DIR)\n";
    return 2;
  }
  std::vector<fs::path> students;
  Prepared p;
  try {
    students = chosen_students(o);
    p = prepare(o);
    // --only keeps the other rows: an earlier grades.csv must have this run's columns (refused
    // before grading anyone)
    if (!o.only.empty() && fs::exists(p.out / "grades.csv"))
      xenc_grade_all::merge_grades(read_file(p.out / "grades.csv"), grades_header(p), {});
  } catch (const std::exception& e) {
    std::string m = e.what();
    std::cerr << "xenc-grade-all: " << m << (m.back() == '\n' ? "" : "\n");
    return 2;
  }
  p.stamp = xenc_grade_all::settings_stamp(o.settings, o.template_dir);
  const std::vector<Row> rows = grade_students(p, students, o.jobs);
  const int failures = write_results(p, rows, o);
  write_class(p, rows, o);
  std::cout << xenc::grade::sandbox_caveats();
  std::cout << "wrote " << (p.out / "grades.csv").string() << " (" << students.size()
            << (students.size() == 1 ? " student" : " students") << " graded"
            << (o.only.empty() ? "" : ", the other rows kept") << "), their reports ("
            << (p.out / "<student>.txt").string() << "), " << (p.out / "canvas.csv").string()
            << " and " << (p.out / "moodle.csv").string() << "\n";
  return failures ? 1 : 0;
}

#include "bundle.hpp"

#include <xenc/grade/sandbox.hpp>

#include <sstream>
#include <stdexcept>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;

namespace xenc_grade_all {
namespace {

// Runs `script` with /bin/sh -c and its arguments; its output, or throws runtime_error with it.
std::string shell(const std::string& what, const std::string& script,
                  const std::vector<std::string>& args) {
  xenc::grade::Limits limits;
  limits.time_seconds = 600;
  limits.memory_mib = std::size_t(1) << 14;
  limits.output_bytes = std::size_t(1) << 24;
  limits.file_mib = std::size_t(1) << 12;
  std::vector<std::string> argv = {"/bin/sh", "-c", script, "sh"};
  argv.insert(argv.end(), args.begin(), args.end());
  const xenc::grade::Outcome o = xenc::grade::run_isolated("/bin/sh", argv, limits);
  if (!o.exited || o.exit_code != 0)
    throw std::runtime_error(what + " failed" +
                             (o.exited ? " (exit code " + std::to_string(o.exit_code) + ")"
                                       : ": " + xenc::grade::describe_outcome(o, limits)) +
                             ":\n" + o.output);
  return o.output;
}

// xencoder's files: git's list in a checkout, else every file but build folders, .git and .deps.
std::vector<fs::path> source_files(const fs::path& src) {
  std::vector<fs::path> files;
  if (fs::exists(src / ".git")) {
    std::istringstream list(
        shell("git ls-files in " + src.string(), "exec git -C \"$1\" ls-files -z", {src}));
    for (std::string f; std::getline(list, f, '\0');)
      if (!f.empty() && fs::is_regular_file(src / f)) files.emplace_back(f);
    return files;
  }
  for (auto it = fs::recursive_directory_iterator(src); it != fs::recursive_directory_iterator();
       ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name.rfind("build", 0) == 0 || name == ".git" || name == ".deps"))
      it.disable_recursion_pending();
    else if (it->is_regular_file())
      files.push_back(fs::relative(it->path(), src));
  }
  return files;
}

}  // namespace

std::size_t write_gradescope_bundle(const fs::path& zip, const BundleInputs& in) {
  for (const char* script : {"setup.sh", "run_autograder"})
    if (!fs::is_regular_file(in.scripts_dir / script))
      throw std::runtime_error("no " + std::string(script) + " in " + in.scripts_dir.string());
  if (!fs::is_regular_file(in.source_dir / "CMakeLists.txt") ||
      !fs::is_regular_file(in.source_dir / "scripts" / "setup.sh"))
    throw std::runtime_error("no xencoder source tree in " + in.source_dir.string() +
                             " (its CMakeLists.txt and scripts/setup.sh): give --source DIR");
  const fs::path stage =
      fs::temp_directory_path() / ("xenc-gradescope-bundle-" + std::to_string(getpid()));
  fs::remove_all(stage);
  fs::create_directories(stage / "xencoder");
  try {
    for (const char* script : {"setup.sh", "run_autograder"}) {
      fs::copy_file(in.scripts_dir / script, stage / script);
      fs::permissions(stage / script, fs::perms::owner_all | fs::perms::group_read |
                                          fs::perms::group_exec | fs::perms::others_read |
                                          fs::perms::others_exec);
    }
    fs::copy(in.template_dir, stage / "template", fs::copy_options::recursive);
    fs::remove_all(stage / "template" / "build");
    if (!in.settings.empty())
      fs::copy_file(in.settings, stage / "template" / "grading.json",
                    fs::copy_options::overwrite_existing);
    const std::vector<fs::path> files = source_files(in.source_dir);
    for (const fs::path& f : files) {
      fs::create_directories((stage / "xencoder" / f).parent_path());
      fs::copy_file(in.source_dir / f, stage / "xencoder" / f);
    }
    const fs::path out = fs::absolute(zip);
    fs::remove(out);
    shell("zip", "cd \"$1\" && exec zip -q -r -X \"$2\" setup.sh run_autograder template xencoder",
          {stage.string(), out.string()});
    fs::remove_all(stage);
    return files.size();
  } catch (...) {
    std::error_code ec;
    fs::remove_all(stage, ec);
    throw;
  }
}

}  // namespace xenc_grade_all

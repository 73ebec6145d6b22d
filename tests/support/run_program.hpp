// Running a program from a test, as a student would from a shell: its exit code, stdout and
// stderr, in a fresh directory per test. Used by the app tests (tests/apps/).
//
//     const RunResult r = run_program(XENC_APP_WORD_ORDER, "--json", out_dir());
//     ASSERT_EQ(r.status, 0) << r.err;
//
// The program's path comes from CMake ($<TARGET_FILE:word_order>); out_dir() needs
// XENC_TEST_OUT_DIR (a folder in the build tree) defined for the test executable.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/build_path.hpp"

namespace xenc::test {

struct RunResult {
  int status = -1;  // exit code (-1: could not start, or killed by a signal)
  std::string out, err;
};

/// The whole content of a text file ("" if it cannot be opened).
inline std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// Runs `exe args` with the shell, in `cwd`; captures stdout and stderr separately (stderr goes
/// through cwd/stderr.txt). `args` is shell text: quote arguments that contain spaces.
inline RunResult run_program(const std::string& exe, const std::string& args,
                             const std::string& cwd = ".") {
  const std::string err_file = cwd + "/stderr.txt";
  const std::string cmd = "cd '" + cwd + "' && '" + exe + "' " + args + " 2>'" + err_file + "'";
  RunResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int st = pclose(pipe);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.err = read_file(err_file);
  return r;
}

/// A fresh, empty directory <root>/<suite>.<test> for the current test.
inline std::string fresh_test_dir(const std::string& root) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir =
      std::filesystem::path(root) / (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

#ifdef XENC_TEST_OUT_DIR
/// A fresh output directory for the current test, under XENC_TEST_OUT_DIR.
inline std::string out_dir() { return fresh_test_dir(XENC_TEST_OUT_DIR); }
#endif

}  // namespace xenc::test

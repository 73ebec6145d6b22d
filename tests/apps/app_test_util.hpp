// Running an app executable from the tests: exit code, stdout and stderr; a fresh output
// directory per test; small text helpers. Used by test_train_order*.cpp and test_extrapolate*.cpp
// (paths from CMake: $<TARGET_FILE:...>).
#pragma once

#include <gtest/gtest.h>
#include <libxml/parser.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace app_test {

struct Result {
  int status = -1;  // exit code
  std::string out, err;
};

// Runs `app` with `args` in `cwd`; captures stdout and stderr separately.
inline Result run_app(const std::string& app, const std::string& args, const std::string& cwd) {
  const std::string err_file = cwd + "/stderr.txt";
  const std::string cmd = "cd '" + cwd + "' && '" + app + "' " + args + " 2>'" + err_file + "'";
  Result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int st = pclose(pipe);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream f(err_file);
  std::stringstream ss;
  ss << f.rdbuf();
  r.err = ss.str();
  return r;
}

// A fresh output directory for the current test.
inline std::string out_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = std::filesystem::path(XENC_TEST_OUT_DIR) /
                                    (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

// True if libxml2 parses the file (no network, no messages).
inline bool well_formed_xml(const std::string& path) {
  xmlDocPtr doc = xmlReadFile(path.c_str(), nullptr, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (!doc) return false;
  xmlFreeDoc(doc);
  return true;
}

}  // namespace app_test

// Running xenc-extrapolate from the tests (path from CMake: XENC_APP_EXTRAPOLATE; through
// tests/support/run_program.hpp), and a check that its conclusions are there.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/run_program.hpp"

namespace extrapolate_test {

using json = nlohmann::json;
using Result = xenc::test::RunResult;
using xenc::test::out_dir;
using xenc::test::read_file;

inline Result run(const std::string& args, const std::string& cwd) {
  return xenc::test::run_program(XENC_APP_EXTRAPOLATE, args, cwd);
}

inline std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * v);
  return buf;
}

inline bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// The app's JSON "test" entry of `scheme` at `length`.
inline const json& at(const json& scheme, std::size_t length) {
  for (const auto& l : scheme["test"])
    if (l["length"].get<std::size_t>() == length) return l;
  throw std::runtime_error("no test length " + std::to_string(length));
}

// The conclusions are a function of the numbers, tested on hand-made results in
// test_extrapolate_report.cpp; a run of the program checks only that they are there: the margin
// above chance first, then one sentence per scheme (starting with its name).
inline void expect_a_conclusion_per_scheme(const json& j) {
  const std::vector<std::string> claims = j["conclusions"];
  ASSERT_FALSE(claims.empty());
  EXPECT_EQ(claims.front().rfind("Clearly above chance means more than ", 0), 0u) << claims.front();
  for (const auto& s : j["schemes"]) {
    const std::string name = s["name"];
    bool found = false;
    for (const auto& c : claims)
      found = found || c.rfind(name + " ", 0) == 0 || c.rfind(name + ":", 0) == 0;
    EXPECT_TRUE(found) << "no conclusion about " << name;
  }
}

}  // namespace extrapolate_test

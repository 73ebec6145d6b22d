// Running xenc-train-order from the tests (path from CMake: XENC_APP_TRAIN_ORDER), through the
// shared run-a-program helper (tests/support/run_program.hpp).
#pragma once

#include <cstddef>
#include <string>

#include "support/run_program.hpp"

namespace train_order_test {

using Result = xenc::test::RunResult;
using xenc::test::out_dir;
using xenc::test::read_file;

// Runs the app with `args` in `cwd`; captures stdout and stderr separately.
inline Result run(const std::string& args, const std::string& cwd) {
  return xenc::test::run_program(XENC_APP_TRAIN_ORDER, args, cwd);
}

inline std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
  return n;
}

}  // namespace train_order_test

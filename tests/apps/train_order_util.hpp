// Running xenc-train-order from the tests (path from CMake: XENC_APP_TRAIN_ORDER).
#pragma once

#include "app_test_util.hpp"

namespace train_order_test {

using namespace app_test;

// Runs xenc-train-order with `args` in `cwd`.
inline Result run(const std::string& args, const std::string& cwd) {
  return run_app(XENC_APP_TRAIN_ORDER, args, cwd);
}

}  // namespace train_order_test

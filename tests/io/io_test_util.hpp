// Helpers for the io tests: fixture paths, a masked AllClose that names the worst element, and
// an exception check that looks for every expected piece of the message.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "support/build_path.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/tensor.hpp"

namespace xenc_test {

/// Parity with PyTorch: absolute, at every compared element (support/tolerances.hpp).
inline constexpr float kParityTol = static_cast<float>(xenc::test::kParityAtol);
/// Two xencoder runs that differ only in what sits at padded positions.
inline constexpr float kPaddingInvariance = static_cast<float>(xenc::test::kOpAtol);

inline std::string data_path(const std::string& name) {
  return std::string(XENC_IO_DATA_DIR) + "/" + name;
}
inline std::string format_path(const std::string& name) { return data_path("format/" + name); }
inline std::string tmp_path(const std::string& name) {
  return std::string(XENC_IO_TMP_DIR) + "/" + name;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// |a - b| <= tol wherever keep (flat index over the leading dims, one entry per row of the last
/// dim) is true; keep empty = everywhere. Names both shapes and the worst element.
template <class A, class B>
::testing::AssertionResult AllClose(const A& a, const B& b, float tol,
                                    const std::vector<bool>& keep_rows = {}) {
  std::vector<std::size_t> sa(a.shape().begin(), a.shape().end()),
      sb(b.shape().begin(), b.shape().end());
  if (sa != sb)
    return ::testing::AssertionFailure()
           << "shapes differ: " << xenc::shape_str(sa) << " vs " << xenc::shape_str(sb);
  const std::size_t row = sa.empty() ? 1 : sa.back();
  double worst = -1;
  std::size_t worst_i = 0, compared = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!keep_rows.empty() && row != 0 && !keep_rows[i / row]) continue;
    const double d = std::fabs(double(a.data()[i]) - double(b.data()[i]));
    ++compared;
    if (!(d <= worst)) {  // also catches NaN
      worst = std::isnan(d) ? 1e30 : d;
      worst_i = i;
    }
  }
  if (compared == 0) return ::testing::AssertionFailure() << "no element compared";
  if (worst <= tol)
    return ::testing::AssertionSuccess() << "max |a - b| = " << worst << " over " << compared;
  return ::testing::AssertionFailure()
         << "shape " << xenc::shape_str(sa) << ": max |a - b| = " << worst << " > " << tol
         << " at flat index " << worst_i << " (a = " << a.data()[worst_i]
         << ", b = " << b.data()[worst_i] << "), " << compared << " elements compared";
}

/// Runs f, expects an exception of type E whose what() contains every string in `parts`.
template <class E, class F>
::testing::AssertionResult ThrowsWith(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& p : parts)
      if (msg.find(p) == std::string::npos)
        return ::testing::AssertionFailure() << "message \"" << msg << "\" lacks \"" << p << "\"";
    return ::testing::AssertionSuccess() << msg;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another type: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

}  // namespace xenc_test

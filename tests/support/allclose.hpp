// AllClose: element-wise comparison of two tensors as a GoogleTest AssertionResult.
//
//     EXPECT_TRUE(AllClose(y, expected, kOpAtol, kOpRtol));
//
// Passes when the shapes are equal and |a - e| <= atol + rtol · |e| everywhere (NumPy's
// allclose; NaN never passes, equal infinities do). On failure it prints both shapes, the
// number of mismatches, the worst index and its two values.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xexpression.hpp>

#include "xenc/core/tensor.hpp"

namespace xenc::test {

/// The multi-index of flat position `flat` in a row-major array of shape `shape`, as "[i, j]".
inline std::string index_str(std::size_t flat, const std::vector<std::size_t>& shape) {
  std::vector<std::size_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
  return shape_str(idx);
}

template <class E1, class E2>
::testing::AssertionResult AllClose(const xt::xexpression<E1>& actual_e,
                                    const xt::xexpression<E2>& expected_e, double atol,
                                    double rtol) {
  const xt::xarray<double> a = xt::cast<double>(actual_e.derived_cast());
  const xt::xarray<double> e = xt::cast<double>(expected_e.derived_cast());
  const std::vector<std::size_t> sa(a.shape().begin(), a.shape().end());
  const std::vector<std::size_t> se(e.shape().begin(), e.shape().end());
  if (sa != se) {
    return ::testing::AssertionFailure()
           << "shape mismatch: actual " << shape_str(sa) << ", expected " << shape_str(se);
  }
  std::size_t bad = 0, worst = 0;
  double worst_excess = -1.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = a.data()[i], y = e.data()[i];
    bool ok;
    double excess;
    if (std::isnan(x) || std::isnan(y)) {
      ok = false;
      excess = INFINITY;
    } else if (std::isinf(x) || std::isinf(y)) {
      ok = x == y;
      excess = ok ? 0.0 : INFINITY;
    } else {
      const double err = std::fabs(x - y), bound = atol + rtol * std::fabs(y);
      ok = err <= bound;
      excess = err / bound;
    }
    if (!ok) ++bad;
    if (excess > worst_excess) {
      worst_excess = excess;
      worst = i;
    }
  }
  std::ostringstream msg;
  msg.precision(9);
  if (a.size() > 0) {
    msg << "shape " << shape_str(sa) << ": " << bad << " of " << a.size()
        << " elements differ (atol " << atol << ", rtol " << rtol << "); worst at "
        << index_str(worst, sa) << ": actual " << a.data()[worst] << ", expected "
        << e.data()[worst] << " (|diff| " << std::fabs(a.data()[worst] - e.data()[worst]) << ")";
  } else {
    msg << "both empty, shape " << shape_str(sa);
  }
  if (bad != 0)
    return ::testing::AssertionFailure()
           << "actual shape " << shape_str(sa) << " vs expected shape " << shape_str(se) << "; "
           << msg.str();
  return ::testing::AssertionSuccess() << msg.str();
}

/// The largest |a - e| (shapes must match; returns +inf otherwise).
template <class E1, class E2>
double max_abs_diff(const xt::xexpression<E1>& actual_e, const xt::xexpression<E2>& expected_e) {
  const xt::xarray<double> a = xt::cast<double>(actual_e.derived_cast());
  const xt::xarray<double> e = xt::cast<double>(expected_e.derived_cast());
  if (a.shape() != e.shape()) return INFINITY;
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::fmax(m, std::fabs(a.data()[i] - e.data()[i]));
  return m;
}

}  // namespace xenc::test

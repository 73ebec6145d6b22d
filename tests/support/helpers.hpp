// Small helpers shared by the test suites: the message of a thrown exception, a copy of a
// parameter's gradient, and a permutation of the time axis (for the equivariance checks).
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "xenc/core/parameter.hpp"

namespace xenc::test {

/// The what() of the exception f throws, or "(no exception)".
inline std::string what_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

/// A copy of the gradient behind a parameter view, in the parameter's shape.
inline xt::xarray<float> grad_of(const ParameterRef& p) {
  // zeros when no backward has allocated the buffer yet (PyTorch: .grad is None)
  xt::xarray<float> g = xt::zeros<float>(p.shape);
  if (const float* data = p.grad) std::copy_n(data, p.size(), g.data());
  return g;
}

/// y[b, perm[t]] = x[b, t] for a tensor [B, T, ...] (anything after T moves along).
template <class T>
T permute_time(const T& x, const std::vector<std::size_t>& perm) {
  T y = x;
  const std::size_t B = x.shape(0), T_ = x.shape(1), inner = x.size() / (B * T_);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T_; ++t)
      std::copy_n(x.data() + (b * T_ + t) * inner, inner, y.data() + (b * T_ + perm[t]) * inner);
  return y;
}

}  // namespace xenc::test

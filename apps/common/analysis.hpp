// Shared by the demo apps (included as "../common/analysis.hpp"): small analysis helpers on
// encoder outputs, in double precision so that identical vectors give a cosine of 1 to ~1e-16.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "xenc/core/tensor.hpp"

namespace xenc_app {

/// Cosine similarity u·v / (‖u‖ ‖v‖) in double precision. NaN when a vector is all zero (the
/// cosine is undefined there; the apps print "n/a" and write JSON null).   u, v: [D]
inline double cosine(const std::vector<double>& u, const std::vector<double>& v) {
  double uv = 0, uu = 0, vv = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    uv += u[i] * v[i];
    uu += u[i] * u[i];
    vv += v[i] * v[i];
  }
  if (uu == 0 || vv == 0) return std::nan("");
  return uv / std::sqrt(uu * vv);
}

/// x[b, t, :] as doubles.   x: [B, T, D] -> [D]
inline std::vector<double> row(const xenc::Tensor3& x, std::size_t b, std::size_t t) {
  std::vector<double> r(x.shape()[2]);
  for (std::size_t d = 0; d < r.size(); ++d) r[d] = x(b, t, d);
  return r;
}

/// Mean over the first `len` tokens of sequence b.   x: [B, T, D] -> [D]
inline std::vector<double> mean_pool(const xenc::Tensor3& x, std::size_t b, std::size_t len) {
  std::vector<double> m(x.shape()[2], 0.0);
  for (std::size_t t = 0; t < len; ++t)
    for (std::size_t d = 0; d < m.size(); ++d) m[d] += x(b, t, d);
  for (auto& v : m) v /= double(len);
  return m;
}

}  // namespace xenc_app

// Randomized positions (ops/randomized_positions.hpp): the sorted samples.
#include "xenc/ops/randomized_positions.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "xenc/core/error.hpp"

namespace xenc {

std::vector<std::size_t> sample_sorted(std::size_t count, std::size_t lo, std::size_t hi,
                                       Rng& rng) {
  const std::size_t n = hi > lo ? hi - lo : 0;
  check_config(count <= n, "sample_sorted",
               "cannot draw " + std::to_string(count) + " distinct values from [" +
                   std::to_string(lo) + ", " + std::to_string(hi) + ") (" + std::to_string(n) +
                   " values)");
  // Floyd: for j = n − count .. n − 1 draw t uniform in [0, j]; take t, or j if t is taken.
  // Each count-subset of [0, n) comes out with the same probability.
  std::set<std::size_t> chosen;
  for (std::size_t j = n - count; j < n; ++j) {
    const std::size_t t = std::size_t(rng.next_u32()) % (j + 1);
    if (!chosen.insert(t).second) chosen.insert(j);
  }
  std::vector<std::size_t> out;
  for (std::size_t v : chosen) out.push_back(lo + v);  // a std::set iterates in order
  return out;
}

std::vector<double> randomized_positions(std::size_t T, std::size_t max_len, Rng& rng) {
  const std::vector<std::size_t> s = sample_sorted(T, 0, max_len, rng);
  return std::vector<double>(s.begin(), s.end());
}

std::vector<double> randomized_distances(std::size_t T, std::size_t max_len, Rng& rng) {
  if (T == 0) return {};
  // s_0 = 0, then T − 1 sorted distances from [1, max_len)
  std::vector<std::size_t> s = {0};
  for (std::size_t v : sample_sorted(T - 1, 1, max_len, rng)) s.push_back(v);
  std::vector<double> d;
  for (std::size_t m = 0; m + 1 < 2 * T; ++m) {
    // row m is δ = T − 1 − m
    d.push_back(m < T ? double(s[T - 1 - m]) : -double(s[m - (T - 1)]));
  }
  return d;
}

std::vector<double> plain_positions(std::size_t T) {
  std::vector<double> p(T);
  for (std::size_t t = 0; t < T; ++t) p[t] = double(t);
  return p;
}

}  // namespace xenc

// The median of timings, for the benchmark programs that repeat a measurement themselves
// (xencoder_serial, xencoder_sgemm): a host that takes the cores away in bursts moves a mean,
// not a median.
#pragma once

#include <algorithm>
#include <vector>

namespace xenc::bench {

/// The middle value of v (the mean of the two middle ones when v has an even size); v non-empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace xenc::bench

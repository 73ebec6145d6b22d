// xenc-pe-properties: which positions are closest, told apart from float noise.
//
// Every adjacent pair of sinusoidal positions is the same distance apart (a shift is a
// rotation), so "the closest pair" is a tie that float rounding breaks at random (once "first
// found at p = 40, q = 41"). The noise is measured: the formula gives the adjacent distance
// exactly, and the largest gap between it and a measured adjacent distance is the rounding.
// Distances within twice that of the smallest are ties.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

namespace pe_properties {

/// dist(p, q) for 0 <= p < q < T; exact_adjacent: ||PE(p+1) - PE(p)|| by the formula.
/// Returns the sentence after "the smallest distance ... is": the distance and which pairs
/// reach it, e.g. "1.014725, for every pair with q - p = 1 (49 pairs, equal up to float
/// rounding)" or "0.081127 (first found at p = 3, q = 9; 1 pair within float rounding of it)".
/// The rounding itself is not printed: it depends on the machine's BLAS kernels.
inline std::string closest_pairs_text(std::size_t T,
                                      const std::function<double(std::size_t, std::size_t)>& dist,
                                      double exact_adjacent) {
  double dmin = INFINITY, noise = 0;
  for (std::size_t p = 0; p + 1 < T; ++p)
    noise = std::max(noise, std::abs(dist(p, p + 1) - exact_adjacent));
  for (std::size_t p = 0; p < T; ++p)
    for (std::size_t q = p + 1; q < T; ++q) dmin = std::min(dmin, dist(p, q));
  const double tie = dmin + 2 * noise;
  std::map<std::size_t, std::size_t> by_offset;  // q - p -> tied pairs at that offset
  std::size_t ties = 0, first_p = 0, first_q = 0;
  for (std::size_t p = 0; p < T; ++p)
    for (std::size_t q = p + 1; q < T; ++q)
      if (dist(p, q) <= tie) {
        if (ties++ == 0) first_p = p, first_q = q;
        ++by_offset[q - p];
      }
  char buf[256];
  if (by_offset.size() == 1 && by_offset.begin()->second == T - by_offset.begin()->first &&
      ties > 1) {
    std::snprintf(buf, sizeof buf,
                  "%.6f, for every pair with q - p = %zu (%zu pairs, equal up to float rounding)",
                  dmin, by_offset.begin()->first, ties);
  } else {
    std::snprintf(buf, sizeof buf,
                  "%.6f (first found at p = %zu, q = %zu; %zu pair%s within float rounding of it)",
                  dmin, first_p, first_q, ties, ties == 1 ? "" : "s");
  }
  return buf;
}

}  // namespace pe_properties

// xenc-pe-properties' report: the Result of experiment.hpp as the three numbered sections of text
// and the two figures, each a pure function (tests/apps/test_pe_properties_report.cpp checks them
// on hand-made Results).
#pragma once

#include <cstddef>
#include <string>

#include "experiment.hpp"

namespace pe_properties {

/// The heatmap's largest side in cells (every s-th position beyond it).
constexpr std::size_t kMaxSide = 500;

/// The heatmap's stride s: 1 up to kMaxSide positions, else the smallest s that keeps a side
/// within kMaxSide cells.
std::size_t heatmap_stride(std::size_t positions);

/// "1. A shift by k = 3 is a rotation ...": R_k's 2x2 blocks (the first and last four when D/2 >
/// 10) and the largest error.
std::string rotation_text(const Result& r);

/// "2. PE(p) . PE(q) = ... depends only on p - q": the deviation from f and f's first values.
std::string similarity_text(const Result& r);

/// "3. Distinct positions: ...": the closest pair and the neighbours' distance.
std::string distance_text(const Result& r);

/// The similarity matrix as an SVG heatmap (every heatmap_stride-th position).
std::string heatmap_svg(const Result& r);

/// f(p - q) and the measured PE(0) . PE(q) as an SVG line plot.
std::string offset_svg(const Result& r);

/// What was written (and, with a stride, why the heatmap skips positions).
std::string wrote_text(const Result& r);

}  // namespace pe_properties

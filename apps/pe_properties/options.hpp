// xenc-pe-properties' options, one record each (apps/common/options.hpp): the table's size, the
// shift k, the two figures' paths and the memory limit. main.cpp reads this list.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "../common/cli.hpp"
#include "../common/options.hpp"

namespace pe_properties {

/// Everything the command line sets (the memory limit is Guard's).
struct CommandLine : xenc_app::Guard {
  std::size_t d_model = 16, positions = 50, shift = 3;
  std::string svg = "pe_similarity.svg", offset_svg = "pe_similarity_by_offset.svg";
};

/// Why the table is smaller than xenc-pe-heatmap's: the T x T similarity matrix in double.
constexpr const char* kPairsLimit = "every pair of positions: a T x T matrix in double precision";

inline std::vector<xenc_app::OptionRecord<CommandLine>> option_records() {
  using namespace xenc_app;
  using C = CommandLine;
  const std::vector<OptionRecord<C>> own = {
      {"--d-model", "d_model", nullptr, "D (even)", whole(1, 4096), absent(),
       XENC_FIELD(C, d_model), kPairsLimit},
      {"--positions", "positions", nullptr, "positions p = 0 .. positions-1", whole(2, 4000),
       absent(), XENC_FIELD(C, positions), kPairsLimit},
      {"--shift", "shift", nullptr,
       "k in PE(p + k) = R_k PE(p): a whole number, 0 <= k < positions", whole(0, 3999), absent(),
       XENC_FIELD(C, shift)},
      {"--svg", "svg", nullptr, "similarity-matrix heatmap path", text(), absent(),
       XENC_FIELD(C, svg)},
      {"--offset-svg", "offset_svg", nullptr, "similarity-by-offset line plot path", text(),
       absent(), XENC_FIELD(C, offset_svg)},
  };
  return records_of<C>({own, memory_records<C>()});
}

}  // namespace pe_properties

// xenc-pe-properties: English ordinals for the heatmap's "every 8th position".
#pragma once

#include <cstddef>
#include <string>

namespace pe_properties {

// 2 -> "2nd", 3 -> "3rd", 8 -> "8th"
inline std::string ordinal(std::size_t n) {
  const char* suffix = (n % 100 >= 11 && n % 100 <= 13) ? "th"
                       : n % 10 == 1                    ? "st"
                       : n % 10 == 2                    ? "nd"
                       : n % 10 == 3                    ? "rd"
                                                        : "th";
  return std::to_string(n) + suffix;
}

}  // namespace pe_properties

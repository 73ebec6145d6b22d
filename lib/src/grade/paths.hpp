// Path helpers of the grader (internal): runner.cpp's binds and landlock.cpp's rules.
#pragma once

#include <filesystem>
#include <string>

namespace xenc::grade::detail {

/// Whether p is dir or a path beneath it (lexically: no link is followed).
inline bool under(const std::filesystem::path& p, const std::filesystem::path& dir) {
  const std::string a = p.lexically_normal().string(), d = dir.lexically_normal().string();
  return a == d || (a.size() > d.size() && a.compare(0, d.size(), d) == 0 &&
                    (d.back() == '/' || a[d.size()] == '/'));
}

}  // namespace xenc::grade::detail

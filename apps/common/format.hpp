// Shared by the demo apps (included as "../common/format.hpp"): printf into a std::string, for
// reports built as strings (pure functions) that keep the apps' printf layouts.
#pragma once

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>

namespace xenc_app {

/// format("%-8s|%5.1f", "a", 2.25) == "a       |  2.2"
inline std::string format(const char* f, ...) __attribute__((format(printf, 1, 2)));
inline std::string format(const char* f, ...) {
  va_list args, copy;
  va_start(args, f);
  va_copy(copy, args);
  const int n = std::max(std::vsnprintf(nullptr, 0, f, copy), 0);
  va_end(copy);
  std::string s(std::size_t(n) + 1, '\0');
  std::vsnprintf(&s[0], s.size(), f, args);
  va_end(args);
  s.resize(std::size_t(n));
  return s;
}

}  // namespace xenc_app

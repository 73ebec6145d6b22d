// Terminal column widths from utf8proc's character widths (see display_width.hpp).
#include "xenc/text/display_width.hpp"

#include <utf8proc.h>

#include "xenc/text/tokenizer.hpp"  // check_utf8

namespace xenc {

std::size_t display_width(const std::string& text) {
  check_utf8(text, "display_width");
  std::size_t columns = 0, offset = 0;
  while (offset < text.size()) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n =
        utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data()) + offset,
                         static_cast<utf8proc_ssize_t>(text.size() - offset), &cp);
    offset += static_cast<std::size_t>(n);  // n > 0: check_utf8 passed
    // 2 for East Asian wide / full width, 0 for combining marks, zero-width and controls
    columns += static_cast<std::size_t>(utf8proc_charwidth(cp));
  }
  return columns;
}

std::string pad_right(const std::string& text, std::size_t width) {
  const std::size_t w = display_width(text);
  return w >= width ? text : text + std::string(width - w, ' ');
}

std::string pad_left(const std::string& text, std::size_t width) {
  const std::size_t w = display_width(text);
  return w >= width ? text : std::string(width - w, ' ') + text;
}

}  // namespace xenc

// Terminal column widths from utf8proc's character widths (see display_width.hpp).
#include "xenc/text/display_width.hpp"

#include <utf8proc.h>

#include <cstdio>

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

std::string visible(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::size_t offset = 0;
  char code[16];
  while (offset < text.size()) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n =
        utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data()) + offset,
                         static_cast<utf8proc_ssize_t>(text.size() - offset), &cp);
    if (n <= 0) {  // not UTF-8: show the byte, go on with the next
      std::snprintf(code, sizeof code, "<0x%02X>", static_cast<unsigned char>(text[offset]));
      out += code;
      ++offset;
      continue;
    }
    const utf8proc_property_t* p = utf8proc_get_property(cp);
    const bool invisible =
        p->category == UTF8PROC_CATEGORY_CC || p->category == UTF8PROC_CATEGORY_CF ||
        p->category == UTF8PROC_CATEGORY_ZL || p->category == UTF8PROC_CATEGORY_ZP || p->ignorable;
    if (invisible) {
      std::snprintf(code, sizeof code, "<U+%04X>", static_cast<unsigned>(cp));
      out += code;
    } else {
      out.append(text, offset, static_cast<std::size_t>(n));
    }
    offset += static_cast<std::size_t>(n);
  }
  return out;
}

}  // namespace xenc

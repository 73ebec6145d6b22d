// How many terminal columns a string takes, for aligning text tables that hold any word.
//
//     display_width("cat")  == 3
//     display_width("CAFÉ") == 4      (5 bytes; É is one column, composed or as E + U+0301)
//     display_width("猫")   == 2      (East Asian wide: two columns)
//
// Widths are utf8proc's (utf8proc_charwidth, Unicode 15): East Asian wide and full-width
// characters and most emoji take 2 columns, combining marks, zero-width and control characters
// 0, everything else 1. This is what terminals following wcwidth() do; a byte count
// (std::string::size, printf's "%-10s", std::setw) misaligns every column after a non-ASCII word.
#pragma once

#include <cstddef>
#include <string>

#include "xenc/core/error.hpp"  // encoding_error

namespace xenc {

/// Terminal columns of `text`: the sum of utf8proc_charwidth over its code points.
/// Throws xenc::encoding_error (naming the byte offset) for invalid UTF-8.
std::size_t display_width(const std::string& text);

/// `text` followed by spaces up to `width` columns (unchanged when it is already as wide):
/// a left-aligned table cell. Throws xenc::encoding_error for invalid UTF-8.
std::string pad_right(const std::string& text, std::size_t width);

/// Spaces, then `text`, up to `width` columns: a right-aligned table cell (numbers).
/// Throws xenc::encoding_error for invalid UTF-8.
std::string pad_left(const std::string& text, std::size_t width);

}  // namespace xenc

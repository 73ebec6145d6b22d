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

/// `text` as a terminal should show what was typed: each code point that prints nothing or acts
/// on the terminal is written as <U+XXXX>, every other one is kept as it is.
///
///     visible("cat\u200Bchased")  == "cat<U+200B>chased"   (zero width space)
///     visible("cat\x1B[31m")      == "cat<U+001B>[31m"     (the escape that starts a colour)
///     visible("a\nb")             == "a<U+000A>b"
///
/// Written out: controls (C0, DEL, C1: newlines, tabs, escapes), format characters (zero-width
/// space and joiners, soft hyphen, bidi overrides, BOM), line and paragraph separators, and the
/// other default-ignorable code points (variation selectors, Hangul fillers). A byte that is not
/// valid UTF-8 is written <0xNN>. Never throws: error messages quote user input through it.
std::string visible(const std::string& text);

}  // namespace xenc

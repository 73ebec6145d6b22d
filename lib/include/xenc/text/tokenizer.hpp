// A word tokenizer for the demos: Unicode-aware, case-folded, split on spaces and punctuation.
//
//     "The cat, chased the mouse!" -> ["the", "cat", ",", "chased", "the", "mouse", "!"]
//     "CAFÉ au lait"               -> ["café", "au", "lait"]           (same tokens as "café")
//     "cat—chased"                 -> ["cat", "—", "chased"]           (the em dash is a token)
//
// Steps (utf8proc, Unicode 15):
//   1. The text must be valid UTF-8; otherwise xenc::encoding_error names the byte offset.
//   2. NFKC normalisation + Unicode case folding (utf8proc's NFKC_Casefold): "CAFÉ" and "café"
//      (composed or as e + combining accent) give the same token, "ﬁ" becomes "fi", full-width
//      "ＡＢＣ" becomes "abc"; invisible default-ignorable characters (soft hyphen, zero-width
//      joiner, word joiner, BOM, variation selectors: utf8proc's `ignorable` property) are
//      removed. The one exception is U+200B ZERO WIDTH SPACE, an invisible word break (line-break
//      class ZW): it separates words like a space, so "cat\u200Bchased" is two tokens.
//   3. Each code point by its Unicode general category:
//        letters (L*), combining marks (M*), digits and numbers (N*)  -> part of a word;
//        punctuation (P*: dashes, quotes, brackets, ...) and symbols (S*: $, +, €, emoji)
//                                                                   -> a token of its own;
//        separators (Z*: spaces) and controls (C*: tab, newline)    -> end a word, dropped.
//      So a dash is never inside a word: "cat—chased" and "cat - chased" give the same three
//      tokens, as BERT's basic tokenizer does with punctuation. On ASCII this is exactly the
//      C locale's isspace / ispunct rule.
#pragma once

#include <string>
#include <vector>

#include "xenc/core/error.hpp"

namespace xenc {

/// The tokens of `text` (steps 1 to 3 above). Throws xenc::encoding_error for invalid UTF-8.
std::vector<std::string> tokenize(const std::string& text);

/// Throws xenc::encoding_error unless `text` is valid UTF-8. The message reads
/// "<where>: text is not valid UTF-8: byte 0xff at offset 3 (...)".
void check_utf8(const std::string& text, const std::string& where);

/// NFKC normalisation + Unicode case folding (step 2): fold_case("CAFÉ") == "café".
/// Throws xenc::encoding_error for invalid UTF-8.
std::string fold_case(const std::string& text);

}  // namespace xenc

// A word tokenizer for the demos: lower-case, split on whitespace and punctuation.
//
//     "The cat, chased the mouse!" -> ["the", "cat", ",", "chased", "the", "mouse", "!"]
//
// Punctuation marks become tokens of their own (as in BERT's basic tokenizer); whitespace is
// dropped. Bytes >= 0x80 (UTF-8) are kept inside words unchanged.
#pragma once

#include <string>
#include <vector>

namespace xenc {

std::vector<std::string> tokenize(const std::string& text);

}  // namespace xenc

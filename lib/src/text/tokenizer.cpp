// Word tokenizer: lower-case ASCII, split on whitespace, punctuation as tokens of its own.
#include "xenc/text/tokenizer.hpp"

#include <cctype>

namespace xenc {

std::vector<std::string> tokenize(const std::string& text) {
  std::vector<std::string> tokens;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) tokens.push_back(std::move(word));
    word.clear();
  };
  for (unsigned char c : text) {
    if (c < 0x80 && std::isspace(c)) {
      flush();  // whitespace ends a word and is dropped
    } else if (c < 0x80 && std::ispunct(c)) {
      flush();  // a punctuation mark is a token by itself
      tokens.emplace_back(1, static_cast<char>(c));
    } else {
      word += c < 0x80 ? static_cast<char>(std::tolower(c)) : static_cast<char>(c);
    }
  }
  flush();
  return tokens;
}

}  // namespace xenc

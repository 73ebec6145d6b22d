// Word tokenizer: check UTF-8, NFKC + case folding, then split by Unicode general category.
// utf8proc supplies the Unicode tables (normalisation, folding, categories): no hand tables.
#include "xenc/text/tokenizer.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>

#include <utf8proc.h>

namespace xenc {

namespace {

const utf8proc_uint8_t* bytes_of(const std::string& s) {
  return reinterpret_cast<const utf8proc_uint8_t*>(s.data());
}

struct FreeDeleter {
  void operator()(utf8proc_uint8_t* p) const { std::free(p); }
};

enum class CharClass { word, mark, separator };

// Letters, marks and numbers build words; punctuation and symbols stand alone; the rest separates.
CharClass classify(utf8proc_int32_t cp) {
  switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return CharClass::word;
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
    case UTF8PROC_CATEGORY_SM:
    case UTF8PROC_CATEGORY_SC:
    case UTF8PROC_CATEGORY_SK:
    case UTF8PROC_CATEGORY_SO:
      return CharClass::mark;
    default:  // Z* separators, C* controls, format, private use, unassigned
      return CharClass::separator;
  }
}

// U+200B ZERO WIDTH SPACE as a plain space. It is default-ignorable, so fold_case would remove
// it and join the words on either side ("cat\u200Bchased" -> "catchased"); but it is the one
// invisible character that marks a word break (Unicode line-break class ZW; Thai and Khmer
// text uses it between words). The other default-ignorables (soft hyphen, joiners, BOM,
// variation selectors) sit inside words and are removed by fold_case.
std::string zero_width_space_as_space(const std::string& text) {
  static const std::string zwsp = "\xE2\x80\x8B";  // U+200B in UTF-8
  std::string out = text;
  for (std::size_t at = out.find(zwsp); at != std::string::npos; at = out.find(zwsp, at + 1))
    out.replace(at, zwsp.size(), " ");
  return out;
}

}  // namespace

void check_utf8(const std::string& text, const std::string& where) {
  std::size_t offset = 0;
  while (offset < text.size()) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(
        bytes_of(text) + offset, static_cast<utf8proc_ssize_t>(text.size() - offset), &cp);
    if (n < 0) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(text[offset]));
      throw encoding_error(where + ": text is not valid UTF-8: byte " + hex + " at offset " +
                           std::to_string(offset) + " (" + utf8proc_errmsg(n) +
                           "); expected UTF-8 text, e.g. save the file as UTF-8");
    }
    offset += static_cast<std::size_t>(n);
  }
}

std::string fold_case(const std::string& text) {
  check_utf8(text, "fold_case");
  if (text.empty()) return text;
  // NFKC_Casefold: compatibility decomposition, canonical composition, case folding, and
  // removal of default-ignorable code points (utf8proc_NFKC_Casefold's options, with a length
  // so that the text may contain NUL bytes).
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(
      bytes_of(text), static_cast<utf8proc_ssize_t>(text.size()), &out,
      static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT |
                                     UTF8PROC_CASEFOLD | UTF8PROC_IGNORE));
  std::unique_ptr<utf8proc_uint8_t, FreeDeleter> owned(out);
  if (n == UTF8PROC_ERROR_NOMEM) throw std::bad_alloc();
  if (n < 0) throw encoding_error(std::string("fold_case: ") + utf8proc_errmsg(n));
  return std::string(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
}

std::vector<std::string> tokenize(const std::string& text) {
  check_utf8(text, "tokenize");
  // 1-2. valid UTF-8, word breaks kept, NFKC + case folding + default-ignorables removed
  const std::string folded = fold_case(zero_width_space_as_space(text));
  // 3. Walk the code points: words grow, punctuation and symbols stand alone, spaces cut.
  std::vector<std::string> tokens;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) tokens.push_back(std::move(word));
    word.clear();
  };
  std::size_t offset = 0;
  while (offset < folded.size()) {
    utf8proc_int32_t cp = 0;
    const auto n = static_cast<std::size_t>(utf8proc_iterate(
        bytes_of(folded) + offset, static_cast<utf8proc_ssize_t>(folded.size() - offset), &cp));
    const std::string ch = folded.substr(offset, n);  // utf8proc's output is valid UTF-8
    offset += n;
    switch (classify(cp)) {
      case CharClass::word:
        word += ch;
        break;
      case CharClass::mark:
        flush();  // a punctuation mark or symbol is a token by itself
        tokens.push_back(ch);
        break;
      case CharClass::separator:
        flush();  // whitespace and controls end a word and are dropped
        break;
    }
  }
  flush();
  return tokens;
}

}  // namespace xenc

// Similar submissions by winnowing (Schleimer, Wilkerson & Aiken, 2003), as MOSS does: normalised
// tokens, k-gram hashes, the minimum of each window as a fingerprint, the stub's k-grams removed,
// and each pair's share of fingerprints in common. See xenc/grade/similarity.hpp.
#include "xenc/grade/similarity.hpp"

#include <algorithm>
#include <iterator>
#include <set>
#include <string_view>
#include <tuple>

#include "xenc/core/error.hpp"

namespace xenc::grade {

namespace {

// C++17's keywords (and the alternative operator spellings): they stay as written, so the code's
// structure remains; every other identifier becomes ID.
const std::set<std::string_view>& keywords() {
  static const std::set<std::string_view> k = {"alignas",      "alignof",
                                               "and",          "and_eq",
                                               "asm",          "auto",
                                               "bitand",       "bitor",
                                               "bool",         "break",
                                               "case",         "catch",
                                               "char",         "char16_t",
                                               "char32_t",     "class",
                                               "compl",        "const",
                                               "constexpr",    "const_cast",
                                               "continue",     "decltype",
                                               "default",      "delete",
                                               "do",           "double",
                                               "dynamic_cast", "else",
                                               "enum",         "explicit",
                                               "export",       "extern",
                                               "false",        "float",
                                               "for",          "friend",
                                               "goto",         "if",
                                               "inline",       "int",
                                               "long",         "mutable",
                                               "namespace",    "new",
                                               "noexcept",     "not",
                                               "not_eq",       "nullptr",
                                               "operator",     "or",
                                               "or_eq",        "private",
                                               "protected",    "public",
                                               "register",     "reinterpret_cast",
                                               "return",       "short",
                                               "signed",       "sizeof",
                                               "static",       "static_assert",
                                               "static_cast",  "struct",
                                               "switch",       "template",
                                               "this",         "thread_local",
                                               "throw",        "true",
                                               "try",          "typedef",
                                               "typeid",       "typename",
                                               "union",        "unsigned",
                                               "using",        "virtual",
                                               "void",         "volatile",
                                               "wchar_t",      "while"};
  return k;
}

// Punctuators, longest first within each length: the lexer takes the longest that matches.
constexpr std::string_view kPunctuators3[] = {">>=", "<<=", "<=>", "->*", "..."};
constexpr std::string_view kPunctuators2[] = {
    "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&",
    "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ".*", "##"};

bool identifier_start(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
bool identifier_char(unsigned char c) { return identifier_start(c) || (c >= '0' && c <= '9'); }
bool digit(unsigned char c) { return c >= '0' && c <= '9'; }

// The end of a quoted literal that starts at `open` (the quote): escapes skip a character; an
// unterminated literal ends at the line's end (the compiler would refuse it; we only compare).
std::size_t quoted_end(const std::string& s, std::size_t open) {
  const char quote = s[open];
  std::size_t i = open + 1;
  while (i < s.size() && s[i] != quote && s[i] != '\n') i += s[i] == '\\' ? 2 : 1;
  if (i < s.size() && s[i] == quote) return i + 1;
  return std::min(s.size(), i);  // the line break is not the literal's
}

// The end of a raw string literal R"delim( ... )delim" whose quote is at `open`.
std::size_t raw_end(const std::string& s, std::size_t open) {
  // the delimiter is at most 16 characters; without an opening parenthesis there, the literal
  // is malformed and ends like a plain one (and a search for a long delimiter cannot go
  // quadratic)
  const std::size_t paren = s.find('(', open);
  if (paren == std::string::npos || paren - open - 1 > 16) return quoted_end(s, open);
  const std::string close = ")" + s.substr(open + 1, paren - open - 1) + "\"";
  const std::size_t at = s.find(close, paren);
  return at == std::string::npos ? s.size() : at + close.size();
}

constexpr std::uint64_t kFnvOffset = 14695981039346656037ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;

void check_k_w(const char* where, std::size_t k, std::size_t w) {
  if (k == 0)
    throw config_error(std::string(where) + ": k (the k-gram length) is 0, expected at least 1");
  if (w == 0)
    throw config_error(std::string(where) + ": w (the window length) is 0, expected at least 1");
}

// One file's fingerprints with the stub's removed: distinct hashes (sorted) and, for the
// highlighted regions, every position of each.
struct Prints {
  std::vector<Region> spans;          // each token's bytes (its text is no longer needed)
  std::vector<std::uint64_t> hashes;  // every k-gram's hash, by position
  std::vector<std::uint64_t> sorted;  // the same, sorted (to look one up)
  std::vector<std::uint64_t> distinct;
};

bool holds(const std::vector<std::uint64_t>& sorted, std::uint64_t h) {
  return std::binary_search(sorted.begin(), sorted.end(), h);
}

// The byte ranges of p's k-grams (every one, not only the winnowed ones) that the other file has
// too and the stub has not, merged: what the side-by-side view highlights.
std::vector<Region> shared_regions(const Prints& p, const Prints& other,
                                   const std::vector<std::uint64_t>& stub_grams, std::size_t k) {
  std::vector<Region> regions;
  for (std::size_t i = 0; i < p.hashes.size(); ++i) {
    if (!holds(other.sorted, p.hashes[i]) || holds(stub_grams, p.hashes[i])) continue;
    const Region r{p.spans[i].begin, p.spans[i + k - 1].end};
    if (!regions.empty() && r.begin <= regions.back().end)
      regions.back().end = std::max(regions.back().end, r.end);
    else
      regions.push_back(r);
  }
  return regions;
}

}  // namespace

std::vector<CodeToken> tokenize_code(const std::string& source, std::size_t max_bytes) {
  // 0. the cap, before any work
  if (source.size() > max_bytes)
    throw config_error("tokenize_code: source has " + std::to_string(source.size()) +
                       " bytes, expected at most " + std::to_string(max_bytes) + " (max_bytes)");
  const std::string& s = source;
  std::vector<CodeToken> tokens;
  bool line_start = true;  // only whitespace since the last line break: a '#' starts a directive
  std::size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    // 1. whitespace and comments are dropped
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      continue;
    }
    if (s.compare(i, 2, "//") == 0) {
      i = std::min(s.size(), s.find('\n', i));
      continue;
    }
    if (s.compare(i, 2, "/*") == 0) {
      const std::size_t close = s.find("*/", i + 2);
      i = close == std::string::npos ? s.size() : close + 2;
      continue;
    }
    // 2. a preprocessor line (#include, #pragma, ...), with its continuations, is dropped:
    // which headers a file includes says nothing about who wrote it
    if (c == '#' && line_start) {
      while (i < s.size() && s[i] != '\n') i += (s[i] == '\\' && i + 1 < s.size()) ? 2 : 1;
      continue;
    }
    line_start = false;
    const std::size_t begin = i;
    std::string text;
    if (identifier_start(c)) {
      // 3. identifiers and keywords; an encoding prefix (L, u8, R, ...) joined to a quote
      // belongs to a string or character literal
      while (i < s.size() && identifier_char(static_cast<unsigned char>(s[i]))) ++i;
      const std::string_view word(s.data() + begin, i - begin);
      const bool prefix = word == "L" || word == "u" || word == "U" || word == "u8";
      const bool raw_prefix =
          !word.empty() && word.back() == 'R' &&
          (word == "R" || word == "LR" || word == "uR" || word == "UR" || word == "u8R");
      if (i < s.size() && s[i] == '"' && raw_prefix) {
        i = raw_end(s, i);
        text = "STR";
      } else if (i < s.size() && (s[i] == '"' || s[i] == '\'') && prefix) {
        text = s[i] == '"' ? "STR" : "CHR";
        i = quoted_end(s, i);
      } else {
        text = keywords().count(word) ? std::string(word) : "ID";
      }
    } else if (digit(c) || (c == '.' && i + 1 < s.size() && digit(s[i + 1]))) {
      // 4. a number (a pp-number: digits, letters, '.', digit separators, exponent signs)
      ++i;
      while (i < s.size()) {
        const unsigned char d = static_cast<unsigned char>(s[i]);
        const char before = s[i - 1];
        if (identifier_char(d) || d == '.' ||
            (d == '\'' && i + 1 < s.size() &&
             identifier_char(static_cast<unsigned char>(s[i + 1]))))
          ++i;
        else if ((d == '+' || d == '-') &&
                 (before == 'e' || before == 'E' || before == 'p' || before == 'P'))
          ++i;
        else
          break;
      }
      text = "NUM";
    } else if (c == '"' || c == '\'') {
      // 5. string and character literals
      text = c == '"' ? "STR" : "CHR";
      i = quoted_end(s, i);
    } else {
      // 6. punctuators, the longest that matches
      for (std::string_view p : kPunctuators3)
        if (text.empty() && s.compare(i, 3, p) == 0) text = p;
      for (std::string_view p : kPunctuators2)
        if (text.empty() && s.compare(i, 2, p) == 0) text = p;
      if (text.empty()) text = std::string(1, s[i]);
      i += text.size();
    }
    tokens.push_back({text, begin, i - begin});
  }
  return tokens;
}

std::vector<std::uint64_t> kgram_hashes(const std::vector<CodeToken>& tokens, std::size_t k) {
  check_k_w("kgram_hashes", k, 1);
  if (tokens.size() < k) return {};
  // FNV-1a over the k tokens' texts, each followed by a 0 byte (so "a" "bc" and "ab" "c" differ)
  std::vector<std::uint64_t> hashes(tokens.size() - k + 1);
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    std::uint64_t h = kFnvOffset;
    for (std::size_t j = i; j < i + k; ++j) {
      for (char ch : tokens[j].text) h = (h ^ static_cast<unsigned char>(ch)) * kFnvPrime;
      h = (h ^ 0u) * kFnvPrime;
    }
    hashes[i] = h;
  }
  return hashes;
}

std::vector<Fingerprint> winnow(const std::vector<std::uint64_t>& hashes, std::size_t w) {
  check_k_w("winnow", 1, w);
  std::vector<Fingerprint> prints;
  if (hashes.empty()) return prints;
  const std::size_t windows = hashes.size() >= w ? hashes.size() - w + 1 : 1;
  const std::size_t width = std::min(w, hashes.size());
  for (std::size_t start = 0; start < windows; ++start) {
    // the window's minimum, the rightmost of equals (<=)
    std::size_t best = start;
    for (std::size_t j = start + 1; j < start + width; ++j)
      if (hashes[j] <= hashes[best]) best = j;
    // a position selected by consecutive windows is one fingerprint
    if (prints.empty() || prints.back().position != best) prints.push_back({hashes[best], best});
  }
  return prints;
}

std::vector<SimilarPair> similar_pairs(const std::vector<Submission>& submissions,
                                       const std::string& stub, const SimilarityOptions& options) {
  // 0. the options and every file's size, before any work
  check_k_w("similar_pairs", options.k, options.w);
  if (!(options.threshold > 0.0 && options.threshold <= 1.0))
    throw config_error("similar_pairs: threshold is " + std::to_string(options.threshold) +
                       ", expected a share in (0, 1]");
  auto check_size = [&](const std::string& who, const std::string& source) {
    if (source.size() > options.max_file_bytes)
      throw config_error("similar_pairs: " + who + " has " + std::to_string(source.size()) +
                         " bytes, expected at most " + std::to_string(options.max_file_bytes) +
                         " (max_file_bytes)");
  };
  check_size("the stub", stub);
  for (const Submission& sub : submissions)
    check_size("student " + sub.student + "'s file", sub.source);

  // 1. the stub's k-grams, every one (not only its fingerprints): a submission's k-gram that the
  // handed-out file holds anywhere is no one's own work
  std::vector<std::uint64_t> stub_grams =
      kgram_hashes(tokenize_code(stub, options.max_file_bytes), options.k);
  std::sort(stub_grams.begin(), stub_grams.end());

  // 2. each submission's fingerprints, without the stub's
  std::vector<Prints> prints(submissions.size());
  for (std::size_t n = 0; n < submissions.size(); ++n) {
    Prints& p = prints[n];
    const std::vector<CodeToken> tokens =
        tokenize_code(submissions[n].source, options.max_file_bytes);
    p.hashes = kgram_hashes(tokens, options.k);
    p.spans.reserve(tokens.size());
    for (const CodeToken& t : tokens) p.spans.push_back({t.offset, t.offset + t.length});
    p.sorted = p.hashes;
    std::sort(p.sorted.begin(), p.sorted.end());
    for (const Fingerprint& f : winnow(p.hashes, options.w))
      if (!holds(stub_grams, f.hash)) p.distinct.push_back(f.hash);
    std::sort(p.distinct.begin(), p.distinct.end());
    p.distinct.erase(std::unique(p.distinct.begin(), p.distinct.end()), p.distinct.end());
  }

  // 3. fingerprints in more than max_common submissions are the class's idioms (MOSS's -m):
  // removed as the stub's are
  if (options.max_common > 0) {
    std::vector<std::uint64_t> all;
    for (const Prints& p : prints) all.insert(all.end(), p.distinct.begin(), p.distinct.end());
    std::sort(all.begin(), all.end());
    std::vector<std::uint64_t> common;
    for (std::size_t i = 0, j = 0; i < all.size(); i = j) {
      while (j < all.size() && all[j] == all[i]) ++j;
      if (j - i > options.max_common) common.push_back(all[i]);
    }
    if (!common.empty())
      for (Prints& p : prints)
        p.distinct.erase(std::remove_if(p.distinct.begin(), p.distinct.end(),
                                        [&](std::uint64_t h) { return holds(common, h); }),
                         p.distinct.end());
  }

  // 4. every pair: the fingerprints in common, as a share of each side's
  std::vector<SimilarPair> pairs;
  for (std::size_t x = 0; x < submissions.size(); ++x)
    for (std::size_t y = x + 1; y < submissions.size(); ++y) {
      const Prints& px = prints[x];
      const Prints& py = prints[y];
      if (px.distinct.empty() || py.distinct.empty()) continue;
      std::vector<std::uint64_t> shared;
      std::set_intersection(px.distinct.begin(), px.distinct.end(), py.distinct.begin(),
                            py.distinct.end(), std::back_inserter(shared));
      const double ox = double(shared.size()) / double(px.distinct.size());
      const double oy = double(shared.size()) / double(py.distinct.size());
      if (shared.size() < options.min_shared || std::max(ox, oy) < options.threshold) continue;
      const bool swap = submissions[y].student < submissions[x].student;
      const std::size_t a = swap ? y : x, b = swap ? x : y;
      SimilarPair pair;
      pair.a = submissions[a].student;
      pair.b = submissions[b].student;
      pair.overlap_a = swap ? oy : ox;
      pair.overlap_b = swap ? ox : oy;
      pair.shared = shared.size();
      pair.fingerprints_a = prints[a].distinct.size();
      pair.fingerprints_b = prints[b].distinct.size();
      pair.regions_a = shared_regions(prints[a], prints[b], stub_grams, options.k);
      pair.regions_b = shared_regions(prints[b], prints[a], stub_grams, options.k);
      pairs.push_back(std::move(pair));
    }

  // 5. the most alike first
  std::sort(pairs.begin(), pairs.end(), [](const SimilarPair& l, const SimilarPair& r) {
    const double lmax = std::max(l.overlap_a, l.overlap_b),
                 rmax = std::max(r.overlap_a, r.overlap_b);
    if (lmax != rmax) return lmax > rmax;
    const double lmin = std::min(l.overlap_a, l.overlap_b),
                 rmin = std::min(r.overlap_a, r.overlap_b);
    if (lmin != rmin) return lmin > rmin;
    return std::tie(l.a, l.b) < std::tie(r.a, r.b);
  });
  return pairs;
}

}  // namespace xenc::grade

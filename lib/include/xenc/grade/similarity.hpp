// Similar submissions: which pairs of students handed in nearly the same code for an exercise,
// once the stub the teacher handed out is removed. It flags, it does not judge: two correct
// solutions of a short exercise can be alike, and a flagged pair is for a person to read side by
// side.
//
// The method is MOSS's (Schleimer, Wilkerson & Aiken, 2003, "Winnowing: local algorithms for
// document fingerprinting", SIGMOD):
//   1. tokenize_code: the C++ source becomes a list of tokens in which every identifier is the
//      one class ID and every literal a class (NUM, STR, CHR); comments, whitespace and
//      preprocessor lines are dropped. Renaming variables and reformatting change nothing.
//   2. kgram_hashes: a hash of each run of k consecutive tokens (a k-gram).
//   3. winnow: in every window of w consecutive k-gram hashes, the smallest (the rightmost of
//      equal smallest) is a fingerprint. Any run of at least w + k - 1 tokens shared by two files
//      gives them a common fingerprint (the paper's guarantee threshold t); runs shorter than k
//      tokens never match (its noise threshold).
//   4. similar_pairs: every fingerprint whose k-gram also occurs in the stub is dropped, and so is
//      every one found in more than max_common submissions (MOSS's -m); a pair's overlap is the
//      share of each file's fingerprints that the other has too, both directions.
// The program xenc-grade-similar (apps/assignment/similar/) runs this on a class's folders.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace xenc::grade {

/// One token of C++ source, normalised: `text` is a keyword or an operator as written, or a class
/// (ID for every identifier, NUM, STR, CHR for literals); `offset` and `length` locate it in the
/// source (bytes).
struct CodeToken {
  std::string text;
  std::size_t offset = 0;
  std::size_t length = 0;
};

/// The default cap on one source file, 64 KiB: an exercise is a few hundred lines (3 to 5 KiB); a
/// larger file is not a submission to compare. Comparing keeps at most about 40 bytes per source
/// byte (a token for every byte, its hashes), so 100 submissions at the cap need about 260 MB,
/// and the pairs cost time in proportion to the fingerprints of each pair's two files.
inline constexpr std::size_t kMaxSourceBytes = std::size_t(64) << 10;

/// The tokens of a C++ source (see the file's comment). Never fails on broken code: an
/// unterminated comment or string runs to the end of the file.
/// Throws: xenc::config_error if source is longer than max_bytes.
std::vector<CodeToken> tokenize_code(const std::string& source,
                                     std::size_t max_bytes = kMaxSourceBytes);

/// The hash of each k-gram: element i hashes tokens[i .. i+k) (FNV-1a, 64 bits, over the tokens'
/// texts). Fewer than k tokens give no k-gram.
/// Throws: xenc::config_error if k is 0.
std::vector<std::uint64_t> kgram_hashes(const std::vector<CodeToken>& tokens, std::size_t k);

/// A selected hash and the index of its k-gram (its first token is tokens[position]).
struct Fingerprint {
  std::uint64_t hash = 0;
  std::size_t position = 0;
  bool operator==(const Fingerprint& o) const { return hash == o.hash && position == o.position; }
};

/// Winnowing (Schleimer et al. 2003, section 3): in each window of w consecutive hashes, the
/// minimum, the rightmost one when several are equal; a position is recorded once, in order.
/// Fewer than w hashes (but at least one) form one window.
/// Throws: xenc::config_error if w is 0.
std::vector<Fingerprint> winnow(const std::vector<std::uint64_t>& hashes, std::size_t w);

/// The settings of a comparison.
///   k = 12 tokens (the noise threshold): once identifiers are one class, every solution shares
///     short runs by the language's grammar alone (`ID ( ID , ID ) = NUM ;` is 8 tokens); runs
///     shorter than k never match. Larger k lets a copier hide by editing every k-th token, and
///     an exercise is only 100 to 300 tokens. Measured on tests/grade/similarity/: k = 8 or 10
///     let two independently written softmax solutions share 1 or 2 fingerprints, k = 12 none,
///     while a renamed, reformatted copy keeps over 90% of them.
///   w = 8: any shared run of w + k - 1 = 19 tokens (about two statements; the paper's guarantee
///     threshold) gives a common fingerprint, and about 2 / (w + 1) of the k-grams are kept (the
///     paper's density), so a comparison is cheap.
///   threshold = 0.5: a pair is flagged when at least half of either file's fingerprints are
///     in the other; min_shared = 5: and they share at least 5 (a few fingerprints of a nearly
///     empty file are no evidence).
///   max_common = 10 (MOSS's -m and its default): a fingerprint found in more than 10 of the
///     exercise's submissions is treated as the stub's. Code that much of a class shares is an
///     idiom, a lecture's example or the obvious solution; counting it would flag every pair of
///     students who wrote it. 0: no limit. (So 11 students who all copied one file are flagged
///     only by what they changed in common; lower it, or set 0, to see them.)
struct SimilarityOptions {
  std::size_t k = 12;
  std::size_t w = 8;
  double threshold = 0.5;
  std::size_t min_shared = 5;
  std::size_t max_common = 10;
  std::size_t max_file_bytes = kMaxSourceBytes;
};

/// One submission of one exercise: who handed it in and the code.
struct Submission {
  std::string student;
  std::string source;
};

/// A byte range [begin, end) of a source.
struct Region {
  std::size_t begin = 0;
  std::size_t end = 0;
};

/// A flagged pair. overlap_a = shared / fingerprints of a, overlap_b = shared / fingerprints of b
/// (each file's fingerprints counted as distinct hashes, the stub's and the common ones removed).
/// regions_a and regions_b are the byte ranges of a's and b's k-grams (every k-gram, not only
/// fingerprints) that the other file has too and the stub has not (sorted, merged): the matched
/// code.
struct SimilarPair {
  std::string a, b;  ///< students, a < b
  double overlap_a = 0.0, overlap_b = 0.0;
  std::size_t shared = 0;
  std::size_t fingerprints_a = 0, fingerprints_b = 0;
  std::vector<Region> regions_a, regions_b;
};

/// The pairs of submissions of one exercise whose overlap (either direction) is at least
/// options.threshold and who share at least options.min_shared fingerprints, sorted by the larger
/// overlap, then the smaller, descending (then by names). Fingerprints whose k-gram occurs in
/// `stub` (the handed-out file) are removed first, so a submission equal to the stub has none and
/// is never flagged, and so are those found in more than options.max_common submissions.
/// Throws: xenc::config_error naming the option and its value if k or w is 0, threshold is not in
/// (0, 1], or a source (the stub's included) is longer than max_file_bytes (naming the student).
std::vector<SimilarPair> similar_pairs(const std::vector<Submission>& submissions,
                                       const std::string& stub,
                                       const SimilarityOptions& options = {});

}  // namespace xenc::grade

// A vocabulary: token <-> id, with <pad> = 0 and <unk> = 1.
//
// Unknown words map to <unk>, never an error. Text that is not valid UTF-8 is an
// xenc::encoding_error (from tokenize or add). encode_batch pads sentences to a common length
// and returns the key-padding mask the encoder expects (true = padding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "xenc/core/error.hpp"
#include "xenc/core/tensor.hpp"

namespace xenc {

/// The longest sentence Vocabulary::encode_batch encodes unless its caller raises the limit,
/// and LoadLimits::max_sequence_length's default (a checkpoint's max_len): 2048 tokens. An
/// encoder's attention holds B · nhead · T² scores per layer, so a sentence of 100,000 words
/// (a 600 KB string) would need tens of gigabytes; a program that estimates its memory first
/// (nn/cost.hpp) passes the length it has checked.
inline constexpr std::size_t kMaxSequenceLength = 2048;

class Vocabulary {
 public:
  static constexpr std::int64_t pad_id = 0;
  static constexpr std::int64_t unk_id = 1;
  static constexpr const char* pad_token = "<pad>";
  static constexpr const char* unk_token = "<unk>";

  /// Only <pad> and <unk>.
  Vocabulary();
  /// <pad>, <unk>, then each distinct token in order of first appearance.
  static Vocabulary from_tokens(const std::vector<std::string>& tokens);
  /// Tokenizes each text (text/tokenizer.hpp) and builds from all tokens in order.
  static Vocabulary from_texts(const std::vector<std::string>& texts);

  /// Adds a token if new; returns its id. Throws xenc::encoding_error if the token is not valid
  /// UTF-8. Tokens are stored as given: from_texts and encode_batch fold case through tokenize,
  /// so id("CAFÉ") is unk_id in a vocabulary built from texts, id("café") is not.
  std::int64_t add(const std::string& token);
  /// The token's id, or unk_id.
  std::int64_t id(const std::string& token) const;
  bool contains(const std::string& token) const;
  /// Throws xenc::index_error for an id outside [0, size()).
  const std::string& token(std::int64_t id) const;
  std::size_t size() const { return tokens_.size(); }

  /// Token ids of one tokenized sentence: [T].
  Index1 encode(const std::vector<std::string>& tokens) const;

  struct Batch {
    Index2 ids;                                    ///< [B, T] padded with pad_id
    Mask2 padding_mask;                            ///< [B, T], true = padding
    std::vector<std::vector<std::string>> tokens;  ///< each sentence's tokens
  };
  /// Tokenizes and encodes sentences, padded to the longest. Throws std::invalid_argument for
  /// an empty list, and xenc::shape_error for a sentence of more than max_length tokens (before
  /// the [B, T] batch is allocated), naming the sentence, its length and the limit:
  ///     "Vocabulary.encode_batch: texts[1] has 5000 tokens, expected at most max_length = 2048
  ///      (kMaxSequenceLength; pass a larger max_length to encode it)"
  Batch encode_batch(const std::vector<std::string>& texts,
                     std::size_t max_length = kMaxSequenceLength) const;

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, std::int64_t> ids_;
};

}  // namespace xenc

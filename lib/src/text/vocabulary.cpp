// Vocabulary with <pad> = 0 and <unk> = 1; batches padded with their key-padding mask.
#include "xenc/text/vocabulary.hpp"

#include <algorithm>
#include <stdexcept>

#include "xenc/core/error.hpp"
#include "xenc/text/tokenizer.hpp"

namespace xenc {

Vocabulary::Vocabulary() {
  add(pad_token);
  add(unk_token);
}

Vocabulary Vocabulary::from_tokens(const std::vector<std::string>& tokens) {
  Vocabulary v;
  for (const auto& t : tokens) v.add(t);
  return v;
}

Vocabulary Vocabulary::from_texts(const std::vector<std::string>& texts) {
  Vocabulary v;
  for (const auto& text : texts)
    for (const auto& t : tokenize(text)) v.add(t);
  return v;
}

std::int64_t Vocabulary::add(const std::string& token) {
  check_utf8(token, "Vocabulary.add");  // every token prints as text (SVG, JSON, terminals)
  auto it = ids_.find(token);
  if (it != ids_.end()) return it->second;
  const auto id = static_cast<std::int64_t>(tokens_.size());
  tokens_.push_back(token);
  ids_.emplace(token, id);
  return id;
}

std::int64_t Vocabulary::id(const std::string& token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? unk_id : it->second;
}

bool Vocabulary::contains(const std::string& token) const { return ids_.count(token) != 0; }

const std::string& Vocabulary::token(std::int64_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= tokens_.size())
    throw index_error("Vocabulary.token: id is " + std::to_string(id) + ", expected 0 <= id < " +
                      std::to_string(tokens_.size()));
  return tokens_[static_cast<std::size_t>(id)];
}

Index1 Vocabulary::encode(const std::vector<std::string>& tokens) const {
  Index1 ids = Index1::from_shape({tokens.size()});
  for (std::size_t i = 0; i < tokens.size(); ++i) ids(i) = id(tokens[i]);
  return ids;
}

Vocabulary::Batch Vocabulary::encode_batch(const std::vector<std::string>& texts,
                                           std::size_t max_length) const {
  if (texts.empty())
    throw std::invalid_argument(
        "Vocabulary.encode_batch: texts is empty, expected at least one sentence");
  Batch batch;
  std::size_t T = 0;
  for (const auto& text : texts) {
    batch.tokens.push_back(tokenize(text));
    const std::size_t n = batch.tokens.back().size();
    // the length decided before the [B, T] ids and whatever a model makes of them
    if (n > max_length)
      throw shape_error(
          "Vocabulary.encode_batch: texts[" + std::to_string(batch.tokens.size() - 1) + "] has " +
          std::to_string(n) +
          " tokens, expected at most max_length = " + std::to_string(max_length) +
          (max_length == kMaxSequenceLength ? " (kMaxSequenceLength" : " (the caller's limit") +
          "; pass a larger max_length to encode it)");
    T = std::max(T, n);
  }
  const std::size_t B = texts.size();
  batch.ids = xt::zeros<std::int64_t>({B, T});  // pad_id = 0
  batch.padding_mask = xt::ones<bool>({B, T});  // true = padding until a token fills it
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < batch.tokens[b].size(); ++t) {
      batch.ids(b, t) = id(batch.tokens[b][t]);
      batch.padding_mask(b, t) = false;
    }
  return batch;
}

}  // namespace xenc

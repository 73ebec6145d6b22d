// Seeded Fisher-Yates shuffling and padded mini-batches.
#include "xenc/data/batching.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace xenc {

std::vector<std::size_t> shuffled_indices(std::size_t n, Rng& rng) {
  std::vector<std::size_t> idx(n);
  for (std::size_t i = 0; i < n; ++i) idx[i] = i;
  // Fisher-Yates: swap position i with a uniform j in [0, i]; j = floor(u32 · (i + 1) / 2^32)
  for (std::size_t i = n; i-- > 1;) {
    const std::size_t j =
        static_cast<std::size_t>((std::uint64_t(rng.next_u32()) * std::uint64_t(i + 1)) >> 32);
    std::swap(idx[i], idx[j]);
  }
  return idx;
}

namespace {
std::vector<std::vector<std::size_t>> cut(const std::vector<std::size_t>& order,
                                          std::size_t batch_size, const char* where) {
  if (batch_size == 0) throw std::invalid_argument(std::string(where) + ": batch_size must be > 0");
  std::vector<std::vector<std::size_t>> out;
  for (std::size_t s = 0; s < order.size(); s += batch_size)
    out.emplace_back(order.begin() + s, order.begin() + std::min(order.size(), s + batch_size));
  return out;
}
}  // namespace

std::vector<std::vector<std::size_t>> shuffled_batches(std::size_t n, std::size_t batch_size,
                                                       Rng& rng) {
  if (batch_size == 0) throw std::invalid_argument("shuffled_batches: batch_size must be > 0");
  return cut(shuffled_indices(n, rng), batch_size, "shuffled_batches");
}

std::vector<std::vector<std::size_t>> sequential_batches(std::size_t n, std::size_t batch_size) {
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  return cut(order, batch_size, "sequential_batches");
}

LabelledBatch make_batch(const std::vector<LabelledSentence>& data,
                         const std::vector<std::size_t>& indices, const Vocabulary& vocab) {
  if (indices.empty()) throw std::invalid_argument("make_batch: indices is empty, expected >= 1");
  std::size_t T = 0;
  for (std::size_t i : indices) {
    if (i >= data.size())
      throw std::invalid_argument("make_batch: index " + std::to_string(i) +
                                  " is out of range, expected < " + std::to_string(data.size()));
    const auto& s = data[i];
    if (s.tokens.size() != s.labels.size())
      throw std::invalid_argument("make_batch: sentence " + std::to_string(i) + " has " +
                                  std::to_string(s.tokens.size()) + " tokens but " +
                                  std::to_string(s.labels.size()) + " labels");
    T = std::max(T, s.tokens.size());
  }
  if (T == 0) throw std::invalid_argument("make_batch: every sentence is empty");
  const std::size_t B = indices.size();
  LabelledBatch b;
  // padding everywhere first, then each sentence over its own first tokens
  b.ids = Index2::from_shape({B, T});
  b.ids.fill(Vocabulary::pad_id);
  b.padding_mask = Mask2::from_shape({B, T});
  b.padding_mask.fill(true);
  b.labels = Index2::from_shape({B, T});
  b.labels.fill(kIgnoreIndex);
  for (std::size_t r = 0; r < B; ++r) {
    const auto& s = data[indices[r]];
    for (std::size_t t = 0; t < s.tokens.size(); ++t) {
      b.ids(r, t) = vocab.id(s.tokens[t]);
      b.padding_mask(r, t) = false;
      b.labels(r, t) = s.labels[t];
    }
  }
  return b;
}

}  // namespace xenc

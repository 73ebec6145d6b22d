// Seeded shuffling and mini-batches with padding masks, for training loops.
//
//     xenc::Rng rng(seed);
//     for (int epoch = 0; epoch < epochs; ++epoch)
//       for (const auto& idx : xenc::shuffled_batches(data.size(), 32, rng)) {
//         xenc::LabelledBatch b = xenc::make_batch(data, idx, vocab);   // ids, mask, labels
//         ...
//       }
//
// The shuffle is Fisher-Yates driven by xenc::Rng (mt19937), not std::shuffle (whose algorithm
// the C++ standard leaves to each library), so the same seed gives the same batches with any
// compiler, in the compiled apps and in the notebooks.
// Shapes:  ids, labels: [B, T] (T = longest sentence of the batch)   padding_mask: [B, T]
// Throws:  std::invalid_argument for batch_size 0, an empty batch, an index out of range, or a
//          sentence whose labels and tokens differ in length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "xenc/core/random.hpp"
#include "xenc/core/tensor.hpp"
#include "xenc/text/vocabulary.hpp"

namespace xenc {

/// The loss ignores targets equal to this (PyTorch's default ignore_index).
inline constexpr std::int64_t kIgnoreIndex = -100;

/// One sentence with a label per token (kIgnoreIndex for tokens that carry none).
struct LabelledSentence {
  std::vector<std::string> tokens;
  std::vector<std::int64_t> labels;
};

/// A padded batch: padding positions have id <pad>, mask true and label kIgnoreIndex.
struct LabelledBatch {
  Index2 ids;          ///< [B, T]
  Mask2 padding_mask;  ///< [B, T], true = padding
  Index2 labels;       ///< [B, T]
};

/// 0, 1, ..., n-1 in an order drawn from rng (Fisher-Yates).
std::vector<std::size_t> shuffled_indices(std::size_t n, Rng& rng);

/// A fresh shuffle cut into batches of batch_size (the last one may be smaller).
std::vector<std::vector<std::size_t>> shuffled_batches(std::size_t n, std::size_t batch_size,
                                                       Rng& rng);

/// The same without shuffling (evaluation): 0..n-1 in order, in batches.
std::vector<std::vector<std::size_t>> sequential_batches(std::size_t n, std::size_t batch_size);

/// Encodes data[indices] with vocab (unknown tokens become <unk>) and pads to the longest.
LabelledBatch make_batch(const std::vector<LabelledSentence>& data,
                         const std::vector<std::size_t>& indices, const Vocabulary& vocab);

}  // namespace xenc

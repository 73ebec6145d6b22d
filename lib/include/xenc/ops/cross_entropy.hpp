// Cross-entropy over logits, averaged over the rows whose target is not ignore_index.
//
//     loss = -1/N' Σ_n log softmax(logits_n)[target_n]
// Backward: dlogits_n = (softmax(logits_n) - onehot(target_n)) / N'   (0 for ignored rows)
// With every target ignored (N' = 0) the loss is 0/0 = NaN, as in PyTorch 1.13 (a batch with
// nothing to learn from must not pass for a perfect one), and the gradient is all zeros.
// Reference: reference::cross_entropy_forward / _backward (xenc/reference/ops.hpp).
// Shapes:  logits: [N, C]   targets: [N] (int64, in [0, C) or ignore_index)
// PyTorch: torch.nn.functional.cross_entropy(logits, targets, ignore_index=-100)
// Throws:  shape_error if targets is not [N]; xenc::index_error for a target outside [0, C).
#pragma once

#include <cstdint>

#include "xenc/core/error.hpp"
#include "xenc/core/tensor.hpp"

namespace xenc {

float cross_entropy_forward(const Tensor2& logits, const Index1& targets,
                            std::int64_t ignore_index = -100);

Tensor2 cross_entropy_backward(const Tensor2& logits, const Index1& targets,
                               std::int64_t ignore_index = -100);

/// Per-token classification: logits [B, T, C], targets [B, T], as the [B·T, C] case above
/// (the mean runs over every non-ignored token of the batch, as PyTorch on flattened inputs).
/// Throws shape_error unless targets is [B, T].
float cross_entropy_forward(const Tensor3& logits, const Index2& targets,
                            std::int64_t ignore_index = -100);
Tensor3 cross_entropy_backward(const Tensor3& logits, const Index2& targets,
                               std::int64_t ignore_index = -100);

}  // namespace xenc

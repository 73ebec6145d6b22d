// Embedding lookup: row ids[b, t] of the table.
//
//     y[b, t, :] = weight[ids[b, t], :]
// Backward: dweight[v, :] = Σ_{(b,t): ids[b,t] = v} dy[b, t, :]   (rows of padding_idx get none)
// Shapes:  ids: [B, T] (int64)   weight: [V, D]   y: [B, T, D]
// PyTorch: torch.nn.functional.embedding(ids, weight, padding_idx)
// Throws:  xenc::index_error (an std::invalid_argument) for an id outside [0, V).
#pragma once

#include <cstdint>

#include "xenc/core/error.hpp"
#include "xenc/core/tensor.hpp"

namespace xenc {

Tensor3 embedding_forward(const Index2& ids, const Tensor2& weight);

/// padding_idx < 0 means none.
Tensor2 embedding_backward(const Tensor3& grad_y, const Index2& ids, std::size_t num_embeddings,
                           std::int64_t padding_idx = -1);

}  // namespace xenc

// The position-wise feed-forward block for inference, in chunks of rows:
//
//     y = act(x W1ᵀ + b1) W2ᵀ + b2          act: relu or gelu (ops/activation.hpp)
//
// Shapes:  x: [B, T, in]   W1: [F, in]   b1: [F] or empty   W2: [out, F]   b2: [out] or empty
//          y: [B, T, out]
// Rows are independent, so the B·T rows run chunk_rows at a time through one [chunk_rows, F]
// hidden buffer: the [B·T, F] hidden layer is never whole (at T = 32768, F = 2048 it would be
// 256 MiB; a chunk of 1024 rows is 8 MiB). Each chunk's GEMMs (linear_forward's, on the chunk's
// rows) read x's rows and write y's rows where they are: nothing is copied, and no step outside
// the GEMMs and the activation grows with T. No gradients: a training forward keeps the whole
// hidden layer (nn/transformer_encoder.hpp).
// PyTorch: linear2(activation(linear1(x))) of torch.nn.TransformerEncoderLayer, without dropout
// Throws:  shape_error naming the argument and both shapes; config_error if chunk_rows is 0.
#pragma once

#include <cstddef>

#include "xenc/core/tensor.hpp"
#include "xenc/ops/activation.hpp"

namespace xenc {

Tensor3 feed_forward_in_chunks(const Tensor3& x, const Tensor2& w1, const Tensor1& b1,
                               Activation activation, const Tensor2& w2, const Tensor1& b2,
                               std::size_t chunk_rows);

}  // namespace xenc

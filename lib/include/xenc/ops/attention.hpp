// Scaled dot-product attention (Vaswani et al., 2017, eq. 1).
//
//     S = Q Kᵀ / √Dh + attn_mask          scores, one [Tq, Tk] matrix per (batch, head)
//     S[i, j] = -inf where key_padding_mask[b, j] is true (PyTorch: true = padding)
//     P = softmax(S)  (rows over keys; a query with every key masked gets zeros, not PyTorch's
//                      NaN; a NaN score gives a NaN row, as in PyTorch)
//     O = P V
// Backward:  dP = dO Vᵀ   dV = Pᵀ dO   dS = P ⊙ (dP - rowsum(dP ⊙ P))
//            dQ = dS K / √Dh   dK = dSᵀ Q / √Dh
//
// Shapes:  Q: [B, H, Tq, Dh]   K, V: [B, H, Tk, Dh]   O: [B, H, Tq, Dh]   P: [B, H, Tq, Tk]
//          key_padding_mask: [B, Tk] bool or empty   attn_mask: [Tq, Tk] additive float or empty
// PyTorch: torch.nn.functional.scaled_dot_product_attention (2.0) / the core of
//          nn.MultiheadAttention (1.13)
// Multi-head attention on [B, T, D] tensors (heads as column blocks, no copies) is in
// ops/multi_head_attention.hpp.
// Throws:  shape_error naming the argument and both shapes.
// Reference: reference::scaled_dot_product_attention_forward / _backward, loop by loop.
#pragma once

#include <cstddef>

#include "xenc/core/tensor.hpp"

namespace xenc {

struct AttentionResult {
  Tensor4 output;   ///< O: [B, H, Tq, Dh]
  Tensor4 weights;  ///< P: [B, H, Tq, Tk]
};

struct AttentionGrads {
  Tensor4 query;  ///< dQ: [B, H, Tq, Dh]
  Tensor4 key;    ///< dK: [B, H, Tk, Dh]
  Tensor4 value;  ///< dV: [B, H, Tk, Dh]
};

/// Empty masks mean "no mask" (as None in PyTorch).
AttentionResult scaled_dot_product_attention_forward(const Tensor4& query, const Tensor4& key,
                                                     const Tensor4& value,
                                                     const Mask2& key_padding_mask = Mask2(),
                                                     const Tensor2& attn_mask = Tensor2());

AttentionGrads scaled_dot_product_attention_backward(const Tensor4& grad_output,
                                                     const Tensor4& query, const Tensor4& key,
                                                     const Tensor4& value, const Tensor4& weights);

}  // namespace xenc

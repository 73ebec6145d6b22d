// Scaled dot-product attention (Vaswani et al., 2017, eq. 1).
//
//     S = Q Kᵀ / √Dh + attn_mask          scores, one [Tq, Tk] matrix per (batch, head)
//     S[i, j] = -inf where key_padding_mask[b, j] is true (PyTorch: true = padding)
//     P = softmax(S)  (rows over keys; a row with every key masked is all zeros, never NaN)
//     O = P V
// Backward:  dP = dO Vᵀ   dV = Pᵀ dO   dS = P ⊙ (dP - rowsum(dP ⊙ P))
//            dQ = dS K / √Dh   dK = dSᵀ Q / √Dh
//
// Shapes:  Q: [B, H, Tq, Dh]   K, V: [B, H, Tk, Dh]   O: [B, H, Tq, Dh]   P: [B, H, Tq, Tk]
//          key_padding_mask: [B, Tk] bool or empty   attn_mask: [Tq, Tk] additive float or empty
// PyTorch: torch.nn.functional.scaled_dot_product_attention (2.0) / the core of
//          nn.MultiheadAttention (1.13)
// Throws:  shape_error naming the argument and both shapes.
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

/// The reference: every score, max, exponential and sum in explicit loops.
AttentionResult scaled_dot_product_attention_naive(const Tensor4& query, const Tensor4& key,
                                                   const Tensor4& value,
                                                   const Mask2& key_padding_mask = Mask2(),
                                                   const Tensor2& attn_mask = Tensor2());

/// The kernel for one (batch, head): two GEMMs around a row softmax, on strided slices.
/// q: Tq rows of Dh floats, row stride ldq (likewise k, v, out). key_padding: Tk bools or
/// null. attn_mask: [Tq, Tk] or null. probs: Tq × Tk floats, receives P.
/// dropout_mask: [Tq, Tk] factors (0 or 1/(1-p)) or null; with a mask, out = (P ⊙ mask) V and
/// `scratch` (Tq × Tk floats) holds P ⊙ mask. Without one, scratch may be null.
void attention_head_forward(std::size_t Tq, std::size_t Tk, std::size_t Dh, float scale,
                            const float* q, std::size_t ldq, const float* k, std::size_t ldk,
                            const float* v, std::size_t ldv, const bool* key_padding,
                            const float* attn_mask, float* probs, float* out, std::size_t ldo,
                            const float* dropout_mask = nullptr, float* scratch = nullptr);

/// Backward of one (batch, head), given P from the forward (and its dropout mask, if any).
/// scratch: Tq × Tk floats. dq, dk, dv are written (not accumulated).
void attention_head_backward(std::size_t Tq, std::size_t Tk, std::size_t Dh, float scale,
                             const float* q, std::size_t ldq, const float* k, std::size_t ldk,
                             const float* v, std::size_t ldv, const float* probs,
                             const float* dout, std::size_t lddo, float* scratch, float* dq,
                             std::size_t lddq, float* dk, std::size_t lddk, float* dv,
                             std::size_t lddv, const float* dropout_mask = nullptr);

}  // namespace xenc

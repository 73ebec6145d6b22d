// Relative positions inside attention, Transformer-XL's form (Dai et al., 2019, "Transformer-XL:
// Attentive Language Models Beyond a Fixed-Length Context", section 3.3), encoder form.
//
// Head h scores query i against key j with a content term and a position term:
//
//     S_h[i, j] = ( (q_i + u_h) · k_j  +  (q_i + v_h) · r_h[i − j] ) / √Dh   (+ masks)
//                    content (a)+(b)        position (c)+(d)
//     r = R W_Rᵀ,   R[δ] = PE(δ)  (the sinusoidal table of ops/positional.hpp, at δ = i − j)
//     O_h = softmax(S_h) v_h
//
// u, v [H, Dh] (the paper's u and v, one per head) and W_R [D, D] are learned; PE is fixed.
// In an encoder every query sees keys on both sides, so δ = i − j runs over −(T−1) .. T−1:
// 2T − 1 rows of R, column m of Z = (q + v) rᵀ holding δ = T − 1 − m. The relative shift
// (the paper's appendix B) turns Z [T, 2T−1] into the [T, T] position term by moving row i
// left by T − 1 − i:
//
//     shift(Z)[i, j] = Z[i, T − 1 − i + j]        (= (q_i + v)·r[i − j])
//
// which costs one [T, 2T−1] product per head instead of a [T, T, Dh] table of r[i − j].
// Speed: per head, that GEMM and the plain attention kernel (lib/src/kernels/relative.cpp); in
// a contiguous Z the shift is the strided view (Z + T − 1, row stride 2T − 2): no copy.
// Randomized positions (Ruoss et al., 2023, ops/randomized_positions.hpp) replace the distance
// values δ by a sorted random sample (rows stay 2T − 1, the shift is unchanged): hence R is
// built from a list of distance values.
//
// Shapes:  q, k, v: [B, T, D] (self-attention: Tq = Tk = T)   u, v: [H, Dh]   W_R: [D, D]
//          R: [2T−1, D]   weights P: [B, H, T, T]
// PyTorch: no module; tests/reference/generate_relative.py writes it from the paper with a
//          [T, T, D] table of R[i − j] (no shift), the oracle the tests compare against.
// Reference: reference::relative_attention_forward / _backward (xenc/reference/ops.hpp).
// Throws:  shape_error naming the argument and both shapes.
#pragma once

#include <cstddef>
#include <vector>

#include "xenc/core/tensor.hpp"
#include "xenc/ops/multi_head_attention.hpp"

namespace xenc {

/// The learned parts of Transformer-XL's attention, and their gradients (accumulated by
/// relative_attention_accumulate). One set is shared by every layer that uses it.
struct RelativeAttentionParameters {
  Tensor2 content_bias, position_bias;  ///< u, v: [H, Dh]
  Tensor2 position_weight;              ///< W_R: [D, D] (Linear layout [out, in], no bias)
  Tensor2 content_bias_grad, position_bias_grad, position_weight_grad;
  /// The 2T − 1 distance values of the current forward (randomized positions), or empty: the
  /// plain δ = T − 1 − m (relative_distances).
  std::vector<double> distances;
};

/// δ = T − 1 − m for m = 0 .. 2T − 2: the distance values of the plain (not randomized) scheme.
std::vector<double> relative_distances(std::size_t T);
/// R [2T−1, D]: row m is PE(distances[m]) (sinusoidal_value; negative distances too).
Tensor2 relative_sinusoids(const std::vector<double>& distances, std::size_t d_model);

/// The relative shift: z [T, 2T−1] -> [T, T], out[i, j] = z[i, T − 1 − i + j].
/// Throws:  shape_error unless z is [T, 2T−1].
Tensor2 relative_shift(const Tensor2& z);
/// Its backward: grad [T, T] -> [T, 2T−1], grad[i, j] added at z[i, T − 1 − i + j], zero
/// elsewhere.
Tensor2 relative_shift_backward(const Tensor2& grad);

/// What the backward needs from the forward.
struct RelativeAttentionSaved {
  bool valid = false;
  Tensor4 probs;         ///< P [B, H, T, T] (before dropout)
  Tensor4 dropout_mask;  ///< [B, H, T, T] or empty
  Tensor2 sinusoids;     ///< R [2T−1, D]
  Tensor2 r;             ///< R W_Rᵀ [2T−1, D]
};

struct RelativeAttentionResult {
  Tensor3 output;  ///< concat of the heads, [B, T, D] (before the output projection)
  RelativeAttentionSaved saved;
};

struct RelativeAttentionGrads {
  Tensor3 q, k, v;                      ///< dL/d(q, k, v)
  Tensor2 content_bias, position_bias;  ///< dL/du, dL/dv [H, Dh]
  Tensor2 position_weight;              ///< dL/dW_R [D, D]
};

/// The heads' attention with Transformer-XL's relative positions. in: H, key padding mask
/// [B, T], attn_mask [T, T], dropout_mask [B, H, T, T] (each may be empty); in.position is not
/// read. sinusoids: R [2T−1, D] (relative_sinusoids).
RelativeAttentionResult relative_attention_forward(const Tensor3& q, const Tensor3& k,
                                                   const Tensor3& v, const AttentionInputs& in,
                                                   const RelativeAttentionParameters& p,
                                                   const Tensor2& sinusoids);
/// dL/d(q, k, v, u, v, W_R) from dL/d(output) and the saved state. in as for the forward.
RelativeAttentionGrads relative_attention_backward(const Tensor3& grad_output, const Tensor3& q,
                                                   const Tensor3& k, const Tensor3& v,
                                                   const RelativeAttentionSaved& saved,
                                                   const RelativeAttentionParameters& p,
                                                   std::size_t num_heads);
/// Adds g's u, v and W_R gradients into p's *_grad (allocated on first use).
void relative_attention_accumulate(RelativeAttentionParameters& p, const RelativeAttentionGrads& g);

}  // namespace xenc

// Multi-head attention as pure functions on [B, T, D] tensors (Vaswani et al., 2017, 3.2.2).
//
//     q = query W_qᵀ + b_q    k = key W_kᵀ + b_k    v = value W_vᵀ + b_v        (in_projection)
//     head h = columns h·Dh .. (h+1)·Dh of q, k, v                (Dh = D / H; no copies)
//     O_h = softmax(q_h k_hᵀ / √Dh + attn_mask + bias_h) v_h       (multi_head_attention)
//     output = concat_h(O_h)                                          [B, Tq, D]
//
// in_proj_weight [3D, D] = [W_q; W_k; W_v] and in_proj_bias [3D] = [b_q; b_k; b_v] are
// PyTorch's packed parameters; the three projections are three GEMMs on row blocks of them.
// A position scheme that acts inside attention (rotary, ALiBi) plugs in as an
// AttentionPosition: it may transform q and k by position before the scores (and their
// gradients after the backward), and add a per-head bias to the scores.
//
// Shapes:  query: [B, Tq, D]   key, value: [B, Tk, D]   weights P: [B, H, Tq, Tk]
//          key_padding_mask: [B, Tk] bool (true = padding) or empty
//          attn_mask: [Tq, Tk] additive float or empty
// PyTorch: torch.nn.functional.multi_head_attention_forward (batch_first, need_weights with
//          average_attn_weights=False); the in-projection is its _in_projection_packed.
// Throws:  shape_error naming the argument and both shapes.
// Reference: reference::linear_forward, split_heads, rope_forward, alibi_bias,
//          scaled_dot_product_attention_forward, merge_heads (xenc/reference/ops.hpp) compose to
//          the same result, loop by loop (tests/reference/test_ops.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "xenc/core/tensor.hpp"

namespace xenc {

/// The seam for position schemes that act inside attention. Every method has a neutral
/// default, so a scheme overrides only what it does. Positions are token indices 0 .. T-1.
class AttentionPosition {
 public:
  virtual ~AttentionPosition() = default;

  /// Rotary-style: change q [B, Tq, D] and k [B, Tk, D] in place by position, head by head
  /// (head h is columns h·Dh .. (h+1)·Dh). Must be linear in q and k for the backward below.
  virtual void transform_qk(Tensor3& q, Tensor3& k, std::size_t num_heads) const;
  /// The backward of transform_qk: dq, dk with respect to its output become gradients with
  /// respect to its input (for a rotation R: multiply by Rᵀ).
  virtual void transform_qk_backward(Tensor3& dq, Tensor3& dk, std::size_t num_heads) const;

  /// ALiBi-style: true if score_bias adds anything.
  virtual bool has_score_bias() const { return false; }
  /// [Tq, Tk] added to head h's scores (after the 1/√Dh scaling, before the softmax). A
  /// fixed function of (h, i, j): no gradient flows into it.
  virtual Tensor2 score_bias(std::size_t head, std::size_t num_heads, std::size_t Tq,
                             std::size_t Tk) const;
  /// ALiBi's shortcut: the slope m when score_bias(head, ...) is −m·|i − j|, else 0 (the
  /// default). The attention kernel then writes the bias with the scores instead of reading a
  /// [Tq, Tk] tensor per head (same values, no tensor: bench/README.md).
  virtual float distance_bias_slope(std::size_t head, std::size_t num_heads) const;
};

/// The neutral AttentionPosition (every default): no position information inside attention.
const AttentionPosition& no_attention_position();

struct Projections {
  Tensor3 q, k, v;  ///< [B, Tq, D], [B, Tk, D], [B, Tk, D]
};

struct InProjectionGrads {
  Tensor3 query, key, value;  ///< dL/d(query, key, value) (self-attention: dx in .query only)
};

/// q, k, v from the packed parameters. in_proj_bias: [3D] or empty.
Projections in_projection_forward(const Tensor3& query, const Tensor3& key, const Tensor3& value,
                                  const Tensor2& in_proj_weight, const Tensor1& in_proj_bias);
/// The backward, accumulating as PyTorch's autograd accumulates .grad: ADDS dW into
/// in_proj_weight_grad [3D, D] and db into in_proj_bias_grad [3D] (skipped when empty) directly
/// (GEMMs with beta = 1; pass zeroed buffers for the gradients alone), and returns the input
/// gradients. grads: dL/d(q, k, v); query, key, value: the forward's inputs.
/// self_attention = true means query, key and value are one tensor x (pass it three times):
/// .query is then dx = dq W_q + dk W_k + dv W_v, the three GEMMs adding into one buffer, and
/// .key, .value are empty.
InProjectionGrads in_projection_backward(const Projections& grads, const Tensor3& query,
                                         const Tensor3& key, const Tensor3& value,
                                         const Tensor2& in_proj_weight,
                                         Tensor2& in_proj_weight_grad, Tensor1& in_proj_bias_grad,
                                         bool self_attention = false);

/// Attention dropout drawn tile by tile (the tiled path): the factor of score (i, j) of head h
/// of sequence b is a pure function of (seed, b·H + h, i, j) (a counter-based generator,
/// kernels::DropoutKey), so the tiled backward recomputes the forward's factors and no
/// [B, H, Tq, Tk] mask is stored. p = 0: none. attention_dropout_mask writes the same factors
/// out as a tensor (for the plain path, and to check one path against the other).
struct AttentionDropout {
  float p = 0.0f;          ///< probability of dropping a probability, 0 <= p < 1
  std::uint64_t seed = 0;  ///< one per forward
};

/// What the attention step needs besides q, k, v.
struct AttentionInputs {
  std::size_t num_heads;          ///< H (D must be divisible by it)
  const Mask2& key_padding_mask;  ///< [B, Tk] or empty
  const Tensor2& attn_mask;       ///< [Tq, Tk] or empty
  const Tensor4& dropout_mask;    ///< [B, H, Tq, Tk] factors 0 or 1/(1-p), or empty
  /// The position scheme acting inside attention; the default adds nothing.
  const AttentionPosition& position = no_attention_position();
  /// Dropout drawn per tile (tiled path only; not together with dropout_mask).
  AttentionDropout dropout = {};
};

struct MultiHeadAttentionResult {
  Tensor3 output;   ///< concat of the heads, [B, Tq, D] (before the output projection)
  Tensor4 weights;  ///< P [B, H, Tq, Tk] (before dropout) when kept, else empty
};

struct MultiHeadAttentionGrads {
  Tensor3 q, k, v;  ///< dL/d(q, k, v), before transform_qk_backward
};

/// The heads' attention on q, k, v (already transformed by position, if a scheme does that).
/// keep_weights = false (inference) reuses one [Tq, Tk] buffer for every head.
MultiHeadAttentionResult multi_head_attention_forward(const Tensor3& q, const Tensor3& k,
                                                      const Tensor3& v, const AttentionInputs& in,
                                                      bool keep_weights);
/// weights: P from the forward (kept). Masks and bias need no backward (they are constants).
MultiHeadAttentionGrads multi_head_attention_backward(const Tensor3& grad_output, const Tensor3& q,
                                                      const Tensor3& k, const Tensor3& v,
                                                      const Tensor4& weights,
                                                      const AttentionInputs& in);

}  // namespace xenc

namespace xenc {

// ---- Attention in tiles (issue #21) -------------------------------------------------------
//
// The same heads' attention computed tile by tile with an online softmax (FlashAttention-2,
// lib/src/kernels/attention_tiled.cpp): P is never formed, so memory is linear in T. The
// backward recomputes P tile by tile from the per-query log-sum-exp the forward saves.
// Position schemes work as on the plain path (transform_qk before; ALiBi's slope per tile; a
// general score_bias is a [Tq, Tk] tensor, read tile by tile). Dropout is drawn tile by tile
// from a counter-based generator (AttentionInputs::dropout), so training with attention
// dropout stays linear in memory; a [B, H, Tq, Tk] dropout_mask is also read tile by tile.
// Heads run side by side on as many threads as OpenBLAS may use (OPENBLAS_NUM_THREADS), with
// OpenBLAS itself set to one thread meanwhile (no threads inside threads), then restored.

/// Which computation of attention runs. Both give the same output within float rounding.
enum class AttentionPath {
  automatic,  ///< tiled when Tq · Tk >= kTiledAttentionMinScores and no weights are asked for
  plain,      ///< the [Tq, Tk] score matrix per head (needed for need_weights)
  tiled,      ///< tiles and an online softmax (the plain path still runs for need_weights)
};
/// Where automatic switches to tiles: Tq · Tk = 512 · 512 (bench/README.md, "Attention in tiles").
inline constexpr std::size_t kTiledAttentionMinScores = 512 * 512;

/// True if `path` runs tiles for these sizes: never when the weights are needed (as PyTorch).
bool attention_uses_tiles(AttentionPath path, std::size_t Tq, std::size_t Tk, bool need_weights);

struct TiledAttentionResult {
  Tensor3 output;  ///< concat of the heads, [B, Tq, D] (before the output projection)
  Tensor3 lse;     ///< log Σ_j exp(S[i, j]) per query, [B, H, Tq] (−inf: every key masked)
};

/// The factors (0 or 1/(1 − p)) that in.dropout draws, as a [B, H, Tq, Tk] tensor: the tiled
/// path with `dropout` equals the plain path with this dropout_mask.
/// Throws:  config_error unless 0 <= dropout.p < 1.
Tensor4 attention_dropout_mask(const AttentionDropout& dropout, std::size_t B, std::size_t H,
                               std::size_t Tq, std::size_t Tk);

/// multi_head_attention_forward in tiles; in.dropout_mask is read tile by tile, in.dropout
/// drawn tile by tile (memory linear in T in training too).
TiledAttentionResult multi_head_attention_forward_tiled(const Tensor3& q, const Tensor3& k,
                                                        const Tensor3& v,
                                                        const AttentionInputs& in);
/// The backward from what the tiled forward saved. Unlike the plain backward it needs the
/// masks and the position scheme again (in): it recomputes the scores.
MultiHeadAttentionGrads multi_head_attention_backward_tiled(const Tensor3& grad_output,
                                                            const Tensor3& q, const Tensor3& k,
                                                            const Tensor3& v,
                                                            const TiledAttentionResult& saved,
                                                            const AttentionInputs& in);

}  // namespace xenc

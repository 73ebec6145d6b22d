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

#include "xenc/core/random.hpp"
#include "xenc/core/tensor.hpp"
#include "xenc/ops/dropout.hpp"

namespace xenc {

struct RelativeAttentionParameters;  // ops/relative_attention.hpp

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

  /// Transformer-XL-style (ops/relative_attention.hpp): a position term that depends on q and
  /// has learned parameters, so the heads' attention runs as its own op on these parameters
  /// (their gradients accumulate in them). False, the default, for every other scheme.
  virtual bool has_relative_attention() const { return false; }
  /// The parameters of that op. Throws std::logic_error unless has_relative_attention().
  virtual RelativeAttentionParameters& relative_attention() const;
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

/// Attention dropout from a seed (ops/dropout.hpp's SeededDropout): the factor of score (i, j)
/// of head h of sequence b is a pure function of (seed, b·H + h, i, j) (a counter-based
/// generator, kernels::DropoutKey), so the tiled path draws it tile by tile and its backward
/// recomputes the forward's factors (no [B, H, Tq, Tk] mask stored); the plain path draws the
/// same factors block of rows by block of rows, and its backward draws them again: both paths
/// drop the same scores. p = 0: none.
using AttentionDropout = SeededDropout;

/// What the attention step needs besides q, k, v.
struct AttentionInputs {
  std::size_t num_heads;          ///< H (D must be divisible by it)
  const Mask2& key_padding_mask;  ///< [B, Tk] or empty
  const Tensor2& attn_mask;       ///< [Tq, Tk] or empty
  const Tensor4& dropout_mask;    ///< [B, H, Tq, Tk] factors 0 or 1/(1-p), or empty
  /// The position scheme acting inside attention; the default adds nothing.
  const AttentionPosition& position = no_attention_position();
  /// Dropout drawn where it is used, per tile or block of rows (not together with dropout_mask).
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
// Both paths run heads × query blocks (× batch) side by side on xencoder's thread pool when the
// plan below says so (AttentionPlan::threads), with OpenBLAS on one thread meanwhile.

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

namespace xenc {

// ---- Attention as one op with a plan (issue #28) ------------------------------------------
//
// What a module needs: plan_attention decides, from the sizes alone, the path (plain or tiles),
// how many threads run it and in what work items, and the form of the attention dropout;
// attention_forward runs the plan and returns one opaque saved state, on which
// attention_backward dispatches. A module calls these two and never names a path or a thread:
//
//     const AttentionPlan plan = plan_attention({B, H, Tq, Tk, Dh}, need_weights, dropout_p);
//     AttentionForward att = attention_forward(plan, q, k, v, masks, position, rng, keep);
//     ... att.output ...
//     MultiHeadAttentionGrads g = attention_backward(d_output, q, k, v, att.saved, position);
//
// The decisions, each measured (bench/README.md, "One pool"):
//   - path: tiles when Tq · Tk >= kTiledAttentionMinScores and no weights are asked for
//     (attention_uses_tiles), unless forced;
//   - threads: the whole thread budget (OPENBLAS_NUM_THREADS) when the heads' work, B·H·Tq·Tk·Dh
//     multiply-adds, is at least kThreadedAttentionMinWork, else one: below it, waking a thread
//     costs more than it gives;
//   - work items, cut from the sizes alone (for kAttentionDesignThreads, whatever the budget, so
//     that any thread count gives the same bits): heads × query blocks × batch for the forward
//     (every query row is independent), at least 4 per thread where the queries allow (blocks of
//     64 rows or more). The plain backward: heads × query blocks for dQ and each block's share
//     of dK, then heads × key blocks for dV and the sum of dK's shares, in the blocks' order.
//     The tiled backward: heads × batch, or, when those are fewer than 4 per thread of the
//     budget, heads × key blocks (whole key tiles) for dK, dV, then heads × query blocks (whole
//     query tiles) for dQ (which recomputes S and dP once more: 7 tile GEMMs instead of 5; the
//     whole head's tiles in the same order, so the same bits);
//   - dropout: one seed drawn from the module's Rng (two numbers); each work item draws the
//     factors of its own tile or rows from it, forward and backward, so no [B, H, Tq, Tk] mask is
//     written or kept: both paths drop the same scores.

/// The sizes attention is planned from.
struct AttentionShape {
  std::size_t batch, heads, queries, keys, head_dim;
};

/// From this many multiply-adds (B·H·Tq·Tk·Dh) attention runs on more than one thread. Set from
/// the layer at T = 128 (D = 256, H = 8: 2²², one step below): its attention is 9–10% of the
/// layer's time, so on 2 threads it could gain 1.05× at most, and the region's wake, waits and
/// cold caches (its items took 1.37–1.46× their 1-thread CPU) took all of it. In one process
/// with 1 and 2 threads alternating it ran 0.97–0.99× (inference) and 1.00–1.01× (training) at
/// 1.05–1.09× the CPU time (bench/README.md, "The layer at T = 128 back on one thread"); the op
/// alone, called back to back, wins on 2 threads from 2²⁰ (BM_AttentionOp).
inline constexpr std::size_t kThreadedAttentionMinWork = std::size_t(1) << 23;
/// The thread count the work items are cut for (from kThreadedAttentionMinWork on, whatever the
/// budget): at least 4 items per thread there, so that every budget runs the same items and
/// gets the same bits.
inline constexpr std::size_t kAttentionDesignThreads = 16;

/// Where, how and on how many threads attention runs; made by plan_attention.
struct AttentionPlan {
  AttentionShape shape;
  AttentionPath path;           ///< plain or tiled (never automatic)
  bool need_weights;            ///< P is returned (the plain path)
  float dropout;                ///< p of the attention dropout (0: none)
  std::size_t threads;          ///< threads of the pool (1: the caller's thread alone)
  std::size_t query_block;      ///< query rows per forward item and per backward dQ item
  bool backward_by_key_blocks;  ///< tiled backward in two passes (key blocks, then query blocks)
  std::size_t key_block;        ///< key rows per backward dK, dV item (plain path; tiled in two
                                ///< passes), else keys

  /// Work items of the forward: batch · heads · ⌈queries / query_block⌉.
  std::size_t forward_items() const;
  /// True if the saved state holds P [B, H, Tq, Tk] (the plain path), false if one log-sum-exp
  /// per query (tiles): what a memory estimate needs to know.
  bool saves_probabilities() const { return path == AttentionPath::plain; }
};

/// The plan for these sizes. thread_budget = 0: the current budget (OPENBLAS_NUM_THREADS).
/// threaded_from: the work (B·H·Tq·Tk·Dh) from which the plan uses the budget's threads and cuts
/// the work items; below it, one thread and one item per head. Leave the default; a benchmark
/// passes 0 or SIZE_MAX to time both sides of kThreadedAttentionMinWork (bench/scaling.sh).
/// Throws:  config_error unless 0 <= dropout < 1, or if a size is 0 (heads, head_dim).
AttentionPlan plan_attention(const AttentionShape& shape, bool need_weights, float dropout,
                             AttentionPath path = AttentionPath::automatic,
                             std::size_t thread_budget = 0,
                             std::size_t threaded_from = kThreadedAttentionMinWork);

/// What the backward needs from the forward, whichever path ran: P and the dropout mask (plain),
/// or O, the log-sum-exp per query, the dropout seed and the masks (tiles). Opaque: only
/// attention_backward reads it.
class AttentionSaved {
 public:
  bool empty() const { return !valid_; }

 private:
  friend struct AttentionOp;
  bool valid_ = false;
  AttentionPlan plan_{};
  Tensor4 probs_;               // plain path
  TiledAttentionResult tiles_;  // tiled path: O and lse
  AttentionDropout seed_;       // both paths: the backward draws the forward's factors again
  Mask2 key_padding_mask_;      // tiled path: the backward recomputes the scores
  Tensor2 attn_mask_;
};

struct AttentionForward {
  Tensor3 output;        ///< concat of the heads, [B, Tq, D] (before the output projection)
  Tensor4 weights;       ///< P [B, H, Tq, Tk] when plan.need_weights, else empty
  AttentionSaved saved;  ///< for attention_backward (empty unless save)
};

/// Runs the plan on q, k, v [B, T, D] (already transformed by position). The dropout (when
/// plan.dropout > 0) is drawn from dropout_rng; save = true keeps what the backward needs.
/// Throws:  shape_error naming the argument and both shapes (q, k, v, the masks against the plan).
AttentionForward attention_forward(const AttentionPlan& plan, const Tensor3& q, const Tensor3& k,
                                   const Tensor3& v, const Mask2& key_padding_mask,
                                   const Tensor2& attn_mask, const AttentionPosition& position,
                                   Rng& dropout_rng, bool save);
/// The same, lent the saved state of an earlier forward whose backward has run (a module's last
/// one). When save is true and every check has passed, this forward takes recycle's buffers
/// (on the plain path, P's when its shape is this plan's: 128 MiB at B = 1, H = 8, T = 2048,
/// mapped and faulted in already) and leaves it empty; a backward on it then throws. When a
/// check fails, or save is false, recycle is left as it was.
AttentionForward attention_forward(const AttentionPlan& plan, const Tensor3& q, const Tensor3& k,
                                   const Tensor3& v, const Mask2& key_padding_mask,
                                   const Tensor2& attn_mask, const AttentionPosition& position,
                                   Rng& dropout_rng, bool save, AttentionSaved& recycle);
/// dL/d(q, k, v) from dL/d(output) and the forward's saved state, on the forward's plan.
/// Throws:  std::logic_error if saved is empty; shape_error for grad_output or q, k, v.
MultiHeadAttentionGrads attention_backward(const Tensor3& grad_output, const Tensor3& q,
                                           const Tensor3& k, const Tensor3& v,
                                           const AttentionSaved& saved,
                                           const AttentionPosition& position);

}  // namespace xenc

// The memory and FLOP estimate of a pass (see cost.hpp for the accounting): every term is a
// tensor that a module of lib/src/nn/ allocates, named beside it.
#include "xenc/nn/cost.hpp"

#include <algorithm>

#include "xenc/ops/multi_head_attention.hpp"

namespace xenc {

namespace {
// Attention in tiles (lib/src/kernels/attention_tiled.cpp): each worker thread holds one score
// tile [64, 256] and the running max and sum of its 64 rows; counted for two workers (the
// machines xencoder targets), 64 KiB each, small next to the [B, T, D] tensors.
constexpr double kTileWorkers = 2;
constexpr double kTileValues = 64 * 256 + 2 * 64;
}  // namespace

double parameter_count(const EncoderModelConfig& c, std::size_t num_labels) {
  const double V = double(c.vocab_size), D = double(c.layer.d_model),
               F = double(c.layer.dim_feedforward), L = double(c.num_layers),
               C = double(num_labels);
  const double layer = 3 * D * D + 3 * D        // self_attn.in_proj_weight, in_proj_bias
                       + D * D + D              // self_attn.out_proj
                       + F * D + F + D * F + D  // linear1, linear2
                       + 4 * D;                 // norm1, norm2
  const double table =
      c.vocab_size > 0 && c.position == PositionKind::learned ? double(c.max_len) * D : 0.0;
  // relative positions (RelativePosition): u, v [H, Dh] and W_R [D, D], shared by the layers
  const double relative =
      c.vocab_size > 0 && c.position == PositionKind::relative ? 2 * D + D * D : 0.0;
  return V * D + table + relative + L * layer + (c.final_norm ? 2 * D : 0.0) + C * D +
         (C > 0 ? C : 0.0);
}

PassCost estimate_pass_cost(const EncoderModelConfig& c, std::size_t B_, std::size_t T_, Pass pass,
                            std::size_t num_labels) {
  const double B = double(B_), T = double(T_), D = double(c.layer.d_model),
               F = double(c.layer.dim_feedforward), H = double(c.layer.nhead),
               L = double(c.num_layers), C = double(num_labels);
  const double N = B * T, ND = N * D, NF = N * F, A = B * H * T * T, TT = T * T;
  // MultiheadAttention's automatic path: attention in tiles from T · T = 512², which keeps one
  // log-sum-exp per query (B·H·T) instead of the probabilities (A) for the backward
  // Transformer-XL's relative positions run their own op (ops/relative_attention.hpp), never in
  // tiles: it keeps P, and per layer the sinusoids R and the relative keys r, [2T − 1, D] each
  const bool relative = c.position == PositionKind::relative;
  const double RT = std::max(2 * T - 1, 0.0);  // the relative distances T − 1 .. −(T − 1)
  const bool tiles =
      !relative &&
      !plan_attention({1, 1, T_, T_, 1}, /*need_weights=*/false, 0.0f).saves_probabilities();
  PassCost r;
  r.parameters = parameter_count(c, num_labels);
  const double head = 2 * N * C;  // logits [B, T, C] (and their gradient in training)
  double values = 0;              // activations, in float32 values
  if (pass == Pass::training) {
    // every layer's cache: MHA query + q, k, v + P; out_proj, linear1, norm1, norm2 inputs;
    // linear2's input and the pre-activation [B, T, F]; with dropout the masks too (in tiles
    // the attention's factors are drawn per tile, not stored)
    const bool dropout = c.layer.dropout > 0.0f;
    const double cache = 8 * ND + 2 * NF + (tiles ? B * H * T : A) +
                         (dropout ? 2 * ND + NF + (tiles ? 0.0 : A) : 0.0) +
                         (relative ? 2 * RT * D : 0.0);
    // one backward step at a time: d_heads, dq, dk, dv, dx, the residual's gradient, the
    // feed-forward's [B, T, F] gradient and one head's [T, T] scratch
    // (relative: one head's dZ [T, 2T − 1] and dr [2T − 1, D] too)
    const double step = 6 * ND + NF + (tiles ? 0.0 : TT) + (relative ? RT * T + RT * D : 0.0);
    values = L * cache + step + head + ND /* head's cached input */ + 2 * N /* ids */;
    r.parameter_bytes = 16 * r.parameters;  // weights, gradients, AdamW's m and v
  } else {
    // the stack's input and its running output, then the larger of one layer's two steps:
    // attention (q, k, v, heads, out_proj: 5ND; scores: one [T, T] head on the plain path, A
    // when traced, which needs the weights and so never runs in tiles; in tiles a log-sum-exp
    // per query and head, B·H·T, and one score tile with its row statistics per worker)
    // and feed-forward (sa, h, the [B, T, F] hidden, linear2's and norm2's outputs: 4ND + NF)
    const bool traced = pass == Pass::traced_inference;
    // (relative: P for every head, R and r, and one head's Z [T, 2T − 1])
    const double scores = relative ? A + 2 * RT * D + RT * T
                          : traced ? 0.0
                          : tiles  ? B * H * T + kTileWorkers * kTileValues
                                   : TT;
    values = 2 * ND + std::max(5 * ND + scores, 4 * ND + NF) + head / 2;
    if (traced) values += 2 * ND + L * (ND + A);  // embeddings, every layer's output and P
    r.parameter_bytes = 4 * r.parameters;
  }
  r.activation_bytes = 4 * values;
  r.peak_bytes = r.parameter_bytes + r.activation_bytes;
  // GEMMs: in_proj 6ND², out_proj 2ND², scores and P·V 4BT²D, feed-forward 4NDF, head 2NDC;
  // and the softmax, kSoftmaxFlops per score (B·H·T² of them), which dominates when Dh is small
  // Relative positions add per layer r = R W_Rᵀ, 2(2T − 1)D², and Z = (q + v) rᵀ, 2BT(2T − 1)D
  const double position = relative ? 2 * RT * D * D + 2 * B * T * RT * D : 0.0;
  const double forward =
      L * (8 * ND * D + 4 * NF * D + 4 * B * TT * D + kSoftmaxFlops * B * H * TT + position) +
      2 * ND * C;
  r.flops = pass == Pass::training ? 3 * forward : forward;
  return r;
}

}  // namespace xenc

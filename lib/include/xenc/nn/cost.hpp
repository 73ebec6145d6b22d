// What a forward pass or a training step of an EncoderModel will cost, known before it runs:
// the peak memory and the floating-point operations, from the configuration and the batch shape
// [B, T] alone. A program calls it before it builds, allocates or trains, and refuses with a
// message naming the size when the answer is over its limit, instead of ending in
// std::bad_alloc after gigabytes (a notebook kernel must survive a too-large model too).
//
// Memory, float32 (4 bytes a value), counted from what the modules keep (N = B·T tokens,
// A = B·H·T² attention weights of one layer, P parameters):
//     parameters   P = V·D + max_len·D (learned) + L·(4D² + 2DF + F + 9D) + 2D (final norm)
//                      + C·D + C (a classifier head)
//     inference    P + the stack's input and running output (2ND) + the larger of one layer's
//                  attention step (q, k, v, heads, projection: 5ND + one head's T² scores) and
//                  its feed-forward step (4ND + NF); a traced pass keeps every layer's output and
//                  weights: + L·(ND + A). From T·T = 512² (and never when traced) attention
//                  runs in tiles: instead of one head's T² scores it holds a log-sum-exp per
//                  query and head (B·H·T) and a [64, 256] score tile per worker thread.
//     training     4P (weights, gradients, AdamW's two moments) + every layer's backward cache
//                  (8ND + 2NF + A; with dropout + 2ND + NF + A masks) + the working tensors of
//                  one backward step (6ND + NF + T²) + the head's logits and their gradient (2NC);
//                  in tiles (T·T >= 512²) a layer keeps B·H·T log-sum-exps instead of A, no
//                  A dropout mask (its factors are drawn per tile) and the step has no T² scratch
//     relative     Transformer-XL's positions (PositionKind::relative): + D² + 2D parameters
//                  (W_R, u, v, shared by the layers); their op never runs in tiles and keeps P,
//                  R and r ([2T − 1, D] each) per layer, and one head's Z [T, 2T − 1] as scratch
// The unit test (tests/nn/test_cost.cpp) checks the estimate against the peak RSS growth of a
// real pass at a few sizes: it stays within kCostEstimateFactor of the measurement.
//
// FLOPs (2 per multiply-add) of the forward:  L·(8ND² + 4NDF + 4BT²D + s·BHT²) + 2NDC, where
// s = kSoftmaxFlops counts the softmax's work per score (max, subtract, exp, sum, scale; an exp
// costs several multiply-adds), which outweighs the GEMMs when Dh = D/H is small; a training
// step is 3× that (the backward does two GEMMs for each one of the forward). Relative positions
// add per layer 2(2T − 1)D² (r = R W_Rᵀ) + 2BT(2T − 1)D (Z = (q + v) rᵀ).
//
//     xenc::PassCost c = xenc::estimate_pass_cost(cfg, /*B=*/32, /*T=*/128, xenc::Pass::training);
//     if (c.peak_bytes > limit) throw ...;   // before xenc::EncoderModel model(cfg)
//
// vocab_size = 0 describes a bare TransformerEncoder (no embedding, no position table).
// Never throws: the sums are in double, so absurd sizes give huge numbers, not overflow.
#pragma once

#include <cstddef>

#include "xenc/nn/encoder_model.hpp"

namespace xenc {

enum class Pass {
  inference,         ///< eval mode under NoGradGuard: no caches, one head's scores at a time
  traced_inference,  ///< the same, keeping every layer's output and attention weights (ModelTrace)
  training,          ///< train mode: forward with caches, backward, an AdamW step
};

/// Floating-point operations counted per attention score for the softmax and the tiles'
/// bookkeeping (a time estimate's unit): an exp is a polynomial of several multiply-adds, then
/// the max, the sum, the rescaling, and GEMMs of [64, Dh] x [Dh, 256] tiles that run far below
/// the large GEMMs' rate when Dh is small. Measured: xenc-encode with D = 8, H = 2 (Dh = 4) on
/// T = 20,000 takes about 2 ns a score on a 2-core machine (under load), 400 operations at the
/// 200 GFLOP/s the estimates assume; 64 keeps the estimate a lower bound of the real time.
inline constexpr double kSoftmaxFlops = 64;

struct PassCost {
  double parameters = 0;        ///< P, number of float32 parameters
  double parameter_bytes = 0;   ///< 4P, or 16P for training (+ gradients, two AdamW moments)
  double activation_bytes = 0;  ///< the peak of the tensors a pass holds besides the parameters
  double peak_bytes = 0;        ///< parameter_bytes + activation_bytes
  double flops = 0;             ///< floating-point operations of the pass (2 per multiply-add)
};

/// Number of float32 parameters of an EncoderModel with this configuration, plus a Linear head
/// D -> num_labels when num_labels > 0 (a TokenClassifier).
double parameter_count(const EncoderModelConfig& config, std::size_t num_labels = 0);

/// The estimated peak memory and FLOPs of one pass over a batch [B, T]; num_labels > 0 adds a
/// TokenClassifier's head (its logits [B, T, C]).
PassCost estimate_pass_cost(const EncoderModelConfig& config, std::size_t B, std::size_t T,
                            Pass pass, std::size_t num_labels = 0);

}  // namespace xenc

// Graded exercises: a check for each piece of an encoder a student writes by hand.
//
// Each check takes the student's function (a std::function with the signature documented
// below), calls it on fixed inputs and returns an ExerciseResult (xenc/grade/result.hpp):
//   1. a hand example, whose arithmetic is in the comment of lib/src/grade/exercises.cpp;
//   2. reference values computed from the formula in double precision;
//   3. invariants (rows sum to 1, masked weights exactly 0, mean 0 / variance 1, round trips);
//   4. edge cases: large logits, a fully masked row, an odd D, T = 1;
//   5. for backward exercises, a finite-difference gradient check:
//      err = ‖a − n‖ / (‖a‖ + ‖n‖) <= 1e-4 with n from central differences of the reference
//      forward in double.
// Values are compared as |computed - expected| <= 1e-5 + 1e-4 · |expected| (float32 student code
// against double references; attention weights on padding keys must be exactly 0); NaN matches
// only NaN, inf only the same inf.
// When a check fails and the student's output equals the output of an exhibit of the pitfall
// museum (xenc/grade/pitfalls.hpp) on the same input, the hint names that mistake and its fix.
// Exceptions thrown by the student's function are caught and reported as a failed check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "xenc/core/error.hpp"  // config_error, which the exercises may throw
#include "xenc/core/tensor.hpp"
#include "xenc/grade/result.hpp"
#include "xenc/ops/attention.hpp"
#include "xenc/ops/layer_norm.hpp"
#include "xenc/ops/linear.hpp"

namespace xenc::grade {

namespace wire {
struct Caller;  // xenc/grade/wire.hpp
}  // namespace wire

/// Sinusoidal positional encoding table (Vaswani et al., 2017, 3.5):
///     PE(p, 2i) = sin(p / 10000^(2i/D)),  PE(p, 2i+1) = cos(p / 10000^(2i/D))
/// Shapes:  returns [num_positions, d_model], row p = position p (from 0)
/// Throws:  std::invalid_argument (e.g. xenc::config_error) if d_model is odd or 0.
using SinusoidalTableFn = std::function<Tensor2(std::size_t num_positions, std::size_t d_model)>;
ExerciseResult check_sinusoidal_table(const SinusoidalTableFn& student);

/// Row softmax, numerically stable:  y[r, c] = exp(x[r, c] - m_r) / Σ_c' exp(x[r, c'] - m_r),
/// m_r = max_c x[r, c]. Entries of -inf get probability exactly 0; a row of only -inf (a fully
/// masked row) gives a row of zeros (PyTorch gives NaN there; xencoder's convention is zeros).
/// Shapes:  x, y: [N, C]
using SoftmaxFn = std::function<Tensor2(const Tensor2& x)>;
ExerciseResult check_softmax(const SoftmaxFn& student);

/// Layer norm over the last axis:  y = (x - mean) / sqrt(var + eps) · weight + bias,
/// var = Σ (x - mean)² / D (biased, as torch.nn.LayerNorm).
/// Shapes:  x, y: [N, D]   weight, bias: [D]
using LayerNormFn =
    std::function<Tensor2(const Tensor2& x, const Tensor1& weight, const Tensor1& bias, float eps)>;
ExerciseResult check_layer_norm_forward(const LayerNormFn& student);

/// Layer norm backward, given dy = dL/dy of the forward above:
///     x̂ = (x - mean) · rstd,  rstd = 1 / sqrt(var + eps),  g = dy · weight
///     dx = rstd · (g - mean(g) - x̂ · mean(g · x̂))   dweight = Σ_rows dy · x̂   dbias = Σ_rows dy
/// Shapes:  grad_y, x: [N, D]   weight: [D]   returns input [N, D], weight [D], bias [D]
using LayerNormBackwardFn = std::function<LayerNormGrads<2>(const Tensor2& grad_y, const Tensor2& x,
                                                            const Tensor1& weight, float eps)>;
ExerciseResult check_layer_norm_backward(const LayerNormBackwardFn& student);

/// Scaled dot-product attention with a key-padding mask:
///     S = Q Kᵀ / sqrt(Dh);  S[.., i, j] = -inf where key_padding_mask[b, j] (true = padding)
///     P = softmax(S) over keys (a row with every key masked: P = 0, O = 0);  O = P V
/// Shapes:  q: [B, H, Tq, Dh]   k, v: [B, H, Tk, Dh]   key_padding_mask: [B, Tk]
///          returns output O [B, H, Tq, Dh] and weights P [B, H, Tq, Tk]
using AttentionFn = std::function<AttentionResult(const Tensor4& q, const Tensor4& k,
                                                  const Tensor4& v, const Mask2& key_padding_mask)>;
ExerciseResult check_attention(const AttentionFn& student);

/// Splitting heads:  [B, T, D] -> [B, H, T, Dh],  out[b, h, t, e] = x[b, t, h·Dh + e],  Dh = D/H
/// (PyTorch: x.view(B, T, H, Dh).transpose(1, 2)).
/// Throws:  std::invalid_argument if D is not divisible by num_heads.
using SplitHeadsFn = std::function<Tensor4(const Tensor3& x, std::size_t num_heads)>;
ExerciseResult check_split_heads(const SplitHeadsFn& student);

/// Merging heads, the inverse:  [B, H, T, Dh] -> [B, T, H·Dh],  out[b, t, h·Dh + e] = x[b, h, t, e]
/// (PyTorch: x.transpose(1, 2).reshape(B, T, H * Dh)).
using MergeHeadsFn = std::function<Tensor3(const Tensor4& x)>;
ExerciseResult check_merge_heads(const MergeHeadsFn& student);

/// Linear backward for y = x Wᵀ + b:   dx = dy W   dW = dyᵀ x   db = Σ_rows dy
/// Shapes:  grad_y: [N, out]   x: [N, in]   weight: [out, in]
///          returns input [N, in], weight [out, in], bias [out]
using LinearBackwardFn =
    std::function<LinearGrads<2>(const Tensor2& grad_y, const Tensor2& x, const Tensor2& weight)>;
ExerciseResult check_linear_backward(const LinearBackwardFn& student);

/// Cross-entropy with an ignore index, as torch.nn.functional.cross_entropy (reduction 'mean'):
///     loss = 1/N' Σ_{n: t_n != ignore} (logsumexp(z_n) - z_n[t_n]),  N' = rows not ignored
///     grad_logits[n] = (softmax(z_n) - onehot(t_n)) / N' for kept rows, 0 for ignored rows
/// When every row is ignored, N' = 0: loss = 0/0 = NaN (as PyTorch) and the gradient is 0.
/// Shapes:  logits: [N, C]   targets: [N] (class in [0, C) or ignore_index)
struct CrossEntropyOutput {
  float loss = 0.0f;
  Tensor2 grad_logits;  ///< dloss/dlogits: [N, C]
};
using CrossEntropyFn = std::function<CrossEntropyOutput(
    const Tensor2& logits, const Index1& targets, std::int64_t ignore_index)>;
ExerciseResult check_cross_entropy(const CrossEntropyFn& student);

/// Rotary position embedding (RoPE; Su et al., 2021, "RoFormer", eq. 13-15) of one head's
/// queries or keys: row t of x is rotated, pair by pair, by its position positions[t] times the
/// pair's frequency. The pairs are interleaved, (2i, 2i+1), as in RoFormer and the sinusoidal
/// table (not the "rotate half" pairs (i, i + Dh/2) of GPT-NeoX and Hugging Face LLaMA):
///     θ_i = 10000^(−2i/Dh),  i = 0 .. Dh/2 − 1,     a = positions[t] · θ_i
///     y[t, 2i]   = x[t, 2i] · cos a − x[t, 2i+1] · sin a
///     y[t, 2i+1] = x[t, 2i] · sin a + x[t, 2i+1] · cos a      (counter-clockwise)
/// Positions count from 0: position 0 leaves a row as it is. Then |y[t]| = |x[t]|, and the score
/// of a query at position m and a key at position n depends on m − n only.
/// Shapes:  x, y: [T, Dh]   positions: T entries (any order, any size)
/// Throws:  std::invalid_argument (e.g. xenc::config_error) if Dh is odd or 0 (no pairs).
/// Library: xenc::rope_forward (xenc/ops/position_in_attention.hpp), for [B, T, H·Dh].
using RopeFn = std::function<Tensor2(const Tensor2& x, const std::vector<std::size_t>& positions)>;
ExerciseResult check_rope(const RopeFn& student);

/// ALiBi slopes (Press et al., 2022, "Train Short, Test Long", section 3): head h adds
/// −m_h · |i − j| to its attention scores. For H a power of two the slopes are the geometric
/// sequence that starts at 2^(−8/H) and has that same ratio:
///     m_h = 2^(−8(h+1)/H),  h = 0 .. H − 1          (H = 8: 1/2, 1/4, ..., 1/256)
/// For any other H (the rule of the paper's code), with n the largest power of two below H: the
/// n slopes for n heads, then the first H − n of every other slope of the 2n sequence
/// (2^(−8·1/(2n)), 2^(−8·3/(2n)), 2^(−8·5/(2n)), ...).  H = 6: 1/4, 1/16, 1/64, 1/256, 1/2, 1/8.
/// Returns: H slopes, head 0 first.
/// Throws:  std::invalid_argument (e.g. xenc::config_error) if num_heads is 0.
/// Library: xenc::alibi_slopes (xenc/ops/position_in_attention.hpp).
using AlibiSlopesFn = std::function<std::vector<double>(std::size_t num_heads)>;
ExerciseResult check_alibi_slopes(const AlibiSlopesFn& student);

/// Transformer-XL's relative shift (Dai et al., 2019, appendix B; ops/relative_attention.hpp).
/// z [T, 2T−1] holds one head's position scores (q_i + v)·r_δ, column m for the distance
/// δ = T − 1 − m (from T − 1 down to −(T − 1)). The shift gives each query i its window:
///     y[i, j] = z[i, T − 1 − i + j]        (the score of distance i − j)
/// so row i of z moves left by T − 1 − i, and the diagonal y[i, i] is column T − 1 (δ = 0).
/// Shapes:  z: [T, 2T−1]   y: [T, T]
/// Throws:  std::invalid_argument (e.g. xenc::shape_error) unless z is [T, 2T−1].
/// Library: xenc::relative_shift (xenc/ops/relative_attention.hpp).
using RelativeShiftFn = std::function<Tensor2(const Tensor2& z)>;
ExerciseResult check_relative_shift(const RelativeShiftFn& student);

/// The online softmax's update for one tile of keys (attention in tiles, FlashAttention-2;
/// notebook 09). Per query row r, the state after the tiles seen so far is the running maximum
/// m[r], the running sum l[r] = Σ_j exp(s_j − m[r]) and the unnormalised output
/// acc[r] = Σ_j exp(s_j − m[r]) v_j; nothing seen yet is m = −inf, l = 0, acc = 0. A new tile of
/// scores s [Tq, Tk] and values v [Tk, Dv] updates it:
///     m'[r] = max(m[r], max_j s[r, j]),   c = exp(m[r] − m'[r])
///     l'[r] = c · l[r] + Σ_j exp(s[r, j] − m'[r]),   acc'[r] = c · acc[r] + Σ_j exp(s[r, j] −
///     m'[r]) · v[j]
/// A row whose scores so far are all −inf (masked keys) stays m = −inf, l = 0, acc = 0 (no NaN).
/// After the last tile, acc / l = softmax(s) V over every key.
/// Shapes:  m, l: [Tq]   acc: [Tq, Dv]   scores: [Tq, Tk]   values: [Tk, Dv]
/// Library: the tiled attention kernel (multi_head_attention_forward_tiled) runs this per tile.
struct OnlineSoftmaxState {
  Tensor1 m;    ///< running maximum per query      [Tq]
  Tensor1 l;    ///< running sum of exponentials    [Tq]
  Tensor2 acc;  ///< unnormalised output            [Tq, Dv]
};
using OnlineSoftmaxTileFn = std::function<OnlineSoftmaxState(
    const OnlineSoftmaxState& state, const Tensor2& scores, const Tensor2& values)>;
ExerciseResult check_online_softmax_tile(const OnlineSoftmaxTileFn& student);

/// The student's function of each exercise, as a function type named like the exercise, so that
/// a program can declare it from the exercise's name alone (the template's child.cpp does:
/// `namespace assignment { xenc::grade::signature::softmax softmax; }` declares
/// `Tensor2 assignment::softmax(const Tensor2&)`). One line per exercise, beside its check.
template <class F>
struct function_type;
template <class Sig>
struct function_type<std::function<Sig>> {
  using type = Sig;
};
namespace signature {
using sinusoidal_table = function_type<SinusoidalTableFn>::type;
using softmax = function_type<SoftmaxFn>::type;
using layer_norm_forward = function_type<LayerNormFn>::type;
using layer_norm_backward = function_type<LayerNormBackwardFn>::type;
using attention = function_type<AttentionFn>::type;
using split_heads = function_type<SplitHeadsFn>::type;
using merge_heads = function_type<MergeHeadsFn>::type;
using linear_backward = function_type<LinearBackwardFn>::type;
using cross_entropy = function_type<CrossEntropyFn>::type;
using rope = function_type<RopeFn>::type;
using alibi_slopes = function_type<AlibiSlopesFn>::type;
using online_softmax_tile = function_type<OnlineSoftmaxTileFn>::type;
using relative_shift = function_type<RelativeShiftFn>::type;
}  // namespace signature

/// An exercise as the registry knows it. Each exercise's file (lib/src/grade/exercises/<name>.cpp)
/// registers itself with a static RegisterExercise; the template's grade program, the notebooks'
/// cells and the teacher's settings read the registry.
struct ExerciseInfo {
  std::string name;       ///< "softmax": the file exercises/softmax.cpp and the check check_softmax
  std::string signature;  ///< the function the student writes
  double points = 1.0;    ///< default points (the teacher's settings may change them)
  int order = 0;          ///< teaching order
  /// Runs the exercise's checks on the student's function in another process: each call of the
  /// student's function goes through the caller (xenc/grade/wire.hpp), and the verdict is
  /// computed here. Set by the exercise's registration.
  std::function<ExerciseResult(wire::Caller&)> check_remote;
};
/// The registered exercises, in teaching order.
const std::vector<ExerciseInfo>& exercises();
/// The exercise of that name, or nullptr.
const ExerciseInfo* find_exercise(const std::string& name);
struct RegisterExercise {
  explicit RegisterExercise(ExerciseInfo info);
};

/// Hidden checks: when a seed is set, each exercise adds checks whose inputs are drawn from it
/// (CheckResult::hidden; reports show neither their inputs nor their values). The child process
/// of xenc/grade/runner.hpp sets it from the teacher's settings.
void set_hidden_seed(std::optional<std::uint64_t> seed);
std::optional<std::uint64_t> hidden_seed();

}  // namespace xenc::grade

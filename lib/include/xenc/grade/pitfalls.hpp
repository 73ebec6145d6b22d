// The pitfall museum: published mistakes in positional encodings (sinusoidal, RoPE, ALiBi),
// softmax, layer norm and attention, each written out as the buggy code would compute it.
//
// One header serves three readers:
//   - apps/pe_pitfalls prints each exhibit next to the correct formula;
//   - tests/apps/test_pitfalls.cpp shows that a correctness check passes for xencoder and fails
//     for the exhibit (so it checks the app's code, not a retyped copy);
//   - the grader (xenc/grade/exercises.hpp) runs the exhibits on the inputs of a failed check:
//     when a student's output equals an exhibit's, the hint names that mistake and its fix.
// Every exhibit takes the arguments of the correct function, in float32 like a student's code.
// describe(Pitfall) gives the text: what the mistake is and how to fix it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "xenc/core/tensor.hpp"
#include "xenc/grade/exercises.hpp"  // OnlineSoftmaxState
#include "xenc/nn/position.hpp"
#include "xenc/ops/attention.hpp"
#include "xenc/ops/layer_norm.hpp"
#include "xenc/ops/linear.hpp"

namespace xenc::pitfalls {

/// The catalogue, in the order of its one table (xenc/grade/pitfall_table.hpp): each value names
/// one exhibit below.
enum class Pitfall {
#define XENC_PITFALL(id, title, mistake, fix, exhibit) id,
#include "xenc/grade/pitfall_table.hpp"
#undef XENC_PITFALL
};

struct PitfallInfo {
  std::string id;       ///< the Pitfall value's name
  std::string title;    ///< one line: the mistake
  std::string mistake;  ///< what the buggy code does
  std::string fix;      ///< what to write instead
  std::string exhibit;  ///< the function(s) below that compute it
};

/// The text of an exhibit (used by the app's headings and the grader's hints).
const PitfallInfo& describe(Pitfall p);

/// Every exhibit, in the table's order.
const std::vector<Pitfall>& all_pitfalls();

// ---- positional encodings ---------------------------------------------------------------------

/// cos in the even columns and sin in the odd ones: PE(p, 2i) = cos(p ω_i), PE(p, 2i+1) = sin(p
/// ω_i) (the two lines of the formula swapped). Shapes: [P, D] (even D).
Tensor2 pe_sin_cos_swapped(std::size_t num_positions, std::size_t d_model);

/// The published loop `for i in range(0, D, 2): angle = p / 10000^(2*i/D)`: i already is the
/// even dimension 2k, so the exponent becomes 4k/D and frequencies fall twice as fast.
/// Shapes: [P, D] (even D).
Tensor2 pe_doubled_exponent(std::size_t num_positions, std::size_t d_model);

/// `x + pe[:x.size(0)]` written for [T, B, D] and used on batch-first [B, T, D]: PE(b) is added to
/// every token of sentence b. Shapes: x, y: [B, T, D].
Tensor3 add_positions_along_batch(const Tensor3& x);

/// The same bug as a position scheme, to plug into an EncoderModel.
class BatchAxisPosition : public PositionScheme {
 public:
  PositionKind kind() const override { return PositionKind::sinusoidal; }
  Tensor3 forward(const Tensor3& x) override { return add_positions_along_batch(x); }
  Tensor3 backward(const Tensor3& grad_y) override { return grad_y; }
  void collect_parameters(const std::string&, ParameterList&) override {}
};

/// The common `div_term = exp(arange(0, D, 2) * -ln(10000)/D)` code, which writes a cos column
/// 2i+1 for each of ceil(D/2) frequencies: for odd D that is one past the row's end. Written on
/// std::vector::at, so the overflow throws std::out_of_range instead of corrupting memory.
std::vector<std::vector<float>> pe_odd_d_unchecked(std::size_t num_positions, std::size_t d_model);

/// Near-constant dimensions of a table: columns whose max - min over positions is < threshold.
std::size_t near_constant_dims(const Tensor2& pe, float threshold);

// ---- softmax ----------------------------------------------------------------------------------

/// y = exp(x) / Σ exp(x) without subtracting the row maximum: exp overflows to inf for
/// x > 88.7 (float32), and the row becomes inf / inf = NaN. Shapes: x, y: [N, C].
Tensor2 softmax_without_max(const Tensor2& x);

/// Softmax over the wrong axis: each column of x [N, C] normalised over the rows (dim=0 where
/// dim=-1 was meant), with its maximum subtracted. Shapes: x, y: [N, C].
Tensor2 softmax_wrong_axis(const Tensor2& x);

// ---- layer norm (over the last axis, rows of x: [N, D]) -----------------------------------------

/// var = Σ (x - mean)² / (D - 1) (x.var() in PyTorch/pandas is unbiased), eps inside the root.
Tensor2 layer_norm_unbiased_variance(const Tensor2& x, const Tensor1& weight, const Tensor1& bias,
                                     float eps);
/// (x - mean) / (sqrt(var) + eps) with the biased variance.
Tensor2 layer_norm_eps_outside_sqrt(const Tensor2& x, const Tensor1& weight, const Tensor1& bias,
                                    float eps);
/// The tutorial version: (x - mean) / (x.std() + eps), unbiased std and eps outside the root.
Tensor2 layer_norm_unbiased_std_eps_outside(const Tensor2& x, const Tensor1& weight,
                                            const Tensor1& bias, float eps);
/// Backward that treats mean and rstd as constants: dx = rstd · dy · weight (the two mean terms
/// of dx = rstd · (g - mean(g) - x̂ · mean(g · x̂)) are missing); dweight and dbias are right.
LayerNormGrads<2> layer_norm_backward_no_mean_terms(const Tensor2& grad_y, const Tensor2& x,
                                                    const Tensor1& weight, float eps);

// ---- attention (Q: [B, H, Tq, Dh], K, V: [B, H, Tk, Dh], key_padding_mask: [B, Tk]) ----------

/// Hugging Face's attention_mask for sentences of the given lengths padded to T: true = real
/// token (keep). Passed where PyTorch's key_padding_mask (true = padding) is expected, it
/// inverts the mask. Shape: [B, T].
Mask2 keep_mask_from_lengths(const std::vector<std::size_t>& lengths, std::size_t T);

/// Scores divided by Dh instead of sqrt(Dh): S = Q Kᵀ / Dh (the scale squared).
AttentionResult attention_scale_by_dh(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                      const Mask2& key_padding_mask);

/// Attention that reads key_padding_mask as "true = keep": it masks the real tokens.
AttentionResult attention_inverted_mask(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                        const Mask2& key_padding_mask);
/// P = softmax(S) first, then the padding weights set to 0: the rows no longer sum to 1.
AttentionResult attention_mask_after_softmax(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                             const Mask2& key_padding_mask);
/// S = Q Kᵀ without the 1/√Dh: the softmax saturates as Dh grows.
AttentionResult attention_without_scale(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                        const Mask2& key_padding_mask);

// ---- heads --------------------------------------------------------------------------------------

/// [B, T, D] reshaped straight to [B, H, T, Dh] (x.view(B, H, T, Dh)) instead of
/// view(B, T, H, Dh).transpose(1, 2): each "head" gets a slab of consecutive tokens.
Tensor4 split_heads_without_transpose(const Tensor3& x, std::size_t num_heads);
/// [B, H, T, Dh] reshaped straight to [B, T, D] without transposing back first.
Tensor3 merge_heads_without_transpose(const Tensor4& x);

// ---- linear backward (x: [N, in], W: [out, in], dy: [N, out]) ----------------------------------

/// db = mean over rows of dy instead of the sum (dx and dW are right).
LinearGrads<2> linear_backward_bias_mean(const Tensor2& grad_y, const Tensor2& x,
                                         const Tensor2& weight);

// ---- cross-entropy (logits: [N, C], targets: [N]) ----------------------------------------------

/// Skips the ignored rows' terms but still divides by N, all rows, instead of the N' counted.
float cross_entropy_counts_ignored(const Tensor2& logits, const Index1& targets,
                                   std::int64_t ignore_index);
/// Its gradient: (softmax - onehot) / N on kept rows, 0 on ignored rows.
Tensor2 cross_entropy_counts_ignored_backward(const Tensor2& logits, const Index1& targets,
                                              std::int64_t ignore_index);

// ---- RoPE, one head (x: [T, Dh], row t at positions[t]; see grade::check_rope) ---------------

/// The "rotate half" pairing of GPT-NeoX and Hugging Face LLaMA (`rotate_half`): column i is
/// rotated with column i + Dh/2, where RoFormer's interleaved pairs (2i, 2i+1) were asked for.
/// The same θ_i, so norms and relative scores are kept: only the pairing is wrong.
Tensor2 rope_rotate_half(const Tensor2& x, const std::vector<std::size_t>& positions);
/// θ_i = 10000^(−i/Dh): the 2 of the exponent 2i/Dh dropped, so the frequencies fall half as
/// fast (pair i gets the frequency of "pair i/2").
Tensor2 rope_exponent_without_2(const Tensor2& x, const std::vector<std::size_t>& positions);
/// The rotation by −a (clockwise): y_2i = x_2i cos a + x_2i+1 sin a, y_2i+1 = −x_2i sin a +
/// x_2i+1 cos a, i.e. R(a)ᵀ, the backward's matrix, in the forward.
Tensor2 rope_clockwise(const Tensor2& x, const std::vector<std::size_t>& positions);
/// θ_i = 10000^(−4i/Dh): the sinusoidal table's doubled exponent carried into RoPE (2·i where i
/// already counts the even column 2k), so the frequencies fall twice as fast.
Tensor2 rope_doubled_exponent(const Tensor2& x, const std::vector<std::size_t>& positions);
/// Positions counted from 1 (1-based enumerate): row t rotated by (positions[t] + 1) · θ_i.
Tensor2 rope_positions_from_one(const Tensor2& x, const std::vector<std::size_t>& positions);

// ---- ALiBi slopes (see grade::check_alibi_slopes) ----------------------------------------------

/// The sequence started at 2^(−8), the last slope, instead of 2^(−8/H); with ratio = start as in
/// the paper's code: m_h = 2^(−8(h+1)), so head 1 already has 1/65536.
std::vector<double> alibi_slopes_start_2_pow_minus_8(std::size_t num_heads);
/// m_h = 2^(−8(h+1)/H) for every H: right for powers of two, but for any other H the paper's rule
/// (the slopes of the power of two below, then every other slope of twice that) is not applied.
std::vector<double> alibi_slopes_plain_formula(std::size_t num_heads);

// ---- the online softmax: one tile of keys (grade::OnlineSoftmaxState, rows of queries) --------

/// The old terms not rescaled: l is moved to the new maximum, but acc' = acc + Σ_j exp(s_j − m')
/// v_j keeps the old terms in the old base, so the output overweights the tiles seen before a new
/// max.
grade::OnlineSoftmaxState online_softmax_acc_not_rescaled(const grade::OnlineSoftmaxState& state,
                                                          const Tensor2& scores,
                                                          const Tensor2& values);
/// The running sum rescaled by the inverted factor: l' = exp(m' − m) · l + Σ_j exp(s_j − m') (acc
/// is right), so l grows where it should shrink and every output is too small.
grade::OnlineSoftmaxState online_softmax_sum_wrong_factor(const grade::OnlineSoftmaxState& state,
                                                          const Tensor2& scores,
                                                          const Tensor2& values);
/// The new maximum used before it is computed: the tile's exponentials exp(s_j − m) are taken
/// against the old maximum m (then m, l and acc are updated as they should be). Overflows to inf on
/// the first tile (m = −inf) and whenever the tile raises the maximum by more than 88.
grade::OnlineSoftmaxState online_softmax_old_max(const grade::OnlineSoftmaxState& state,
                                                 const Tensor2& scores, const Tensor2& values);

}  // namespace xenc::pitfalls

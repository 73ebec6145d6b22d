// The reference ops: the formulas of ops/ that the one-file encoder layer (encoder_layer.hpp)
// does not hold, loop by loop, in double precision. Together the two files are xencoder's one
// oracle: the ops/ tests, the benchmarks' baselines and the grader compare against them.
//
// Read lib/src/reference/ops.cpp for the math. Like encoder_layer.cpp it uses only core/
// (tensors, errors): no ops/, no kernels, no BLAS, no SIMD, and it is slow on purpose.
// The functions carry the ops' names (ops/softmax.hpp: softmax_forward; here:
// reference::softmax_forward), so one grep finds the fast op and its reference.
//
// Differences from encoder_layer.hpp, on purpose:
//   - the row forms: a tensor of any rank is seen as [N, C], its N rows of C values
//     (rows_of below), as ops/ sees it;
//   - values in double (Tensor2d, ...): the grader takes finite differences of these functions,
//     which float32 outputs would drown in rounding. A float tensor converts on assignment
//     (`Tensor2d x = some_float_tensor;`);
//   - functions return their results (no += convention): nothing here is a step of a chain.
//
// Conventions shared with PyTorch 1.13 (each is tested in tests/reference/test_ops.cpp):
//   - softmax: a row that holds NaN gives NaN (as PyTorch); a row whose every entry is -inf
//     (masked by the caller: every key padded) gives zeros, where PyTorch gives NaN;
//   - cross-entropy: the mean over the rows whose target is not ignore_index; when every row is
//     ignored it is 0/0 = NaN (as PyTorch), and the gradient is zero;
//   - RoPE pairs columns (2i, 2i+1) ("interleaved", RoFormer); ALiBi's slopes follow the
//     paper's code, for any H.
//
// Shapes: the glossary's (B, T, D, H, Dh, V; N rows, C columns). Throws: shape_error naming the
// function ("reference::..."), the argument and both shapes; config_error for D % H != 0 or odd
// sizes; index_error for a target outside [0, C).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "xenc/core/tensor.hpp"

namespace xenc::reference {

/// Tensors of double (d as in BLAS's dgemm): the reference's container, xtensor like the library's.
using Tensor1d = xt::xtensor<double, 1>;
using Tensor2d = xt::xtensor<double, 2>;
using Tensor3d = xt::xtensor<double, 3>;
using Tensor4d = xt::xtensor<double, 4>;

/// A tensor of any rank as the [N, C] matrix of its rows: C is the last dimension, N the
/// product of the others (the view ops/ takes of a tensor), converted to double.
template <class T, std::size_t R>
Tensor2d rows_of(const xt::xtensor<T, R>& x) {
  const std::size_t C = x.shape(R - 1), N = C == 0 ? 0 : x.size() / C;
  Tensor2d m = Tensor2d::from_shape({N, C});
  std::copy(x.begin(), x.end(), m.begin());
  return m;
}

// ---- matrix product and linear -----------------------------------------------------------

/// C = A B, three loops.   a: [M, K]   b: [K, N]   returns [M, N]
Tensor2d matmul(const Tensor2d& a, const Tensor2d& b);

/// y = x Wᵀ + b.   x: [N, in]   weight: [out, in] (PyTorch's layout)   bias: [out] or empty
Tensor2d linear_forward(const Tensor2d& x, const Tensor2d& weight, const Tensor1d& bias);

struct LinearGrads {
  Tensor2d input;   ///< dx = dy W        [N, in]
  Tensor2d weight;  ///< dW = dyᵀ x       [out, in]
  Tensor1d bias;    ///< db = Σ_rows dy   [out]
};
/// grad_y: [N, out]   x: [N, in]   weight: [out, in]
LinearGrads linear_backward(const Tensor2d& grad_y, const Tensor2d& x, const Tensor2d& weight);

// ---- softmax -----------------------------------------------------------------------------

/// Softmax of one row in place: y_i = exp(x_i - max) / Σ_j exp(x_j - max). The rule for the
/// edge rows lives here and only here: NaN anywhere gives NaN everywhere (PyTorch), every
/// entry -inf gives zeros (a row masked by the caller: attend to nothing).
void softmax_row(std::vector<double>& row);

/// Softmax of every row.   x, returns: [N, C]
Tensor2d softmax_forward(const Tensor2d& x);
/// dx_i = y_i (dy_i - Σ_j dy_j y_j), row by row.   grad_y, y, returns: [N, C]
Tensor2d softmax_backward(const Tensor2d& grad_y, const Tensor2d& y);

// ---- layer norm --------------------------------------------------------------------------

/// y = (x - mean) / √(var + eps) · weight + bias per row (biased variance).
/// x, returns: [N, D]   weight, bias: [D]
Tensor2d layer_norm_forward(const Tensor2d& x, const Tensor1d& weight, const Tensor1d& bias,
                            double eps);

struct LayerNormGrads {
  Tensor2d input;   ///< [N, D]
  Tensor1d weight;  ///< [D] = Σ_rows dy ⊙ x̂
  Tensor1d bias;    ///< [D] = Σ_rows dy
};
/// Recomputes mean and rstd from x, then dx = rstd · (g - mean(g) - x̂ · mean(g ⊙ x̂)), g = dy ⊙ w.
LayerNormGrads layer_norm_backward(const Tensor2d& grad_y, const Tensor2d& x,
                                   const Tensor1d& weight, double eps);

// ---- cross-entropy -----------------------------------------------------------------------

/// -1/N' Σ_n log softmax(logits_n)[target_n] over the N' rows whose target is not
/// ignore_index; NaN when N' = 0 (PyTorch 1.13).   logits: [N, C]   targets: [N]
double cross_entropy_forward(const Tensor2d& logits, const Index1& targets,
                             std::int64_t ignore_index = -100);
/// (softmax(logits_n) - onehot(target_n)) / N', zero rows where ignored (all zeros when N' = 0).
Tensor2d cross_entropy_backward(const Tensor2d& logits, const Index1& targets,
                                std::int64_t ignore_index = -100);

// ---- attention ---------------------------------------------------------------------------

/// [B, T, D] -> [B, H, T, Dh]: head h is columns h·Dh .. (h+1)·Dh - 1.
Tensor4d split_heads(const Tensor3d& x, std::size_t num_heads);
/// [B, H, T, Dh] -> [B, T, D]: the heads side by side again.
Tensor3d merge_heads(const Tensor4d& x);

struct AttentionResult {
  Tensor4d output;   ///< O = P V            [B, H, Tq, Dh]
  Tensor4d weights;  ///< P = softmax(S)     [B, H, Tq, Tk]
};
/// S = Q Kᵀ / √Dh + attn_mask, S[.., j] = -inf where key_padding_mask[b, j]; P = softmax(S)
/// (a query whose every key is padding gets zeros); O = P V.
/// query: [B, H, Tq, Dh]   key, value: [B, H, Tk, Dh]   key_padding_mask: [B, Tk] (true =
/// padding) or empty   attn_mask: [Tq, Tk] additive or empty
AttentionResult scaled_dot_product_attention_forward(const Tensor4d& query, const Tensor4d& key,
                                                     const Tensor4d& value,
                                                     const Mask2& key_padding_mask = Mask2(),
                                                     const Tensor2d& attn_mask = Tensor2d());

struct AttentionGrads {
  Tensor4d query, key, value;  ///< dQ [B, H, Tq, Dh], dK and dV [B, H, Tk, Dh]
};
/// dV = Pᵀ dO, dP = dO Vᵀ, dS = P ⊙ (dP - rowsum(dP ⊙ P)), dQ = dS K / √Dh, dK = dSᵀ Q / √Dh.
/// weights: P from the forward.
AttentionGrads scaled_dot_product_attention_backward(const Tensor4d& grad_output,
                                                     const Tensor4d& query, const Tensor4d& key,
                                                     const Tensor4d& value,
                                                     const Tensor4d& weights);

// ---- positions ---------------------------------------------------------------------------

/// ω_i = 10000^(−2i/width): the angular frequency of pair i (dimensions 2i and 2i+1) in the
/// sinusoidal encoding (width = d_model) and in RoPE (width = Dh).   i < width / 2
double pair_frequency(std::size_t i, std::size_t width);

/// PE(offset + t, j) for t < num_positions, j < d_model (encoder_layer.hpp's
/// sinusoidal_position).   returns [num_positions, d_model]; d_model even
Tensor2d sinusoidal_encoding(std::size_t num_positions, std::size_t d_model,
                             std::size_t offset = 0);

/// RoPE of one head: row t of x turned pair by pair, (2i, 2i+1) by positions[t] · θ_i with
/// θ_i = 10000^(−2i/Dh).   x, returns: [T, Dh] (Dh even)   positions: T values
Tensor2d rope_forward(const Tensor2d& x, const std::vector<double>& positions);
/// The gradient of rope_forward's input: each pair turned back, by −positions[t] · θ_i.
Tensor2d rope_backward(const Tensor2d& grad_y, const std::vector<double>& positions);

/// ALiBi's slopes m_0 .. m_{H−1}: 2^(−8(h+1)/H) for H a power of two; otherwise, with n the
/// largest power of two below H, the n slopes for n heads, then every other slope of the
/// sequence for 2n heads (the first H − n of them).
std::vector<double> alibi_slopes(std::size_t num_heads);
/// bias(i, j) = −slope · |i − j|.   returns [Tq, Tk]
Tensor2d alibi_bias(double slope, std::size_t Tq, std::size_t Tk);

// ---- relative positions (Transformer-XL) ---------------------------------------------------

/// The relative shift: out[i, j] = z[i, T − 1 − i + j] (column m of z holds distance
/// δ = T − 1 − m, so column j of row i is δ = i − j).   z: [T, 2T−1]   returns [T, T]
Tensor2d relative_shift(const Tensor2d& z);
/// Its backward: grad[i, j] goes back to z[i, T − 1 − i + j]; zero elsewhere.   returns [T, 2T−1]
Tensor2d relative_shift_backward(const Tensor2d& grad);

/// Transformer-XL's learned parts and the distance values of R's rows.
struct RelativeTerms {
  Tensor2d content_bias, position_bias;  ///< u, v [H, Dh]
  Tensor2d position_weight;              ///< W_R [D, D]
  std::vector<double> distances;         ///< 2T − 1 values: T − 1 .. −(T − 1) unless randomized
};
struct RelativeAttentionGrads {
  Tensor4d query, key, value;  ///< [B, H, T, Dh]
  Tensor2d content_bias, position_bias, position_weight;
};
/// Per head h, with r = R W_Rᵀ, R[m] = PE(distances[m]) (sinusoidal_position):
///     S = ((Q + u_h) Kᵀ + shift((Q + v_h) r_hᵀ)) / √Dh,  P = softmax(S),  O = P V
/// scaled_dot_product_attention_forward on Q + u_h with shift(..)/√Dh as its additive mask.
/// query, key, value: [B, H, T, Dh]   key_padding_mask: [B, T] or empty
AttentionResult relative_attention_forward(const Tensor4d& query, const Tensor4d& key,
                                           const Tensor4d& value, const RelativeTerms& terms,
                                           const Mask2& key_padding_mask = Mask2());
/// The gradients of relative_attention_forward's inputs and of u, v, W_R. weights: its P.
RelativeAttentionGrads relative_attention_backward(const Tensor4d& grad_output,
                                                   const Tensor4d& query, const Tensor4d& key,
                                                   const Tensor4d& value,
                                                   const RelativeTerms& terms,
                                                   const Tensor4d& weights);

// ---- the online softmax (attention in tiles) ---------------------------------------------

/// What the online softmax keeps per query after the key tiles seen so far: the running maximum
/// m, the running sum l = Σ_j exp(s_j − m) and the unnormalised output acc = Σ_j exp(s_j − m) v_j.
/// Nothing seen yet: m = −inf, l = 0, acc = 0.   m, l: [Tq]   acc: [Tq, Dv]
struct OnlineSoftmaxState {
  Tensor1d m, l;
  Tensor2d acc;
};
/// One tile of keys (Milakov & Gimelshein 2018; FlashAttention-2, Dao 2023), per query row r:
///     m' = max(m, max_j s[r, j]),   c = exp(m − m')   (c = 1 while m' = −inf: nothing to rescale)
///     l' = c · l + Σ_j exp(s[r, j] − m'),   acc' = c · acc + Σ_j exp(s[r, j] − m') · v[j]
/// A score of −inf (a masked key) adds nothing. After the last tile acc / l = softmax(s) V over
/// every key, and m + log l is the row's log-sum-exp.
/// state: m, l [Tq], acc [Tq, Dv]   scores: [Tq, Tk]   values: [Tk, Dv]
OnlineSoftmaxState online_softmax_tile(const OnlineSoftmaxState& state, const Tensor2d& scores,
                                       const Tensor2d& values);

}  // namespace xenc::reference

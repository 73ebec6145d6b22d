// The functions you write, one per file in exercises/. Do not change these signatures: the
// grader (grade.cpp) calls them exactly like this. Shapes use the glossary B batch, T sequence
// length, D d_model, H heads, Dh = D / H, N rows, C classes.
#pragma once

#include <xenc/grade/exercises.hpp>
#include <xenc/xenc.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace assignment {

using xenc::Index1;
using xenc::Mask2;
using xenc::Tensor1;
using xenc::Tensor2;
using xenc::Tensor3;
using xenc::Tensor4;
using xenc::grade::OnlineSoftmaxState;  // .m, .l [Tq] and .acc [Tq, Dv]

/// PE(p, 2i) = sin(p / 10000^(2i/D)), PE(p, 2i+1) = cos(p / 10000^(2i/D)).  Returns [P, D].
/// Throws std::invalid_argument (xenc::config_error is one) if d_model is odd or 0.
Tensor2 sinusoidal_table(std::size_t num_positions, std::size_t d_model);

/// Row softmax, stable: y = exp(x - max) / Σ exp(x - max) per row. -inf entries give 0; a row of
/// only -inf gives zeros.  x, y: [N, C]
Tensor2 softmax(const Tensor2& x);

/// y = (x - mean) / sqrt(var + eps) · weight + bias per row, var = Σ (x - mean)² / D.
/// x, y: [N, D]   weight, bias: [D]
Tensor2 layer_norm_forward(const Tensor2& x, const Tensor1& weight, const Tensor1& bias, float eps);

/// Gradients of layer_norm_forward given grad_y = dL/dy: .input [N, D], .weight [D], .bias [D].
xenc::LayerNormGrads<2> layer_norm_backward(const Tensor2& grad_y, const Tensor2& x,
                                            const Tensor1& weight, float eps);

/// S = Q Kᵀ / sqrt(Dh), -inf where key_padding_mask[b, j] (true = padding); P = softmax(S) over
/// keys (all masked: P = 0); O = P V.  q: [B, H, Tq, Dh]  k, v: [B, H, Tk, Dh]  mask: [B, Tk]
/// Returns .output O [B, H, Tq, Dh] and .weights P [B, H, Tq, Tk].
xenc::AttentionResult attention(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                const Mask2& key_padding_mask);

/// [B, T, D] -> [B, H, T, Dh]: out[b, h, t, e] = x[b, t, h·Dh + e].
/// Throws std::invalid_argument if D is not divisible by num_heads.
Tensor4 split_heads(const Tensor3& x, std::size_t num_heads);

/// [B, H, T, Dh] -> [B, T, H·Dh]: out[b, t, h·Dh + e] = x[b, h, t, e].
Tensor3 merge_heads(const Tensor4& x);

/// For y = x Wᵀ + b: .input = dy W [N, in], .weight = dyᵀ x [out, in], .bias = Σ_rows dy [out].
xenc::LinearGrads<2> linear_backward(const Tensor2& grad_y, const Tensor2& x,
                                     const Tensor2& weight);

/// Mean cross-entropy over the rows whose target is not ignore_index (as PyTorch), and its
/// gradient (0 on ignored rows). Every row ignored: loss NaN, gradient 0.
/// logits: [N, C]   targets: [N]
xenc::grade::CrossEntropyOutput cross_entropy(const Tensor2& logits, const Index1& targets,
                                              std::int64_t ignore_index);

/// RoPE of one head: row t of x (a query or key) rotated pair by pair, pairs (2i, 2i+1):
/// θ_i = 10000^(-2i/Dh), a = positions[t] · θ_i,
/// y[t, 2i] = x[t, 2i] cos a - x[t, 2i+1] sin a,  y[t, 2i+1] = x[t, 2i] sin a + x[t, 2i+1] cos a.
/// Positions count from 0 (position 0: y = x).  x, y: [T, Dh]   positions: T entries
/// Throws std::invalid_argument if Dh is odd or 0.
Tensor2 rope(const Tensor2& x, const std::vector<std::size_t>& positions);

/// ALiBi slopes m_0 .. m_{H-1}. H a power of two: m_h = 2^(-8(h+1)/H) (H = 8: 1/2 .. 1/256).
/// Otherwise, n = the largest power of two below H: the n slopes for n heads, then
/// 2^(-8·1/(2n)), 2^(-8·3/(2n)), ... (every other slope of 2n heads) until there are H.
/// Throws std::invalid_argument if num_heads is 0.
std::vector<double> alibi_slopes(std::size_t num_heads);

/// The online softmax (attention in tiles): one tile of keys updates, per query row r, the running
/// maximum m, the running sum l and the unnormalised output acc of the keys seen so far:
/// m' = max(m, max_j s[r, j]),  c = exp(m - m'),  l' = c·l + Σ_j exp(s[r, j] - m'),
/// acc' = c·acc + Σ_j exp(s[r, j] - m')·values[j].  Nothing seen yet: m = -inf, l = 0, acc = 0;
/// a row whose scores so far are all -inf stays so (no NaN).  After the last tile acc / l =
/// softmax(scores) values over every key.
/// state.m, state.l: [Tq]   state.acc: [Tq, Dv]   scores: [Tq, Tk]   values: [Tk, Dv]
OnlineSoftmaxState online_softmax_tile(const OnlineSoftmaxState& state, const Tensor2& scores,
                                       const Tensor2& values);

/// Transformer-XL's relative shift: z [T, 2T-1], column m for the distance T-1-m;
/// y[i, j] = z[i, T-1-i+j] (the score of distance i - j).  y: [T, T]
/// Throws std::invalid_argument unless z is [T, 2T-1].
Tensor2 relative_shift(const Tensor2& z);

}  // namespace assignment

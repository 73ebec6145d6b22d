// Position information applied inside attention: rotary embeddings (RoPE) and ALiBi.
//
// RoPE (Su et al., 2021, "RoFormer"): q and k of every head are rotated, pair by pair, by an
// angle proportional to the token's position p. With the interleaved pairing of the paper (and
// of the sinusoidal table, ops/positional.hpp) pair i is the columns (2i, 2i+1) of the head:
//
//     θ_i = 10000^(−2i/Dh),  i = 0 .. Dh/2 − 1
//     [y_2i  ]   [cos pθ_i  −sin pθ_i] [x_2i  ]
//     [y_2i+1] = [sin pθ_i   cos pθ_i] [x_2i+1]          y = R(p) x
//
// R(p) is orthogonal (norms are kept) and R(m)ᵀR(n) = R(n − m), so the score
// (R(m) q)·(R(n) k) = qᵀ R(n − m) k depends on the positions only through n − m. The backward
// multiplies the gradient by R(p)ᵀ = R(−p).
//
// The "rotate half" pairing of GPT-NeoX and Hugging Face LLaMA (`rotate_half`) pairs column i
// with column i + Dh/2 instead, with the same θ_i. It is the same rotation applied to a
// permutation of the columns of W_q and W_k, so a model trained with one pairing is not
// equivalent to the same weights run with the other; the scores of one head still depend only
// on n − m. RopePairing selects it (RopePairing::half).
//
// ALiBi (Press et al., 2022, "Train Short, Test Long"): no embedding at all; head h adds
//
//     bias_h(i, j) = −m_h · |i − j|        (the symmetric form of encoders)
//
// to its scores after the 1/√Dh scaling. For H a power of two the slopes are the geometric
// sequence m_h = 2^(−8(h+1)/H) (H = 8: 1/2, 1/4, ..., 1/256). Otherwise, with n the largest
// power of two below H: the n slopes for n heads, then every other slope of the sequence for
// 2n heads (the first H − n of them), as in the paper's reference code.
//
// Shapes:  x: [B, T, D] with D = H·Dh, head h on columns h·Dh .. (h+1)·Dh
// PyTorch: no module; RoFormer/`rotate_half` in Hugging Face transformers, ALiBi `get_slopes`
//          in the authors' fairseq code.
// Throws:  config_error if Dh is odd or 0 (RoPE) or H is 0.
#pragma once

#include <cstddef>
#include <vector>

#include "xenc/core/tensor.hpp"

namespace xenc {

/// Which columns of a head form a rotated pair.
enum class RopePairing {
  interleaved,  ///< (2i, 2i+1): RoFormer, the sinusoidal table
  half          ///< (i, i + Dh/2): GPT-NeoX, Hugging Face LLaMA ("rotate half")
};

/// θ_i = base^(−2i/Dh) for i = 0 .. Dh/2 − 1. Throws config_error for an odd or zero Dh.
std::vector<double> rope_frequencies(std::size_t head_dim, double base = 10000.0);

/// x [B, T, D] rotated in place: token t of every head by R(t + offset). offset shifts every
/// position (the invariance tests use it; the encoder uses 0).
void rope_forward(Tensor3& x, std::size_t num_heads, RopePairing pairing = RopePairing::interleaved,
                  double offset = 0.0);
/// grad [B, T, D] multiplied in place by R(t + offset)ᵀ: the gradient of the input of rope_forward.
void rope_backward(Tensor3& grad, std::size_t num_heads,
                   RopePairing pairing = RopePairing::interleaved, double offset = 0.0);

/// x [B, T, D] rotated in place, token t by R(positions[t]) (randomized positions,
/// ops/randomized_positions.hpp). Throws shape_error unless positions has T values.
void rope_forward_at(Tensor3& x, std::size_t num_heads, const std::vector<double>& positions,
                     RopePairing pairing = RopePairing::interleaved);
/// grad [B, T, D] multiplied in place by R(positions[t])ᵀ.
void rope_backward_at(Tensor3& grad, std::size_t num_heads, const std::vector<double>& positions,
                      RopePairing pairing = RopePairing::interleaved);

/// The ALiBi slopes m_0 .. m_{H−1}. Throws config_error for H = 0.
std::vector<double> alibi_slopes(std::size_t num_heads);
/// bias(i, j) = −slope · |i − j|: [Tq, Tk].
Tensor2 alibi_bias(double slope, std::size_t Tq, std::size_t Tk);

}  // namespace xenc

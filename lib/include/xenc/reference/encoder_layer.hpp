// The reference encoder: one transformer encoder layer, forward and backward, loop by loop.
//
// Read lib/src/reference/encoder_layer.cpp top to bottom: it is the whole encoder in one file,
// written the way llm.c writes train_gpt2.c (a _forward/_backward pair per step, a shape line
// per function, one comment per step), on plain tensors indexed with operator(). It uses only
// core/ (tensors, errors) and reference/ops.hpp, whose linear, layer norm and attention it calls
// (gemma.cpp's LayerVJP calls its ops the same way: one loop per formula in the project): no
// ops/, no nn/, no BLAS, no SIMD. It is slow on purpose, and it is the oracle the nn/ modules
// are tested against (tests/reference/test_encoder_layer.cpp).
//
// Post-norm (norm_first = false, the paper and PyTorch's default):
//     h = norm1(x + self_attn(x))
//     y = norm2(h + linear2(act(linear1(h))))
// Pre-norm (norm_first = true, Xiong et al., 2020):
//     h = x + self_attn(norm1(x))
//     y = h + linear2(act(linear1(norm2(h))))
// Also here: the token embedding lookup and the sinusoidal positions that feed the first layer.
//
// Not here: dropout (the reference is the evaluation-mode layer: deterministic, dropout is the
// identity) and the additive [T, T] attn_mask of MultiheadAttention (only the key-padding
// mask). Self-attention only (query = key = value).
//
// Conventions (llm.c's): every _forward sizes and fills its outputs; every _backward ADDS (+=)
// into its gradients, inputs and weights alike, because a tensor used twice (the residual
// stream) receives a gradient from each use. Start gradients at zero: zero_layer_weights(),
// xt::zeros. Sums are accumulated in double, so the reference is at least as accurate as the
// float32 code it checks.
//
// Shapes:  x, y: [B, T, D]   key_padding_mask: [B, T] bool, true = padding, or empty
//          ids: [B, T] int64   embedding weight: [V, D]
// PyTorch: torch.nn.TransformerEncoderLayer(D, H, F, dropout=0, activation, layer_norm_eps,
//          batch_first=True, norm_first) in eval mode; weights by state_dict name.
// Throws:  config_error (D % H != 0, zero sizes); shape_error naming the function, the
//          argument and both shapes; index_error for a token id outside [0, V);
//          std::invalid_argument for a state_dict without a needed key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "xenc/core/parameter.hpp"
#include "xenc/core/tensor.hpp"

namespace xenc::reference {

enum class Activation { relu, gelu };

// ---- 1. hyper-parameters ---------------------------------------------------------------------

struct Config {
  std::size_t d_model = 8;           ///< D
  std::size_t nhead = 2;             ///< H (D must be divisible by H; Dh = D / H)
  std::size_t dim_feedforward = 16;  ///< F
  Activation activation = Activation::relu;
  float layer_norm_eps = 1e-5f;
  bool norm_first = false;  ///< false: post-norm; true: pre-norm

  /// Throws config_error naming the rule and the numbers.
  void validate(const std::string& where) const;
};

// ---- 2. weights (the same structs hold the gradients) ----------------------------------------

/// Multi-head self-attention; names are relative to "self_attn." in a layer's state_dict.
struct AttentionWeights {
  Tensor2 in_proj_weight;   ///< [3D, D]  rows [W_q; W_k; W_v]   (in_proj_weight)
  Tensor1 in_proj_bias;     ///< [3D]                            (in_proj_bias)
  Tensor2 out_proj_weight;  ///< [D, D]                          (out_proj.weight)
  Tensor1 out_proj_bias;    ///< [D]                             (out_proj.bias)
};

struct LayerWeights {
  AttentionWeights self_attn;  ///< (self_attn.*)
  Tensor2 linear1_weight;      ///< [F, D]  (linear1.weight)
  Tensor1 linear1_bias;        ///< [F]     (linear1.bias)
  Tensor2 linear2_weight;      ///< [D, F]  (linear2.weight)
  Tensor1 linear2_bias;        ///< [D]     (linear2.bias)
  Tensor1 norm1_weight;        ///< [D]     (norm1.weight)
  Tensor1 norm1_bias;          ///< [D]     (norm1.bias)
  Tensor1 norm2_weight;        ///< [D]     (norm2.weight)
  Tensor1 norm2_bias;          ///< [D]     (norm2.bias)
};

/// Calls f(state_dict_name, tensor) for every weight, in PyTorch's state_dict order.
template <class F>
void for_each_weight(AttentionWeights& w, F&& f, const std::string& prefix = "") {
  f(prefix + "in_proj_weight", w.in_proj_weight);
  f(prefix + "in_proj_bias", w.in_proj_bias);
  f(prefix + "out_proj.weight", w.out_proj_weight);
  f(prefix + "out_proj.bias", w.out_proj_bias);
}
template <class F>
void for_each_weight(LayerWeights& w, F&& f, const std::string& prefix = "") {
  for_each_weight(w.self_attn, f, prefix + "self_attn.");
  f(prefix + "linear1.weight", w.linear1_weight);
  f(prefix + "linear1.bias", w.linear1_bias);
  f(prefix + "linear2.weight", w.linear2_weight);
  f(prefix + "linear2.bias", w.linear2_bias);
  f(prefix + "norm1.weight", w.norm1_weight);
  f(prefix + "norm1.bias", w.norm1_bias);
  f(prefix + "norm2.weight", w.norm2_weight);
  f(prefix + "norm2.bias", w.norm2_bias);
}

/// Every weight at its shape, filled with zeros (also the starting point for gradients).
AttentionWeights zero_attention_weights(std::size_t d_model);
LayerWeights zero_layer_weights(const Config& config);

/// Copies the weights named prefix + <name> out of a state_dict: TransformerEncoderLayer's
/// state_dict() (nn/), or a TransformerEncoder's with prefix "layers.<i>.", or PyTorch's, since
/// the names are the same. `w` must have its shapes already (zero_layer_weights). Extra keys
/// are ignored.
/// Throws: std::invalid_argument naming a missing key; shape_error for a wrongly shaped entry.
void load_state_dict(AttentionWeights& w, const StateDict& state, const std::string& prefix = "");
void load_state_dict(LayerWeights& w, const StateDict& state, const std::string& prefix = "");

// ---- 3. activations: what forward keeps for backward -----------------------------------------

struct AttentionActivations {
  Tensor3 x;               ///< input [B, T, D]
  Mask2 key_padding_mask;  ///< [B, T] (true = padding) or empty
  Tensor3 qkv;             ///< [Q | K | V] = x W_inᵀ + b_in: [B, T, 3D]
  Tensor4 att;             ///< attention probabilities [B, H, T, T] (query row, key column)
  Tensor3 ctx;             ///< the heads' outputs side by side [B, T, D] (out_proj's input)
};

struct LayerActivations {
  Tensor3 x;                  ///< layer input [B, T, D]
  Tensor3 ln1;                ///< norm1's output [B, T, D]
  AttentionActivations attn;  ///< inside self_attn
  Tensor3 attn_out;           ///< self_attn's output [B, T, D]
  Tensor3 res1;               ///< x + attn_out [B, T, D] (post-norm: norm1's input)
  Tensor3 h;                  ///< the attention block's output [B, T, D]
  Tensor3 ln2;                ///< norm2's output [B, T, D]
  Tensor3 fc1;                ///< linear1's output, before the activation [B, T, F]
  Tensor3 fc1_act;            ///< act(fc1) [B, T, F]
  Tensor3 fc2;                ///< linear2's output [B, T, D]
  Tensor3 res2;               ///< h + fc2 [B, T, D] (post-norm: norm2's input)
};

// ---- 4. the steps, each a forward/backward pair ----------------------------------------------

/// out[b, t, :] = weight[ids[b, t], :].   ids: [B, T]   weight: [V, D]   out: [B, T, D]
void embedding_forward(Tensor3& out, const Index2& ids, const Tensor2& weight);
/// dweight[ids[b, t], :] += dout[b, t, :], except for rows equal to padding_idx (-1 = none).
void embedding_backward(Tensor2& dweight, const Tensor3& dout, const Index2& ids,
                        std::int64_t padding_idx = -1);

/// PE(p, 2i) = sin(p / 10000^(2i/D)), PE(p, 2i+1) = cos(p / 10000^(2i/D)) (D even; any real p,
/// negative too: relative distances and randomized positions use it).
double sinusoidal_position(double p, std::size_t j, std::size_t d_model);
/// out[b, t, :] = inp[b, t, :] + PE(t, :).   inp, out: [B, T, D]
void positions_forward(Tensor3& out, const Tensor3& inp);
/// dinp += dout (adding a constant passes the gradient through).
void positions_backward(Tensor3& dinp, const Tensor3& dout);

// Linear and layer norm are reference/ops.hpp's linear_forward / layer_norm_forward and their
// _backward (the same loops the ops/ tests and the grader use), called on the [B·T, C] rows.

/// relu(x) = max(x, 0); gelu(x) = x Φ(x) (exact erf form).   inp, out: [B, T, F]
void activation_forward(Tensor3& out, const Tensor3& inp, Activation act);
void activation_backward(Tensor3& dinp, const Tensor3& dout, const Tensor3& inp, Activation act);

/// Multi-head self-attention: in-projection (linear_forward), the attention core per head
/// (ops.hpp's scaled_dot_product_attention_forward: softmax(Q_h K_hᵀ / √Dh, padded keys
/// masked) V_h; a query whose every key is padding gets zero probabilities and a zero output,
/// where PyTorch 1.13 gives NaN), out-projection.   x, out: [B, T, D]
void multihead_attention_forward(Tensor3& out, AttentionActivations& a, const Tensor3& x,
                                 const Mask2& key_padding_mask, const AttentionWeights& w,
                                 std::size_t nhead);
void multihead_attention_backward(Tensor3& dx, AttentionWeights& dw, const Tensor3& dout,
                                  const AttentionActivations& a, const AttentionWeights& w,
                                  std::size_t nhead);

/// One encoder layer (post- or pre-norm, by config.norm_first).   x, y: [B, T, D]
void encoder_layer_forward(Tensor3& y, LayerActivations& a, const Tensor3& x,
                           const Mask2& key_padding_mask, const LayerWeights& w,
                           const Config& config);
/// dx and every tensor of dw receive += their gradient; dx must have x's shape.
void encoder_layer_backward(Tensor3& dx, LayerWeights& dw, const Tensor3& dy,
                            const LayerActivations& a, const LayerWeights& w, const Config& config);

}  // namespace xenc::reference

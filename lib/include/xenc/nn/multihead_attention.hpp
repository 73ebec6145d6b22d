// Multi-head attention (Vaswani et al., 2017, section 3.2.2).
//
//     Q = query W_qᵀ + b_q   K = key W_kᵀ + b_k   V = value W_vᵀ + b_v   [B·T, D] x [D, D] each
//     head h:  O_h = softmax(Q_h K_hᵀ / √Dh + masks) V_h      Q_h = Q[:, h·Dh : (h+1)·Dh]
//     y = out_proj(concat_h(O_h)) = concat_h(O_h) W_outᵀ + b_out
// The math is in ops/multi_head_attention.hpp; this module owns the parameters, the dropout
// generator and the cache for backward.
//
// Args:    embed_dim D, num_heads H (D must be divisible by H), dropout on the attention
//          probabilities (training mode only), bias
// Position: set_position(p) lets a scheme that acts inside attention (rotary, ALiBi) transform
//          Q and K and bias the scores (see AttentionPosition); the module does not know which.
// Params:  in_proj_weight [3D, D] (xavier uniform), in_proj_bias [3D] (zeros),
//          out_proj.weight [D, D], out_proj.bias [D] (zeros) — PyTorch's names and inits
// Shapes:  query: [B, Tq, D]   key, value: [B, Tk, D]   output: [B, Tq, D]
//          key_padding_mask: [B, Tk] bool, true = padding (ignored key), or empty
//          attn_mask: [Tq, Tk] float, added to the scores, or empty
//          weights (need_weights): [B, H, Tq, Tk], per head (PyTorch's average_attn_weights=False)
// Path:    how the heads' attention runs (plain [Tq, Tk] scores or tiles with an online
//          softmax, on how many threads, the dropout's form) is the attention op's plan, made
//          from the sizes (plan_attention, ops/multi_head_attention.hpp); both paths give the
//          same result within float rounding (tests/nn/test_attention_paths.cpp).
//          set_attention_path(p) forces one path (see AttentionPath); need_weights
//          always runs the plain path (the weights are the [Tq, Tk] matrix), as PyTorch does.
// PyTorch: torch.nn.MultiheadAttention(D, H, batch_first=True)
// Throws:  config_error if embed_dim % num_heads != 0; shape_error naming the argument and
//          both shapes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "xenc/core/random.hpp"
#include "xenc/core/tensor.hpp"
#include "xenc/nn/linear.hpp"
#include "xenc/nn/module.hpp"
#include "xenc/ops/multi_head_attention.hpp"
#include "xenc/ops/relative_attention.hpp"

namespace xenc {

struct MultiheadAttentionOutput {
  Tensor3 output;   ///< [B, Tq, D]
  Tensor4 weights;  ///< [B, H, Tq, Tk] when need_weights, else empty
};

struct MultiheadAttentionGrads {
  Tensor3 query, key, value;  ///< gradients of the three inputs
};

class MultiheadAttention : public Module {
 public:
  MultiheadAttention(std::size_t embed_dim, std::size_t num_heads, Rng& rng, float dropout = 0.0f,
                     bool bias = true);
  MultiheadAttention(std::size_t embed_dim, std::size_t num_heads, float dropout = 0.0f,
                     bool bias = true, std::uint32_t seed = 0);

  /// General attention (query, key and value may differ; key and value share Tk).
  MultiheadAttentionOutput forward(const Tensor3& query, const Tensor3& key, const Tensor3& value,
                                   const Mask2& key_padding_mask = Mask2(),
                                   bool need_weights = false, const Tensor2& attn_mask = Tensor2());
  /// Self-attention: query = key = value = x (backward returns one gradient, their sum).
  Tensor3 forward(const Tensor3& x, const Mask2& key_padding_mask = Mask2(),
                  const Tensor2& attn_mask = Tensor2(), Tensor4* weights = nullptr);

  /// Gradients of query, key and value; parameter gradients are accumulated.
  MultiheadAttentionGrads backward_qkv(const Tensor3& grad_output);
  /// Self-attention backward: dx = dquery + dkey + dvalue.
  Tensor3 backward(const Tensor3& grad_output);

  void collect_parameters(const std::string& prefix, ParameterList& out) override;
  void train(bool on = true) override;

  std::size_t embed_dim() const { return embed_dim_; }
  std::size_t num_heads() const { return num_heads_; }
  std::size_t head_dim() const { return embed_dim_ / num_heads_; }

  /// A position scheme acting inside attention, or null (the default). Not owned: it must
  /// outlive the module's forward and backward calls.
  void set_position(const AttentionPosition* position) { position_ = position; }
  const AttentionPosition* position() const { return position_; }
  /// The scheme as the ops see it: position() or, when none is set, the neutral one.
  const AttentionPosition& attention_position() const {
    return position_ ? *position_ : no_attention_position();
  }

  /// How the heads' attention runs (see "Path" above); AttentionPath::automatic by default.
  void set_attention_path(AttentionPath path) { path_ = path; }
  AttentionPath attention_path() const { return path_; }

  Tensor2 in_proj_weight, in_proj_weight_grad;  ///< [3D, D]: rows [W_q; W_k; W_v]
  Tensor1 in_proj_bias, in_proj_bias_grad;      ///< [3D] (empty without bias)
  Linear out_proj;                              ///< D -> D
  float dropout;

 private:
  MultiheadAttentionOutput forward_impl(const Tensor3& query, const Tensor3& key,
                                        const Tensor3& value, bool self_attention,
                                        const Mask2& key_padding_mask, bool need_weights,
                                        const Tensor2& attn_mask);
  /// Steps 4' to 2' of the backward (output projection, heads, position transform): dL/d(q, k, v).
  Projections projections_backward(const char* where, const Tensor3& grad_output);
  /// Step 3 for Transformer-XL's relative positions: fills heads' output and weights.
  RelativeAttentionSaved relative_attention_step(const Projections& qkv,
                                                 const Mask2& key_padding_mask,
                                                 const Tensor2& attn_mask,
                                                 const RelativeAttentionParameters& rel,
                                                 AttentionForward& heads);

  std::size_t embed_dim_, num_heads_;
  Rng dropout_rng_;
  const AttentionPosition* position_ = nullptr;
  AttentionPath path_ = AttentionPath::automatic;

  // Cache for backward (filled when gradients are enabled).
  struct Cache {
    bool valid = false;
    bool self_attention = false;
    Tensor3 query, key, value;        ///< the inputs (only query for self-attention)
    Projections qkv;                  ///< q, k, v as the heads saw them (after transform_qk)
    AttentionSaved saved;             ///< what the attention op keeps for its backward
    RelativeAttentionSaved relative;  ///< instead of saved, for relative positions
  } cache_;
};

}  // namespace xenc

// The transformer encoder block and stack (Vaswani et al., 2017, section 3.1).
//
// Post-norm (norm_first = false, the paper and PyTorch's default):
//     h = norm1(x + dropout(self_attn(x)))
//     y = norm2(h + dropout(linear2(dropout(act(linear1(h))))))
// Pre-norm (norm_first = true, Xiong et al., 2020):
//     h = x + dropout(self_attn(norm1(x)))
//     y = h + dropout(linear2(dropout(act(linear1(norm2(h))))))
//
// Params (state_dict names): self_attn.in_proj_weight [3D, D], self_attn.in_proj_bias [3D],
//   self_attn.out_proj.weight [D, D], self_attn.out_proj.bias [D], linear1.weight [F, D],
//   linear1.bias [F], linear2.weight [D, F], linear2.bias [D], norm1.weight/bias [D],
//   norm2.weight/bias [D]; the stack prefixes "layers.{i}." and adds "norm.weight/bias".
// Shapes:  x, y: [B, T, D]   src_key_padding_mask: [B, T] bool (true = padding) or empty
//          mask: [T, T] additive float or empty
// PyTorch: torch.nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
//          activation, layer_norm_eps, batch_first=True, norm_first) and
//          torch.nn.TransformerEncoder(layer, num_layers, norm)
// Throws:  config_error (D % H != 0, zero sizes, dropout outside [0, 1)); shape_error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "xenc/core/random.hpp"
#include "xenc/core/tensor.hpp"
#include "xenc/nn/layer_norm.hpp"
#include "xenc/nn/linear.hpp"
#include "xenc/nn/module.hpp"
#include "xenc/nn/multihead_attention.hpp"
#include "xenc/ops/activation.hpp"

namespace xenc {

/// Hyper-parameters of one encoder layer, with PyTorch's names and defaults.
struct EncoderLayerConfig {
  std::size_t d_model = 512;           ///< D
  std::size_t nhead = 8;               ///< H
  std::size_t dim_feedforward = 2048;  ///< F
  float dropout = 0.1f;                ///< active only in training mode
  Activation activation = Activation::relu;
  float layer_norm_eps = 1e-5f;
  bool norm_first = false;  ///< false: post-norm (paper); true: pre-norm

  /// Throws config_error naming the rule and the numbers.
  void validate(const std::string& where) const;
};

/// What a forward pass can hand back besides its output, for demos and notebooks.
struct EncoderTrace {
  std::vector<Tensor3> layer_outputs;      ///< after each layer: [B, T, D]
  std::vector<Tensor4> attention_weights;  ///< each layer: [B, H, T, T]
};

class TransformerEncoderLayer : public Module {
 public:
  TransformerEncoderLayer(const EncoderLayerConfig& config, Rng& rng);
  explicit TransformerEncoderLayer(const EncoderLayerConfig& config, std::uint32_t seed = 0);

  /// attention_weights, when given, receives the self-attention weights [B, H, T, T].
  Tensor3 forward(const Tensor3& x, const Mask2& src_key_padding_mask = Mask2(),
                  const Tensor2& mask = Tensor2(), Tensor4* attention_weights = nullptr);
  Tensor3 backward(const Tensor3& grad_y);

  void collect_parameters(const std::string& prefix, ParameterList& out) override;
  void train(bool on = true) override;

  const EncoderLayerConfig& config() const { return config_; }

  MultiheadAttention self_attn;
  Linear linear1;  ///< D -> F
  Linear linear2;  ///< F -> D
  LayerNorm norm1, norm2;

 private:
  Tensor3 feed_forward(const Tensor3& x);
  /// Inference (no gradients, evaluation mode): the feed-forward block at most
  /// kFeedForwardChunkRows of the B·T rows at a time, so that the [B·T, F] hidden layer is
  /// never whole (at T = 32768, F = 2048 it would be 256 MiB; a chunk is 8 MiB).
  Tensor3 feed_forward_in_chunks(const Tensor3& x);
  static constexpr std::size_t kFeedForwardChunkRows = 1024;
  Tensor3 feed_forward_backward(const Tensor3& grad);
  Tensor3 dropout_apply(const Tensor3& x, Tensor3& mask);
  /// f(state_dict name, child) for every child module, in PyTorch's order.
  template <class F>
  void for_each_child(F&& f);

  EncoderLayerConfig config_;
  Rng dropout_rng_;
  struct Cache {
    bool valid = false;
    Tensor3 ff_pre;        ///< linear1 output before the activation [B, T, F]
    Tensor3 drop_ff;       ///< dropout mask inside the feed-forward, or empty
    Tensor3 drop1, drop2;  ///< residual-branch dropout masks, or empty
  } cache_;
};

class TransformerEncoder : public Module {
 public:
  /// num_layers layers built from `layer_config`, each with its own initial weights drawn from
  /// rng in order; final_norm adds a LayerNorm after the last layer ("norm").
  TransformerEncoder(const EncoderLayerConfig& layer_config, std::size_t num_layers, Rng& rng,
                     bool final_norm = false);
  TransformerEncoder(const EncoderLayerConfig& layer_config, std::size_t num_layers,
                     bool final_norm = false, std::uint32_t seed = 0);

  Tensor3 forward(const Tensor3& x, const Mask2& src_key_padding_mask = Mask2(),
                  const Tensor2& mask = Tensor2(), EncoderTrace* trace = nullptr);
  Tensor3 backward(const Tensor3& grad_y);

  /// Hands a position scheme that acts inside attention (or null) to every layer's self_attn.
  void set_attention_position(const AttentionPosition* position);

  void collect_parameters(const std::string& prefix, ParameterList& out) override;
  void train(bool on = true) override;

  std::size_t num_layers() const { return layers.size(); }
  const EncoderLayerConfig& layer_config() const { return layer_config_; }

  std::vector<TransformerEncoderLayer> layers;
  std::unique_ptr<LayerNorm> norm;  ///< optional final norm (null when absent)

 private:
  EncoderLayerConfig layer_config_;
};

}  // namespace xenc

// A per-token classifier: the encoder model with a Linear head on every position.
//
//     ids [B, T] -> EncoderModel (embedding, positions, encoder) -> h [B, T, D]
//                -> head: logits = h Wᵀ + b  [B, T, C]
//
// Trained with cross_entropy over the tokens that carry a label (the others get ignore_index).
//
// Params (state_dict names): those of EncoderModel (embedding.weight, position.weight for
//   learned positions, encoder.layers.{i}.*, encoder.norm.*) and head.weight [C, D],
//   head.bias [C]. A PyTorch module with attributes embedding (nn.Embedding), position
//   (nn.Embedding, learned only), encoder (nn.TransformerEncoder) and head (nn.Linear) has the
//   same names, so load_state_dict(strict=True) takes our weights (scripts/torch_train_order.py).
// Shapes:  ids: [B, T] int64   key_padding_mask: [B, T] (true = padding) or empty
//          logits: [B, T, C]
// Throws:  config_error for num_labels == 0 or a bad EncoderModelConfig.
#pragma once

#include <cstddef>
#include <string>

#include "xenc/core/tensor.hpp"
#include "xenc/nn/encoder_model.hpp"
#include "xenc/nn/linear.hpp"
#include "xenc/nn/module.hpp"

namespace xenc {

class TokenClassifier : public Module {
 public:
  /// The encoder from config (seeded by config.seed) and a head D -> num_labels seeded by
  /// config.seed + 1.
  TokenClassifier(const EncoderModelConfig& config, std::size_t num_labels);

  /// Logits for every token: [B, T, C]. trace, when given, receives every intermediate.
  Tensor3 forward(const Index2& ids, const Mask2& key_padding_mask = Mask2(),
                  ModelTrace* trace = nullptr);
  /// Accumulates every parameter's gradient from dL/dlogits [B, T, C].
  void backward(const Tensor3& grad_logits);

  void collect_parameters(const std::string& prefix, ParameterList& out) override;
  void train(bool on = true) override;

  const EncoderModelConfig& config() const { return model.config(); }
  std::size_t num_labels() const { return head.out_features(); }

  EncoderModel model;
  Linear head;  ///< D -> C
};

}  // namespace xenc

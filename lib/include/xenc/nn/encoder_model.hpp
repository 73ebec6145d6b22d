// A small encoder model that ties the modules together:
//
//     ids [B, T] -> token embedding [B, T, D] -> × √D (optional) -> position scheme
//                -> TransformerEncoder (N layers, optional final norm) -> [B, T, D]
//
// Params (state_dict names): embedding.weight [V, D], position.weight [max_len, D] (learned
//   positions only), encoder.layers.{i}.* and encoder.norm.* (see transformer_encoder.hpp).
// Initialisation is seeded and compiler-independent: the same seed gives the same numbers in
// the compiled demo and in a notebook.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xenc/core/random.hpp"
#include "xenc/core/tensor.hpp"
#include "xenc/nn/embedding.hpp"
#include "xenc/nn/module.hpp"
#include "xenc/nn/position.hpp"
#include "xenc/nn/transformer_encoder.hpp"

namespace xenc {

struct EncoderModelConfig {
  std::size_t vocab_size = 0;  ///< V
  EncoderLayerConfig layer;    ///< D, H, F, dropout, activation, eps, norm_first
  std::size_t num_layers = 2;  ///< N
  PositionKind position = PositionKind::sinusoidal;
  std::size_t max_len = 512;  ///< learned positions only
  /// Randomized positions (Ruoss et al., 2023): L, the range [0, L) the training positions are
  /// drawn from (PositionScheme::set_randomized; the paper's code uses 2048); 0: off. Learned
  /// positions need max_len >= L. The draws are seeded from `seed`.
  std::size_t randomized_positions = 0;
  bool scale_embedding = false;  ///< multiply token embeddings by √D (the paper does)
  bool final_norm = false;       ///< a LayerNorm after the last layer
  std::int64_t padding_idx = 0;  ///< the <pad> id (its embedding row stays 0)
  std::uint32_t seed = 0;

  void validate(const std::string& where) const;
};

/// Every intermediate of one forward pass, for the word-order demo and the notebooks.
struct ModelTrace {
  Tensor3 token_embedding;  ///< after lookup (and × √D when scale_embedding): [B, T, D]
  Tensor3 with_positions;   ///< after the position scheme: [B, T, D]
  EncoderTrace encoder;     ///< each layer's output and attention weights
};

class EncoderModel : public Module {
 public:
  explicit EncoderModel(const EncoderModelConfig& config);

  /// ids [B, T] -> [B, T, D]. key_padding_mask [B, T] (true = padding) or empty.
  Tensor3 forward(const Index2& ids, const Mask2& key_padding_mask = Mask2(),
                  ModelTrace* trace = nullptr);
  /// Accumulates every parameter's gradient from dL/dy [B, T, D].
  void backward(const Tensor3& grad_y);

  void collect_parameters(const std::string& prefix, ParameterList& out) override;
  void train(bool on = true) override;

  const EncoderModelConfig& config() const { return config_; }

  Embedding embedding;
  std::unique_ptr<PositionScheme> position;
  TransformerEncoder encoder;

 private:
  EncoderModel(const EncoderModelConfig& config, Rng& rng);
  EncoderModelConfig config_;
};

}  // namespace xenc

// The small encoder model: embedding -> (× √D) -> positions -> encoder stack.
#include "xenc/nn/encoder_model.hpp"

#include <cmath>
#include <string>

#include "xenc/core/error.hpp"

namespace xenc {

void EncoderModelConfig::validate(const std::string& where) const {
  check_config(vocab_size > 0, where, "vocab_size must be > 0");
  layer.validate(where);
  check_config(num_layers > 0, where, "num_layers must be > 0");
  if (position == PositionKind::sinusoidal)
    check_config(layer.d_model % 2 == 0, where,
                 "d_model is " + std::to_string(layer.d_model) +
                     ", expected an even number for sinusoidal positions (sin/cos pairs)");
  if (position == PositionKind::rope && layer.nhead > 0 && layer.d_model % layer.nhead == 0) {
    const std::size_t head_dim = layer.d_model / layer.nhead;
    check_config(head_dim % 2 == 0, where,
                 "d_model / nhead = " + std::to_string(layer.d_model) + " / " +
                     std::to_string(layer.nhead) + " = " + std::to_string(head_dim) +
                     ", expected an even head dimension for rope positions (rotated pairs)");
  }
  if (randomized_positions > 0) {
    check_config(position != PositionKind::none, where,
                 "randomized_positions is " + std::to_string(randomized_positions) +
                     ", expected 0 for position none (no positions to randomize)");
    if (position == PositionKind::learned)
      check_config(max_len >= randomized_positions, where,
                   "max_len is " + std::to_string(max_len) +
                       ", expected >= randomized_positions = " +
                       std::to_string(randomized_positions) + " (learned rows are drawn from it)");
  }
  check_config(padding_idx < static_cast<std::int64_t>(vocab_size), where,
               "padding_idx is " + std::to_string(padding_idx) +
                   ", expected < vocab_size = " + std::to_string(vocab_size));
}

namespace {
const EncoderModelConfig& validated(const EncoderModelConfig& c) {
  c.validate("EncoderModel");
  return c;
}
}  // namespace

// One generator for the whole model, so every parameter comes from `seed` in a fixed order:
// embedding, position table (learned), then each encoder layer.
EncoderModel::EncoderModel(const EncoderModelConfig& config)
    : EncoderModel(validated(config), as_lvalue(Rng(config.seed))) {}

EncoderModel::EncoderModel(const EncoderModelConfig& config, Rng& rng)
    : embedding(config.vocab_size, config.layer.d_model, rng, config.padding_idx),
      position(make_position_scheme(config.position, config.layer.d_model, config.max_len, rng,
                                    config.layer.nhead)),
      encoder(config.layer, config.num_layers, rng, config.final_norm),
      config_(config) {
  // Randomized positions draw from their own generator (the parameters' draws do not move)
  if (config.randomized_positions > 0)
    position->set_randomized(config.randomized_positions, config.seed + 0x5eedu);
}

namespace {
// √D, the paper's scale on the token embeddings
float sqrt_d(std::size_t d_model) { return std::sqrt(static_cast<float>(d_model)); }  // scalar
}  // namespace

Tensor3 EncoderModel::forward(const Index2& ids, const Mask2& key_padding_mask, ModelTrace* trace) {
  Tensor3 x = embedding.forward(ids);  // [B, T, D]
  if (config_.scale_embedding) x *= sqrt_d(config_.layer.d_model);
  if (trace) trace->token_embedding = x;
  // A scheme that acts inside attention (rotary, ALiBi) is handed to every self-attention
  // (asked at every forward, so a replaced `position` takes effect); the additive schemes
  // return null and act here, on the embeddings.
  encoder.set_attention_position(position->attention_position());
  x = position->forward(x);  // + position information (identity for schemes in attention)
  if (trace) trace->with_positions = x;
  return encoder.forward(x, key_padding_mask, Tensor2(), trace ? &trace->encoder : nullptr);
}

void EncoderModel::backward(const Tensor3& grad_y) {
  Tensor3 g = position->backward(encoder.backward(grad_y));
  if (config_.scale_embedding) g *= sqrt_d(config_.layer.d_model);
  embedding.backward(g);
}

void EncoderModel::collect_parameters(const std::string& prefix, ParameterList& out) {
  embedding.collect_parameters(join_name(prefix, "embedding"), out);
  position->collect_parameters(join_name(prefix, "position"), out);
  encoder.collect_parameters(join_name(prefix, "encoder"), out);
}

void EncoderModel::train(bool on) {
  training_ = on;
  embedding.train(on);
  position->train(on);
  encoder.train(on);
}

}  // namespace xenc

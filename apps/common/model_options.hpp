// Shared by the demo apps that build an encoder (included as "../common/model_options.hpp"):
// the model's size options turned into an EncoderModelConfig, and the memory guard that
// refuses a model before it is allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <xenc/nn/encoder_model.hpp>

#include "cli.hpp"

namespace xenc_app {

/// The model options every encoder app has (--d-model, --heads, --ff, --layers, --dropout).
struct ModelOptions {
  std::size_t d_model = 16, heads = 2, ff = 64, layers = 2;
  float dropout = 0.0f;
};

/// An EncoderModelConfig from the options: post-norm, relu, the given position scheme;
/// max_len is the rows of a learned position table (unused by the other schemes).
inline xenc::EncoderModelConfig encoder_config(const ModelOptions& m, std::size_t vocab_size,
                                               xenc::PositionKind position, std::size_t max_len,
                                               std::uint32_t seed) {
  xenc::EncoderModelConfig c;
  c.vocab_size = vocab_size;
  c.layer.d_model = m.d_model;
  c.layer.nhead = m.heads;
  c.layer.dim_feedforward = m.ff;
  c.layer.dropout = m.dropout;
  c.layer.activation = xenc::Activation::relu;
  c.num_layers = m.layers;
  c.position = position;
  c.max_len = max_len;
  c.seed = seed;
  return c;
}

/// Throws resource_error when an inference pass of this model (encoder_inference_bytes) needs
/// more than kMemoryLimitBytes; the message names the size, the limit and the option that is the
/// real cause: the sentence length when the attention weights (L·B·H·T² floats) are the larger
/// part, else the model's size options.
inline void check_inference_memory(std::size_t V, std::size_t max_len, std::size_t D, std::size_t H,
                                   std::size_t F, std::size_t L, std::size_t B, std::size_t T) {
  const double need = encoder_inference_bytes(V, max_len, D, H, F, L, B, T);
  if (need <= kMemoryLimitBytes) return;
  const double attention = 4.0 * double(L) * double(B) * double(H) * double(T) * double(T);
  const std::string advice =
      attention > need / 2
          ? "use a shorter sentence (T = " + std::to_string(T) + " tokens: the attention weights of " +
                std::to_string(L) + " layers x " + std::to_string(H) + " heads take " + human_bytes(attention) +
                "), or fewer --layers or --heads"
          : "use a smaller --d-model, --layers or --ff";
  throw resource_error("this model needs about " + human_bytes(need) + " of memory for inference (D = " +
                       std::to_string(D) + ", " + std::to_string(L) + " layers, F = " + std::to_string(F) +
                       ", T = " + std::to_string(T) + "), more than this demo's limit of " +
                       human_bytes(kMemoryLimitBytes) + ": " + advice);
}

}  // namespace xenc_app

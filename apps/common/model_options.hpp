// Shared by the demo apps that build an encoder (included as "../common/model_options.hpp"):
// the model's size options (declared once, in options.hpp's table XENC_MODEL_OPTIONS) turned
// into an EncoderModelConfig, and the memory guard that refuses a model before it is allocated.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <xenc/nn/encoder_model.hpp>

#include "cli.hpp"

namespace xenc_app {

namespace detail {
template <class O, class = void>
struct has_dropout : std::false_type {};
template <class O>
struct has_dropout<O, std::void_t<decltype(std::declval<const O&>().dropout)>> : std::true_type {};
}  // namespace detail

/// The one conversion from a program's model options to an EncoderModelConfig: the members
/// d_model, heads, ff, layers (options.hpp's ModelGroupOptions) and dropout where the program
/// has it (0 where it has not); post-norm, relu, the given position scheme; max_len is the rows of
/// a learned position table (unused by the other schemes).
template <class O>
xenc::EncoderModelConfig encoder_config(const O& o, std::size_t vocab_size,
                                        xenc::PositionKind position, std::size_t max_len,
                                        std::uint32_t seed) {
  xenc::EncoderModelConfig c;
  c.vocab_size = vocab_size;
  c.layer.d_model = std::size_t(o.d_model);
  c.layer.nhead = std::size_t(o.heads);
  c.layer.dim_feedforward = std::size_t(o.ff);
  c.layer.dropout = 0.0f;  // without a --dropout option, none (not the layer's default)
  if constexpr (detail::has_dropout<O>::value) c.layer.dropout = float(o.dropout);
  c.layer.activation = xenc::Activation::relu;
  c.num_layers = std::size_t(o.layers);
  c.position = position;
  c.max_len = max_len;
  c.seed = seed;
  return c;
}

/// Throws resource_error when a traced inference pass of this model (encoder_inference_bytes)
/// needs more than max_memory_mb (--max-memory-mb, through check_memory). The advice names what
/// to change: the sequence length (named by `sequences`, e.g. "sentences (--a, --b)") when a
/// sequence of at most 64 tokens would fit, with the longest that fits; otherwise the model
/// options.
inline void check_inference_memory(std::size_t V, std::size_t max_len, std::size_t D, std::size_t H,
                                   std::size_t F, std::size_t L, std::size_t B, std::size_t T,
                                   std::size_t max_memory_mb,
                                   const std::string& sequences = "sequences") {
  auto bytes = [&](std::size_t t) {
    return encoder_inference_bytes(V, std::max(max_len, t), D, H, F, L, B, t);
  };
  const double limit = double(max_memory_mb) * 1024 * 1024, need = bytes(T);
  if (need <= limit) return;
  std::string advice;
  if (T > 64 && bytes(64) <= limit) {
    std::size_t lo = 64, hi = T;  // bytes(lo) fits, bytes(hi) does not
    while (hi - lo > 1) {
      const std::size_t mid = lo + (hi - lo) / 2;
      (bytes(mid) <= limit ? lo : hi) = mid;
    }
    advice = "use shorter " + sequences +
             ": the length is the cause (attention stores T x T weights per head), and " +
             std::to_string(lo) + " tokens fit";
  } else {
    advice = "use a smaller --d-model, --layers or --ff";
  }
  check_memory(need, max_memory_mb, "this model's inference",
               "D = " + std::to_string(D) + ", " + std::to_string(L) +
                   " layers, F = " + std::to_string(F) + ", T = " + std::to_string(T),
               advice + ", or a higher --max-memory-mb");
}

}  // namespace xenc_app

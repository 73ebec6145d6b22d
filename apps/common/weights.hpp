// Shared by the apps that take a torch.nn.TransformerEncoder state_dict (.npz) (xenc-encode,
// xenc-attention-map; included as "../common/weights.hpp"): the model's sizes read from the
// members' .npy headers alone, so that its memory is estimated before a byte of data is loaded.
#pragma once

#include <cstddef>
#include <string>

#include "xenc/io/npz.hpp"

namespace xenc_app {

struct WeightsShape {
  std::size_t d_model = 0;          ///< D from in_proj_weight [3D, D] (0: no such key)
  std::size_t dim_feedforward = 0;  ///< F from linear1.weight [F, D] (0: no such key)
  std::size_t num_layers = 0;       ///< number of in_proj_weight keys
  bool final_norm = false;          ///< a "norm.weight" key
  double parameters = 0;            ///< values in every member
};

/// The sizes an encoder state_dict's headers claim. The keys and shapes are checked later, by
/// the loader; this only reads what the estimate needs. Throws io_error as load_npz_headers.
inline WeightsShape weights_shape(const std::string& path, const xenc::LoadLimits& limits) {
  WeightsShape w;
  const std::string attn = "self_attn.in_proj_weight", ff = "linear1.weight";
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const auto& [key, h] : xenc::load_npz_headers(path, limits)) {
    w.parameters += double(h.size());
    if (ends_with(key, attn) && h.shape.size() == 2) {
      ++w.num_layers;
      w.d_model = std::max(w.d_model, h.shape[1]);
    }
    if (ends_with(key, ff) && h.shape.size() == 2)
      w.dim_feedforward = std::max(w.dim_feedforward, h.shape[0]);
    if (key == "norm.weight") w.final_norm = true;
  }
  return w;
}

/// LoadLimits that let a file as large as the memory limit through: the program's own estimate
/// (from weights_shape) has already refused anything larger, naming --max-memory-mb.
inline xenc::LoadLimits limits_for_memory(std::size_t max_memory_mb) {
  xenc::LoadLimits limits;
  const std::size_t bytes = max_memory_mb << 20;
  if (limits.max_array_bytes < bytes) limits.max_array_bytes = bytes;
  if (limits.max_total_bytes < bytes) limits.max_total_bytes = bytes;
  return limits;
}

}  // namespace xenc_app

// The options of xenc-encode and xenc-init-encoder, one record each (apps/common/options.hpp):
// the layer's settings both programs take (layer_records), then each program's own list.
// main.cpp and init_encoder.cpp read these lists.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../common/cli.hpp"
#include "../common/options.hpp"

namespace encode_app {

/// The settings of a PyTorch TransformerEncoderLayer that its state_dict does not hold (members
/// activation, norm_first, layer_norm_eps).
template <class O>
std::vector<xenc_app::OptionRecord<O>> layer_records() {
  using namespace xenc_app;
  return {
      {"--activation", "activation", nullptr, "feed-forward activation", text({"relu", "gelu"}),
       absent(), XENC_FIELD(O, activation)},
      {"--norm-first", "norm_first", nullptr, "pre-norm layers (PyTorch's norm_first=True)", flag(),
       absent(), XENC_FIELD(O, norm_first)},
      {"--layer-norm-eps", "layer_norm_eps", nullptr, "eps of every LayerNorm (finite, > 0)",
       real(0, 0, true), absent(), XENC_FIELD(O, layer_norm_eps)},
  };
}

/// xenc-encode: the weights from a file, an input, an output.
struct EncodeOptions : xenc_app::Guard {
  std::string weights, input, padding_mask, output;
  std::size_t heads = 0;
  std::string activation = "relu";
  bool norm_first = false;
  float layer_norm_eps = 1e-5f;
  EncodeOptions() { max_minutes = 1; }  // one forward pass: quick, or refused unless raised
};

inline std::vector<xenc_app::OptionRecord<EncodeOptions>> encode_records() {
  using namespace xenc_app;
  using C = EncodeOptions;
  const std::vector<OptionRecord<C>> files = {
      {"--weights", "weights", nullptr,
       "W.npz: state_dict of torch.nn.TransformerEncoder or TransformerEncoderLayer",
       required(text()), absent(), XENC_FIELD(C, weights)},
      {"--heads", "heads", nullptr, "H: number of attention heads (nhead), must divide D",
       required(whole(1, 65536)), absent(), XENC_FIELD(C, heads),
       "a PyTorch model's heads, whatever its D (the file's D is checked against them)"},
  };
  const std::vector<OptionRecord<C>> data = {
      {"--input", "input", nullptr, "X.npy: [T, D] or [B, T, D], float32 or float64",
       required(text()), absent(), XENC_FIELD(C, input)},
      {"--padding-mask", "padding_mask", nullptr,
       "M.npy: bool [B, T] or [T], true = padding (src_key_padding_mask)", text(), absent(),
       XENC_FIELD(C, padding_mask)},
      {"--output", "output", nullptr, "Y.npy: float32, X's shape", required(text()), absent(),
       XENC_FIELD(C, output)},
  };
  return records_of<C>({files, layer_records<C>(), data, guard_records<C>()});
}

/// xenc-init-encoder: the model's sizes (model_records' --layers, --d-model and --heads, PyTorch's
/// --dim-feedforward), the layer's settings, the toy training and the output.
struct InitOptions : xenc_app::Guard, xenc_app::ModelGroupOptions<std::size_t> {
  InitOptions() {  // --d-model and --heads are required, --dim-feedforward fills ff
    d_model = 0;
    heads = 0;
    ff = 0;
    layers = 2;
  }
  std::size_t train_steps = 0;
  std::uint32_t seed = 0;
  std::string activation = "relu", output;
  bool norm_first = false, final_norm = false, compressed = false;
  float layer_norm_eps = 1e-5f;
};

inline std::vector<xenc_app::OptionRecord<InitOptions>> init_records() {
  using namespace xenc_app;
  using C = InitOptions;
  const std::vector<OptionRecord<C>> sizes = records_of<C>(
      {pick(model_records<C>(Use::inference), {{"--layers", "number of encoder layers"},
                                               {"--d-model", "D", true},
                                               {"--heads", "H (must divide D)", true}}),
       {{"--dim-feedforward", "dim_feedforward", nullptr, "F", required(whole(1, 65536)), absent(),
         XENC_FIELD(C, ff), "PyTorch's name (the state_dict's dim_feedforward)"}}});
  const std::vector<OptionRecord<C>> layer = layer_records<C>();
  const std::vector<OptionRecord<C>> final_norm = {
      {"--final-norm", "final_norm", nullptr, "a LayerNorm after the last layer (\"norm.*\")",
       flag(), absent(), XENC_FIELD(C, final_norm)},
  };
  const std::vector<OptionRecord<C>> rest = {
      {"--seed", "seed", nullptr, "initialisation seed", whole(0, 4294967295.0), absent(),
       XENC_FIELD(C, seed)},
      {"--train-steps", "train_steps", nullptr, "Adam steps on the toy task", whole(0, 100000),
       absent(), XENC_FIELD(C, train_steps)},
      {"--compressed", "compressed", nullptr, "deflate the members (numpy.savez_compressed)",
       flag(), absent(), XENC_FIELD(C, compressed)},
      {"--output", "output", nullptr, "W.npz", required(text()), absent(), XENC_FIELD(C, output)},
  };
  return records_of<C>({sizes,
                        pick(layer, {{"--activation", ""}, {"--norm-first", "pre-norm layers"}}),
                        final_norm, pick(layer, {{"--layer-norm-eps"}}), rest, guard_records<C>()});
}

}  // namespace encode_app

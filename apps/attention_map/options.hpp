// xenc-attention-map's options, one record each (apps/common/options.hpp): the sentence, the
// model's sizes (model_records' --d-model, --heads and --layers; F is 4 D, or the file's), the
// scheme, the outputs, the weights file and the limits. main.cpp reads this list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <xenc/nn/encoder_model.hpp>

#include "../common/cli.hpp"
#include "../common/options.hpp"

namespace attention_map {

/// Everything the command line sets (the limits are Guard's, the model's sizes the model group's:
/// ff, not offered here, stays 0: F is 4 D, or the file's).
struct CommandLine : xenc_app::Guard, xenc_app::ModelGroupOptions<std::size_t> {
  CommandLine() {
    d_model = 16;
    heads = 2;
    layers = 2;
    ff = 0;
  }
  std::string sentence = "the cat chased the mouse", position = "sinusoidal",
              svg_dir = "attention_maps", weights;
  std::uint32_t seed = 42;
  bool json = false;
};

inline std::vector<xenc_app::OptionRecord<CommandLine>> option_records() {
  using namespace xenc_app;
  using C = CommandLine;
  std::vector<std::string> schemes;  // every registered scheme
  for (xenc::PositionKind kind : xenc::all_position_kinds())
    schemes.push_back(xenc::to_string(kind));
  const std::vector<OptionRecord<C>> sentence = {
      {"--sentence", "sentence", nullptr, "the input sentence", text(), absent(),
       XENC_FIELD(C, sentence)},
  };
  const std::vector<OptionRecord<C>> model =
      pick(model_records<C>(Use::inference), {{"--d-model", "D (not with --weights)"},
                                              {"--heads", "H (must divide D)"},
                                              {"--layers", "N (not with --weights)"}});
  const std::vector<OptionRecord<C>> rest = {
      {"--seed", "seed", nullptr, "seed of the random weights", whole(0, 4294967295.0), absent(),
       XENC_FIELD(C, seed)},
      {"--position", "position", nullptr,
       "none | sinusoidal | learned | rope | alibi (rope and alibi act inside attention)",
       text(schemes), absent(), XENC_FIELD(C, position)},
      {"--svg-dir", "svg_dir", nullptr,
       "directory for the SVG heatmaps (\"\" = none; with --json only when given)", text(),
       absent(), XENC_FIELD(C, svg_dir)},
      {"--json", "json", nullptr,
       "print the weights as JSON (bertviz head_view layout) instead of text; writes no SVG "
       "unless --svg-dir is given",
       flag(), absent(), XENC_FIELD(C, json)},
      {"--weights", "weights", nullptr,
       ".npz of a torch.nn.TransformerEncoder(Layer) state_dict (np.savez(path, **sd)); D, F and "
       "the number of layers come from the file, --heads must match the model",
       text(), absent(), XENC_FIELD(C, weights)},
  };
  return records_of<C>({sentence, model, rest, memory_records<C>(), output_limit_records<C>()});
}

}  // namespace attention_map

// xenc-word-order's options, one record each (apps/common/options.hpp): the sentences and the
// scheme here, then the shared groups (the model's sizes, the memory limit). The command line
// (main.cpp) and the web page (apps/web/bindings.cpp) read this list.
#pragma once

#include <string>
#include <vector>

#include "../common/options.hpp"
#include "experiment.hpp"

namespace word_order {

/// Everything the command line sets: the experiment's Options and the outputs.
struct CommandLine : Options {
  std::string svg_dir;
  bool json = false;
};

inline std::vector<xenc_app::OptionRecord<CommandLine>> option_records() {
  using namespace xenc_app;
  using C = CommandLine;
  const std::vector<OptionRecord<C>> sentences = {
      {"--a", "a", nullptr, "sentence A", text(), text(), XENC_FIELD(C, a)},
      {"--b", "b", nullptr,
       "sentence B (a repeated word is paired by the permutation from A to B: mirror images when "
       "B is A reversed, else the copy at the same position, else in order; shown as the, the#2, "
       "...)",
       text(), text(), XENC_FIELD(C, b)},
      {"--position", "position", nullptr,
       "compare no positions with: sinusoidal | learned (untrained, N(0,1)) | rope | alibi "
       "(these two act inside attention) | all (every scheme); none = only the run without "
       "positions",
       text({"none", "sinusoidal", "learned", "rope", "alibi", "all"}), text(),
       XENC_FIELD(C, position)},
  };
  const std::vector<OptionRecord<C>> rest = {
      {"--seed", "seed", "seed", "seed of the random weights", whole(0, 4294967295.0),
       whole(0, 4294967295.0), XENC_FIELD(C, seed)},
      {"--scale-embedding", "scale_embedding", "scale_embedding",
       "multiply token embeddings by sqrt(D) as in the paper; this model's embeddings are N(0, 1), "
       "so they become about sqrt(2D) times longer than sinusoidal positions, which then barely "
       "change the cosines (the output measures it)",
       flag(), absent(), XENC_FIELD(C, scale_embedding)},
      {"--json", "json", nullptr, "print one JSON object instead of the tables", flag(), absent(),
       XENC_FIELD(C, json)},
      {"--svg-dir", "svg_dir", nullptr,
       "write SVG figures of the cosines and the final-layer differences here", text(), absent(),
       XENC_FIELD(C, svg_dir)},
  };
  return records_of<C>({sentences, model_records<C>(Use::inference), rest, memory_records<C>()});
}

}  // namespace word_order

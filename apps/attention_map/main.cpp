// attention_map: who attends to whom, in every layer and head of the encoder.
//
// Each self-attention head turns its scores into weights P = softmax(Q Kᵀ / √Dh): row i says how
// much token i (the query) takes from every token j (the keys); each row sums to 1. This app
// runs an encoder on one sentence and writes P of every layer and head as an SVG heatmap with the
// tokens on both axes, plus one figure with all heads side by side. The encoder is seeded and
// random, or (--weights) takes its layers from a torch.nn.TransformerEncoder state_dict saved as
// .npz (xenc/io); the token embedding and positions stay the seeded ones either way.
//
// --json prints the weights (and writes SVGs only when --svg-dir is given too) in the layout
// bertviz's head_view(attention, tokens) takes:
//     {"tokens": [...], "attention": [ layer 0: [batch = 1][H][T][T], layer 1: ..., ... ]}
// (in Python: head_view([torch.tensor(a) for a in j["attention"]], j["tokens"])).
//
//     xenc-attention-map                              # "the cat chased the mouse", D = 16, 2
//     heads, 2 layers xenc-attention-map --sentence "a b c d" --heads 4 --svg-dir maps
//     xenc-attention-map --json > attention.json
//     xenc-attention-map --weights encoder.npz --heads 2    # a torch.nn.TransformerEncoder's
//     weights
//
// Before it loads, builds or writes anything it estimates the memory (xenc/nn/cost.hpp, the
// weights' sizes from the .npz headers) and the size of each output (about 75 bytes per heatmap
// cell: all heads in one figure hold L·H·T² cells), and refuses over --max-memory-mb (1024) or
// --max-output-mb (100) with the estimate, the limit and what to change.
//
// This file is the command line: experiment.hpp runs the sentence through the encoder (after the
// checks), report.hpp turns the weights into the JSON, the text tables and the heatmaps.
#include <CLI/CLI.hpp>
#include <xenc/io.hpp>
#include <xenc/xenc.hpp>

#include "../common/cli.hpp"
#include "../common/weights.hpp"
#include "experiment.hpp"
#include "options.hpp"
#include "report.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{
      "xenc-attention-map: the attention weights of every layer and head of a seeded random\n"
      "encoder, as SVG heatmaps (tokens on both axes) or as JSON for bertviz's head_view.\n"
      "The model is random (seeded, untrained): its words carry no meaning."};
  xenc_app::add_version(app, "xenc-attention-map");
  attention_map::CommandLine c;
  xenc_app::add_options(app, c, attention_map::option_records());
  CLI11_PARSE(app, argc, argv);
  if (c.json && app.get_option("--svg-dir")->count() == 0)
    c.svg_dir.clear();  // --json alone writes only JSON
  const bool d_model_given = app.get_option("--d-model")->count() > 0,
             layers_given = app.get_option("--layers")->count() > 0;

  try {
    const attention_map::Run run = attention_map::run_experiment(c, d_model_given, layers_given);
    // JSON for bertviz, or text tables (report.hpp); the figures
    if (c.json)
      std::cout << attention_map::to_json(run) << "\n";
    else
      std::cout << attention_map::table_text(run);
    if (!c.svg_dir.empty()) {
      const std::size_t n = attention_map::write_figures(run, c.svg_dir);
      if (!c.json)
        std::cout << "\nWrote " << n << " heatmaps to " << c.svg_dir
                  << "/attention_layer<l>_head<h>.svg and all of them to " << c.svg_dir
                  << "/attention_all.svg\n";
    }
  } catch (const std::exception& e) {
    return xenc_app::report_error("xenc-attention-map", e);
  }
  return xenc_app::finish_stdout("xenc-attention-map");
}

// xenc-word-order: does the encoder know that "cat chased mouse" and "mouse chased cat" differ?
//
// One encoder, one set of random (seeded, untrained) weights, run on two sentences that use the
// same words in a different order. Only the position scheme changes between runs (none,
// sinusoidal, learned, rope, alibi). For every stage of the forward pass (token embedding, after
// adding positions, after each layer) we print, for each word, the cosine similarity between its
// vector in sentence A and in sentence B, and the cosine similarity of the two mean-pooled
// sentences.
//
// Without positions self-attention sees a set, not a sequence: permuting the tokens permutes the
// outputs (permutation equivariance), so every cosine is 1. With positions the words differ. The
// mean-pooled input stays identical (averaging is linear: the same embeddings and position
// vectors, paired differently); any non-linear per-token step separates the pooled sentences.
// rope and alibi add nothing to the input ("+ positions" is the token embedding itself): they act
// inside attention, so the words, and the pooled sentences, separate only there.
//
// This file is the command line only: experiment.hpp runs the model and returns a Result,
// report.hpp turns it into tables, narration (chosen by the numbers), JSON and figures.
//
//     xenc-word-order                             # the defaults: D = 16, 2 heads, 2 layers
//     xenc-word-order --a "the dog bit the man" --b "the man bit the dog" --position all
//     xenc-word-order --json                      # machine-readable
//     xenc-word-order --svg-dir figures           # line plots and heatmaps of what changed
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

#include "../common/cli.hpp"
#include "experiment.hpp"
#include "options.hpp"
#include "report.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "xenc-word-order: the same encoder, with the same weights, on \"cat chased mouse\" and\n"
      "\"mouse chased cat\", without and with positional encoding. For each stage it prints the\n"
      "cosine similarity between each word's vector in sentence A and in sentence B.\n"
      "The model is random (seeded, untrained): its words carry no meaning."};
  xenc_app::add_version(app, "xenc-word-order");
  word_order::CommandLine c;
  xenc_app::add_options(app, c, word_order::option_records());
  CLI11_PARSE(app, argc, argv);
  const word_order::Options& o = c;
  const std::string& svg_dir = c.svg_dir;
  const bool json = c.json;

  try {
    const word_order::Result r = word_order::run_experiment(o);
    if (json)
      std::cout << word_order::to_json(r) << "\n";
    else
      word_order::print_text(std::cout, r);
    if (!svg_dir.empty()) {
      word_order::write_figures(svg_dir, r);
      if (!json)
        std::cout << "\nFigures written to " << svg_dir
                  << "/ (cosine_<scheme>.svg, final_difference.svg)\n";
    }
  } catch (const std::exception& e) {
    return xenc_app::report_error("xenc-word-order", e);
  }
  return xenc_app::finish_stdout("xenc-word-order");
}

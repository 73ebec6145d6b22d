// xenc-train-order's options, one record each (apps/common/options.hpp): the task's own records
// here, then the shared groups (the model's sizes, the optimiser, the limits, the outputs). The
// command line (main.cpp), the web page (apps/web/bindings.cpp) and the JSON echo of the options
// (report.cpp's options_json) all read this list.
#pragma once

#include <string>
#include <vector>

#include "../common/cli.hpp"
#include "../common/options.hpp"
#include "experiment.hpp"

namespace train_order {

/// What the program writes and the limits it checks, beside the experiment's Options.
struct Output {
  bool quiet = false, json = false;
  std::string svg_dir = ".";
  bool svg_dir_given = false;
  std::string save_dir;
  std::size_t max_memory_mb = xenc_app::kDefaultMaxMemoryMb;
  double max_minutes = 10;
};

/// Everything the command line sets: the experiment's Options, the outputs and limits, and the
/// --load modes.
struct CommandLine : Options, Output {
  std::string load, evaluate, sentence;
};

inline std::vector<xenc_app::OptionRecord<CommandLine>> option_records() {
  using namespace xenc_app;
  using C = CommandLine;
  const std::vector<OptionRecord<C>> task = {
      {"--nouns", "nouns", "nouns", "nouns in the task (3..24)", whole(3, 24), whole(2, 60),
       XENC_FIELD(C, nouns)},
      {"--verbs", "verbs", "verbs", "verbs in the task (1..12)", whole(1, 12), whole(1, 30),
       XENC_FIELD(C, verbs)},
      {"--sentences-per-pair", "sentences_per_pair", "sentences_per_pair",
       "sentences per (agent, patient) pair, each with its mirror", whole(1, 100), whole(1, 16),
       XENC_FIELD(C, sentences_per_pair), kPageLimit},
      {"--heldout", "heldout", "heldout_fraction", "share of noun pairs held out for the test set",
       real(0.01, 0.9), absent(), XENC_FIELD(C, heldout)},
      {"--passive", "passive", "passive_probability", "probability of a passive sentence",
       real(0.0, 1.0), absent(), XENC_FIELD(C, passive)},
      {"--adjectives", "adjectives", "adjective_probability",
       "probability of an adjective before a noun", real(0.0, 1.0), absent(),
       XENC_FIELD(C, adjectives)},
      {"--dropout", "dropout", "dropout", "dropout while training", real(0.0, 0.9), absent(),
       XENC_FIELD(C, dropout)},
  };
  const std::vector<OptionRecord<C>> runs = {
      {"--schemes", "schemes", nullptr, "position schemes to train (default: every registered one)",
       list(), list(), XENC_FIELD(C, schemes)},
      {"--svg-dir", "svg_dir", nullptr,
       "directory for the SVG figures (\"\" = none; with --json only when given)", text(), absent(),
       XENC_FIELD(C, svg_dir)},
      {"--save", "save", nullptr, "write each trained model as DIR/<scheme>.npz", text(), absent(),
       XENC_FIELD(C, save_dir)},
      {"--load", "load", nullptr, "a checkpoint written by --save (use with --sentence)", text(),
       absent(), XENC_FIELD(C, load)},
      {"--evaluate", "evaluate", nullptr,
       "with --load: write the checkpoint's held-out set and its logits to this .npz", text(),
       absent(), XENC_FIELD(C, evaluate)},
      {"--sentence", "sentence", nullptr, "a sentence whose roles the loaded model predicts",
       text(), absent(), XENC_FIELD(C, sentence)},
  };
  return records_of<C>(
      {task, model_records<C>(Use::training), fit_records<C>("sentences per step"), runs,
       output_records<C>("print everything as JSON (curves included) instead of text"),
       guard_records<C>()});
}

}  // namespace train_order

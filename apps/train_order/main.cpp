// xenc-train-order: train a small encoder to tell who did what to whom, once per position
// scheme, and watch the model without positions stay at 50%.
//
// The task (xenc/data/word_roles.hpp): in "the cat chased the mouse" and "the mouse was chased
// by the cat" each noun is the agent or the patient. Every sentence has its mirror ("the mouse
// chased the cat") in the same split, and the held-out set uses noun pairs never seen together
// in training. A per-token Linear head reads each noun's role from the encoder output.
//
//     xenc-train-order                          # train none, sinusoidal, learned; table + SVGs
//     xenc-train-order --json > run.json        # everything, curves included
//     xenc-train-order --save ckpt              # ckpt/<scheme>.npz checkpoints
//     xenc-train-order --load ckpt/learned.npz --sentence "the fox saw the bird"
//
// Before anything trains: every scheme's settings and the output directories are checked, and
// the memory and time of the whole run are estimated (apps/common/budget.hpp) against
// --max-memory-mb (1024) and --max-minutes (10), the time again at the measured rate. --load
// --sentence estimates the sentence's pass from the checkpoint's metadata before loading it.
//
// This file is the command line only: experiment.hpp trains the models and returns a Result,
// report.hpp turns it into the table, JSON and figures, checkpoint_modes.hpp holds --load.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <xenc/config.hpp>
#include <xenc/io/checkpoint.hpp>
#include <xenc/viz/svg.hpp>

#include "../common/budget.hpp"
#include "../common/cli.hpp"
#include "../common/progress.hpp"
#include "checkpoint_modes.hpp"
#include "experiment.hpp"
#include "report.hpp"

namespace {

struct Output {
  bool quiet = false, json = false;
  std::string svg_dir = ".";
  bool svg_dir_given = false;
  std::string save_dir;
  std::size_t max_memory_mb = xenc_app::kDefaultMaxMemoryMb;
  double max_minutes = 10;
};

int run_training(const train_order::Options& o, const Output& out) {
  const bool text = !out.json, figures = !out.svg_dir.empty() && (!out.json || out.svg_dir_given);
  // the output directories are made (or refused, naming them) before anything trains
  if (figures) std::filesystem::create_directories(out.svg_dir);
  if (!out.save_dir.empty()) std::filesystem::create_directories(out.save_dir);
  xenc_app::Progress progress(text && !out.quiet);
  std::vector<std::string> written;
  const train_order::Result res = train_order::run_experiment(
      o, progress,
      [&](const train_order::Result& r) {
        // memory and time of the whole run, decided before the first model is built
        const std::size_t models =
            o.schemes.empty() ? xenc::all_position_kinds().size() : o.schemes.size();
        const xenc_app::TrainingPlan plan = train_order::training_plan(o, r.data, models);
        xenc_app::check_training_plan(plan, out.max_memory_mb, out.max_minutes,
                                      train_order::training_plan_sizes(o, r.data));
        progress.set_time_limit(
            plan.models * plan.steps, out.max_minutes,
            "fewer --epochs or --sentences-per-pair, a smaller model, or a higher --max-minutes");
        if (text) {
          std::fputs(train_order::header_text(r).c_str(), stdout);
          std::fflush(stdout);
        }
        if (!out.save_dir.empty()) std::filesystem::create_directories(out.save_dir);
      },
      [&](const train_order::Result& r, const train_order::SchemeResult& s,
          xenc::TokenClassifier& model) {
        if (figures) {
          std::filesystem::create_directories(out.svg_dir);
          const std::string path = out.svg_dir + "/train_order_attention_" + s.name + ".svg";
          xenc::viz::write_text_file(path, train_order::attention_svg(s));
          written.push_back(path);
        }
        if (!out.save_dir.empty()) {
          const std::string path = out.save_dir + "/" + s.name + ".npz";
          xenc::save_checkpoint(path, model, r.data.vocab, xenc::WordRolesDataset::label_names(),
                                train_order::checkpoint_extra(r, s));
          written.push_back(path);
        }
      });
  if (figures) {
    const std::string path = out.svg_dir + "/train_order_curves.svg";
    xenc::viz::write_text_file(path, train_order::curves_svg(res.schemes));
    written.insert(written.begin(), path);
  }
  if (out.json) {
    std::cout << train_order::to_json(res, written) << "\n";
    return xenc_app::finish_stdout("xenc-train-order");
  }
  if (!out.quiet) std::printf("\n");
  std::fputs(train_order::table_text(res).c_str(), stdout);
  if (!written.empty()) {
    std::printf("\nWrote:");
    for (const auto& w : written) std::printf(" %s", w.c_str());
    std::printf("\n");
  }
  return xenc_app::finish_stdout("xenc-train-order");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "xenc-train-order: train an encoder to tell agent from patient, once per position "
      "scheme (the model without positions cannot beat 50%)"};
  train_order::Options o;
  Output out;
  std::string load, sentence_text, evaluate;
  xenc_app::add_version(app, "xenc-train-order");
  xenc_app::add_checked(app, "--nouns", o.nouns, "nouns in the task (3..24)", CLI::Range(3, 24));
  xenc_app::add_checked(app, "--verbs", o.verbs, "verbs in the task (1..12)", CLI::Range(1, 12));
  xenc_app::add_checked(app, "--sentences-per-pair", o.sentences_per_pair,
                        "sentences per (agent, patient) pair, each with its mirror",
                        CLI::Range(1, 100));
  xenc_app::add_checked(app, "--heldout", o.heldout,
                        "share of noun pairs held out for the test set", CLI::Range(0.01, 0.9));
  xenc_app::add_checked(app, "--passive", o.passive, "probability of a passive sentence",
                        CLI::Range(0.0, 1.0));
  xenc_app::add_checked(app, "--adjectives", o.adjectives,
                        "probability of an adjective before a noun", CLI::Range(0.0, 1.0));
  xenc_app::add_checked(app, "--d-model", o.d_model, "D, the vector size", CLI::Range(2, 512));
  xenc_app::add_checked(app, "--heads", o.heads, "H, attention heads (must divide D)",
                        CLI::Range(1, 64));
  xenc_app::add_checked(app, "--ff", o.ff, "F, feed-forward width", CLI::Range(1, 4096));
  xenc_app::add_checked(app, "--layers", o.layers, "N, encoder layers", CLI::Range(1, 12));
  xenc_app::add_checked(app, "--dropout", o.dropout, "dropout while training",
                        CLI::Range(0.0, 0.9));
  xenc_app::add_checked(app, "--epochs", o.epochs, "passes over the training set",
                        CLI::Range(1, 1000));
  xenc_app::add_checked(app, "--batch-size", o.batch_size, "sentences per step",
                        CLI::Range(1, 4096));
  xenc_app::add_checked(app, "--warmup", o.warmup, "learning-rate warm-up steps",
                        CLI::Range(0, 100000));
  xenc_app::add_checked(app, "--lr", o.lr, "peak learning rate (AdamW)", CLI::Range(1e-6, 1.0));
  xenc_app::add_checked(app, "--weight-decay", o.weight_decay, "AdamW's decoupled weight decay",
                        CLI::Range(0.0, 1.0));
  xenc_app::add_checked(app, "--clip", o.clip, "clip the gradient norm to this",
                        CLI::Range(1e-6, 1e6));
  xenc_app::add_checked(app, "--seed", o.seed, "seed of the data, the weights and the batches",
                        xenc_app::whole_range(0, 4294967295LL));
  app.add_option("--schemes", o.schemes,
                 "position schemes to train (default: every registered one)")
      ->delimiter(',');
  app.add_flag("--quiet", out.quiet, "no progress display");
  app.add_flag("--json", out.json, "print everything as JSON (curves included) instead of text");
  auto* svg =
      app.add_option("--svg-dir", out.svg_dir,
                     "directory for the SVG figures (\"\" = none; with --json only when given)")
          ->capture_default_str();
  app.add_option("--save", out.save_dir, "write each trained model as DIR/<scheme>.npz");
  app.add_option("--load", load, "a checkpoint written by --save (use with --sentence)");
  app.add_option("--evaluate", evaluate,
                 "with --load: write the checkpoint's held-out set and its logits to this .npz");
  auto* sentence = app.add_option("--sentence", sentence_text,
                                  "a sentence whose roles the loaded model predicts");
  xenc_app::add_memory_limit(app, out.max_memory_mb);
  auto* max_minutes = xenc_app::add_time_limit(app, out.max_minutes);
  CLI11_PARSE(app, argc, argv);
  out.svg_dir_given = svg->count() > 0;
  const bool sentence_given = sentence->count() > 0;

  try {
    if (sentence_given && load.empty())
      throw std::invalid_argument("--sentence needs --load CKPT (a checkpoint written by --save)");
    if (load.empty()) return run_training(o, out);
    if (!evaluate.empty())
      train_order::run_evaluate(load, evaluate);
    else if (sentence_given)  // one forward pass: 1 minute unless --max-minutes is given
      train_order::run_inference(load, sentence_text, out.json, out.max_memory_mb,
                                 max_minutes->count() > 0 ? out.max_minutes : 1.0);
    else
      throw std::invalid_argument("--load needs --sentence \"...\" (or --evaluate OUT.npz)");
    return xenc_app::finish_stdout("xenc-train-order");
  } catch (const std::exception& e) {
    std::fflush(stdout);
    return xenc_app::report_error("xenc-train-order", e);
  }
}

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
#include "options.hpp"
#include "report.hpp"

namespace {

int run_training(const train_order::Options& o, const train_order::Output& out) {
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
  train_order::CommandLine c;
  xenc_app::add_version(app, "xenc-train-order");
  const auto records = train_order::option_records();
  xenc_app::add_options(app, c, records);
  CLI11_PARSE(app, argc, argv);
  c.svg_dir_given = app.get_option("--svg-dir")->count() > 0;
  const bool sentence_given = app.get_option("--sentence")->count() > 0;
  const bool max_minutes_given = app.get_option("--max-minutes")->count() > 0;

  try {
    if (sentence_given && c.load.empty())
      throw std::invalid_argument("--sentence needs --load CKPT (a checkpoint written by --save)");
    if (c.load.empty()) return run_training(c, c);
    if (!c.evaluate.empty())
      train_order::run_evaluate(c.load, c.evaluate);
    else if (sentence_given)  // one forward pass: 1 minute unless --max-minutes is given
      train_order::run_inference(c.load, c.sentence, c.json, c.max_memory_mb,
                                 max_minutes_given ? c.max_minutes : 1.0);
    else
      throw std::invalid_argument("--load needs --sentence \"...\" (or --evaluate OUT.npz)");
    return xenc_app::finish_stdout("xenc-train-order");
  } catch (const std::exception& e) {
    std::fflush(stdout);
    return xenc_app::report_error("xenc-train-order", e);
  }
}

// xenc-extrapolate: "train short, test long" (Press et al., ICLR 2022). One small encoder per
// position scheme learns a task on sequences of at most L_train tokens, then every model is
// tested on longer sequences (by default up to 8 × L_train) of the same task.
//
// The task (xenc/data/position_tasks.hpp), by default neighbour_sum: a sequence of random
// symbols t0..t{V-1}; at each position p the label is (s[p-k] + s[p+k]) mod V. The rule does not
// depend on the length, and it needs position information: without positions the encoder sees
// a bag of symbols and is near chance (1/V). The rule reads the same in both directions, so the
// symmetric ALiBi of an encoder can solve it (--rule copy_left needs the direction).
//
//     xenc-extrapolate                                # every scheme; table, conclusions, SVG
//     xenc-extrapolate --json > run.json              # everything
//     xenc-extrapolate --test-lengths 16,24,32,64     # other test lengths
//     xenc-extrapolate --learned-max-len 128          # give learned a table as long as the tests
//
// Before anything is built, the memory and the time of the whole run are estimated from the
// options (apps/common/budget.hpp) and checked against --max-memory-mb (1024) and --max-minutes
// (10); during training the measured rate is checked against the same limit.
//
// This file is the command line only: experiment.hpp trains and tests the models and returns a
// Result, report.hpp turns it into the table, the conclusions, JSON and the figure.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <xenc/viz/svg.hpp>

#include "../common/budget.hpp"
#include "../common/cli.hpp"
#include "../common/progress.hpp"
#include "experiment.hpp"
#include "report.hpp"

namespace {

constexpr const char* kProgram = "xenc-extrapolate";

struct Output {
  bool quiet = false, json = false;
  std::string svg_dir = ".";
  bool svg_dir_given = false;
  std::size_t max_memory_mb = xenc_app::kDefaultMaxMemoryMb;
  double max_minutes = 10;
};

int run(extrapolate::Options o, const Output& out) {
  extrapolate::check_options(o);
  // memory and time decided before anything is built, from the options alone
  const xenc_app::TrainingPlan plan = extrapolate::training_plan(o);
  xenc_app::check_training_plan(plan, out.max_memory_mb, out.max_minutes,
                                extrapolate::training_plan_sizes(o));
  // the output directory is made (or refused, naming it) before the first model trains
  if (!out.svg_dir.empty() && (!out.json || out.svg_dir_given))
    std::filesystem::create_directories(out.svg_dir);
  const bool text = !out.json;
  xenc_app::Progress progress(text && !out.quiet,
                              "acc at length " + std::to_string(o.train_length));
  progress.set_time_limit(
      plan.models * plan.steps, out.max_minutes,
      "fewer --epochs or --train-sequences, a smaller model, or a higher --max-minutes");
  const extrapolate::Result res =
      extrapolate::run_experiment(o, progress, [&](const extrapolate::Result& r) {
        if (!text) return;
        std::fputs(extrapolate::header_text(r).c_str(), stdout);
        std::fflush(stdout);
      });

  std::vector<std::string> written;
  if (!out.svg_dir.empty() && (!out.json || out.svg_dir_given)) {
    std::filesystem::create_directories(out.svg_dir);
    const std::string path = out.svg_dir + "/extrapolate_accuracy.svg";
    xenc::viz::write_text_file(path, extrapolate::accuracy_svg(res));
    written.push_back(path);
  }
  if (out.json) {
    std::cout << extrapolate::to_json(res, written) << "\n";
    return xenc_app::finish_stdout(kProgram);
  }
  if (!out.quiet) std::printf("\n");
  std::fputs(extrapolate::table_text(res).c_str(), stdout);
  std::printf("\n");
  for (const auto& c : extrapolate::conclusions(res)) std::printf("%s\n", c.c_str());
  if (!written.empty()) {
    std::printf("\nWrote:");
    for (const auto& w : written) std::printf(" %s", w.c_str());
    std::printf("\n");
  }
  return xenc_app::finish_stdout(kProgram);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "xenc-extrapolate: train short, test long. One encoder per position scheme learns a "
      "length-independent task on short sequences and is tested on longer ones."};
  extrapolate::Options o;
  Output out;
  using xenc_app::positive_float;
  using xenc_app::whole_range;
  xenc_app::add_version(app, kProgram);
  xenc_app::add_checked(app, "--rule", o.rule,
                        "the task: neighbour_sum ((s[p-k] + s[p+k]) mod V) or copy_left (s[p-k])",
                        CLI::IsMember({"neighbour_sum", "copy_left"}));
  xenc_app::add_checked(app, "--symbols", o.symbols, "V, random symbols (and classes)",
                        whole_range(2, 1000));
  xenc_app::add_checked(app, "--offset", o.offset, "k, how far away the rule looks",
                        whole_range(1, 64));
  xenc_app::add_checked(app, "--train-length", o.train_length,
                        "L_train, the longest training sequence", whole_range(2, 256));
  xenc_app::add_checked(app, "--min-train-length", o.min_train_length,
                        "the shortest training sequence (0: L_train / 2, at least the rule's "
                        "shortest: 2k + 1 or k + 1)",
                        whole_range(0, 256));
  xenc_app::add_checked(app, "--train-sequences", o.train_sequences, "training sequences",
                        whole_range(1, 100000));
  xenc_app::add_checked(app, "--test-sequences", o.test_sequences, "test sequences at each length",
                        whole_range(1, 10000));
  auto* test_lengths =
      app.add_option("--test-lengths", o.test_lengths,
                     "test lengths (L_train is always added; of the defaults, those too short "
                     "for the rule are dropped)")
          ->delimiter(',')
          ->check(whole_range(2, 1024))
          ->capture_default_str();
  xenc_app::add_checked(app, "--learned-max-len", o.learned_max_len,
                        "rows of the learned position table (0: L_train; more: rows never trained)",
                        whole_range(0, 1024));
  xenc_app::add_checked(app, "--d-model", o.d_model, "D, the vector size", whole_range(2, 512));
  xenc_app::add_checked(app, "--heads", o.heads, "H, attention heads (must divide D)",
                        whole_range(1, 64));
  xenc_app::add_checked(app, "--ff", o.ff, "F, feed-forward width", whole_range(1, 4096));
  xenc_app::add_checked(app, "--layers", o.layers, "N, encoder layers", whole_range(1, 12));
  xenc_app::add_checked(app, "--epochs", o.epochs, "passes over the training set",
                        whole_range(1, 1000));
  xenc_app::add_checked(app, "--batch-size", o.batch_size, "sequences per step",
                        whole_range(1, 4096));
  xenc_app::add_checked(app, "--warmup", o.warmup, "learning-rate warm-up steps",
                        whole_range(0, 100000));
  xenc_app::add_checked(app, "--lr", o.lr, "peak learning rate (AdamW)", positive_float(),
                        CLI::Range(1e-6, 1.0));
  xenc_app::add_checked(app, "--weight-decay", o.weight_decay, "AdamW's decoupled weight decay",
                        CLI::Range(0.0, 1.0));
  xenc_app::add_checked(app, "--clip", o.clip, "clip the gradient norm to this", positive_float(),
                        CLI::Range(1e-6, 1e6));
  xenc_app::add_checked(app, "--seed", o.seed, "seed of the data, the weights and the batches",
                        whole_range(0, 4294967295LL));
  app.add_option("--schemes", o.schemes,
                 "position schemes to train (default: every registered one)")
      ->delimiter(',');
  xenc_app::add_checked(app, "--tolerance", o.tolerance,
                        "points of accuracy within which the conclusions call two numbers the same",
                        CLI::Range(0.1, 50.0));
  app.add_flag("--quiet", out.quiet, "no progress display");
  app.add_flag("--json", out.json, "print everything as JSON instead of text");
  auto* svg =
      app.add_option(
             "--svg-dir", out.svg_dir,
             "directory for extrapolate_accuracy.svg (\"\" = none; with --json only when given)")
          ->capture_default_str();
  xenc_app::add_memory_limit(app, out.max_memory_mb);
  xenc_app::add_time_limit(app, out.max_minutes);
  CLI11_PARSE(app, argc, argv);
  out.svg_dir_given = svg->count() > 0;
  o.test_lengths_given = test_lengths->count() > 0;
  try {
    return run(o, out);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    return xenc_app::report_error(kProgram, e);
  }
}

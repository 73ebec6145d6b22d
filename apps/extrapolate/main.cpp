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
//     xenc-extrapolate --rule reverse_string          # a task of Ruoss et al. (ACL 2023)
//     xenc-extrapolate --study --max-minutes 60       # their grid, small: tasks x schemes x
//                                                     # {plain, randomized} x seeds
//     xenc-extrapolate --study-from study.json        # a study's JSON printed again (no
//                                                     # training): apps/extrapolate/study/
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
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <xenc/viz/svg.hpp>

#include "../common/budget.hpp"
#include "../common/cli.hpp"
#include "../common/progress.hpp"
#include "experiment.hpp"
#include "options.hpp"
#include "report.hpp"

namespace {

constexpr const char* kProgram = "xenc-extrapolate";

// The text output of a run and of the study: the table, the conclusions, the files written.
int print_text(const std::string& table, const std::vector<std::string>& conclusions,
               const std::vector<std::string>& written, bool quiet) {
  if (!quiet) std::printf("\n");
  std::fputs(table.c_str(), stdout);
  std::printf("\n");
  for (const auto& c : conclusions) std::printf("%s\n", c.c_str());
  if (!written.empty()) {
    std::printf("\nWrote:");
    for (const auto& w : written) std::printf(" %s", w.c_str());
    std::printf("\n");
  }
  return xenc_app::finish_stdout(kProgram);
}

// What a study prints once its models are trained (or read back by --study-from): the figure,
// then the JSON, or the tables and the conclusions.
int report_study(const extrapolate::StudyResult& res, const extrapolate::Output& out, bool svg) {
  std::vector<std::string> written;
  if (svg) {
    const std::string path = out.svg_dir + "/study_accuracy.svg";
    xenc::viz::write_text_file(path, extrapolate::study_svg(res));
    written.push_back(path);
  }
  if (out.json) {
    std::cout << extrapolate::study_to_json(res, written) << "\n";
    return xenc_app::finish_stdout(kProgram);
  }
  return print_text(extrapolate::study_table_text(res), extrapolate::study_conclusions(res),
                    written, out.quiet);
}

// --study: the grid of tasks x schemes x {plain, randomized} x seeds, one table per task.
int run_study(extrapolate::Options o, const extrapolate::Output& out) {
  extrapolate::check_study_options(o);
  const std::size_t models = extrapolate::study_models(o);
  const xenc_app::TrainingPlan plan = extrapolate::study_plan(o);
  xenc_app::check_training_plan(plan, out.max_memory_mb, out.max_minutes,
                                extrapolate::study_plan_sizes(o));
  const bool svg = !out.svg_dir.empty() && (!out.json || out.svg_dir_given);
  if (svg) std::filesystem::create_directories(out.svg_dir);
  const bool text = !out.json;
  if (text) {
    std::fputs(extrapolate::study_header_text(o, models).c_str(), stdout);
    std::fflush(stdout);
  }
  xenc_app::Progress progress(text && !out.quiet,
                              "acc at length " + std::to_string(o.train_length));
  progress.set_time_limit(
      plan.models * plan.steps, out.max_minutes,
      "fewer --study-tasks, --seeds, --epochs or --train-sequences, a smaller model, or a "
      "higher --max-minutes");
  return report_study(extrapolate::run_study(o, progress), out, svg);
}

// --study-from FILE: the study a JSON holds, printed as the study printed it, without training.
int study_from(const extrapolate::Output& out) {
  const std::string where = "--study-from " + out.study_from;
  std::ifstream in(out.study_from, std::ios::binary);
  if (!in) throw std::invalid_argument(where + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  const extrapolate::StudyResult res = extrapolate::study_from_json(text.str(), where);
  const bool svg = !out.svg_dir.empty() && (!out.json || out.svg_dir_given);
  if (svg) std::filesystem::create_directories(out.svg_dir);
  if (!out.json)
    std::fputs(extrapolate::study_header_text(res.options, res.models).c_str(), stdout);
  return report_study(res, out, svg);
}

int run(extrapolate::Options o, const extrapolate::Output& out) {
  if (!out.study_from.empty()) return study_from(out);
  if (o.study) return run_study(o, out);
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
  return print_text(extrapolate::table_text(res), extrapolate::conclusions(res), written,
                    out.quiet);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "xenc-extrapolate: train short, test long. One encoder per position scheme learns a "
      "length-independent task on short sequences and is tested on longer ones."};
  extrapolate::CommandLine c;
  xenc_app::add_version(app, kProgram);
  xenc_app::add_options(app, c, extrapolate::option_records());
  CLI11_PARSE(app, argc, argv);
  c.svg_dir_given = app.get_option("--svg-dir")->count() > 0;
  c.test_lengths_given = app.get_option("--test-lengths")->count() > 0;
  c.symbols_given = app.get_option("--symbols")->count() > 0;
  const auto given = [&](const std::string& flag) { return app.get_option(flag)->count() > 0; };
  extrapolate::apply_study_defaults(c, given);
  try {
    // --study-from: the options are the file's; one given beside it would not be the study's
    if (!c.study_from.empty())
      for (const auto& r : extrapolate::option_records())
        if (r.echo && r.cli.on && given(r.flag))
          throw std::invalid_argument(std::string("--study-from: ") + r.flag +
                                      " cannot be given with it (the study's options are the "
                                      "file's; only --json, --svg-dir and --quiet apply)");
    return run(c, c);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    return xenc_app::report_error(kProgram, e);
  }
}

// xenc-extrapolate's options, one record each (apps/common/options.hpp): the task's own records
// here, then the shared groups (the model's sizes, the optimiser, the limits, the outputs). The
// command line (main.cpp) and the JSON echo of the options (report.cpp's options_json) read this
// list.
#pragma once

#include <string>
#include <vector>

#include "../common/cli.hpp"
#include "../common/options.hpp"
#include "experiment.hpp"

namespace extrapolate {

/// What the program writes and the limits it checks, beside the experiment's Options.
struct Output {
  bool quiet = false, json = false;
  std::string svg_dir = ".";
  bool svg_dir_given = false;
  std::string study_from;  ///< --study-from FILE: a study's JSON, re-read instead of training
  std::size_t max_memory_mb = xenc_app::kDefaultMaxMemoryMb;
  double max_minutes = 10;
};

/// Everything the command line sets.
struct CommandLine : Options, Output {};

/// Every rule of xenc/data/position_tasks.hpp, the choices of --rule.
inline std::vector<std::string> rule_names() {
  std::vector<std::string> names;
  for (auto r : xenc::all_position_rules()) names.push_back(xenc::to_string(r));
  return names;
}

inline std::vector<xenc_app::OptionRecord<CommandLine>> option_records() {
  using namespace xenc_app;
  using C = CommandLine;
  const std::vector<OptionRecord<C>> task = {
      {"--rule", "rule", "rule",
       "the task: neighbour_sum ((s[p-k] + s[p+k]) mod V), copy_left (s[p-k]), or a task of "
       "Ruoss et al. 2023 answered at <out> placeholders after the input (reverse_string, "
       "duplicate_string, missing_duplicate_string, odds_first, parity_check, bucket_sort, "
       "binary_addition, even_pairs, cycle_navigation; xenc/data/position_tasks.hpp)",
       text(rule_names()), absent(), XENC_FIELD(C, rule)},
      {"--symbols", "symbols", "symbols",
       "V, random symbols (default: 8 for neighbour_sum and copy_left, else the paper's "
       "alphabet: 2, 5 for bucket_sort, 3 for cycle_navigation)",
       whole(2, 1000), absent(), XENC_FIELD(C, symbols)},
      {"--offset", "offset", "offset", "k, how far away the rule looks", whole(1, 64), absent(),
       XENC_FIELD(C, offset)},
      {"--train-length", "train_length", "train_length", "L_train, the longest training sequence",
       whole(2, 256), absent(), XENC_FIELD(C, train_length)},
      {"--min-train-length", "min_train_length", "min_train_length",
       "the shortest training input (0: L_train / 2, at least the rule's shortest, 2k + 1 or "
       "k + 1, for neighbour_sum and copy_left; the rule's shortest, 1 or 2, for the others, as "
       "the paper trains 1 to 40)",
       whole(0, 256), absent(), XENC_FIELD(C, min_train_length)},
      {"--train-sequences", "train_sequences", "train_sequences", "training sequences",
       whole(1, 100000), absent(), XENC_FIELD(C, train_sequences)},
      {"--test-sequences", "test_sequences", "test_sequences", "test sequences at each length",
       whole(1, 10000), absent(), XENC_FIELD(C, test_sequences)},
      {"--test-lengths", "test_lengths", "test_lengths",
       "test lengths (L_train is always added; of the defaults, those too short for the rule are "
       "dropped)",
       list(2, 1024), absent(), XENC_FIELD(C, test_lengths)},
      {"--learned-max-len", "learned_max_len", "learned_max_len",
       "rows of the learned position table (0: L_train; more: rows never trained)", whole(0, 1024),
       absent(), XENC_FIELD(C, learned_max_len)},
  };
  const std::vector<OptionRecord<C>> runs = {
      {"--schemes", "schemes", "schemes",
       "position schemes to train (default: every registered one; relative, Transformer-XL's, "
       "by name)",
       list(), absent(), XENC_FIELD(C, schemes)},
      {"--randomized-positions", "randomized_positions", "randomized_positions",
       "L: in training, positions are a sorted random sample from [0, L) (Ruoss et al. 2023; "
       "0: off; learned gets L rows)",
       whole(0, 4096), absent(), XENC_FIELD(C, randomized_positions)},
      {"--tolerance", "tolerance", "tolerance_points",
       "points of accuracy within which the conclusions call two numbers the same", real(0.1, 50.0),
       absent(), XENC_FIELD(C, tolerance)},
      {"--svg-dir", "svg_dir", nullptr,
       "directory for extrapolate_accuracy.svg, or study_accuracy.svg with --study (\"\" = "
       "none; with --json only when given)",
       text(), absent(), XENC_FIELD(C, svg_dir)},
  };
  const std::vector<OptionRecord<C>> study = {
      {"--study", "study", "study",
       "train the grid --study-tasks x schemes x {plain, randomized} x --seeds (none only plain) "
       "and print one table per task; unless given: --train-length 8, --test-lengths "
       "8,12,16,24,32, --train-sequences 12000, --epochs 4, --d-model 32, --heads 4, --ff 64, "
       "--randomized-positions 256",
       flag(), absent(), XENC_FIELD(C, study)},
      {"--study-tasks", "study_tasks", "study_tasks", "the study's tasks (rules, as --rule)",
       list(), absent(), XENC_FIELD(C, study_tasks)},
      {"--seeds", "seeds", "seeds",
       "the study's seeds: --seed, --seed + 1, ... (data and initial weights); the tables give "
       "the mean and the min-max over them",
       whole(1, 20), absent(), XENC_FIELD(C, seeds)},
      {"--study-from", "study_from", nullptr,
       "re-read FILE, the JSON of --study --json, and print what that study printed (header, "
       "tables, conclusions; --json and --svg-dir as a study) without training; the options are "
       "the file's",
       text(), absent(), XENC_FIELD(C, study_from)},
  };
  return records_of<C>({task, model_records<C>(Use::training), fit_records<C>("sequences per step"),
                        runs, study, output_records<C>("print everything as JSON instead of text"),
                        guard_records<C>()});
}

}  // namespace extrapolate

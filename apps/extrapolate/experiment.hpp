// xenc-extrapolate's experiment: one small encoder per position scheme learns a task on
// sequences of at most L_train tokens and is tested at every test length. Options in, a Result
// out; report.hpp turns a Result into the table, the conclusions, JSON and the figure, so tests
// check the conclusions on hand-made Results.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <xenc/data/position_tasks.hpp>
#include <xenc/nn/encoder_model.hpp>

#include "../common/budget.hpp"
#include "../common/options.hpp"
#include "../common/progress.hpp"

namespace extrapolate {

/// The model and the training are the shared groups of apps/common/options.hpp; this program's
/// defaults: d_model 64, heads 8, ff 128, layers 2; epochs 6, batch_size 32, warmup 50, lr 3e-3,
/// weight_decay 0.01, clip 1, seed 0.
struct Options : xenc_app::TrainedModelOptions, xenc_app::FitGroupOptions {
  Options() {
    d_model = 64;
    heads = 8;
    ff = 128;
    warmup = 50;
  }
  // task
  std::string rule = "neighbour_sum";
  int symbols = 8, offset = 1, train_length = 16, min_train_length = 0;  // 0: see min_train_length
  bool symbols_given = false;  // false: the tasks of Ruoss et al. get the paper's alphabet
  int train_sequences = 8000, test_sequences = 200;
  std::vector<int> test_lengths = {8, 16, 32, 64, 128};
  bool test_lengths_given = false;   // false: the defaults too short for the rule are dropped
  int learned_max_len = 0;           // 0: train_length
  std::vector<std::string> schemes;  // empty = every registered scheme (relative: by name)
  int randomized_positions = 0;      // L > 0: training positions a sorted sample from [0, L)
  // conclusions
  double tolerance = 5.0;  // percentage points
  // the study (--study): tasks x schemes x {plain, randomized} x seeds
  bool study = false;
  std::vector<std::string> study_tasks = {
      "reverse_string", "duplicate_string", "missing_duplicate_string", "odds_first",
      "parity_check",   "bucket_sort",      "cycle_navigation"};
  int seeds = 2;  // seeds seed, seed + 1, ...
};

/// V for a rule when --symbols is not given: 8 for neighbour_sum and copy_left (this app's
/// default), else the alphabet of Ruoss et al. (2 symbols; 5 for bucket_sort, 3 actions for
/// cycle_navigation).
int default_symbols(const std::string& rule);

/// The tokens of one sequence whose input has n symbols: n, plus the m <out> placeholders of the
/// tasks of Ruoss et al. (2n for reverse_string, 3n for duplicate_string, n + 1 for parity_check).
std::size_t sequence_tokens(const Options& o, std::size_t n);

/// Accuracy of one model at one test length, or why there is none.
struct LengthResult {
  std::size_t length = 0;
  bool available = false;
  double accuracy = NAN, loss = NAN;
  std::size_t positions = 0;  ///< labelled positions counted
  std::string error;          ///< the library's message when the model cannot read this length
};

struct SchemeResult {
  std::string name;
  std::size_t max_len = 0;  ///< learned only: rows of its position table
  std::vector<LengthResult> lengths;
  double train_accuracy = 0.0, seconds = 0.0;
  std::size_t steps = 0;
  std::vector<double> curve_epoch, curve_train_loss, curve_accuracy;  ///< accuracy at L_train
};

struct Result {
  Options options;      ///< as checked: test_lengths sorted, unique, L_train included
  double chance = 0.0;  ///< 1/C (C classes: V, or 2 for the bit answers, see position_tasks.hpp)
  std::size_t train_labelled_positions = 0;
  int blas_threads = 1;
  std::vector<SchemeResult> schemes;
};

/// Checks the options against each other and adds L_train to the test lengths (sorted, unique).
/// Default test lengths shorter than the rule's shortest sequence (2k + 1 or k + 1) are dropped,
/// so `--offset 4` runs as typed; given ones are refused. Throws std::invalid_argument naming the
/// option.
void check_options(Options& o);

/// The shortest training sequence: --min-train-length, or L_train / 2 (at least the rule's) for
/// neighbour_sum and copy_left, and the rule's shortest (1, or 2 for missing_duplicate_string)
/// for the tasks of Ruoss et al., who train on every length from 1 to 40.
std::size_t min_train_length(const Options& o);

/// Rows of the learned position table: --learned-max-len, or the longest training sequence in
/// tokens (L_train plus its <out> placeholders), and at least --randomized-positions.
std::size_t learned_max_len(const Options& o);

/// The whole run on checked options in the terms of the estimate (apps/common/budget.hpp): a
/// training step on [batch, L_train], evaluations in batches of about 4096 tokens up to the
/// longest test length. sizes: the options that decide it, for a refusal's message.
xenc_app::TrainingPlan training_plan(const Options& o);
std::string training_plan_sizes(const Options& o);

/// Runs the experiment on checked options. on_ready is called once the data are made and every
/// model's settings are checked, before the first model trains (the Result holds no scheme yet).
Result run_experiment(const Options& o, xenc_app::Progress& progress,
                      const std::function<void(const Result&)>& on_ready);

// ---- the study (--study) --------------------------------------------------------------------

/// The study's sizes where the command line does not set them (given(flag): the option was on
/// the command line): --train-length 8, --test-lengths 8,12,16,24,32, --train-sequences 12000,
/// --epochs 4, --d-model 32, --heads 4, --ff 64, --randomized-positions 256.
void apply_study_defaults(Options& o, const std::function<bool(const std::string&)>& given);

/// One cell of the grid: a task, a scheme, plain or randomized, every seed.
struct StudyCell {
  std::string scheme;
  bool randomized = false;
  std::vector<std::uint32_t> seeds;
  std::vector<std::vector<double>> accuracy;  ///< [seed][length]: per-token accuracy
  std::vector<double> beyond;                 ///< [seed]: mean over the lengths > L_train
  double seconds = 0.0;                       ///< all seeds
};

struct StudyTask {
  std::string rule;
  int symbols = 2;
  double chance = 0.5;               ///< 1/C
  std::size_t min_train_length = 1;  ///< training inputs: min_train_length ... L_train symbols
  std::size_t train_length = 0;      ///< L_train (one of `lengths`)
  std::size_t learned_max_len = 0;   ///< rows of plain learned's table (the longest test sequence)
  std::vector<std::size_t> lengths;  ///< test lengths (input symbols), L_train among them
  std::vector<StudyCell> cells;      ///< schemes in order, plain then randomized (none: plain)
};

struct StudyResult {
  Options options;  ///< as checked
  std::vector<StudyTask> tasks;
  std::size_t models = 0;
  int blas_threads = 1;
  double seconds = 0.0;  ///< training and testing, every model
};

/// The options of one run of run_experiment inside the study: one task, one seed, plain
/// (every scheme) or randomized (every scheme but none), checked.
Options study_run_options(const Options& o, const std::string& task, int seed_index,
                          bool randomized);

/// The models the study trains: tasks x (schemes + schemes other than none) x seeds.
std::size_t study_models(const Options& o);

/// Checks the study's options (its tasks, --seeds, the randomized range against the longest
/// test sequence); throws std::invalid_argument naming the option.
void check_study_options(Options& o);

/// The study in the estimate's terms: every model costed at the largest task's shapes.
xenc_app::TrainingPlan study_plan(const Options& o);
std::string study_plan_sizes(const Options& o);

/// Trains and tests the grid, one run_experiment per task, seed and plain/randomized.
StudyResult run_study(const Options& o, xenc_app::Progress& progress);

}  // namespace extrapolate

// xenc-extrapolate's experiment: one small encoder per position scheme learns a task on
// sequences of at most L_train tokens and is tested at every test length. Options in, a Result
// out; report.hpp turns a Result into the table, the conclusions, JSON and the figure, so tests
// check the conclusions on hand-made Results.
#pragma once

#include <cmath>
#include <cstddef>
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
  int symbols = 8, offset = 1, train_length = 16, min_train_length = 0;  // 0: L_train / 2
  int train_sequences = 8000, test_sequences = 200;
  std::vector<int> test_lengths = {8, 16, 32, 64, 128};
  bool test_lengths_given = false;   // false: the defaults too short for the rule are dropped
  int learned_max_len = 0;           // 0: train_length
  std::vector<std::string> schemes;  // empty = every registered scheme (relative: by name)
  int randomized_positions = 0;      // L > 0: training positions a sorted sample from [0, L)
  // conclusions
  double tolerance = 5.0;  // percentage points
};

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
  double chance = 0.0;  ///< 1/V
  std::size_t train_labelled_positions = 0;
  int blas_threads = 1;
  std::vector<SchemeResult> schemes;
};

/// Checks the options against each other and adds L_train to the test lengths (sorted, unique).
/// Default test lengths shorter than the rule's shortest sequence (2k + 1 or k + 1) are dropped,
/// so `--offset 4` runs as typed; given ones are refused. Throws std::invalid_argument naming the
/// option.
void check_options(Options& o);

/// The shortest training sequence: --min-train-length, or L_train / 2 (at least the rule's).
std::size_t min_train_length(const Options& o);

/// Rows of the learned position table: --learned-max-len, or L_train.
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

}  // namespace extrapolate

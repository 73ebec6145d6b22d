// xenc-train-order's experiment: one small encoder per position scheme learns to tell agent from
// patient (xenc/data/word_roles.hpp). Options in, a Result out; report.hpp turns a Result into
// the table, the ceiling sentence, JSON and figures.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <xenc/data/word_roles.hpp>
#include <xenc/nn/token_classifier.hpp>

#include "../common/budget.hpp"
#include "../common/options.hpp"
#include "../common/progress.hpp"

namespace train_order {

/// The model (d_model 32, heads 4, ff 64, layers 2) and the training (epochs 6, batch_size 32,
/// warmup 100, lr 3e-3, weight_decay 0.01, clip 1, seed 0) are the shared groups of
/// apps/common/options.hpp, at their defaults.
struct Options : xenc_app::TrainedModelOptions, xenc_app::FitGroupOptions {
  // task
  int nouns = 24, verbs = 12, sentences_per_pair = 4;
  double heldout = 0.2, passive = 0.5, adjectives = 0.3;
  // model
  double dropout = 0.0;
  std::vector<std::string> schemes;  // empty = every registered scheme
};

/// Loss and accuracy over the nouns of a set of sentences, and how often a noun gets the same
/// predicted role in a sentence and in its mirror (100% for a model that cannot see order).
struct Eval {
  double loss = 0.0, accuracy = 0.0, mirror_agreement = 0.0;
  std::size_t nouns = 0;
};

struct Curve {
  std::vector<double> epoch, train_loss, heldout_loss, heldout_accuracy;
};

/// The attention weights of every head of every layer for one sentence.
struct AttentionMaps {
  std::vector<std::string> tokens;
  std::string agent;
  std::vector<xenc::Tensor2> panels;  ///< each [T, T], layer by layer, head by head
  std::vector<std::string> titles;    ///< "layer 1, head 2"
};

struct SchemeResult {
  std::string name;
  Eval train, test;
  double seconds = 0.0;
  std::size_t steps = 0;
  Curve curve;
  /// The first held-out active sentence without adjectives ("the cat chased the mouse") and
  /// its mirror, read by the trained model.
  AttentionMaps sentence, mirror;
};

struct Result {
  Options options;
  xenc::WordRolesDataset data;
  std::vector<SchemeResult> schemes;
};

xenc::WordRolesConfig task_config(const Options& o);

/// Loss, accuracy and mirror agreement of a model on sentences (their labelled form: data).
Eval evaluate(xenc::TokenClassifier& model, const std::vector<xenc::RoleSentence>& sentences,
              const std::vector<xenc::LabelledSentence>& data, const xenc::Vocabulary& vocab,
              std::size_t batch_size);

/// The whole run in the terms of the estimate (apps/common/budget.hpp), from the task's data d:
/// `models` models, each trained on [batch, the longest sentence] and evaluated in batches of
/// 256 (4 curve points per epoch on the held-out set, then both sets once). sizes: the options
/// that decide it, for a refusal's message.
xenc_app::TrainingPlan training_plan(const Options& o, const xenc::WordRolesDataset& d,
                                     std::size_t models);
std::string training_plan_sizes(const Options& o, const xenc::WordRolesDataset& d);

/// A live display's view of a model in training (the browser page draws its curves from it):
/// the scheme's result so far (name, the curve points recorded up to now), and the steps
/// taken of all of this model's steps. Called after every step and after every epoch's
/// evaluation.
using OnStep = std::function<void(const SchemeResult& so_far, std::size_t step, std::size_t steps)>;

/// Runs the experiment. on_ready: once the data are made, before the first model trains (the
/// Result holds no scheme yet). on_trained: after each model trains and is evaluated (the
/// Result so far, the scheme's result, the model: for checkpoints and figures). on_step (may be
/// empty): see OnStep.
Result run_experiment(const Options& o, xenc_app::Progress& progress,
                      const std::function<void(const Result&)>& on_ready,
                      const std::function<void(const Result&, const SchemeResult&,
                                               xenc::TokenClassifier&)>& on_trained,
                      const OnStep& on_step = {});

}  // namespace train_order

// xenc-extrapolate's experiment (see experiment.hpp): data, one model per scheme trained by
// the apps' one training loop (apps/common/training.hpp), evaluation at every test length.
#include "experiment.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <xenc/core/error.hpp>
#include <xenc/core/grad_mode.hpp>
#include <xenc/data/batching.hpp>
#include <xenc/nn/token_classifier.hpp>
#include <xenc/ops/cross_entropy.hpp>

#include "../common/blas_threads.hpp"
#include "../common/model_options.hpp"
#include "../common/training.hpp"

namespace extrapolate {

namespace {

using Clock = std::chrono::steady_clock;
using xenc_app::count_correct;
using xenc_app::Progress;

xenc::PositionRule rule_of(const Options& o) { return xenc::parse_position_rule(o.rule); }

xenc::PositionTaskConfig task_config(const Options& o, std::size_t min_len, std::size_t max_len,
                                     std::size_t n, std::uint32_t seed) {
  xenc::PositionTaskConfig c;
  c.rule = rule_of(o);
  c.num_symbols = std::size_t(o.symbols);
  c.offset = std::size_t(o.offset);
  c.min_length = min_len;
  c.max_length = max_len;
  c.num_sequences = n;
  c.seed = seed;
  return c;
}

// The test set of one length: its own seed, never the training seed.
xenc::PositionTaskDataset test_set(const Options& o, std::size_t length) {
  return xenc::make_position_task(task_config(o, length, length, std::size_t(o.test_sequences),
                                              o.seed + 1000u + std::uint32_t(length)));
}

xenc::EncoderModelConfig model_config(const Options& o, xenc::PositionKind kind, std::size_t V) {
  xenc::EncoderModelConfig c = xenc_app::encoder_config(o, V, kind, learned_max_len(o), o.seed);
  // Randomized positions (Ruoss et al., 2023) for every scheme that has positions
  if (kind != xenc::PositionKind::none)
    c.randomized_positions = std::size_t(o.randomized_positions);
  return c;
}

struct Eval {
  double loss = 0.0, accuracy = 0.0;
  std::size_t positions = 0;
};

// Accuracy (argmax = label) and mean cross-entropy over the labelled positions. Batches hold
// about 4096 tokens, so a long test length does not need a large attention matrix.
Eval evaluate(xenc::TokenClassifier& model, const xenc::PositionTaskDataset& d) {
  xenc::NoGradGuard no_grad;
  std::size_t T = 1;
  for (const auto& s : d.sequences) T = std::max(T, s.tokens.size());
  const std::size_t B = std::max<std::size_t>(1, 4096 / T);
  Eval e;
  double loss_sum = 0.0;
  std::size_t correct = 0;
  for (const auto& idx : xenc::sequential_batches(d.sequences.size(), B)) {
    const xenc::LabelledBatch b = xenc::make_batch(d.sequences, idx, d.vocab);
    const xenc::Tensor3 logits = model.forward(b.ids, b.padding_mask);  // [B, T, V]
    std::size_t n = 0;
    count_correct(logits, b.labels, n, correct);
    if (n > 0)
      loss_sum +=
          double(xenc::cross_entropy_forward(logits, b.labels, xenc::kIgnoreIndex)) * double(n);
    e.positions += n;
  }
  e.loss = loss_sum / double(std::max<std::size_t>(1, e.positions));
  e.accuracy = double(correct) / double(std::max<std::size_t>(1, e.positions));
  return e;
}

SchemeResult train_scheme(const Options& o, xenc::PositionKind kind,
                          const xenc::PositionTaskDataset& train,
                          const xenc::PositionTaskDataset& at_train_length,
                          xenc::TokenClassifier& model, Progress& progress) {
  SchemeResult r;
  r.name = xenc::to_string(kind);
  if (kind == xenc::PositionKind::learned) r.max_len = learned_max_len(o);
  const xenc_app::FitOptions fo = xenc_app::fit_options(o);  // the same batches for every scheme

  model.eval();
  r.curve_epoch.push_back(0);
  r.curve_train_loss.push_back(NAN);
  r.curve_accuracy.push_back(evaluate(model, at_train_length).accuracy);
  const auto start = Clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  // running loss and accuracy of the epoch, for the progress display and the curve
  double loss_sum = 0.0;
  std::size_t positions = 0, correct = 0;
  auto on_step = [&](const xenc_app::FitStep& s) {
    if (s.in_epoch == 1) loss_sum = 0.0, positions = 0, correct = 0;
    std::size_t n = 0;
    count_correct(s.result.logits, s.batch.labels, n, correct);
    loss_sum += double(s.result.loss) * double(n);
    positions += n;
    const double secs = seconds();
    progress.step(r.name, s.epoch, o.epochs, s.step, s.steps,
                  loss_sum / double(std::max<std::size_t>(1, positions)),
                  double(correct) / double(std::max<std::size_t>(1, positions)),
                  secs > 0 ? double(s.step) / secs : 0.0);
  };
  const std::size_t total =
      (train.sequences.size() + fo.batch_size - 1) / fo.batch_size * std::size_t(o.epochs);
  auto on_epoch = [&](int epoch, std::size_t step) {
    const Eval e = evaluate(model, at_train_length);
    const double mean_loss = loss_sum / double(std::max<std::size_t>(1, positions));
    r.curve_epoch.push_back(epoch);
    r.curve_train_loss.push_back(mean_loss);
    r.curve_accuracy.push_back(e.accuracy);
    progress.epoch(r.name, epoch, o.epochs, step, total, mean_loss,
                   double(correct) / double(std::max<std::size_t>(1, positions)), e.accuracy,
                   double(step) / seconds());
  };
  r.steps = xenc_app::fit(model, {train.sequences, train.vocab}, fo, on_step, on_epoch);
  progress.done();
  r.seconds = seconds();
  r.train_accuracy = evaluate(model, train).accuracy;
  return r;
}

// Every test length; a length the model cannot read (learned positions beyond their table: the
// library throws shape_error) is recorded with the library's message instead of a number.
void test_scheme(xenc::TokenClassifier& model, const std::vector<xenc::PositionTaskDataset>& tests,
                 SchemeResult& r) {
  for (const auto& d : tests) {
    LengthResult l;
    l.length = d.config.max_length;
    try {
      const Eval e = evaluate(model, d);
      l.available = true;
      l.accuracy = e.accuracy;
      l.loss = e.loss;
      l.positions = e.positions;
    } catch (const xenc::shape_error& e) {
      l.error = e.what();
    }
    r.lengths.push_back(l);
  }
}

}  // namespace

int default_symbols(const std::string& rule) {
  switch (xenc::parse_position_rule(rule)) {
    case xenc::PositionRule::neighbour_sum:
    case xenc::PositionRule::copy_left:
      return 8;
    case xenc::PositionRule::bucket_sort:
      return 5;
    case xenc::PositionRule::cycle_navigation:
      return 3;
    default:
      return 2;
  }
}

std::size_t sequence_tokens(const Options& o, std::size_t n) {
  return n + xenc::position_task_output_length(rule_of(o), n);
}

std::size_t min_train_length(const Options& o) {
  if (o.min_train_length > 0) return std::size_t(o.min_train_length);
  const xenc::PositionRule rule = rule_of(o);
  const std::size_t shortest = xenc::position_task_min_length(rule, std::size_t(o.offset));
  // the tasks of Ruoss et al.: every length from the shortest, as the paper (1 to 40)
  if (xenc::position_task_has_outputs(rule)) return shortest;
  // half of L_train, or the rule's shortest sequence if that is longer
  return std::max(std::size_t(o.train_length) / 2, shortest);
}

std::size_t learned_max_len(const Options& o) {
  const std::size_t rows = o.learned_max_len > 0 ? std::size_t(o.learned_max_len)
                                                 : sequence_tokens(o, std::size_t(o.train_length));
  // randomized positions draw rows from [0, L): the table needs L of them
  return std::max(rows, std::size_t(o.randomized_positions));
}

void check_options(Options& o) {
  xenc::parse_position_rule(o.rule);  // a config_error listing the known rules
  if (!o.symbols_given) o.symbols = default_symbols(o.rule);
  if (o.d_model % o.heads != 0)
    throw std::invalid_argument("--d-model (" + std::to_string(o.d_model) +
                                ") must be divisible by --heads (" + std::to_string(o.heads) + ")");
  const std::size_t shortest = xenc::position_task_min_length(rule_of(o), std::size_t(o.offset));
  if (std::size_t(o.train_length) < shortest)
    throw std::invalid_argument("--train-length is " + std::to_string(o.train_length) +
                                ", expected >= " + std::to_string(shortest) + " (" + o.rule +
                                " with --offset " + std::to_string(o.offset) +
                                " needs that many tokens for one label)");
  if (o.min_train_length > 0 &&
      (std::size_t(o.min_train_length) < shortest || o.min_train_length > o.train_length))
    throw std::invalid_argument("--min-train-length is " + std::to_string(o.min_train_length) +
                                ", expected " + std::to_string(shortest) + "..." +
                                std::to_string(o.train_length) +
                                " (the rule's shortest sequence ... --train-length)");
  const std::size_t train_tokens = sequence_tokens(o, std::size_t(o.train_length));
  if (o.learned_max_len > 0 && std::size_t(o.learned_max_len) < train_tokens)
    throw std::invalid_argument("--learned-max-len is " + std::to_string(o.learned_max_len) +
                                ", expected >= " + std::to_string(train_tokens) +
                                " (the longest training sequence in tokens): learned positions "
                                "need a row for every training position");
  if (!o.test_lengths_given)
    o.test_lengths.erase(std::remove_if(o.test_lengths.begin(), o.test_lengths.end(),
                                        [&](int L) { return std::size_t(L) < shortest; }),
                         o.test_lengths.end());
  for (int L : o.test_lengths)
    if (std::size_t(L) < shortest)
      throw std::invalid_argument("--test-lengths holds " + std::to_string(L) +
                                  ", expected >= " + std::to_string(shortest) + " (" + o.rule +
                                  " with --offset " + std::to_string(o.offset) +
                                  " needs that many tokens for one label)");
  // L_train is always tested: the drops are measured from it
  o.test_lengths.push_back(o.train_length);
  std::sort(o.test_lengths.begin(), o.test_lengths.end());
  o.test_lengths.erase(std::unique(o.test_lengths.begin(), o.test_lengths.end()),
                       o.test_lengths.end());
}

xenc_app::TrainingPlan training_plan(const Options& o) {
  xenc_app::TrainingPlan p;
  const xenc::PositionRule rule = rule_of(o);
  p.config.vocab_size = xenc::position_task_vocabulary(rule, std::size_t(o.symbols)).size();
  p.config.layer.d_model = std::size_t(o.d_model);
  p.config.layer.nhead = std::size_t(o.heads);
  p.config.layer.dim_feedforward = std::size_t(o.ff);
  p.config.num_layers = std::size_t(o.layers);
  p.config.position = xenc::PositionKind::learned;  // the largest: its table
  p.config.max_len = learned_max_len(o);
  p.num_labels = xenc::position_task_num_classes(rule, std::size_t(o.symbols));
  p.batch = std::size_t(o.batch_size);
  p.length = sequence_tokens(o, std::size_t(o.train_length));
  p.models = o.schemes.empty() ? xenc::all_position_kinds().size() : o.schemes.size();
  p.steps = (std::size_t(o.train_sequences) + p.batch - 1) / p.batch * std::size_t(o.epochs);
  p.eval_length = sequence_tokens(
      o, std::size_t(*std::max_element(o.test_lengths.begin(), o.test_lengths.end())));
  p.eval_batch = std::max<std::size_t>(1, 4096 / p.eval_length);
  double tested = 0;
  for (int L : o.test_lengths)
    tested += double(o.test_sequences) * double(sequence_tokens(o, std::size_t(L)));
  p.eval_tokens = double(o.epochs + 1) * double(o.test_sequences) * double(p.length) +
                  double(o.train_sequences) * double(p.length) + tested;
  return p;
}

std::string training_plan_sizes(const Options& o) {
  return "D = " + std::to_string(o.d_model) + ", F = " + std::to_string(o.ff) + ", " +
         std::to_string(o.layers) + " layers, --batch-size " + std::to_string(o.batch_size) +
         ", --train-length " + std::to_string(o.train_length) + ", " +
         std::to_string(o.train_sequences) + " sequences x " + std::to_string(o.epochs) + " epochs";
}

Result run_experiment(const Options& o, xenc_app::Progress& progress,
                      const std::function<void(const Result&)>& on_ready) {
  std::vector<xenc::PositionKind> kinds;
  if (o.schemes.empty())
    kinds = xenc::all_position_kinds();
  else
    for (const auto& s : o.schemes) kinds.push_back(xenc::parse_position_kind(s));
  const xenc::PositionTaskDataset train = xenc::make_position_task(task_config(
      o, min_train_length(o), std::size_t(o.train_length), std::size_t(o.train_sequences), o.seed));
  std::vector<xenc::PositionTaskDataset> tests;
  for (int L : o.test_lengths) tests.push_back(test_set(o, std::size_t(L)));
  const xenc::PositionTaskDataset& at_train_length =
      tests[std::size_t(std::find(o.test_lengths.begin(), o.test_lengths.end(), o.train_length) -
                        o.test_lengths.begin())];
  // every model's settings are checked before the first one trains
  for (auto kind : kinds) model_config(o, kind, train.vocab.size()).validate("xenc-extrapolate");
  Result result;
  result.options = o;
  result.chance = train.chance();
  result.train_labelled_positions = train.labelled_positions;
  result.blas_threads = xenc_app::one_blas_thread_unless_set();
  if (on_ready) on_ready(result);

  for (auto kind : kinds) {
    xenc::TokenClassifier model(model_config(o, kind, train.vocab.size()), train.num_classes());
    result.schemes.push_back(train_scheme(o, kind, train, at_train_length, model, progress));
    test_scheme(model, tests, result.schemes.back());
  }
  return result;
}

// ---- the study ------------------------------------------------------------------------------

void apply_study_defaults(Options& o, const std::function<bool(const std::string&)>& given) {
  if (!o.study) return;
  // sized so that the plain schemes learn the tasks at L_train (a first run at D = 16 and 400
  // steps did not) in about 15 minutes of CPU on one core (apps/extrapolate/README.md)
  if (!given("--train-length")) o.train_length = 8;
  if (!given("--test-lengths")) {
    o.test_lengths = {8, 12, 16, 24, 32};
    o.test_lengths_given = true;
  }
  if (!given("--train-sequences")) o.train_sequences = 12000;
  if (!given("--epochs")) o.epochs = 4;
  if (!given("--d-model")) o.d_model = 32;
  if (!given("--heads")) o.heads = 4;
  if (!given("--ff")) o.ff = 64;
  if (!given("--randomized-positions")) o.randomized_positions = 256;
}

namespace {

// The schemes of the study: --schemes, or every registered one and relative.
std::vector<std::string> study_schemes(const Options& o) {
  if (!o.schemes.empty()) return o.schemes;
  std::vector<std::string> names;
  for (auto k : xenc::all_position_kinds()) names.push_back(xenc::to_string(k));
  if (std::find(names.begin(), names.end(), "relative") == names.end()) names.push_back("relative");
  return names;
}

// The longest test sequence of a task, in tokens (input and <out>s).
std::size_t longest_test_tokens(const Options& t) {
  return sequence_tokens(
      t, std::size_t(*std::max_element(t.test_lengths.begin(), t.test_lengths.end())));
}

}  // namespace

Options study_run_options(const Options& o, const std::string& task, int seed_index,
                          bool randomized) {
  Options t = o;
  t.study = false;
  t.rule = task;
  t.symbols_given = false;  // each task its paper's alphabet
  t.seed = o.seed + std::uint32_t(seed_index);
  t.randomized_positions = randomized ? o.randomized_positions : 0;
  t.schemes.clear();
  for (const auto& s : study_schemes(o))
    if (!randomized || s != "none") t.schemes.push_back(s);
  check_options(t);
  // plain learned gets a row for every test position (rows beyond training never trained), so
  // every cell of the grid has a number
  if (!randomized && o.learned_max_len == 0) t.learned_max_len = int(longest_test_tokens(t));
  return t;
}

std::size_t study_models(const Options& o) {
  const std::vector<std::string> schemes = study_schemes(o);
  const std::size_t with_positions = std::size_t(std::count_if(
      schemes.begin(), schemes.end(), [](const std::string& s) { return s != "none"; }));
  return o.study_tasks.size() * (schemes.size() + with_positions) * std::size_t(o.seeds);
}

void check_study_options(Options& o) {
  if (o.study_tasks.empty())
    throw std::invalid_argument("--study-tasks is empty, expected at least one task");
  for (const auto& task : o.study_tasks) {
    try {
      xenc::parse_position_rule(task);
    } catch (const std::exception& e) {
      throw std::invalid_argument(std::string("--study-tasks: ") + e.what());
    }
  }
  for (const auto& s : study_schemes(o)) xenc::parse_position_kind(s);
  if (o.randomized_positions <= 0)
    throw std::invalid_argument(
        "--randomized-positions is 0, expected > 0 with --study (the randomized half of the grid "
        "needs a range)");
  for (const auto& task : o.study_tasks) {
    const Options t = study_run_options(o, task, 0, true);
    const std::size_t longest = longest_test_tokens(t);
    if (std::size_t(o.randomized_positions) < longest)
      throw std::invalid_argument(
          "--randomized-positions is " + std::to_string(o.randomized_positions) +
          ", expected >= " + std::to_string(longest) + " (the longest test sequence of " + task +
          " in tokens: trained positions must cover the tested ones)");
  }
}

xenc_app::TrainingPlan study_plan(const Options& o) {
  // the largest task: the longest sequences (duplicate_string: 3n tokens)
  xenc_app::TrainingPlan worst;
  double worst_flops = -1;
  for (const auto& task : o.study_tasks) {
    xenc_app::TrainingPlan p = training_plan(study_run_options(o, task, 0, false));
    const double f = xenc_app::plan_flops(p);
    if (f > worst_flops) worst_flops = f, worst = p;
  }
  worst.models = study_models(o);
  return worst;
}

std::string study_plan_sizes(const Options& o) {
  return std::to_string(o.study_tasks.size()) + " tasks x " +
         std::to_string(study_schemes(o).size()) + " schemes x {plain, randomized} x " +
         std::to_string(o.seeds) + " seeds = " + std::to_string(study_models(o)) +
         " models; each: " + training_plan_sizes(o);
}

StudyResult run_study(const Options& o, xenc_app::Progress& progress) {
  StudyResult res;
  res.options = o;
  res.models = study_models(o);
  res.blas_threads = xenc_app::one_blas_thread_unless_set();
  const std::vector<std::string> schemes = study_schemes(o);
  for (const auto& task : o.study_tasks) {
    StudyTask st;
    st.rule = task;
    const Options first = study_run_options(o, task, 0, false);
    st.symbols = first.symbols;
    st.min_train_length = min_train_length(first);
    st.train_length = std::size_t(o.train_length);
    st.learned_max_len = std::size_t(first.learned_max_len);
    st.lengths.assign(first.test_lengths.begin(), first.test_lengths.end());
    // cells: each scheme plain, then randomized (none only plain)
    for (bool randomized : {false, true})
      for (const auto& s : schemes)
        if (!randomized || s != "none") {
          StudyCell c;
          c.scheme = s;
          c.randomized = randomized;
          st.cells.push_back(c);
        }
    for (int seed = 0; seed < o.seeds; ++seed)
      for (bool randomized : {false, true}) {
        const Options t = study_run_options(o, task, seed, randomized);
        const Result r = run_experiment(t, progress, nullptr);
        st.chance = r.chance;
        for (const auto& sr : r.schemes) {
          auto cell = std::find_if(st.cells.begin(), st.cells.end(), [&](const StudyCell& c) {
            return c.scheme == sr.name && c.randomized == randomized;
          });
          if (cell == st.cells.end()) throw std::logic_error("run_study: no cell for " + sr.name);
          std::vector<double> acc;
          double beyond = 0;
          std::size_t n_beyond = 0;
          for (const auto& l : sr.lengths) {
            acc.push_back(l.available ? l.accuracy : NAN);
            if (l.length > std::size_t(t.train_length)) beyond += acc.back(), ++n_beyond;
          }
          cell->seeds.push_back(t.seed);
          cell->accuracy.push_back(acc);
          cell->beyond.push_back(n_beyond > 0 ? beyond / double(n_beyond) : NAN);
          cell->seconds += sr.seconds;
          res.seconds += sr.seconds;
        }
      }
    res.tasks.push_back(st);
  }
  return res;
}

}  // namespace extrapolate

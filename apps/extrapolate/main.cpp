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
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "xenc/config.hpp"
#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/data/batching.hpp"
#include "xenc/data/position_tasks.hpp"
#include "xenc/nn/optim.hpp"
#include "xenc/nn/token_classifier.hpp"
#include "xenc/ops/cross_entropy.hpp"
#include "xenc/viz/svg.hpp"

#include "../common/blas_threads.hpp"
#include "../common/cli.hpp"
#include "../common/progress.hpp"
#include "../common/training.hpp"

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using xenc_app::fmt;
using xenc_app::pct;
using xenc_app::count_correct;
using xenc_app::Progress;

constexpr const char* kProgram = "xenc-extrapolate";

struct Options {
  // task
  std::string rule = "neighbour_sum";
  int symbols = 8, offset = 1, train_length = 16, min_train_length = 0;  // 0: L_train / 2
  int train_sequences = 8000, test_sequences = 200;
  std::vector<int> test_lengths = {8, 16, 32, 64, 128};
  int learned_max_len = 0;  // 0: train_length
  // model
  int d_model = 64, heads = 8, ff = 128, layers = 2;
  // training
  int epochs = 6, batch_size = 32, warmup = 50;
  double lr = 3e-3, weight_decay = 0.01, clip = 1.0;
  unsigned seed = 0;
  std::vector<std::string> schemes;  // empty = every registered scheme
  // conclusions
  double tolerance = 5.0;  // percentage points
  // output
  bool quiet = false, json = false;
  std::string svg_dir = ".";
  bool svg_dir_given = false;
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

// ---- task and model -------------------------------------------------------------------------

xenc::PositionRule rule_of(const Options& o) { return xenc::parse_position_rule(o.rule); }

std::size_t min_train_length(const Options& o) {
  if (o.min_train_length > 0) return std::size_t(o.min_train_length);
  // half of L_train, or the rule's shortest sequence if that is longer
  return std::max(std::size_t(o.train_length) / 2,
                  xenc::position_task_min_length(rule_of(o), std::size_t(o.offset)));
}

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

std::size_t learned_max_len(const Options& o) {
  return o.learned_max_len > 0 ? std::size_t(o.learned_max_len) : std::size_t(o.train_length);
}

xenc::EncoderModelConfig model_config(const Options& o, xenc::PositionKind kind, std::size_t V) {
  xenc::EncoderModelConfig c;
  c.vocab_size = V;
  c.layer.d_model = std::size_t(o.d_model);
  c.layer.nhead = std::size_t(o.heads);
  c.layer.dim_feedforward = std::size_t(o.ff);
  c.layer.dropout = 0.0f;
  c.layer.activation = xenc::Activation::relu;
  c.num_layers = std::size_t(o.layers);
  c.position = kind;
  c.max_len = learned_max_len(o);  // learned positions only: the rows of the table
  c.seed = o.seed;
  return c;
}

// ---- evaluation -----------------------------------------------------------------------------

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
    if (n > 0) loss_sum += double(xenc::cross_entropy_forward(logits, b.labels, xenc::kIgnoreIndex)) * double(n);
    e.positions += n;
  }
  e.loss = loss_sum / double(std::max<std::size_t>(1, e.positions));
  e.accuracy = double(correct) / double(std::max<std::size_t>(1, e.positions));
  return e;
}

// ---- training -------------------------------------------------------------------------------

SchemeResult train_scheme(const Options& o, xenc::PositionKind kind, const xenc::PositionTaskDataset& train,
                          const xenc::PositionTaskDataset& at_train_length, xenc::TokenClassifier& model,
                          Progress& progress) {
  SchemeResult r;
  r.name = xenc::to_string(kind);
  if (kind == xenc::PositionKind::learned) r.max_len = learned_max_len(o);
  const std::size_t B = std::size_t(o.batch_size);
  const std::size_t per_epoch = (train.sequences.size() + B - 1) / B, total = per_epoch * std::size_t(o.epochs);
  xenc::AdamW opt(model.parameters(), float(o.lr), 0.9f, 0.999f, 1e-8f, float(o.weight_decay));
  const xenc::WarmupCosine schedule(float(o.lr), std::min<std::size_t>(std::size_t(o.warmup), total), total);
  xenc::Rng shuffle(o.seed);  // the same batches for every scheme

  model.eval();
  r.curve_epoch.push_back(0);
  r.curve_train_loss.push_back(NAN);
  r.curve_accuracy.push_back(evaluate(model, at_train_length).accuracy);
  const auto start = Clock::now();
  std::size_t step = 0;
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    model.train();
    double loss_sum = 0.0;
    std::size_t positions = 0, correct = 0;
    for (const auto& idx : xenc::shuffled_batches(train.sequences.size(), B, shuffle)) {
      const xenc::LabelledBatch b = xenc::make_batch(train.sequences, idx, train.vocab);
      const xenc_app::StepResult sr = xenc_app::train_step(model, opt, schedule, step, b, float(o.clip));
      ++step;
      // running loss and accuracy for the progress display
      std::size_t n = 0;
      count_correct(sr.logits, b.labels, n, correct);
      loss_sum += double(sr.loss) * double(n);
      positions += n;
      const double secs = std::chrono::duration<double>(Clock::now() - start).count();
      progress.step(r.name, epoch, o.epochs, step, total, loss_sum / double(std::max<std::size_t>(1, positions)),
                    double(correct) / double(std::max<std::size_t>(1, positions)),
                    secs > 0 ? double(step) / secs : 0.0);
    }
    model.eval();
    const Eval e = evaluate(model, at_train_length);
    const double mean_loss = loss_sum / double(std::max<std::size_t>(1, positions));
    r.curve_epoch.push_back(epoch);
    r.curve_train_loss.push_back(mean_loss);
    r.curve_accuracy.push_back(e.accuracy);
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    progress.epoch(r.name, epoch, o.epochs, step, total, mean_loss,
                   double(correct) / double(std::max<std::size_t>(1, positions)), e.accuracy,
                   double(step) / secs);
  }
  progress.done();
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.steps = step;
  model.eval();
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

// ---- conclusions (every sentence is computed from the numbers; tests recompute them) --------

const LengthResult& at(const SchemeResult& r, std::size_t length) {
  for (const auto& l : r.lengths)
    if (l.length == length) return l;
  throw std::logic_error("no result at length " + std::to_string(length));
}

// "a", "a and b", "a, b and c"
std::string and_list(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
  return s;
}

std::string lengths_list(const std::vector<std::size_t>& v) {
  std::vector<std::string> names;
  for (auto n : v) names.push_back(std::to_string(n));
  return and_list(names);
}

std::string points(double v) { return fmt("%.1f", 100.0 * v); }

std::vector<std::string> conclusions(const Options& o, const std::vector<SchemeResult>& results,
                                     double chance) {
  const double tol = o.tolerance / 100.0;
  const std::size_t L = std::size_t(o.train_length);
  const std::size_t longest = results.front().lengths.back().length;
  const std::string tol_txt = fmt("%g", o.tolerance) + " points";
  const std::string longest_txt = "length " + std::to_string(longest) + " (" +
                                  fmt("%g", double(longest) / double(L)) + " x L_train)";
  std::vector<std::string> out;
  std::vector<std::string> kept;
  std::size_t learned_task = 0;  // schemes above chance + tol at L_train (and readable at every length)
  std::string best;
  double best_acc = -1.0;
  for (const auto& r : results) {
    const double a0 = at(r, L).accuracy;
    learned_task += a0 > chance + tol;
    std::vector<std::size_t> missing;
    double lo = 1.0, hi = 0.0;
    for (const auto& l : r.lengths)
      if (!l.available) missing.push_back(l.length);
      else {
        lo = std::min(lo, l.accuracy);
        hi = std::max(hi, l.accuracy);
      }
    if (!missing.empty()) {
      out.push_back(r.name + ": " + pct(a0) + " at length " + std::to_string(L) +
                    "; no embedding beyond its table (max_len = " + std::to_string(r.max_len) +
                    "), so it cannot read length" + (missing.size() > 1 ? "s " : " ") + lengths_list(missing) +
                    (missing.size() > 1 ? " (the library refuses them with a shape_error)." : " (the library refuses it with a shape_error)."));
      continue;
    }
    const LengthResult& last = r.lengths.back();
    if (last.accuracy > best_acc) {
      best_acc = last.accuracy;
      best = r.name;
    }
    if (lo >= chance - tol && hi <= chance + tol) {
      out.push_back(r.name + " is at chance at every length: from " + pct(lo) + " to " + pct(hi) +
                    ", within " + tol_txt + " of 1/V = " + pct(chance) + ".");
      continue;
    }
    if (a0 <= chance + tol) {
      out.push_back(r.name + " did not learn the task: " + pct(a0) + " at length " + std::to_string(L) +
                    ", within " + tol_txt + " of chance (" + pct(chance) + ").");
      continue;
    }
    std::string prefix = r.name;
    if (r.max_len > L)
      prefix += " (rows " + std::to_string(L) + " to " + std::to_string(r.max_len - 1) +
                " of its position table were never trained: they keep their random initial values)";
    const double drop = a0 - last.accuracy;
    if (drop <= tol) {
      kept.push_back(r.name);
      out.push_back(prefix + " keeps its accuracy: " + pct(a0) + " at length " + std::to_string(L) + ", " +
                    pct(last.accuracy) + " at " + longest_txt + ", within " + tol_txt + ".");
    } else {
      std::size_t first = 0;
      for (const auto& l : r.lengths)
        if (l.length > L && a0 - l.accuracy > tol) {
          first = l.length;
          break;
        }
      out.push_back(prefix + " degrades: " + pct(a0) + " at length " + std::to_string(L) + ", " +
                    pct(last.accuracy) + " at " + longest_txt + " (" + points(drop) +
                    " points lower); first more than " + tol_txt + " below at length " +
                    std::to_string(first) + ".");
    }
  }
  if (learned_task == 0) {
    out.push_back("No scheme learned the task well enough to compare: at length " + std::to_string(L) +
                  " every accuracy is at most " + tol_txt + " above chance (" + pct(chance) +
                  "); train longer (--epochs, --train-sequences).");
    return out;
  }
  if (kept.empty())
    out.push_back("No scheme that learned the task stays within " + tol_txt + " of its length-" +
                  std::to_string(L) + " accuracy at " + longest_txt + ".");
  else
    out.push_back("Within " + tol_txt + " of their length-" + std::to_string(L) + " accuracy at " + longest_txt +
                  ": " + and_list(kept) + ".");
  if (!best.empty())
    out.push_back("Best at length " + std::to_string(longest) + ": " + best + " (" + pct(best_acc) + ").");
  return out;
}

// ---- figure ---------------------------------------------------------------------------------

// Accuracy against test length: x is the index of the length (equal steps for doubling
// lengths), one line per scheme (no point where a model cannot read the length), and two
// reference lines without markers: vertical at L_train, horizontal at chance.
std::string accuracy_svg(const Options& o, const std::vector<SchemeResult>& results, double chance) {
  const auto& lengths = results.front().lengths;
  std::vector<std::string> ticks;
  double marker = 0.0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    ticks.push_back(std::to_string(lengths[i].length));
    if (lengths[i].length == std::size_t(o.train_length)) marker = double(i);
  }
  std::vector<xenc::viz::LineSeries> series;
  for (const auto& r : results) {
    xenc::viz::LineSeries s{r.name, {}, {}, false};
    bool missing = false;
    for (std::size_t i = 0; i < r.lengths.size(); ++i) {
      s.x.push_back(double(i));
      s.y.push_back(r.lengths[i].available ? r.lengths[i].accuracy : NAN);
      missing = missing || !r.lengths[i].available;
    }
    if (missing) s.label += " (no embedding beyond length " + std::to_string(r.max_len) + ")";
    series.push_back(s);
  }
  xenc::viz::LinePlotOptions po;
  po.title = "Train short, test long: " + o.rule + " (k = " + std::to_string(o.offset) + ", V = " +
             std::to_string(o.symbols) + "), trained on lengths " + std::to_string(min_train_length(o)) +
             " to " + std::to_string(o.train_length);
  po.x_label = "test sequence length (tokens)";
  po.y_label = "accuracy";
  po.y_min = 0.0;
  po.y_max = 1.0;
  po.x_tick_labels = ticks;
  po.markers = true;
  po.height = 420;
  // marks, not data: dashed lines across the plot without markers
  po.reference_lines = {{"chance (1/V = " + pct(chance) + ")", chance, false},
                        {"L_train = " + std::to_string(o.train_length) + " (longest training length)",
                         marker, true}};
  return xenc::viz::line_plot_svg(series, po);
}

// ---- JSON -----------------------------------------------------------------------------------

json nullable(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json options_json(const Options& o) {
  return {{"rule", o.rule}, {"symbols", o.symbols}, {"offset", o.offset},
          {"train_length", o.train_length}, {"min_train_length", min_train_length(o)},
          {"train_sequences", o.train_sequences}, {"test_sequences", o.test_sequences},
          {"test_lengths", o.test_lengths}, {"learned_max_len", learned_max_len(o)},
          {"d_model", o.d_model}, {"nhead", o.heads}, {"dim_feedforward", o.ff}, {"num_layers", o.layers},
          {"epochs", o.epochs}, {"batch_size", o.batch_size}, {"warmup_steps", o.warmup}, {"lr", o.lr},
          {"weight_decay", o.weight_decay}, {"clip_grad_norm", o.clip}, {"seed", o.seed},
          {"tolerance_points", o.tolerance}};
}

json scheme_json(const SchemeResult& r) {
  json lengths = json::array();
  for (const auto& l : r.lengths)
    lengths.push_back({{"length", l.length}, {"available", l.available}, {"accuracy", nullable(l.accuracy)},
                       {"loss", nullable(l.loss)}, {"positions", l.positions}, {"error", l.error}});
  json curve_loss = json::array();
  for (double v : r.curve_train_loss) curve_loss.push_back(nullable(v));
  json j = {{"name", r.name}, {"train_accuracy", r.train_accuracy}, {"seconds", r.seconds}, {"steps", r.steps},
            {"test", lengths},
            {"curve", {{"epoch", r.curve_epoch}, {"train_loss", curve_loss}, {"accuracy_at_train_length", r.curve_accuracy}}}};
  if (r.max_len > 0) j["max_len"] = r.max_len;
  return j;
}

// ---- the run --------------------------------------------------------------------------------

void check_options(Options& o) {
  if (o.d_model % o.heads != 0)
    throw std::invalid_argument("--d-model (" + std::to_string(o.d_model) + ") must be divisible by --heads (" +
                                std::to_string(o.heads) + ")");
  const std::size_t shortest = xenc::position_task_min_length(rule_of(o), std::size_t(o.offset));
  if (std::size_t(o.train_length) < shortest)
    throw std::invalid_argument("--train-length is " + std::to_string(o.train_length) + ", expected >= " +
                                std::to_string(shortest) + " (" + o.rule + " with --offset " +
                                std::to_string(o.offset) + " needs that many tokens for one label)");
  if (o.min_train_length > 0 &&
      (std::size_t(o.min_train_length) < shortest || o.min_train_length > o.train_length))
    throw std::invalid_argument("--min-train-length is " + std::to_string(o.min_train_length) + ", expected " +
                                std::to_string(shortest) + "..." + std::to_string(o.train_length) +
                                " (the rule's shortest sequence ... --train-length)");
  if (o.learned_max_len > 0 && o.learned_max_len < o.train_length)
    throw std::invalid_argument("--learned-max-len is " + std::to_string(o.learned_max_len) +
                                ", expected >= --train-length (" + std::to_string(o.train_length) +
                                "): learned positions need a row for every training position");
  for (int L : o.test_lengths)
    if (std::size_t(L) < shortest)
      throw std::invalid_argument("--test-lengths holds " + std::to_string(L) + ", expected >= " +
                                  std::to_string(shortest) + " (" + o.rule + " with --offset " +
                                  std::to_string(o.offset) + " needs that many tokens for one label)");
  // L_train is always tested: the drops are measured from it
  o.test_lengths.push_back(o.train_length);
  std::sort(o.test_lengths.begin(), o.test_lengths.end());
  o.test_lengths.erase(std::unique(o.test_lengths.begin(), o.test_lengths.end()), o.test_lengths.end());
}

int run(Options o) {
  check_options(o);
  std::vector<xenc::PositionKind> kinds;
  if (o.schemes.empty()) kinds = xenc::all_position_kinds();
  else
    for (const auto& s : o.schemes) kinds.push_back(xenc::parse_position_kind(s));
  const xenc::PositionTaskDataset train = xenc::make_position_task(
      task_config(o, min_train_length(o), std::size_t(o.train_length), std::size_t(o.train_sequences), o.seed));
  std::vector<xenc::PositionTaskDataset> tests;
  for (int L : o.test_lengths) tests.push_back(test_set(o, std::size_t(L)));
  const xenc::PositionTaskDataset& at_train_length =
      tests[std::size_t(std::find(o.test_lengths.begin(), o.test_lengths.end(), o.train_length) -
                        o.test_lengths.begin())];
  // every model's settings are checked before the first one trains
  for (auto kind : kinds) model_config(o, kind, train.vocab.size()).validate(kProgram);
  const double chance = train.chance();
  const int blas_threads = xenc_app::one_blas_thread_unless_set();

  const bool text = !o.json;
  if (text) {
    std::printf("Task %s: random sequences of V = %d symbols; at each position p the label is %s, "
                "with k = %d (%s).\n"
                "Training: %d sequences of lengths %zu to %d (L_train = %d). Test: %d sequences at each "
                "length %s. Chance: 1/V = %s.\n",
                o.rule.c_str(), o.symbols,
                o.rule == "neighbour_sum" ? "(s[p-k] + s[p+k]) mod V" : "s[p-k], the symbol k places to the left",
                o.offset,
                o.rule == "neighbour_sum" ? "positions without both neighbours are ignored by the loss"
                                          : "the first k positions are ignored by the loss",
                o.train_sequences, min_train_length(o), o.train_length, o.train_length,
                o.test_sequences, lengths_list(std::vector<std::size_t>(o.test_lengths.begin(), o.test_lengths.end())).c_str(),
                pct(chance).c_str());
    std::printf("Model: D=%d, H=%d, F=%d, %d layer%s, post-norm, relu; AdamW lr %g (warm-up %d steps, "
                "cosine decay), batch %d, %d epochs, seed %u; the same data, batches and initial "
                "weights for every scheme; %d BLAS thread%s.\n\n",
                o.d_model, o.heads, o.ff, o.layers, o.layers == 1 ? "" : "s", o.lr, o.warmup, o.batch_size,
                o.epochs, o.seed, blas_threads, blas_threads == 1 ? "" : "s");
    std::fflush(stdout);
  }

  Progress progress(text && !o.quiet, "acc at length " + std::to_string(o.train_length));
  std::vector<SchemeResult> results;
  for (auto kind : kinds) {
    xenc::TokenClassifier model(model_config(o, kind, train.vocab.size()), std::size_t(o.symbols));
    results.push_back(train_scheme(o, kind, train, at_train_length, model, progress));
    test_scheme(model, tests, results.back());
  }
  double total_seconds = 0.0;
  for (const auto& r : results) total_seconds += r.seconds;
  const std::vector<std::string> claims = conclusions(o, results, chance);

  std::vector<std::string> written;
  if (!o.svg_dir.empty() && (!o.json || o.svg_dir_given)) {
    std::filesystem::create_directories(o.svg_dir);
    const std::string path = o.svg_dir + "/extrapolate_accuracy.svg";
    xenc::viz::write_text_file(path, accuracy_svg(o, results, chance));
    written.push_back(path);
  }

  if (o.json) {
    json j = {{"program", kProgram}, {"version", XENC_VERSION}, {"options", options_json(o)},
              {"task", {{"rule", o.rule}, {"symbols", o.symbols}, {"offset", o.offset},
                        {"chance", chance}, {"ignore_index", xenc::kIgnoreIndex},
                        {"train_lengths", {min_train_length(o), o.train_length}},
                        {"train_labelled_positions", train.labelled_positions}}},
              {"test_lengths", o.test_lengths}, {"total_seconds", total_seconds}, {"blas_threads", blas_threads},
              {"conclusions", claims}, {"files", written}};
    j["schemes"] = json::array();
    for (const auto& r : results) j["schemes"].push_back(scheme_json(r));
    std::cout << j.dump(2) << "\n";
    return xenc_app::finish_stdout(kProgram);
  }
  if (!o.quiet) std::printf("\n");
  std::printf("Accuracy at each test length (trained on lengths %zu to %d):\n\n", min_train_length(o),
              o.train_length);
  std::printf("%-12s %9s", "scheme", "train");
  for (int L : o.test_lengths) std::printf(" %9s", (L == o.train_length ? "*" + std::to_string(L) : std::to_string(L)).c_str());
  std::printf(" %9s\n", "time");
  bool dash = false;
  for (const auto& r : results) {
    std::printf("%-12s %9s", r.name.c_str(), pct(r.train_accuracy).c_str());
    for (const auto& l : r.lengths) {
      std::printf(" %9s", l.available ? pct(l.accuracy).c_str() : "-");
      dash = dash || !l.available;
    }
    std::printf(" %7.1f s\n", r.seconds);
  }
  std::printf("(* = L_train; train = accuracy on the training sequences; total %.1f s)\n", total_seconds);
  if (dash)
    for (const auto& r : results)
      for (const auto& l : r.lengths)
        if (!l.available) {
          std::printf("- %s has no embedding beyond its table (max_len = %zu): %s\n", r.name.c_str(), r.max_len,
                      l.error.c_str());
          break;
        }
  std::printf("\n");
  for (const auto& c : claims) std::printf("%s\n", c.c_str());
  if (!written.empty()) {
    std::printf("\nWrote:");
    for (const auto& w : written) std::printf(" %s", w.c_str());
    std::printf("\n");
  }
  return xenc_app::finish_stdout(kProgram);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xenc-extrapolate: train short, test long. One encoder per position scheme learns a "
               "length-independent task on short sequences and is tested on longer ones."};
  Options o;
  using xenc_app::positive_float;
  using xenc_app::whole_range;
  xenc_app::add_version(app, kProgram);
  app.add_option("--rule", o.rule, "the task: neighbour_sum ((s[p-k] + s[p+k]) mod V) or copy_left (s[p-k])")
      ->check(CLI::IsMember({"neighbour_sum", "copy_left"}))->capture_default_str();
  app.add_option("--symbols", o.symbols, "V, random symbols (and classes)")->check(whole_range(2, 1000))->capture_default_str();
  app.add_option("--offset", o.offset, "k, how far away the rule looks")->check(whole_range(1, 64))->capture_default_str();
  app.add_option("--train-length", o.train_length, "L_train, the longest training sequence")
      ->check(whole_range(2, 256))->capture_default_str();
  app.add_option("--min-train-length", o.min_train_length,
                 "the shortest training sequence (0: L_train / 2, at least the rule's shortest: 2k + 1 or k + 1)")
      ->check(whole_range(0, 256))->capture_default_str();
  app.add_option("--train-sequences", o.train_sequences, "training sequences")->check(whole_range(1, 100000))->capture_default_str();
  app.add_option("--test-sequences", o.test_sequences, "test sequences at each length")->check(whole_range(1, 10000))->capture_default_str();
  app.add_option("--test-lengths", o.test_lengths, "test lengths (L_train is always added)")
      ->delimiter(',')->check(whole_range(2, 1024))->capture_default_str();
  app.add_option("--learned-max-len", o.learned_max_len,
                 "rows of the learned position table (0: L_train; more: rows never trained)")
      ->check(whole_range(0, 1024))->capture_default_str();
  app.add_option("--d-model", o.d_model, "D, the vector size")->check(whole_range(2, 512))->capture_default_str();
  app.add_option("--heads", o.heads, "H, attention heads (must divide D)")->check(whole_range(1, 64))->capture_default_str();
  app.add_option("--ff", o.ff, "F, feed-forward width")->check(whole_range(1, 4096))->capture_default_str();
  app.add_option("--layers", o.layers, "N, encoder layers")->check(whole_range(1, 12))->capture_default_str();
  app.add_option("--epochs", o.epochs, "passes over the training set")->check(whole_range(1, 1000))->capture_default_str();
  app.add_option("--batch-size", o.batch_size, "sequences per step")->check(whole_range(1, 4096))->capture_default_str();
  app.add_option("--warmup", o.warmup, "learning-rate warm-up steps")->check(whole_range(0, 100000))->capture_default_str();
  app.add_option("--lr", o.lr, "peak learning rate (AdamW)")->check(positive_float())->check(CLI::Range(1e-6, 1.0))->capture_default_str();
  app.add_option("--weight-decay", o.weight_decay, "AdamW's decoupled weight decay")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--clip", o.clip, "clip the gradient norm to this")->check(positive_float())->check(CLI::Range(1e-6, 1e6))->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the data, the weights and the batches")->check(whole_range(0, 4294967295LL))->capture_default_str();
  app.add_option("--schemes", o.schemes, "position schemes to train (default: every registered one)")
      ->delimiter(',');
  app.add_option("--tolerance", o.tolerance, "points of accuracy within which the conclusions call two numbers the same")
      ->check(CLI::Range(0.1, 50.0))->capture_default_str();
  app.add_flag("--quiet", o.quiet, "no progress display");
  app.add_flag("--json", o.json, "print everything as JSON instead of text");
  auto* svg = app.add_option("--svg-dir", o.svg_dir,
                             "directory for extrapolate_accuracy.svg (\"\" = none; with --json only when given)")
                  ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  o.svg_dir_given = svg->count() > 0;
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", kProgram, e.what());
    return 1;
  }
}

// xenc-train-order's experiment (see experiment.hpp): data, one model per scheme trained by the
// apps' one training loop (apps/common/training.hpp), evaluation and attention maps.
#include "experiment.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <xtensor/xview.hpp>

#include <xenc/core/grad_mode.hpp>
#include <xenc/data/batching.hpp>
#include <xenc/ops/cross_entropy.hpp>

#include "../common/model_options.hpp"
#include "../common/training.hpp"

namespace train_order {

namespace {

using Clock = std::chrono::steady_clock;
using xenc_app::Progress;

xenc::EncoderModelConfig model_config(const Options& o, xenc::PositionKind kind, std::size_t V) {
  // max_len 16: the longest sentence has 9 tokens; learned positions need a row for each
  return xenc_app::encoder_config(o, V, kind, 16, o.seed);
}

SchemeResult train_scheme(const Options& o, xenc::PositionKind kind,
                          const xenc::WordRolesDataset& d, xenc::TokenClassifier& model,
                          Progress& progress, const OnStep& live) {
  SchemeResult r;
  r.name = xenc::to_string(kind);
  const auto train = xenc::as_labelled(d.train), test = xenc::as_labelled(d.test);
  const xenc_app::FitOptions fo = xenc_app::fit_options(o);  // the same batches for every scheme
  const std::size_t per_epoch = (train.size() + fo.batch_size - 1) / fo.batch_size;
  const std::size_t every = std::max<std::size_t>(1, per_epoch / 4);  // 4 curve points per epoch
  auto record = [&](double epoch, double train_loss) {
    const Eval t = evaluate(model, d.test, test, d.vocab, 256);
    r.curve.epoch.push_back(epoch);
    r.curve.train_loss.push_back(train_loss);
    r.curve.heldout_loss.push_back(t.loss);
    r.curve.heldout_accuracy.push_back(t.accuracy);
    return t;
  };
  record(0, evaluate(model, d.train, train, d.vocab, 256).loss);

  const auto start = Clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  // running numbers of the epoch (progress display) and since the last curve point
  double loss_sum = 0.0, window_loss = 0.0;
  std::size_t nouns = 0, correct = 0, window_nouns = 0;
  auto on_step = [&](const xenc_app::FitStep& s) {
    if (s.in_epoch == 1) loss_sum = window_loss = 0.0, nouns = correct = window_nouns = 0;
    std::size_t n = 0;
    xenc_app::count_correct(s.result.logits, s.batch.labels, n, correct);
    loss_sum += double(s.result.loss) * double(n);
    nouns += n;
    window_loss += double(s.result.loss) * double(n);
    window_nouns += n;
    if (s.in_epoch % every == 0 && s.in_epoch != s.per_epoch) {  // a point inside the epoch
      model.eval();
      record(double(s.epoch - 1) + double(s.in_epoch) / double(s.per_epoch),
             window_loss / double(window_nouns));
      model.train();
      window_loss = 0.0;
      window_nouns = 0;
    }
    const double secs = seconds();
    progress.step(r.name, s.epoch, o.epochs, s.step, s.steps, loss_sum / double(nouns),
                  double(correct) / double(nouns), secs > 0 ? double(s.step) / secs : 0.0);
    if (live) live(r, s.step, s.steps);
  };
  auto on_epoch = [&](int epoch, std::size_t step) {
    const Eval t = record(epoch, window_loss / double(std::max<std::size_t>(1, window_nouns)));
    progress.epoch(r.name, epoch, o.epochs, step, per_epoch * std::size_t(o.epochs),
                   loss_sum / double(nouns), double(correct) / double(nouns), t.accuracy,
                   double(step) / seconds());
    if (live) live(r, step, per_epoch * std::size_t(o.epochs));
  };
  r.steps = xenc_app::fit(model, {train, d.vocab}, fo, on_step, on_epoch);
  progress.done();
  r.seconds = seconds();
  r.train = evaluate(model, d.train, train, d.vocab, 256);
  r.test = evaluate(model, d.test, test, d.vocab, 256);
  return r;
}

// Every head of every layer of the model for one sentence.
AttentionMaps attention_maps(xenc::TokenClassifier& model, const xenc::RoleSentence& sentence,
                             const xenc::Vocabulary& vocab) {
  AttentionMaps a;
  a.tokens = sentence.tokens;
  a.agent = sentence.agent;
  const std::vector<xenc::LabelledSentence> one = {sentence};
  const xenc::LabelledBatch b = xenc::make_batch(one, {0}, vocab);
  xenc::ModelTrace trace;
  {
    xenc::NoGradGuard no_grad;
    model.forward(b.ids, b.padding_mask, &trace);
  }
  const auto& weights = trace.encoder.attention_weights;  // each [1, H, T, T]
  for (std::size_t l = 0; l < weights.size(); ++l)
    for (std::size_t h = 0; h < weights[l].shape(1); ++h) {
      a.panels.push_back(xenc::Tensor2(xt::view(weights[l], 0, h, xt::all(), xt::all())));
      a.titles.push_back("layer " + std::to_string(l + 1) + ", head " + std::to_string(h + 1));
    }
  return a;
}

}  // namespace

xenc::WordRolesConfig task_config(const Options& o) {
  xenc::WordRolesConfig wc;
  wc.num_nouns = std::size_t(o.nouns);
  wc.num_verbs = std::size_t(o.verbs);
  wc.sentences_per_pair = std::size_t(o.sentences_per_pair);
  wc.heldout_fraction = o.heldout;
  wc.passive_probability = o.passive;
  wc.adjective_probability = o.adjectives;
  wc.seed = o.seed;
  return wc;
}

Eval evaluate(xenc::TokenClassifier& model, const std::vector<xenc::RoleSentence>& sentences,
              const std::vector<xenc::LabelledSentence>& data, const xenc::Vocabulary& vocab,
              std::size_t batch_size) {
  xenc::NoGradGuard no_grad;
  Eval e;
  double loss_sum = 0.0;
  std::size_t correct = 0;
  // predicted role of the agent noun and of the patient noun of each sentence
  std::vector<std::int64_t> pred_agent(sentences.size(), -1), pred_patient(sentences.size(), -1);
  for (const auto& idx : xenc::sequential_batches(sentences.size(), batch_size)) {
    const xenc::LabelledBatch b = xenc::make_batch(data, idx, vocab);
    const xenc::Tensor3 logits = model.forward(b.ids, b.padding_mask);  // [B, T, C]
    xenc_app::require_finite_logits(logits, "evaluation");              // NaN is not a prediction
    std::size_t n = 0;
    for (std::size_t r = 0; r < idx.size(); ++r)
      for (std::size_t t = 0; t < b.labels.shape(1); ++t) {
        const std::int64_t label = b.labels(r, t);
        if (label == xenc::kIgnoreIndex) continue;
        ++n;
        const std::int64_t pred = logits(r, t, 1) > logits(r, t, 0) ? 1 : 0;
        correct += pred == label;
        (label == std::int64_t(xenc::Role::agent) ? pred_agent : pred_patient)[idx[r]] = pred;
      }
    loss_sum +=
        double(xenc::cross_entropy_forward(logits, b.labels, xenc::kIgnoreIndex)) * double(n);
    e.nouns += n;
  }
  // a noun that is the agent of sentence i is the patient of its mirror
  std::size_t agree = 0;
  for (std::size_t i = 0; i < sentences.size(); ++i)
    agree += pred_agent[i] == pred_patient[sentences[i].mirror];
  e.loss = loss_sum / double(e.nouns);
  e.accuracy = double(correct) / double(e.nouns);
  e.mirror_agreement = sentences.empty() ? 0.0 : double(agree) / double(sentences.size());
  return e;
}

xenc_app::TrainingPlan training_plan(const Options& o, const xenc::WordRolesDataset& d,
                                     std::size_t models) {
  std::size_t T = 1;
  for (const auto* set : {&d.train, &d.test})
    for (const auto& s : *set) T = std::max(T, s.tokens.size());
  xenc_app::TrainingPlan p;
  p.config.vocab_size = d.vocab.size();
  p.config.layer.d_model = std::size_t(o.d_model);
  p.config.layer.nhead = std::size_t(o.heads);
  p.config.layer.dim_feedforward = std::size_t(o.ff);
  p.config.layer.dropout = float(o.dropout);
  p.config.num_layers = std::size_t(o.layers);
  p.config.position = xenc::PositionKind::learned;  // the largest: its table
  p.config.max_len = T;
  p.num_labels = 2;
  p.batch = std::size_t(o.batch_size);
  p.length = T;
  p.models = models;
  p.steps = (d.train.size() + p.batch - 1) / p.batch * std::size_t(o.epochs);
  p.eval_batch = 256;
  p.eval_length = T;
  p.eval_tokens = double(T) * (double(4 * o.epochs + 1) * double(d.test.size()) +
                               2.0 * double(d.train.size() + d.test.size()));
  return p;
}

std::string training_plan_sizes(const Options& o, const xenc::WordRolesDataset& d) {
  return "D = " + std::to_string(o.d_model) + ", F = " + std::to_string(o.ff) + ", " +
         std::to_string(o.layers) + " layers, --batch-size " + std::to_string(o.batch_size) + ", " +
         std::to_string(d.train.size()) + " sentences x " + std::to_string(o.epochs) + " epochs";
}

Result run_experiment(const Options& o, xenc_app::Progress& progress,
                      const std::function<void(const Result&)>& on_ready,
                      const std::function<void(const Result&, const SchemeResult&,
                                               xenc::TokenClassifier&)>& on_trained,
                      const OnStep& on_step) {
  if (o.d_model % o.heads != 0)
    throw std::invalid_argument("--d-model (" + std::to_string(o.d_model) +
                                ") must be divisible by --heads (" + std::to_string(o.heads) + ")");
  Result res;
  res.options = o;
  res.data = xenc::make_word_roles(task_config(o));
  const xenc::WordRolesDataset& d = res.data;
  if (d.train.empty() || d.test.empty())
    throw std::invalid_argument("the task has " + std::to_string(d.train.size()) +
                                " training and " + std::to_string(d.test.size()) +
                                " held-out sentences, expected both > 0");
  std::vector<xenc::PositionKind> kinds;
  if (o.schemes.empty())
    kinds = xenc::all_position_kinds();
  else
    for (const auto& s : o.schemes) kinds.push_back(xenc::parse_position_kind(s));
  // every model's settings are checked before the first one trains (rope needs an even D / H)
  for (auto kind : kinds)
    model_config(o, kind, d.vocab.size()).validate("--position " + xenc::to_string(kind));
  if (on_ready) on_ready(res);

  // the first held-out active sentence without adjectives ("the cat chased the mouse")
  std::size_t pick = 0;
  for (std::size_t i = 0; i < d.test.size(); ++i)
    if (!d.test[i].passive && d.test[i].tokens.size() == 5) {
      pick = i;
      break;
    }
  for (auto kind : kinds) {
    xenc::TokenClassifier model(model_config(o, kind, d.vocab.size()), 2);
    res.schemes.push_back(train_scheme(o, kind, d, model, progress, on_step));
    SchemeResult& r = res.schemes.back();
    r.sentence = attention_maps(model, d.test[pick], d.vocab);
    r.mirror = attention_maps(model, d.test[d.test[pick].mirror], d.vocab);
    if (on_trained) on_trained(res, r, model);
  }
  return res;
}

}  // namespace train_order

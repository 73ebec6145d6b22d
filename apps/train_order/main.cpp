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

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <xtensor/xview.hpp>

#include "xenc/config.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/data/batching.hpp"
#include "xenc/data/word_roles.hpp"
#include "xenc/io/checkpoint.hpp"
#include "xenc/io/npy.hpp"
#include "xenc/io/npz.hpp"
#include "xenc/nn/optim.hpp"
#include "xenc/nn/token_classifier.hpp"
#include "xenc/ops/cross_entropy.hpp"
#include "xenc/ops/softmax.hpp"
#include "xenc/text/display_width.hpp"
#include "xenc/text/tokenizer.hpp"
#include "xenc/viz/svg.hpp"

#include "../common/progress.hpp"
#include "../common/training.hpp"

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using xenc_app::fmt;
using xenc_app::pct;
using xenc_app::Progress;

struct Options {
  // task
  int nouns = 24, verbs = 12, sentences_per_pair = 4;
  double heldout = 0.2, passive = 0.5, adjectives = 0.3;
  // model
  int d_model = 32, heads = 4, ff = 64, layers = 2;
  double dropout = 0.0;
  // training
  int epochs = 6, batch_size = 32, warmup = 100;
  double lr = 3e-3, weight_decay = 0.01, clip = 1.0;
  unsigned seed = 0;
  std::vector<std::string> schemes;  // empty = every registered scheme
  // output
  bool quiet = false, json = false;
  std::string svg_dir = ".";
  bool svg_dir_given = false;
  std::string save_dir, load, sentence, evaluate;
  bool sentence_given = false;
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

struct SchemeResult {
  std::string name;
  Eval train, test;
  double seconds = 0.0;
  std::size_t steps = 0;
  Curve curve;
};

// ---- evaluation ---------------------------------------------------------------------------

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
    loss_sum += double(xenc::cross_entropy_forward(logits, b.labels, xenc::kIgnoreIndex)) * double(n);
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

// ---- training -------------------------------------------------------------------------------

xenc::EncoderModelConfig model_config(const Options& o, xenc::PositionKind kind, std::size_t V) {
  xenc::EncoderModelConfig c;
  c.vocab_size = V;
  c.layer.d_model = std::size_t(o.d_model);
  c.layer.nhead = std::size_t(o.heads);
  c.layer.dim_feedforward = std::size_t(o.ff);
  c.layer.dropout = float(o.dropout);
  c.layer.activation = xenc::Activation::relu;
  c.num_layers = std::size_t(o.layers);
  c.position = kind;
  c.max_len = 16;  // the longest sentence has 9 tokens; learned positions need a row for each
  c.seed = o.seed;
  return c;
}

SchemeResult train_scheme(const Options& o, xenc::PositionKind kind, const xenc::WordRolesDataset& d,
                          xenc::TokenClassifier& model, Progress& progress) {
  SchemeResult r;
  r.name = xenc::to_string(kind);
  const auto train = xenc::as_labelled(d.train), test = xenc::as_labelled(d.test);
  const std::size_t B = std::size_t(o.batch_size);
  const std::size_t per_epoch = (train.size() + B - 1) / B, total = per_epoch * std::size_t(o.epochs);
  xenc::AdamW opt(model.parameters(), float(o.lr), 0.9f, 0.999f, 1e-8f, float(o.weight_decay));
  const xenc::WarmupCosine schedule(float(o.lr), std::min<std::size_t>(std::size_t(o.warmup), total), total);
  xenc::Rng shuffle(o.seed);  // the same batches for every scheme

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
  std::size_t step = 0;
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    model.train();
    double loss_sum = 0.0, window_loss = 0.0;
    std::size_t nouns = 0, correct = 0, window_nouns = 0, in_epoch = 0;
    for (const auto& idx : xenc::shuffled_batches(train.size(), B, shuffle)) {
      const xenc::LabelledBatch b = xenc::make_batch(train, idx, d.vocab);
      const xenc_app::StepResult sr = xenc_app::train_step(model, opt, schedule, step, b, float(o.clip));
      ++step;
      // running numbers for the progress display
      std::size_t n = 0;
      xenc_app::count_correct(sr.logits, b.labels, n, correct);
      loss_sum += double(sr.loss) * double(n);
      nouns += n;
      window_loss += double(sr.loss) * double(n);
      window_nouns += n;
      ++in_epoch;
      if (in_epoch % every == 0 && in_epoch != per_epoch) {  // a point inside the epoch
        model.eval();
        record(double(epoch - 1) + double(in_epoch) / double(per_epoch), window_loss / double(window_nouns));
        model.train();
        window_loss = 0.0;
        window_nouns = 0;
      }
      const double secs = std::chrono::duration<double>(Clock::now() - start).count();
      progress.step(r.name, epoch, o.epochs, step, total, loss_sum / double(nouns),
                    double(correct) / double(nouns), secs > 0 ? double(step) / secs : 0.0);
    }
    model.eval();
    const Eval t = record(epoch, window_loss / double(std::max<std::size_t>(1, window_nouns)));
    const double secs = std::chrono::duration<double>(Clock::now() - start).count();
    progress.epoch(r.name, epoch, o.epochs, step, total, loss_sum / double(nouns),
                   double(correct) / double(nouns), t.accuracy, double(step) / secs);
  }
  progress.done();
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.steps = step;
  model.eval();
  r.train = evaluate(model, d.train, train, d.vocab, 256);
  r.test = evaluate(model, d.test, test, d.vocab, 256);
  return r;
}

// ---- figures --------------------------------------------------------------------------------

// Stacks complete SVG documents vertically into one (nested <svg> elements, SVG 1.1).
std::string stack_svgs(const std::vector<std::string>& parts) {
  std::string body;
  double y = 0.0, width = 0.0;
  for (std::string s : parts) {
    const auto start = s.find("<svg");
    if (start == std::string::npos) throw std::runtime_error("stack_svgs: not an SVG document");
    s = s.substr(start);
    auto number = [&](const std::string& attr) {
      const auto p = s.find(attr + "=\"");
      if (p == std::string::npos || p > s.find('>')) throw std::runtime_error("stack_svgs: no " + attr);
      return std::stod(s.substr(p + attr.size() + 2));
    };
    const double w = number("width"), h = number("height");
    s.replace(0, 4, "<svg x=\"0\" y=\"" + fmt("%.0f", y) + "\"");
    body += s + "\n";
    y += h;
    width = std::max(width, w);
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         fmt("%.0f", width) + "\" height=\"" + fmt("%.0f", y) + "\" viewBox=\"0 0 " + fmt("%.0f", width) +
         " " + fmt("%.0f", y) + "\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" + body +
         "</svg>\n";
}

std::string curves_svg(const std::vector<SchemeResult>& results) {
  std::vector<xenc::viz::LineSeries> loss, acc;
  for (const auto& r : results) {
    loss.push_back({r.name, r.curve.epoch, r.curve.train_loss, false});
    acc.push_back({r.name, r.curve.epoch, r.curve.heldout_accuracy, false});
  }
  if (!results.empty()) {
    const auto& e = results.front().curve.epoch;
    acc.push_back({"50% (chance)", {e.front(), e.back()}, {0.5, 0.5}, true});
  }
  xenc::viz::LinePlotOptions lo;
  lo.title = "Training loss (cross-entropy over nouns, mean since the previous point)";
  lo.x_label = "epoch";
  lo.y_label = "loss";
  lo.y_min = 0.0;
  lo.height = 320;
  xenc::viz::LinePlotOptions ao;
  ao.title = "Held-out accuracy (noun pairs never seen together in training)";
  ao.x_label = "epoch";
  ao.y_label = "accuracy";
  ao.y_min = 0.0;
  ao.y_max = 1.0;
  ao.height = 320;
  return stack_svgs({xenc::viz::line_plot_svg(loss, lo), xenc::viz::line_plot_svg(acc, ao)});
}

// Every head of every layer for a sentence (top) and its mirror (bottom), words on the axes.
std::string attention_svg(xenc::TokenClassifier& model, const std::string& scheme,
                          const xenc::RoleSentence& s, const xenc::RoleSentence& m,
                          const xenc::Vocabulary& vocab) {
  std::vector<std::string> parts;
  for (const auto* sentence : {&s, &m}) {
    const std::vector<xenc::LabelledSentence> one = {*sentence};
    const xenc::LabelledBatch b = xenc::make_batch(one, {0}, vocab);
    xenc::ModelTrace trace;
    {
      xenc::NoGradGuard no_grad;
      model.forward(b.ids, b.padding_mask, &trace);
    }
    std::vector<xenc::Tensor2> panels;
    std::vector<std::string> titles;
    const auto& weights = trace.encoder.attention_weights;  // each [1, H, T, T]
    for (std::size_t l = 0; l < weights.size(); ++l)
      for (std::size_t h = 0; h < weights[l].shape(1); ++h) {
        panels.push_back(xenc::Tensor2(xt::view(weights[l], 0, h, xt::all(), xt::all())));
        titles.push_back("layer " + std::to_string(l + 1) + ", head " + std::to_string(h + 1));
      }
    std::string text;
    for (const auto& w : sentence->tokens) text += (text.empty() ? "" : " ") + w;
    xenc::viz::HeatmapOptions o;
    o.title = scheme + ": \"" + text + "\" (agent " + sentence->agent + ")";
    o.x_label = "key (attended to)";
    o.y_label = "query";
    o.x_ticks = sentence->tokens;
    o.y_ticks = sentence->tokens;
    o.diverging = false;
    o.vmin = 0.0;
    o.vmax = 1.0;
    o.colorbar_label = "attention weight";
    o.cell_size = 22;  // every word label fits
    parts.push_back(xenc::viz::heatmap_grid_svg(panels, titles, o, 4));
  }
  return stack_svgs(parts);
}

// ---- JSON -----------------------------------------------------------------------------------

json eval_json(const Eval& e) {
  return {{"loss", e.loss}, {"accuracy", e.accuracy}, {"mirror_agreement", e.mirror_agreement},
          {"nouns", e.nouns}};
}

json options_json(const Options& o) {
  return {{"nouns", o.nouns}, {"verbs", o.verbs}, {"sentences_per_pair", o.sentences_per_pair},
          {"heldout_fraction", o.heldout}, {"passive_probability", o.passive},
          {"adjective_probability", o.adjectives}, {"d_model", o.d_model}, {"nhead", o.heads},
          {"dim_feedforward", o.ff}, {"num_layers", o.layers}, {"dropout", o.dropout},
          {"epochs", o.epochs}, {"batch_size", o.batch_size}, {"warmup_steps", o.warmup},
          {"lr", o.lr}, {"weight_decay", o.weight_decay}, {"clip_grad_norm", o.clip},
          {"seed", o.seed}};
}

// ---- modes ----------------------------------------------------------------------------------

std::string ceiling_line(const SchemeResult& r) {
  return "none is capped at 50%: without positions a noun gets the same vector in a sentence and "
         "in its mirror, whose labels are opposite, so exactly one of the two is right (here its "
         "predictions agree across mirrors for " + pct(r.test.mirror_agreement) +
         " of held-out sentences).";
}

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

int run_training(const Options& o) {
  const xenc::WordRolesDataset d = xenc::make_word_roles(task_config(o));
  if (d.train.empty() || d.test.empty())
    throw std::invalid_argument("the task has " + std::to_string(d.train.size()) + " training and " +
                                std::to_string(d.test.size()) + " held-out sentences, expected both > 0");

  std::vector<xenc::PositionKind> kinds;
  if (o.schemes.empty()) kinds = xenc::all_position_kinds();
  else
    for (const auto& s : o.schemes) kinds.push_back(xenc::parse_position_kind(s));

  const bool text = !o.json;
  if (text) {
    std::printf("Task: %zu nouns, %zu verbs, active and passive sentences; %zu training and %zu held-out "
                "sentences (%zu noun pairs never seen together in training), each with its mirror.\n"
                "Labels on nouns only (agent/patient); other tokens are ignored by the loss "
                "(ignore_index %lld).\n",
                d.nouns.size(), d.verbs.size(), d.train.size(), d.test.size(), d.heldout_pairs.size(),
                static_cast<long long>(xenc::kIgnoreIndex));
    std::printf("Model: D=%d, H=%d, F=%d, %d layers, post-norm, relu; AdamW lr %g (warm-up %d steps, "
                "cosine decay), batch %d, %d epochs, seed %u.\n\n",
                o.d_model, o.heads, o.ff, o.layers, o.lr, o.warmup, o.batch_size, o.epochs, o.seed);
    std::fflush(stdout);
  }
  if (!o.save_dir.empty()) std::filesystem::create_directories(o.save_dir);

  Progress progress(text && !o.quiet);
  std::vector<SchemeResult> results;
  std::vector<std::string> written;
  for (auto kind : kinds) {
    xenc::TokenClassifier model(model_config(o, kind, d.vocab.size()), 2);
    results.push_back(train_scheme(o, kind, d, model, progress));
    const auto& r = results.back();
    const bool figures = !o.svg_dir.empty() && (!o.json || o.svg_dir_given);
    if (figures) {
      std::filesystem::create_directories(o.svg_dir);
      // the first held-out active sentence without adjectives ("the cat chased the mouse")
      std::size_t pick = 0;
      for (std::size_t i = 0; i < d.test.size(); ++i)
        if (!d.test[i].passive && d.test[i].tokens.size() == 5) {
          pick = i;
          break;
        }
      const auto& s = d.test[pick];
      const std::string path = o.svg_dir + "/train_order_attention_" + r.name + ".svg";
      xenc::viz::write_text_file(path, attention_svg(model, r.name, s, d.test[s.mirror], d.vocab));
      written.push_back(path);
    }
    if (!o.save_dir.empty()) {
      const std::string path = o.save_dir + "/" + r.name + ".npz";
      json extra = {{"task", "word_roles"}, {"nouns", d.nouns}, {"options", options_json(o)},
                    {"train", eval_json(r.train)}, {"heldout", eval_json(r.test)}};
      xenc::save_checkpoint(path, model, d.vocab, xenc::WordRolesDataset::label_names(), extra);
      written.push_back(path);
    }
  }
  double total_seconds = 0.0;
  for (const auto& r : results) total_seconds += r.seconds;
  if (!o.svg_dir.empty() && (!o.json || o.svg_dir_given)) {
    const std::string path = o.svg_dir + "/train_order_curves.svg";
    xenc::viz::write_text_file(path, curves_svg(results));
    written.insert(written.begin(), path);
  }

  if (o.json) {
    json j = {{"program", "xenc-train-order"}, {"version", XENC_VERSION}, {"options", options_json(o)},
              {"data", {{"train_sentences", d.train.size()}, {"heldout_sentences", d.test.size()},
                        {"nouns", d.nouns}, {"verbs", d.verbs}, {"heldout_pairs", d.heldout_pairs},
                        {"ignore_index", xenc::kIgnoreIndex}, {"labels", xenc::WordRolesDataset::label_names()}}},
              {"total_seconds", total_seconds}, {"files", written}};
    j["schemes"] = json::array();
    for (const auto& r : results)
      j["schemes"].push_back({{"name", r.name}, {"train", eval_json(r.train)}, {"heldout", eval_json(r.test)},
                              {"seconds", r.seconds}, {"steps", r.steps},
                              {"curve", {{"epoch", r.curve.epoch}, {"train_loss", r.curve.train_loss},
                                         {"heldout_loss", r.curve.heldout_loss},
                                         {"heldout_accuracy", r.curve.heldout_accuracy}}}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  if (!o.quiet) std::printf("\n");
  std::printf("%-12s %10s %14s %10s\n", "scheme", "train acc", "held-out acc", "time");
  for (const auto& r : results)
    std::printf("%-12s %10s %14s %8.1f s\n", r.name.c_str(), pct(r.train.accuracy).c_str(),
                pct(r.test.accuracy).c_str(), r.seconds);
  std::printf("(total %.1f s)\n", total_seconds);
  for (const auto& r : results)
    if (r.name == "none") std::printf("\n%s\n", ceiling_line(r).c_str());
  if (!written.empty()) {
    std::printf("\nWrote:");
    for (const auto& w : written) std::printf(" %s", w.c_str());
    std::printf("\n");
  }
  return 0;
}


// --load CKPT --evaluate OUT.npz: the checkpoint's own held-out set (rebuilt from the task
// settings it stores), run through the model; writes ids, padding_mask, labels (int64/bool)
// and logits [N, T, C] for scripts/torch_train_order.py, and prints the accuracy.
int run_evaluate(const Options& o) {
  const xenc::LoadedCheckpoint ck = xenc::load_checkpoint(o.load);
  if (!ck.meta.extra.contains("options") || ck.meta.extra.value("task", "") != "word_roles")
    throw std::invalid_argument("--load " + o.load + ": no task settings in the checkpoint "
                                "(--evaluate needs a checkpoint written by xenc-train-order --save)");
  const json& t = ck.meta.extra.at("options");
  Options task = o;
  task.nouns = t.at("nouns");
  task.verbs = t.at("verbs");
  task.sentences_per_pair = t.at("sentences_per_pair");
  task.heldout = t.at("heldout_fraction");
  task.passive = t.at("passive_probability");
  task.adjectives = t.at("adjective_probability");
  task.seed = t.at("seed");
  const xenc::WordRolesDataset d = xenc::make_word_roles(task_config(task));
  const auto test = xenc::as_labelled(d.test);
  std::vector<std::size_t> all(test.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const xenc::LabelledBatch b = xenc::make_batch(test, all, ck.vocab);
  xenc::Tensor3 logits;
  {
    xenc::NoGradGuard no_grad;
    logits = ck.model->forward(b.ids, b.padding_mask);
  }
  const Eval e = evaluate(*ck.model, d.test, test, ck.vocab, 256);
  xenc::save_npz_members(o.evaluate, {{"ids", xenc::format_npy_int64(b.ids)},
                                      {"padding_mask", xenc::format_npy_bool(b.padding_mask)},
                                      {"labels", xenc::format_npy_int64(b.labels)},
                                      {"logits", xenc::format_npy(logits)}});
  std::printf("%s: held-out accuracy %s on %zu nouns of %zu sentences; wrote %s\n", o.load.c_str(),
              pct(e.accuracy).c_str(), e.nouns, d.test.size(), o.evaluate.c_str());
  return 0;
}

int run_inference(const Options& o) {
  const std::vector<std::string> words = xenc::tokenize(o.sentence);
  if (words.empty())
    throw std::invalid_argument("--sentence is empty, expected at least one word");
  const xenc::LoadedCheckpoint ck = xenc::load_checkpoint(o.load);
  const auto& c = ck.meta.config;
  if (ck.meta.labels.size() != 2)
    throw std::invalid_argument("--load " + o.load + ": the checkpoint has " +
                                std::to_string(ck.meta.labels.size()) +
                                " labels, expected 2 (agent, patient: a xenc-train-order model)");
  if (c.position == xenc::PositionKind::learned && words.size() > c.max_len)
    throw std::invalid_argument("--sentence has " + std::to_string(words.size()) +
                                " words, expected at most " + std::to_string(c.max_len) +
                                " (the checkpoint's learned positions)");
  std::vector<std::string> nouns;
  if (ck.meta.extra.contains("nouns")) nouns = ck.meta.extra.at("nouns").get<std::vector<std::string>>();

  xenc::Index2 ids = xenc::Index2::from_shape({1, words.size()});
  std::vector<std::string> unknown;
  for (std::size_t t = 0; t < words.size(); ++t) {
    ids(0, t) = ck.vocab.id(words[t]);
    if (ids(0, t) == xenc::Vocabulary::unk_id) unknown.push_back(words[t]);
  }
  xenc::Tensor3 probs;
  {
    xenc::NoGradGuard no_grad;
    probs = xenc::softmax_forward(ck.model->forward(ids));  // [1, T, 2]
  }
  auto is_noun = [&](const std::string& w) {
    return std::find(nouns.begin(), nouns.end(), w) != nouns.end();
  };
  if (o.json) {
    json j = {{"program", "xenc-train-order"}, {"version", XENC_VERSION}, {"checkpoint", o.load},
              {"position", xenc::to_string(c.position)}, {"labels", ck.meta.labels},
              {"unknown_words", unknown}};
    j["tokens"] = json::array();
    for (std::size_t t = 0; t < words.size(); ++t) {
      const bool unk = ids(0, t) == xenc::Vocabulary::unk_id;
      j["tokens"].push_back({{"word", words[t]}, {"token", unk ? "<unk>" : words[t]},
                             {"role", ck.meta.labels[probs(0, t, 1) > probs(0, t, 0) ? 1 : 0]},
                             {"probabilities", {probs(0, t, 0), probs(0, t, 1)}},
                             {"trained_noun", is_noun(words[t])}});
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("Checkpoint %s: position %s, D=%zu, %zu layers; labels %s, %s.\n", o.load.c_str(),
              xenc::to_string(c.position).c_str(), c.layer.d_model, c.num_layers,
              ck.meta.labels[0].c_str(), ck.meta.labels[1].c_str());
  for (const auto& w : unknown)
    std::printf("note: \"%s\" is not in the vocabulary: read as <unk>\n", w.c_str());
  std::printf("\n%-12s %-8s %8s %10s\n", "token", "role", ("P(" + ck.meta.labels[0] + ")").c_str(),
              ("P(" + ck.meta.labels[1] + ")").c_str());
  bool marked = false;
  for (std::size_t t = 0; t < words.size(); ++t) {
    const bool unk = ids(0, t) == xenc::Vocabulary::unk_id;
    const bool noun = is_noun(words[t]);
    marked = marked || !noun;
    const std::string shown = (unk ? "<unk>" : words[t]) + (noun ? "" : " *");
    // the token column in display columns (printf's %-12s counts bytes: "CAFÉ" and "猫" misalign)
    std::printf("%s %-8s %8.3f %10.3f\n", xenc::pad_right(shown, 12).c_str(),
                ck.meta.labels[probs(0, t, 1) > probs(0, t, 0) ? 1 : 0].c_str(), probs(0, t, 0),
                probs(0, t, 1));
  }
  if (marked)
    std::printf("\n* not one of the task's nouns: the model was trained on the roles of nouns only, "
                "so its output for these words carries no meaning.\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xenc-train-order: train an encoder to tell agent from patient, once per position "
               "scheme (the model without positions cannot beat 50%)"};
  Options o;
  app.set_version_flag("--version", std::string("xenc-train-order ") + XENC_VERSION);
  app.add_option("--nouns", o.nouns, "nouns in the task (3..24)")->check(CLI::Range(3, 24))->capture_default_str();
  app.add_option("--verbs", o.verbs, "verbs in the task (1..12)")->check(CLI::Range(1, 12))->capture_default_str();
  app.add_option("--sentences-per-pair", o.sentences_per_pair,
                 "sentences per (agent, patient) pair, each with its mirror")
      ->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--heldout", o.heldout, "share of noun pairs held out for the test set")
      ->check(CLI::Range(0.01, 0.9))->capture_default_str();
  app.add_option("--passive", o.passive, "probability of a passive sentence")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--adjectives", o.adjectives, "probability of an adjective before a noun")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--d-model", o.d_model, "D, the vector size")->check(CLI::Range(2, 512))->capture_default_str();
  app.add_option("--heads", o.heads, "H, attention heads (must divide D)")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--ff", o.ff, "F, feed-forward width")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--layers", o.layers, "N, encoder layers")->check(CLI::Range(1, 12))->capture_default_str();
  app.add_option("--dropout", o.dropout, "dropout while training")->check(CLI::Range(0.0, 0.9))->capture_default_str();
  app.add_option("--epochs", o.epochs, "passes over the training set")->check(CLI::Range(1, 1000))->capture_default_str();
  app.add_option("--batch-size", o.batch_size, "sentences per step")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--warmup", o.warmup, "learning-rate warm-up steps")->check(CLI::Range(0, 100000))->capture_default_str();
  app.add_option("--lr", o.lr, "peak learning rate (AdamW)")->check(CLI::Range(1e-6, 1.0))->capture_default_str();
  app.add_option("--weight-decay", o.weight_decay, "AdamW's decoupled weight decay")->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--clip", o.clip, "clip the gradient norm to this")->check(CLI::Range(1e-6, 1e6))->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the data, the weights and the batches")->capture_default_str();
  app.add_option("--schemes", o.schemes, "position schemes to train (default: every registered one)")
      ->delimiter(',');
  app.add_flag("--quiet", o.quiet, "no progress display");
  app.add_flag("--json", o.json, "print everything as JSON (curves included) instead of text");
  auto* svg = app.add_option("--svg-dir", o.svg_dir,
                             "directory for the SVG figures (\"\" = none; with --json only when given)")
                  ->capture_default_str();
  app.add_option("--save", o.save_dir, "write each trained model as DIR/<scheme>.npz");
  app.add_option("--load", o.load, "a checkpoint written by --save (use with --sentence)");
  app.add_option("--evaluate", o.evaluate,
                 "with --load: write the checkpoint's held-out set and its logits to this .npz");
  auto* sentence = app.add_option("--sentence", o.sentence, "a sentence whose roles the loaded model predicts");
  CLI11_PARSE(app, argc, argv);
  o.svg_dir_given = svg->count() > 0;
  o.sentence_given = sentence->count() > 0;

  try {
    if (o.sentence_given && o.load.empty())
      throw std::invalid_argument("--sentence needs --load CKPT (a checkpoint written by --save)");
    if (!o.load.empty()) {
      if (!o.evaluate.empty()) return run_evaluate(o);
      if (!o.sentence_given) throw std::invalid_argument("--load needs --sentence \"...\" (or --evaluate OUT.npz)");
      return run_inference(o);
    }
    if (o.d_model % o.heads != 0)
      throw std::invalid_argument("--d-model (" + std::to_string(o.d_model) + ") must be divisible by --heads (" +
                                  std::to_string(o.heads) + ")");
    return run_training(o);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "xenc-train-order: error: %s\n", e.what());
    return 1;
  }
}

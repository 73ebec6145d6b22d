// xenc-train-order's checkpoint modes: --load CKPT --evaluate OUT.npz and --load CKPT --sentence.
#include "checkpoint_modes.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <xtensor/xview.hpp>

#include <xenc/config.hpp>
#include <xenc/core/grad_mode.hpp>
#include <xenc/data/batching.hpp>
#include <xenc/io/checkpoint.hpp>
#include <xenc/io/npy.hpp>
#include <xenc/io/npz.hpp>
#include <xenc/nn/cost.hpp>
#include <xenc/ops/softmax.hpp>
#include <xenc/text/display_width.hpp>
#include <xenc/text/tokenizer.hpp>

#include "../common/cli.hpp"
#include "../common/progress.hpp"
#include "../common/training.hpp"
#include "experiment.hpp"

namespace train_order {

using json = nlohmann::json;
using xenc_app::pct;

namespace {

// Whether two paths name one file (the same path, or two names of one existing file).
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (std::filesystem::equivalent(a, b, ec)) return true;
  return std::filesystem::weakly_canonical(a, ec) == std::filesystem::weakly_canonical(b, ec) &&
         !ec;
}

}  // namespace

// --load CKPT --evaluate OUT.npz: the checkpoint's own held-out set (rebuilt from the task
// settings it stores), run through the model; writes ids, padding_mask, labels (int64/bool)
// and logits [N, T, C] for scripts/torch_train_order.py, and prints the accuracy.
int run_evaluate(const std::string& load, const std::string& evaluate_path) {
  if (same_file(load, evaluate_path))
    throw std::invalid_argument("--evaluate " + evaluate_path +
                                " names the checkpoint given to --load: it would be overwritten; "
                                "give another path for the held-out logits");
  const xenc::LoadedCheckpoint ck = xenc::load_checkpoint(load);
  if (!ck.meta.extra.contains("options") || ck.meta.extra.value("task", "") != "word_roles")
    throw std::invalid_argument(
        "--load " + load +
        ": no task settings in the checkpoint "
        "(--evaluate needs a checkpoint written by xenc-train-order --save)");
  const json& t = ck.meta.extra.at("options");
  Options task;
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
  xenc_app::require_finite_logits(logits, "--evaluate: " + load);  // never an accuracy of NaN
  const Eval e = evaluate(*ck.model, d.test, test, ck.vocab, 256);
  xenc::save_npz_members(evaluate_path, {{"ids", xenc::format_npy_int64(b.ids)},
                                         {"padding_mask", xenc::format_npy_bool(b.padding_mask)},
                                         {"labels", xenc::format_npy_int64(b.labels)},
                                         {"logits", xenc::format_npy(logits)}});
  std::printf("%s: held-out accuracy %s on %zu nouns of %zu sentences; wrote %s\n", load.c_str(),
              pct(e.accuracy).c_str(), e.nouns, d.test.size(), evaluate_path.c_str());
  return 0;
}

int run_inference(const std::string& load, const std::string& sentence, bool as_json,
                  std::size_t max_memory_mb, double max_minutes) {
  const std::vector<std::string> words = xenc::tokenize(sentence);
  if (words.empty()) throw std::invalid_argument("--sentence is empty, expected at least one word");
  xenc_app::Guard guard;
  guard.max_memory_mb = max_memory_mb;
  guard.max_minutes = max_minutes;
  const char* const time_advice = "a shorter --sentence, or a higher --max-minutes";
  double flops = 0;
  std::string sizes;
  {
    // the sentence's cost decided from the checkpoint's metadata, before its weights are loaded:
    // the weights twice (the state_dict and the model) and one forward pass on [1, T] (in tiles
    // from T = 512: memory grows as T, time as T²)
    const xenc::CheckpointMeta meta = xenc::read_checkpoint_meta(load);
    const std::size_t T = words.size(), C = meta.labels.size();
    const xenc::PassCost cost =
        xenc::estimate_pass_cost(meta.config, 1, T, xenc::Pass::inference, C);
    sizes = "T = " + std::to_string(T) +
            " tokens through D = " + std::to_string(meta.config.layer.d_model) +
            ", F = " + std::to_string(meta.config.layer.dim_feedforward) + ", " +
            std::to_string(meta.config.num_layers) + " layers, " +
            std::to_string(meta.config.layer.nhead) + " heads: attention takes T² time per head";
    flops = cost.flops;
    guard.memory(cost.peak_bytes + 4 * xenc::parameter_count(meta.config, C), "this sentence",
                 sizes, "a shorter --sentence, or a higher --max-memory-mb");
    guard.time(flops, "this sentence", sizes, time_advice);
  }
  const xenc::LoadedCheckpoint ck = xenc::load_checkpoint(load);
  const auto& c = ck.meta.config;
  if (ck.meta.labels.size() != 2)
    throw std::invalid_argument("--load " + load + ": the checkpoint has " +
                                std::to_string(ck.meta.labels.size()) +
                                " labels, expected 2 (agent, patient: a xenc-train-order model)");
  if (c.position == xenc::PositionKind::learned && words.size() > c.max_len)
    throw std::invalid_argument("--sentence has " + std::to_string(words.size()) +
                                " words, expected at most " + std::to_string(c.max_len) +
                                " (the checkpoint's learned positions)");
  std::vector<std::string> nouns;
  if (ck.meta.extra.contains("nouns"))
    nouns = ck.meta.extra.at("nouns").get<std::vector<std::string>>();

  xenc::Index2 ids = xenc::Index2::from_shape({1, words.size()});
  std::vector<std::string> unknown;
  for (std::size_t t = 0; t < words.size(); ++t) {
    ids(0, t) = ck.vocab.id(words[t]);
    if (ids(0, t) == xenc::Vocabulary::unk_id) unknown.push_back(words[t]);
  }
  xenc::Tensor3 probs;
  {
    xenc::NoGradGuard no_grad;
    if (guard.worth_measuring(flops, words.size())) {
      // timed on its first positions first (Guard::time_measured): refused in a second when the
      // whole sentence would take far longer than the estimate at a fast machine's rate
      const std::size_t T0 = xenc_app::Guard::kSamplePositions;
      const xenc::Index2 ids0 = xt::view(ids, xt::all(), xt::range(0, T0));
      guard.time_measured(
          flops,
          xenc::estimate_pass_cost(c, 1, T0, xenc::Pass::inference, ck.meta.labels.size()).flops,
          [&] { ck.model->forward(ids0); }, "this sentence", sizes, time_advice);
    }
    const xenc::Tensor3 logits = ck.model->forward(ids);  // [1, T, 2]
    xenc_app::require_finite_logits(logits, "--load " + load);
    probs = xenc::softmax_forward(logits);
  }
  auto is_noun = [&](const std::string& w) {
    return std::find(nouns.begin(), nouns.end(), w) != nouns.end();
  };
  if (as_json) {
    json j = {{"program", "xenc-train-order"},
              {"version", XENC_VERSION},
              {"checkpoint", load},
              {"position", xenc::to_string(c.position)},
              {"labels", ck.meta.labels},
              {"unknown_words", unknown}};
    j["tokens"] = json::array();
    for (std::size_t t = 0; t < words.size(); ++t) {
      const bool unk = ids(0, t) == xenc::Vocabulary::unk_id;
      j["tokens"].push_back({{"word", words[t]},
                             {"token", unk ? "<unk>" : words[t]},
                             {"role", ck.meta.labels[probs(0, t, 1) > probs(0, t, 0) ? 1 : 0]},
                             {"probabilities", {probs(0, t, 0), probs(0, t, 1)}},
                             {"trained_noun", is_noun(words[t])}});
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("Checkpoint %s: position %s, D=%zu, %zu layers; labels %s, %s.\n", load.c_str(),
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
    std::printf(
        "\n* not one of the task's nouns: the model was trained on the roles of nouns only, "
        "so its output for these words carries no meaning.\n");
  return 0;
}

}  // namespace train_order

// xenc-train-order's report (see report.hpp): each function a pure function of a Result.
#include "report.hpp"

#include "options.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include <xenc/config.hpp>
#include <xenc/data/batching.hpp>
#include <xenc/viz/svg.hpp>

#include "../common/format.hpp"

namespace train_order {

using json = nlohmann::json;
using xenc_app::fmt;
using xenc_app::format;
using xenc_app::pct;

namespace {

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
      if (p == std::string::npos || p > s.find('>'))
        throw std::runtime_error("stack_svgs: no " + attr);
      return std::stod(s.substr(p + attr.size() + 2));
    };
    const double w = number("width"), h = number("height");
    s.replace(0, 4, "<svg x=\"0\" y=\"" + fmt("%.0f", y) + "\"");
    body += s + "\n";
    y += h;
    width = std::max(width, w);
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
         "width=\"" +
         fmt("%.0f", width) + "\" height=\"" + fmt("%.0f", y) + "\" viewBox=\"0 0 " +
         fmt("%.0f", width) + " " + fmt("%.0f", y) +
         "\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" + body + "</svg>\n";
}

}  // namespace

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

std::string attention_svg(const SchemeResult& r) {
  std::vector<std::string> parts;
  for (const AttentionMaps* a : {&r.sentence, &r.mirror}) {
    std::string text;
    for (const auto& w : a->tokens) text += (text.empty() ? "" : " ") + w;
    xenc::viz::HeatmapOptions o;
    o.title = r.name + ": \"" + text + "\" (agent " + a->agent + ")";
    o.x_label = "key (attended to)";
    o.y_label = "query";
    o.x_ticks = a->tokens;
    o.y_ticks = a->tokens;
    o.diverging = false;
    o.vmin = 0.0;
    o.vmax = 1.0;
    o.colorbar_label = "attention weight";
    o.cell_size = 22;  // every word label fits
    parts.push_back(xenc::viz::heatmap_grid_svg(a->panels, a->titles, o, 4));
  }
  return stack_svgs(parts);
}

json eval_json(const Eval& e) {
  return {{"loss", e.loss},
          {"accuracy", e.accuracy},
          {"mirror_agreement", e.mirror_agreement},
          {"nouns", e.nouns}};
}

json options_json(const Options& o) {
  // the records' echo (options.hpp): every option with a JSON key, under that key
  CommandLine c;
  static_cast<Options&>(c) = o;
  json j = xenc_app::echo_options(c, option_records());
  return j;
}

std::string ceiling_line(const SchemeResult& r) {
  return "none is capped at 50%: without positions a noun gets the same vector in a sentence and "
         "in its mirror, whose labels (agent or patient) are opposite, so exactly one of the two "
         "is right (here its predictions agree across mirrors for " +
         pct(r.test.mirror_agreement) + " of held-out sentences).";
}

json checkpoint_extra(const Result& res, const SchemeResult& r) {
  return {{"task", "word_roles"},
          {"nouns", res.data.nouns},
          {"options", options_json(res.options)},
          {"train", eval_json(r.train)},
          {"heldout", eval_json(r.test)}};
}

std::string header_text(const Result& res) {
  const Options& o = res.options;
  const xenc::WordRolesDataset& d = res.data;
  return format(
             "Task: %zu nouns, %zu verbs, active and passive sentences; %zu training and %zu "
             "held-out "
             "sentences (%zu noun pairs never seen together in training), each with its mirror.\n"
             "Labels on nouns only (agent/patient); other tokens are ignored by the loss "
             "(ignore_index %lld).\n",
             d.nouns.size(), d.verbs.size(), d.train.size(), d.test.size(), d.heldout_pairs.size(),
             static_cast<long long>(xenc::kIgnoreIndex)) +
         format(
             "Model: D=%d, H=%d, F=%d, %d layers, post-norm, relu; AdamW lr %g (warm-up %d steps, "
             "cosine decay), batch %d, %d epochs, seed %u.\n\n",
             o.d_model, o.heads, o.ff, o.layers, o.lr, o.warmup, o.batch_size, o.epochs, o.seed);
}

namespace {

double total_seconds(const Result& res) {
  double total = 0.0;
  for (const auto& r : res.schemes) total += r.seconds;
  return total;
}

}  // namespace

std::string table_text(const Result& res) {
  std::string out = format("%-12s %10s %14s %10s\n", "scheme", "train acc", "held-out acc", "time");
  for (const auto& r : res.schemes)
    out += format("%-12s %10s %14s %8.1f s\n", r.name.c_str(), pct(r.train.accuracy).c_str(),
                  pct(r.test.accuracy).c_str(), r.seconds);
  out += format("(total %.1f s)\n", total_seconds(res));
  for (const auto& r : res.schemes)
    if (r.name == "none") out += "\n" + ceiling_line(r) + "\n";
  return out;
}

std::string to_json(const Result& res, const std::vector<std::string>& written) {
  const xenc::WordRolesDataset& d = res.data;
  json j = {{"program", "xenc-train-order"},
            {"version", XENC_VERSION},
            {"options", options_json(res.options)},
            {"data",
             {{"train_sentences", d.train.size()},
              {"heldout_sentences", d.test.size()},
              {"nouns", d.nouns},
              {"verbs", d.verbs},
              {"heldout_pairs", d.heldout_pairs},
              {"ignore_index", xenc::kIgnoreIndex},
              {"labels", xenc::WordRolesDataset::label_names()}}},
            {"total_seconds", total_seconds(res)},
            {"files", written}};
  j["schemes"] = json::array();
  for (const auto& r : res.schemes)
    j["schemes"].push_back({{"name", r.name},
                            {"train", eval_json(r.train)},
                            {"heldout", eval_json(r.test)},
                            {"seconds", r.seconds},
                            {"steps", r.steps},
                            {"curve",
                             {{"epoch", r.curve.epoch},
                              {"train_loss", r.curve.train_loss},
                              {"heldout_loss", r.curve.heldout_loss},
                              {"heldout_accuracy", r.curve.heldout_accuracy}}}});
  return j.dump(2);
}

}  // namespace train_order

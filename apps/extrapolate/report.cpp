// xenc-extrapolate's report (see report.hpp): the header, the table, the conclusions, the JSON
// and the figure, each a pure function of a Result.
#include "report.hpp"

#include "options.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <xenc/config.hpp>
#include <xenc/data/batching.hpp>
#include <xenc/viz/svg.hpp>

#include "../common/format.hpp"

namespace extrapolate {

using json = nlohmann::json;
using xenc_app::fmt;
using xenc_app::format;
using xenc_app::pct;

namespace {

const LengthResult& at(const SchemeResult& r, std::size_t length) {
  for (const auto& l : r.lengths)
    if (l.length == length) return l;
  throw std::logic_error("no result at length " + std::to_string(length));
}

// "a", "a and b", "a, b and c"
std::string and_list(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i)
    s += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + v[i];
  return s;
}

std::string lengths_list(const std::vector<std::size_t>& v) {
  std::vector<std::string> names;
  for (auto n : v) names.push_back(std::to_string(n));
  return and_list(names);
}

std::string points(double v) { return fmt("%.1f", 100.0 * v); }

}  // namespace

namespace {

// "Clearly above chance": more than this many points (as a fraction) above 1/V at a length.
// The larger of --tolerance and three standard errors of a guesser, sqrt(c (1 - c) / n), on the
// fewest positions any length was tested on (n); `n` and `length` return where that was.
double chance_margin(const Result& res, std::size_t& n, std::size_t& length) {
  n = 0;
  length = 0;
  for (const auto& r : res.schemes)
    for (const auto& l : r.lengths)
      if (l.available && l.positions > 0 && (n == 0 || l.positions < n))
        n = l.positions, length = l.length;
  const double c = res.chance, tol = res.options.tolerance / 100.0;
  return n == 0 ? tol : std::max(tol, 3.0 * std::sqrt(c * (1.0 - c) / double(n)));
}

}  // namespace

namespace conclusion_rules {

Context context(const Result& res) {
  const Options& o = res.options;
  Context c;
  c.chance = res.chance;
  c.tol = o.tolerance / 100.0;
  c.L = std::size_t(o.train_length);
  c.longest = res.schemes.front().lengths.back().length;
  c.tol_txt = fmt("%g", o.tolerance) + " points";
  c.longest_txt = "length " + std::to_string(c.longest) + " (" +
                  fmt("%g", double(c.longest) / double(c.L)) + " x L_train)";
  c.margin = chance_margin(res, c.fewest, c.fewest_at);
  c.margin_txt = points(c.margin) + " points";
  c.halfway = c.chance + (1.0 - c.chance) / 2.0;
  c.copy_left = o.rule == "copy_left";
  c.task = o.rule;
  return c;
}

std::string margin(const Context& c) {
  std::string m = "Clearly above chance means more than " + c.margin_txt +
                  " above 1/V = " + pct(c.chance) + ": the larger of --tolerance (" + c.tol_txt +
                  ")";
  if (c.fewest > 0)
    m += " and three standard errors of guessing on the " + std::to_string(c.fewest) +
         " positions tested at length " + std::to_string(c.fewest_at) + " (" +
         points(3.0 * std::sqrt(c.chance * (1.0 - c.chance) / double(c.fewest))) + " points)";
  return m + ".";
}

std::optional<Verdict> unreadable(const SchemeResult& r, const Context& c) {
  std::vector<std::size_t> missing;
  for (const auto& l : r.lengths)
    if (!l.available) missing.push_back(l.length);
  if (missing.empty()) return std::nullopt;
  const double a0 = at(r, c.L).accuracy;
  Verdict v;
  v.learned = a0 > c.chance + c.margin;
  v.sentence = r.name + " on " + c.task + ": " + pct(a0) + " at length " + std::to_string(c.L) +
               "; no embedding beyond its table (max_len = " + std::to_string(r.max_len) +
               "), so it cannot read length" + (missing.size() > 1 ? "s " : " ") +
               lengths_list(missing) +
               (missing.size() > 1 ? " (the library refuses them with a shape_error)."
                                   : " (the library refuses it with a shape_error).");
  return v;
}

std::optional<Verdict> at_chance(const SchemeResult& r, const Context& c) {
  double lo = 1.0, hi = 0.0;
  for (const auto& l : r.lengths) {
    lo = std::min(lo, l.accuracy);
    hi = std::max(hi, l.accuracy);
  }
  if (!(lo >= c.chance - c.margin && hi <= c.chance + c.margin)) return std::nullopt;
  Verdict v;
  v.sentence = r.name + " is at chance at every length of " + c.task + ": from " + pct(lo) +
               " to " + pct(hi) + ", within " + c.margin_txt + " of 1/V = " + pct(c.chance) + ".";
  return v;
}

std::optional<Verdict> not_learned(const SchemeResult& r, const Context& c) {
  const double a0 = at(r, c.L).accuracy;
  if (a0 > c.chance + c.margin) return std::nullopt;
  Verdict v;
  v.sentence = r.name + " did not learn " + c.task + ": " + pct(a0) + " at length " +
               std::to_string(c.L) + ", within " + c.margin_txt + " of chance (" + pct(c.chance) +
               ").";
  return v;
}

// "83.0% at length 16, 41.0% at length 128 (8 x L_train)"
std::string both(const SchemeResult& r, const Context& c) {
  return pct(at(r, c.L).accuracy) + " at length " + std::to_string(c.L) + ", " +
         pct(r.lengths.back().accuracy) + " at " + c.longest_txt;
}

std::optional<Verdict> symmetry_cap(const SchemeResult& r, const Context& c) {
  if (!c.copy_left || r.name != "alibi") return std::nullopt;
  // the encoder's ALiBi is symmetric: the apps' README calls this its symmetry cap
  Verdict v;
  v.capped = true;
  v.sentence = r.name + " is held at its symmetry cap, not by length: " + both(r, c) +
               ". Its encoder bias -slope * |i - j| is the same k places to the left and k "
               "places to the right, so it cannot tell left from right, and copy_left (the "
               "symbol k places to the left) is beyond it at every length: these numbers say "
               "nothing about extrapolation.";
  return v;
}

Verdict learned(const SchemeResult& r, const Context& c) {
  const double a0 = at(r, c.L).accuracy;
  const LengthResult& last = r.lengths.back();
  Verdict v;
  v.learned = v.compared = true;
  std::string prefix = r.name;
  if (r.max_len > c.L)
    prefix += " (rows " + std::to_string(c.L) + " to " + std::to_string(r.max_len - 1) +
              " of its position table were never trained: they keep their random initial values)";
  const bool last_above = last.accuracy > c.chance + c.margin;
  const std::string near_chance =
      last_above ? "" : ", not clearly above chance at length " + std::to_string(c.longest);
  const double drop = a0 - last.accuracy;
  if (a0 < c.halfway) {
    v.sentence = prefix + " learned " + c.task + " only partly: " + pct(a0) + " at length " +
                 std::to_string(c.L) + ", below " + pct(c.halfway) +
                 " (halfway from chance to 100%), so its " + pct(last.accuracy) + " at " +
                 c.longest_txt + near_chance + " says little about extrapolation.";
  } else if (drop <= c.tol && last_above) {
    v.kept = true;
    v.sentence = prefix + " keeps its accuracy on " + c.task + ": " + both(r, c) + ", within " +
                 c.tol_txt + ".";
  } else if (drop <= c.tol) {
    v.sentence =
        prefix + " stays just above chance on " + c.task + ": " + both(r, c) + near_chance + ".";
  } else {
    std::size_t first = 0;
    for (const auto& l : r.lengths)
      if (l.length > c.L && a0 - l.accuracy > c.tol) {
        first = l.length;
        break;
      }
    v.sentence = prefix + " degrades on " + c.task + ": " + both(r, c) + " (" + points(drop) +
                 " points lower)" + near_chance + "; first more than " + c.tol_txt +
                 " below at length " + std::to_string(first) + ".";
  }
  return v;
}

Verdict scheme(const SchemeResult& r, const Context& c) {
  for (auto rule : {unreadable, at_chance, not_learned, symmetry_cap})
    if (auto v = rule(r, c)) return *v;
  return learned(r, c);
}

std::vector<std::string> summary(const std::vector<SchemeResult>& results,
                                 const std::vector<Verdict>& verdicts, const Context& c) {
  std::vector<std::string> kept, out;
  std::size_t learned_task = 0;
  bool capped = false;
  std::string best;
  double best_acc = -1.0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Verdict& v = verdicts[i];
    learned_task += v.learned;
    capped = capped || v.capped;
    if (v.kept) kept.push_back(results[i].name);
    if (v.compared && results[i].lengths.back().accuracy > best_acc) {
      best_acc = results[i].lengths.back().accuracy;
      best = results[i].name;
    }
  }
  if (learned_task == 0)
    return {"No scheme learned " + c.task + " well enough to compare: at length " +
            std::to_string(c.L) + " none is clearly above chance (" + pct(c.chance) + ")" +
            (capped ? ", apart from one held at its symmetry cap" : "") +
            "; train longer (--epochs, --train-sequences)."};
  if (kept.empty())
    out.push_back("No scheme that learned " + c.task + " stays within " + c.tol_txt +
                  " of its length-" + std::to_string(c.L) + " accuracy at " + c.longest_txt + ".");
  else
    out.push_back("Within " + c.tol_txt + " of their length-" + std::to_string(c.L) +
                  " accuracy at " + c.longest_txt + " on " + c.task + ": " + and_list(kept) + ".");
  if (!best.empty() && best_acc > c.chance + c.margin)
    out.push_back("Best at length " + std::to_string(c.longest) + " on " + c.task + ": " + best +
                  " (" + pct(best_acc) + ").");
  else if (!best.empty())
    out.push_back("At length " + std::to_string(c.longest) +
                  " no scheme is clearly above chance on " + c.task + ": the highest is " + best +
                  " (" + pct(best_acc) + ").");
  return out;
}

std::string scope(const Context& c) {
  return "These verdicts hold for " + c.task +
         " only: which positions generalize depends on the task (another task: --rule " +
         (c.copy_left ? "neighbour_sum" : "copy_left") +
         "; notebook 07 trains copy_left, where the encoder's ALiBi stays near one half).";
}

}  // namespace conclusion_rules

std::vector<std::string> conclusions(const Result& res) {
  using namespace conclusion_rules;
  const Context c = context(res);
  std::vector<std::string> out{margin(c)};
  std::vector<Verdict> verdicts;
  for (const auto& r : res.schemes) {
    verdicts.push_back(scheme(r, c));
    out.push_back(verdicts.back().sentence);
  }
  for (auto& s : summary(res.schemes, verdicts, c)) out.push_back(s);
  out.push_back(scope(c));
  return out;
}

// ---- figure ---------------------------------------------------------------------------------

// Accuracy against test length: x is the index of the length (equal steps for doubling
// lengths), one line per scheme (no point where a model cannot read the length), and two
// reference lines without markers: vertical at L_train, horizontal at chance.
std::string accuracy_svg(const Result& res) {
  const Options& o = res.options;
  const std::vector<SchemeResult>& results = res.schemes;
  const double chance = res.chance;
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
  po.title = "Train short, test long: " + o.rule + " (k = " + std::to_string(o.offset) +
             ", V = " + std::to_string(o.symbols) + "), trained on lengths " +
             std::to_string(min_train_length(o)) + " to " + std::to_string(o.train_length);
  po.x_label = "test sequence length (tokens)";
  po.y_label = "accuracy";
  po.y_min = 0.0;
  po.y_max = 1.0;
  po.x_tick_labels = ticks;
  po.markers = true;
  po.height = 420;
  // marks, not data: dashed lines across the plot without markers
  po.reference_lines = {
      {"chance (1/V = " + pct(chance) + ")", chance, false},
      {"L_train = " + std::to_string(o.train_length) + " (longest training length)", marker, true}};
  return xenc::viz::line_plot_svg(series, po);
}

namespace {

json nullable(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json options_json(const Options& o) {
  // the records' echo (options.hpp): every option with a JSON key, under that key
  CommandLine c;
  static_cast<Options&>(c) = o;
  json j = xenc_app::echo_options(c, option_records());
  j["min_train_length"] = min_train_length(o);  // 0 on the command line: the rows it resolves to
  j["learned_max_len"] = learned_max_len(o);
  return j;
}

json scheme_json(const SchemeResult& r) {
  json lengths = json::array();
  for (const auto& l : r.lengths)
    lengths.push_back({{"length", l.length},
                       {"available", l.available},
                       {"accuracy", nullable(l.accuracy)},
                       {"loss", nullable(l.loss)},
                       {"positions", l.positions},
                       {"error", l.error}});
  json curve_loss = json::array();
  for (double v : r.curve_train_loss) curve_loss.push_back(nullable(v));
  json j = {{"name", r.name},
            {"train_accuracy", r.train_accuracy},
            {"seconds", r.seconds},
            {"steps", r.steps},
            {"test", lengths},
            {"curve",
             {{"epoch", r.curve_epoch},
              {"train_loss", curve_loss},
              {"accuracy_at_train_length", r.curve_accuracy}}}};
  if (r.max_len > 0) j["max_len"] = r.max_len;
  return j;
}

}  // namespace

std::string header_text(const Result& res) {
  const Options& o = res.options;
  return format(
             "Task %s: random sequences of V = %d symbols; at each position p the label is %s, "
             "with k = %d (%s).\n"
             "Training: %d sequences of lengths %zu to %d (L_train = %d). Test: %d sequences at "
             "each "
             "length %s. Chance: 1/V = %s.\n",
             o.rule.c_str(), o.symbols,
             o.rule == "neighbour_sum" ? "(s[p-k] + s[p+k]) mod V"
                                       : "s[p-k], the symbol k places to the left",
             o.offset,
             o.rule == "neighbour_sum" ? "positions without both neighbours are ignored by the loss"
                                       : "the first k positions are ignored by the loss",
             o.train_sequences, min_train_length(o), o.train_length, o.train_length,
             o.test_sequences,
             lengths_list(std::vector<std::size_t>(o.test_lengths.begin(), o.test_lengths.end()))
                 .c_str(),
             pct(res.chance).c_str()) +
         format(
             "Model: D=%d, H=%d, F=%d, %d layer%s, post-norm, relu; AdamW lr %g (warm-up %d steps, "
             "cosine decay), batch %d, %d epochs, seed %u; the same data, batches and initial "
             "weights for every scheme; %d BLAS thread%s.\n\n",
             o.d_model, o.heads, o.ff, o.layers, o.layers == 1 ? "" : "s", o.lr, o.warmup,
             o.batch_size, o.epochs, o.seed, res.blas_threads, res.blas_threads == 1 ? "" : "s");
}

double total_seconds(const Result& res) {
  double total = 0.0;
  for (const auto& r : res.schemes) total += r.seconds;
  return total;
}

std::string table_text(const Result& res) {
  const Options& o = res.options;
  std::string out = format("Accuracy at each test length (trained on lengths %zu to %d):\n\n",
                           min_train_length(o), o.train_length);
  out += format("%-12s %9s", "scheme", "train");
  for (int L : o.test_lengths)
    out +=
        format(" %9s", (L == o.train_length ? "*" + std::to_string(L) : std::to_string(L)).c_str());
  out += format(" %9s\n", "time");
  bool dash = false;
  for (const auto& r : res.schemes) {
    out += format("%-12s %9s", r.name.c_str(), pct(r.train_accuracy).c_str());
    for (const auto& l : r.lengths) {
      out += format(" %9s", l.available ? pct(l.accuracy).c_str() : "-");
      dash = dash || !l.available;
    }
    out += format(" %7.1f s\n", r.seconds);
  }
  out += format("(* = L_train; train = accuracy on the training sequences; total %.1f s)\n",
                total_seconds(res));
  if (dash)
    for (const auto& r : res.schemes)
      for (const auto& l : r.lengths)
        if (!l.available) {
          out += format("- %s has no embedding beyond its table (max_len = %zu): %s\n",
                        r.name.c_str(), r.max_len, l.error.c_str());
          break;
        }
  return out;
}

std::string to_json(const Result& res, const std::vector<std::string>& written) {
  const Options& o = res.options;
  json j = {{"program", "xenc-extrapolate"},
            {"version", XENC_VERSION},
            {"options", options_json(o)},
            {"task",
             {{"rule", o.rule},
              {"symbols", o.symbols},
              {"offset", o.offset},
              {"chance", res.chance},
              {"ignore_index", xenc::kIgnoreIndex},
              {"train_lengths", {min_train_length(o), o.train_length}},
              {"train_labelled_positions", res.train_labelled_positions}}},
            {"test_lengths", o.test_lengths},
            {"total_seconds", total_seconds(res)},
            {"blas_threads", res.blas_threads},
            {"conclusions", conclusions(res)},
            {"files", written}};
  j["schemes"] = json::array();
  for (const auto& r : res.schemes) j["schemes"].push_back(scheme_json(r));
  return j.dump(2);
}

}  // namespace extrapolate

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
#include <xenc/data/position_tasks.hpp>
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

// "1/V = 12.5%" where the answer is a symbol (neighbour_sum, copy_left), "1/C = 20.0%" for the
// tasks of Ruoss et al. (C classes: 5 for cycle_navigation's V = 3 moves, 3 for binary_addition)
std::string chance_text(const std::string& rule, double chance) {
  const bool classes = xenc::position_task_has_outputs(xenc::parse_position_rule(rule));
  return std::string(classes ? "1/C = " : "1/V = ") + pct(chance);
}

}  // namespace

namespace {

// "Clearly above chance": more than this many points (as a fraction) above chance at a length.
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
  c.chance_txt = chance_text(o.rule, c.chance);
  return c;
}

std::string margin(const Context& c) {
  std::string m = "Clearly above chance means more than " + c.margin_txt + " above " +
                  c.chance_txt + ": the larger of --tolerance (" + c.tol_txt + ")";
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
               " to " + pct(hi) + ", within " + c.margin_txt + " of " + c.chance_txt + ".";
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
         "; notebook 07 trains copy_left, where the encoder's ALiBi stays near one half; "
         "notebook 10 compares the schemes on both tasks side by side, with randomized positions).";
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
      {"chance (" + chance_text(o.rule, chance) + ")", chance, false},
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

namespace {

std::string model_text(const Options& o, int blas_threads) {
  return format(
      "Model: D=%d, H=%d, F=%d, %d layer%s, post-norm, relu; AdamW lr %g (warm-up %d steps, "
      "cosine decay), batch %d, %d epochs, seed %u; the same data, batches and initial "
      "weights for every scheme; %d BLAS thread%s.\n\n",
      o.d_model, o.heads, o.ff, o.layers, o.layers == 1 ? "" : "s", o.lr, o.warmup, o.batch_size,
      o.epochs, o.seed, blas_threads, blas_threads == 1 ? "" : "s");
}

// The answer of a task of Ruoss et al. at its <out> placeholders (position_tasks.hpp).
std::string answer_text(const std::string& rule) {
  if (rule == "reverse_string") return "the input reversed (m = n)";
  if (rule == "duplicate_string") return "the input twice (m = 2n)";
  if (rule == "missing_duplicate_string")
    return "the bit hidden by \"?\" in an input w w (\"#\" pads an odd n; m = 1)";
  if (rule == "odds_first") return "the symbols at odd positions, then those at even ones (m = n)";
  if (rule == "parity_check") return "the number of 1s mod 2 (m = 1)";
  if (rule == "bucket_sort") return "the input sorted (m = n)";
  if (rule == "binary_addition")
    return "the little-endian sum of the input a + b, then <end> (m = n + 1, the places after "
           "<end> unscored)";
  if (rule == "even_pairs") return "the number of 01 and 10 pairs mod 2 (m = 1)";
  if (rule == "cycle_navigation")
    return "the final state of left/stay/right moves on a cycle of 5 (m = 1)";
  return "?";
}

}  // namespace

std::string header_text(const Result& res) {
  const Options& o = res.options;
  if (xenc::position_task_has_outputs(xenc::parse_position_rule(o.rule)))
    return format(
               "Task %s (Ruoss et al. 2023): an input of n symbols (V = %d), then m <out> "
               "placeholders; the labels at the placeholders are %s. Score: per-token accuracy "
               "at the placeholders.\n"
               "Training: %d sequences of input lengths %zu to %d (L_train = %d). Test: %d "
               "sequences at each input length %s. Chance: 1/C = %s.\n",
               o.rule.c_str(), o.symbols, answer_text(o.rule).c_str(), o.train_sequences,
               min_train_length(o), o.train_length, o.train_length, o.test_sequences,
               lengths_list(std::vector<std::size_t>(o.test_lengths.begin(), o.test_lengths.end()))
                   .c_str(),
               pct(res.chance).c_str()) +
           model_text(o, res.blas_threads);
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
         model_text(o, res.blas_threads);
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

// ---- the study ------------------------------------------------------------------------------

Spread spread(const std::vector<double>& values) {
  Spread sp;
  double sum = 0;
  std::size_t n = 0;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    sum += v;
    sp.min = n == 0 ? v : std::min(sp.min, v);
    sp.max = n == 0 ? v : std::max(sp.max, v);
    ++n;
  }
  if (n > 0) sp.mean = sum / double(n);
  return sp;
}

std::string cell_name(const StudyCell& c) { return c.scheme + (c.randomized ? "+rand" : ""); }

namespace {

// "97.3 [95.1-99.0]" (percent, mean [min-max] over the seeds); one seed: "97.3"
std::string spread_text(const Spread& sp, std::size_t seeds) {
  if (!std::isfinite(sp.mean)) return "-";
  if (seeds < 2) return points(sp.mean);
  return points(sp.mean) + " [" + points(sp.min) + "-" + points(sp.max) + "]";
}

// "97.3% (95.1% to 99.0%)" for sentences
std::string spread_words(const Spread& sp) {
  return pct(sp.mean) + " (seeds " + pct(sp.min) + " to " + pct(sp.max) + ")";
}

std::vector<double> column(const StudyCell& c, std::size_t i) {
  std::vector<double> v;
  for (const auto& seed : c.accuracy) v.push_back(seed[i]);
  return v;
}

std::size_t train_length_of(const StudyResult& res) {
  return std::size_t(res.options.train_length);
}

std::string beyond_label(const StudyTask& t, std::size_t L) {
  std::vector<std::size_t> beyond;
  for (auto n : t.lengths)
    if (n > L) beyond.push_back(n);
  if (beyond.empty()) return "none";
  return std::to_string(beyond.front()) + "-" + std::to_string(beyond.back());
}

const StudyCell* find_cell(const StudyTask& t, const std::string& scheme, bool randomized) {
  for (const auto& c : t.cells)
    if (c.scheme == scheme && c.randomized == randomized) return &c;
  return nullptr;
}

// What "learned the task" means in the study's conclusions: every seed at least halfway from
// chance to 100% at L_train (as the single-rule verdicts' "learned only partly" line). A cell that
// did not learn the task where it was trained says nothing about extrapolation, and comparing it
// beyond L_train would credit or blame its positions for what its training did not reach.
double halfway(const StudyTask& t) { return t.chance + (1.0 - t.chance) / 2.0; }

}  // namespace

bool learned_at_train_length(const StudyTask& t, const StudyCell& c) {
  const auto at = std::find(t.lengths.begin(), t.lengths.end(), t.train_length);
  if (at == t.lengths.end()) return true;  // L_train not tested: nothing to gate on
  const std::vector<double> v = column(c, std::size_t(at - t.lengths.begin()));
  if (v.empty()) return false;
  for (double a : v)
    if (!(a >= halfway(t))) return false;
  return true;
}

namespace {

// "every seed at least 75.0% at length 8, halfway from chance to 100%"
std::string learned_words(const StudyTask& t) {
  return "learned: every seed at least " + pct(halfway(t)) + " at length " +
         std::to_string(t.train_length) + ", halfway from chance to 100%";
}

}  // namespace

std::string study_header_text(const Options& o, std::size_t models) {
  std::string tasks;
  for (const auto& t : o.study_tasks) tasks += (tasks.empty() ? "" : ", ") + t;
  std::string schemes = o.schemes.empty() ? "every scheme (relative too)" : "";
  for (const auto& s : o.schemes) schemes += (schemes.empty() ? "" : ", ") + s;
  std::vector<std::size_t> lengths(o.test_lengths.begin(), o.test_lengths.end());
  return format(
             "Study: tasks %s; %s, each plain and randomized (positions a sorted random sample "
             "from [0, %d) in training; none only plain); %d seed%s (%u to %u); %zu models.\n",
             tasks.c_str(), schemes.c_str(), o.randomized_positions, o.seeds,
             o.seeds == 1 ? "" : "s", o.seed, o.seed + std::uint32_t(o.seeds - 1), models) +
         format(
             "Each model: trained on inputs of lengths 1 to %d (2 to %d for "
             "missing_duplicate_string), %d sequences x %d epochs, batch %d; D=%d, H=%d, F=%d, "
             "%d layer%s, AdamW lr %g. Test: %d sequences at each input length %s.\n"
             "Score: per-token accuracy at the answer positions (the <out> placeholders; every "
             "labelled position for neighbour_sum and copy_left), as Ruoss et al.; \"beyond\" is "
             "its mean over the test lengths longer than L_train = %d, as their score averages "
             "over the unseen lengths.\n\n",
             o.train_length, o.train_length, o.train_sequences, o.epochs, o.batch_size, o.d_model,
             o.heads, o.ff, o.layers, o.layers == 1 ? "" : "s", o.lr, o.test_sequences,
             lengths_list(lengths).c_str(), o.train_length);
}

std::string study_table_text(const StudyResult& res) {
  const std::size_t L = train_length_of(res);
  std::string out;
  for (const auto& t : res.tasks) {
    out += format("%s (V = %d, chance 1/C = %s; trained on lengths %zu to %zu): accuracy %% ",
                  t.rule.c_str(), t.symbols, pct(t.chance).c_str(), t.min_train_length, L);
    out += res.options.seeds > 1 ? format("mean [min-max] over %d seeds\n", res.options.seeds)
                                 : std::string("(1 seed)\n");
    out += format("%-16s", "scheme");
    for (auto n : t.lengths)
      out += format(" %17s", (n == L ? "*" + std::to_string(n) : std::to_string(n)).c_str());
    out += format(" %17s\n", ("beyond " + beyond_label(t, L)).c_str());
    for (const auto& c : t.cells) {
      out += format("%-16s", cell_name(c).c_str());
      for (std::size_t i = 0; i < t.lengths.size(); ++i)
        out += format(" %17s", spread_text(spread(column(c, i)), c.seeds.size()).c_str());
      out += format(" %17s\n", spread_text(spread(c.beyond), c.seeds.size()).c_str());
    }
    out += "\n";
  }
  out += format(
      "(* = L_train; +rand = randomized positions; beyond = mean over the longer lengths; plain "
      "learned has a row for every test position, rows beyond training never trained; %zu "
      "models, %.1f s of training and testing)\n",
      res.models, res.seconds);
  return out;
}

namespace study_rules {

std::string randomization(const StudyTask& t, double tolerance) {
  const double tol = tolerance / 100.0;
  std::vector<std::string> up, down, same, unlearned;
  for (const auto& c : t.cells) {
    if (!c.randomized) continue;
    const StudyCell* plain = find_cell(t, c.scheme, false);
    if (!plain) continue;
    if (!learned_at_train_length(t, c) || !learned_at_train_length(t, *plain)) {
      unlearned.push_back(c.scheme);
      continue;
    }
    const Spread r = spread(c.beyond), p = spread(plain->beyond);
    if (r.min > p.max + tol)
      up.push_back(c.scheme + " (" + pct(p.mean) + " -> " + pct(r.mean) + ")");
    else if (r.max < p.min - tol)
      down.push_back(c.scheme + " (" + pct(p.mean) + " -> " + pct(r.mean) + ")");
    else
      same.push_back(c.scheme);
  }
  std::string s = "Randomized against plain on " + t.rule + ", beyond L_train: ";
  std::vector<std::string> parts;
  if (!up.empty())
    parts.push_back("randomized beats plain in every seed, by more than " + fmt("%g", tolerance) +
                    " points, for " + and_list(up));
  if (!down.empty()) parts.push_back("plain beats randomized in every seed for " + and_list(down));
  if (!same.empty()) parts.push_back("the seeds do not separate them for " + and_list(same));
  if (!unlearned.empty())
    parts.push_back("not compared for " + and_list(unlearned) + ", where a form did not learn " +
                    t.rule + " at L_train (" + learned_words(t) + ")");
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i == 0 ? "" : "; ") + parts[i];
  return s + ".";
}

namespace {

// The cell with the highest mean beyond L_train; `clear`: its lowest seed above every other
// cell's highest, and its mean more than the tolerance above chance.
// Only cells that learned the task at L_train take part (learned_at_train_length); nullptr when
// none did.
const StudyCell* top_cell(const StudyTask& t, double tol, bool& clear,
                          std::vector<std::string>& overlap) {
  const StudyCell* top = nullptr;
  for (const auto& c : t.cells)
    if (learned_at_train_length(t, c) && (!top || spread(c.beyond).mean > spread(top->beyond).mean))
      top = &c;
  overlap.clear();
  clear = false;
  if (!top) return nullptr;
  const Spread b = spread(top->beyond);
  for (const auto& c : t.cells)
    if (&c != top && learned_at_train_length(t, c) && spread(c.beyond).max >= b.min)
      overlap.push_back(cell_name(c));
  clear = overlap.empty() && b.mean > t.chance + tol;
  return top;
}

// " (left out, as they did not learn it at L_train: a and b)", or "" when every cell learned it.
std::string left_out(const StudyTask& t) {
  std::vector<std::string> out;
  for (const auto& c : t.cells)
    if (!learned_at_train_length(t, c)) out.push_back(cell_name(c));
  return out.empty() ? ""
                     : " (left out, as they did not learn it at L_train: " + and_list(out) + ")";
}

}  // namespace

std::string best(const StudyTask& t, double tolerance) {
  const double tol = tolerance / 100.0;
  bool clear = false;
  std::vector<std::string> overlap;
  const StudyCell* found = top_cell(t, tol, clear, overlap);
  if (!found)
    return "On " + t.rule + " no scheme learned the task at L_train (" + learned_words(t) +
           "), so no scheme's accuracy beyond it is compared.";
  const StudyCell& top = *found;
  const Spread b = spread(top.beyond);
  if (!(b.mean > t.chance + tol))
    return "On " + t.rule + " no scheme is more than " + fmt("%g", tolerance) +
           " points above chance (" + pct(t.chance) + ") beyond L_train: the highest is " +
           cell_name(top) + " at " + pct(b.mean) + left_out(t) + ".";
  if (clear)
    return "Best on " + t.rule + " beyond L_train: " + cell_name(top) + ", " + spread_words(b) +
           ", above every other scheme in every seed" + left_out(t) + ".";
  return "Highest mean on " + t.rule + " beyond L_train: " + cell_name(top) + ", " +
         spread_words(b) + "; not the best in every seed: " + and_list(overlap) +
         (overlap.size() == 1 ? " reaches" : " reach") + " its lowest seed" + left_out(t) + ".";
}

std::string best_by_task(const std::vector<StudyTask>& tasks, double tolerance) {
  std::vector<std::string> parts, names;
  std::size_t clear_count = 0, compared = 0;
  for (const auto& t : tasks) {
    bool clear = false;
    std::vector<std::string> overlap;
    const StudyCell* top = top_cell(t, tolerance / 100.0, clear, overlap);
    if (!top) {
      parts.push_back(t.rule + ": none (no scheme learned it at L_train)");
      continue;
    }
    clear_count += clear;
    ++compared;
    parts.push_back(t.rule + ": " + cell_name(*top) + (clear ? " (in every seed)" : ""));
    if (std::find(names.begin(), names.end(), cell_name(*top)) == names.end())
      names.push_back(cell_name(*top));
  }
  const std::string seeds = "; the best in every seed, and more than " + fmt("%g", tolerance) +
                            " points above chance, on " + std::to_string(clear_count) + " of " +
                            std::to_string(tasks.size()) + " tasks.";
  if (compared < 2)
    return "The highest mean beyond L_train among the schemes that learned the task at L_train, "
           "by task: " +
           and_list(parts) + seeds;
  if (names.size() == 1)
    return "Among the schemes that learned each task at L_train, the same scheme has the highest "
           "mean beyond L_train on every task" +
           (compared < tasks.size() ? std::string(" where one did") : std::string()) + ": " +
           and_list(parts) + seeds;
  return "Among the schemes that learned each task at L_train, the highest mean beyond L_train "
         "changes from task to task (" +
         std::to_string(names.size()) + " different schemes on " + std::to_string(compared) +
         " tasks): " + and_list(parts) + seeds;
}

std::vector<GainPair> gain_pairs(const std::vector<StudyTask>& tasks) {
  std::vector<GainPair> pairs;
  for (const auto& t : tasks)
    for (const auto& c : t.cells) {
      if (!c.randomized) continue;
      const StudyCell* plain = find_cell(t, c.scheme, false);
      if (plain && learned_at_train_length(t, c) && learned_at_train_length(t, *plain))
        pairs.push_back({&t, plain, &c});
    }
  return pairs;
}

double mean_gain_value(const std::vector<StudyTask>& tasks, std::vector<double>* per_seed) {
  double sum = 0;
  std::size_t n = 0;
  std::vector<double> seed_sum;
  std::vector<std::size_t> seed_n;
  for (const GainPair& p : gain_pairs(tasks)) {
    const StudyCell &c = *p.randomized, &plain = *p.plain;
    for (std::size_t s = 0; s < c.beyond.size() && s < plain.beyond.size(); ++s) {
      const double g = c.beyond[s] - plain.beyond[s];
      if (!std::isfinite(g)) continue;
      sum += g, ++n;
      if (seed_sum.size() <= s) seed_sum.resize(s + 1, 0.0), seed_n.resize(s + 1, 0);
      seed_sum[s] += g, ++seed_n[s];
    }
  }
  if (per_seed) {
    per_seed->clear();
    for (std::size_t s = 0; s < seed_sum.size(); ++s)
      per_seed->push_back(seed_n[s] ? seed_sum[s] / double(seed_n[s]) : NAN);
  }
  return n ? sum / double(n) : NAN;
}

std::string mean_gain(const std::vector<StudyTask>& tasks) {
  std::vector<std::string> names;
  for (const auto& t : tasks) names.push_back(t.rule);
  std::vector<double> per_seed;
  const double g = mean_gain_value(tasks, &per_seed);
  if (!std::isfinite(g))
    return "No scheme learned " + and_list(names) +
           " at L_train both plain and randomized, so no gain of randomized positions is "
           "measured.";
  // only the tasks that give a pair are named: the others say nothing about the gain
  const std::vector<GainPair> pairs = gain_pairs(tasks);
  std::vector<std::string> counted;
  for (const GainPair& p : pairs)
    if (std::find(counted.begin(), counted.end(), p.task->rule) == counted.end())
      counted.push_back(p.task->rule);
  std::string s = "Randomized minus plain accuracy beyond L_train, averaged over the " +
                  std::to_string(pairs.size()) +
                  (pairs.size() == 1 ? " scheme-task pair whose plain and randomized forms both"
                                     : " scheme-task pairs whose plain and randomized forms both") +
                  " learned the task at L_train (" + and_list(counted) +
                  "): " + fmt("%+.1f", 100.0 * g) + " points";
  const Spread sp = spread(per_seed);
  if (per_seed.size() > 1)
    s += " (seed by seed from " + fmt("%+.1f", 100.0 * sp.min) + " to " +
         fmt("%+.1f", 100.0 * sp.max) + ")";
  return s + ".";
}

}  // namespace study_rules

std::vector<std::string> study_conclusions(const StudyResult& res) {
  using namespace study_rules;
  std::vector<std::string> out;
  for (const auto& t : res.tasks) {
    out.push_back(best(t, res.options.tolerance));
    out.push_back(randomization(t, res.options.tolerance));
  }
  out.push_back(best_by_task(res.tasks, res.options.tolerance));
  out.push_back(mean_gain(res.tasks));
  return out;
}

std::string study_svg(const StudyResult& res) {
  const auto& tasks = res.tasks;
  const auto& cells = tasks.front().cells;
  std::vector<xenc::Tensor2> panels(3, xenc::Tensor2::from_shape({cells.size(), tasks.size()}));
  xenc::viz::HeatmapOptions ho;
  ho.marked = xenc::Mask2::from_shape({cells.size(), tasks.size()});
  for (std::size_t j = 0; j < tasks.size(); ++j)
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const StudyCell* c = find_cell(tasks[j], cells[i].scheme, cells[i].randomized);
      const Spread sp = c ? spread(c->beyond) : Spread{};
      panels[0](i, j) = float(100.0 * sp.min);
      panels[1](i, j) = float(100.0 * sp.mean);
      panels[2](i, j) = float(100.0 * sp.max);
      // the cells every conclusion leaves out: hatched, so the figure does not compare them either
      ho.marked(i, j) = c && !learned_at_train_length(tasks[j], *c);
    }
  ho.marked_label =
      "hatched: did not learn the task at L_train = " + std::to_string(res.options.train_length) +
      " (a seed below halfway from chance to 100% there); the conclusions leave "
      "these cells out";
  ho.title = "Accuracy (%) beyond L_train = " + std::to_string(res.options.train_length) +
             " (mean over test lengths " + beyond_label(tasks.front(), train_length_of(res)) +
             "), " + std::to_string(res.options.seeds) + " seeds";
  for (const auto& t : tasks) ho.x_ticks.push_back(t.rule);
  for (const auto& c : cells) ho.y_ticks.push_back(cell_name(c));
  ho.diverging = false;
  ho.vmin = 0;
  ho.vmax = 100;
  ho.annotate = true;
  ho.annotate_decimals = 1;  // as the tables print the accuracies (points())
  ho.cell_size = 44;  // room for "58.8" in every cell (the automatic size leaves about 12 px)
  ho.colorbar_label = "accuracy (%)";
  ho.panel_scale = xenc::viz::PanelScale::shared;
  return xenc::viz::heatmap_grid_svg(panels, {"lowest seed", "mean over seeds", "highest seed"}, ho,
                                     3);
}

std::string study_to_json(const StudyResult& res, const std::vector<std::string>& written) {
  const Options& o = res.options;
  json tasks = json::array();
  for (const auto& t : res.tasks) {
    json cells = json::array();
    for (const auto& c : t.cells) {
      json acc = json::array();
      for (const auto& seed : c.accuracy) {
        json row = json::array();
        for (double v : seed) row.push_back(nullable(v));
        acc.push_back(row);
      }
      json beyond = json::array();
      for (double v : c.beyond) beyond.push_back(nullable(v));
      json per_length = json::array();
      for (std::size_t i = 0; i < t.lengths.size(); ++i) {
        const Spread sp = spread(column(c, i));
        per_length.push_back(
            {{"mean", nullable(sp.mean)}, {"min", nullable(sp.min)}, {"max", nullable(sp.max)}});
      }
      const Spread b = spread(c.beyond);
      cells.push_back(
          {{"scheme", c.scheme},
           {"randomized", c.randomized},
           {"seeds", c.seeds},
           {"accuracy", acc},
           {"accuracy_spread", per_length},
           {"beyond", beyond},
           {"beyond_spread",
            {{"mean", nullable(b.mean)}, {"min", nullable(b.min)}, {"max", nullable(b.max)}}},
           {"learned_at_train_length", learned_at_train_length(t, c)},
           {"seconds", c.seconds}});
    }
    tasks.push_back({{"rule", t.rule},
                     {"symbols", t.symbols},
                     {"chance", t.chance},
                     {"train_lengths", {t.min_train_length, o.train_length}},
                     {"learned_max_len", t.learned_max_len},
                     {"test_lengths", t.lengths},
                     {"cells", cells}});
  }
  std::vector<double> per_seed;
  const double gain = study_rules::mean_gain_value(res.tasks, &per_seed);
  json seed_gain = json::array();
  for (double v : per_seed) seed_gain.push_back(nullable(v));
  json j = {{"program", "xenc-extrapolate"},
            {"version", XENC_VERSION},
            {"options", options_json(o)},
            {"study",
             {{"score",
               "per-token accuracy at the answer positions; beyond = mean over the test "
               "lengths > L_train"},
              {"spread", "min and max over the seeds"},
              {"learned_at_train_length",
               "every seed at least halfway from chance to 100% at length L_train; the "
               "conclusions compare only these cells beyond L_train"},
              {"models", res.models},
              {"seconds", res.seconds},
              {"blas_threads", res.blas_threads},
              {"mean_gain", nullable(gain)},
              {"mean_gain_per_seed", seed_gain},
              {"tasks", tasks}}},
            {"conclusions", study_conclusions(res)},
            {"files", written}};
  return j.dump(2);
}

// ---- reading a study back (--study-from) ----------------------------------------------------

namespace {

// The fields of a study's JSON, read with messages that name the file and the field:
// "--study-from run.json: study.tasks[1].cells[3].accuracy[0][2]: expected a number between 0
// and 1 or null, got "x"".
struct Reader {
  std::string where;

  [[noreturn]] void fail(const std::string& field, const std::string& expected,
                         const json& got) const {
    throw std::invalid_argument(where + ": " + field + ": expected " + expected + ", got " +
                                (got.is_discarded() ? std::string("nothing") : got.dump()));
  }
  const json& member(const json& j, const std::string& field, const char* key) const {
    if (!j.is_object()) fail(field, "an object", j);
    if (!j.contains(key))
      throw std::invalid_argument(where + ": " + field + "." + key + " is missing");
    return j[key];
  }
  const json& array(const json& j, const std::string& field, const char* key, std::size_t size = 0,
                    const char* size_is = nullptr) const {
    const json& a = member(j, field, key);
    if (!a.is_array()) fail(field + "." + key, "a list", a);
    if (size_is && a.size() != size)
      fail(field + "." + key, "a list of " + std::to_string(size) + " (" + size_is + ")", a);
    return a;
  }
  std::string text(const json& j, const std::string& field, const char* key) const {
    const json& v = member(j, field, key);
    if (!v.is_string()) fail(field + "." + key, "text", v);
    return v.get<std::string>();
  }
  double number(const json& j, const std::string& field, const char* key, double lo,
                double hi) const {
    const json& v = member(j, field, key);
    if (!v.is_number() || v.get<double>() < lo || v.get<double>() > hi)
      fail(field + "." + key, "a number between " + fmt("%g", lo) + " and " + fmt("%g", hi), v);
    return v.get<double>();
  }
  std::size_t whole(const json& v, const std::string& field, std::size_t lo, std::size_t hi) const {
    if (!v.is_number_integer() || v.get<double>() < double(lo) || v.get<double>() > double(hi))
      fail(field, "a whole number between " + std::to_string(lo) + " and " + std::to_string(hi), v);
    return v.get<std::size_t>();
  }
  // an accuracy: a fraction, or null (NaN) for a length a model could not read
  double accuracy(const json& v, const std::string& field) const {
    if (v.is_null()) return NAN;
    if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 1)
      fail(field, "a number between 0 and 1 or null", v);
    return v.get<double>();
  }
};

std::string at_index(const std::string& field, std::size_t i) {
  return field + "[" + std::to_string(i) + "]";
}

StudyCell read_cell(const Reader& r, const json& j, const std::string& f, const StudyTask& t) {
  StudyCell c;
  c.scheme = r.text(j, f, "scheme");
  const json& randomized = r.member(j, f, "randomized");
  if (!randomized.is_boolean()) r.fail(f + ".randomized", "true or false", randomized);
  c.randomized = randomized.get<bool>();
  const json& seeds = r.array(j, f, "seeds");
  if (seeds.empty()) r.fail(f + ".seeds", "at least one seed", seeds);
  for (std::size_t s = 0; s < seeds.size(); ++s)
    c.seeds.push_back(std::uint32_t(r.whole(seeds[s], at_index(f + ".seeds", s), 0, 4294967295u)));
  const json& acc = r.array(j, f, "accuracy", seeds.size(), "one per seed");
  const json& beyond = r.array(j, f, "beyond", seeds.size(), "one per seed");
  for (std::size_t s = 0; s < seeds.size(); ++s) {
    const std::string fs = at_index(f + ".accuracy", s);
    if (!acc[s].is_array() || acc[s].size() != t.lengths.size())
      r.fail(fs, "a list of " + std::to_string(t.lengths.size()) + " (one per test length)",
             acc[s]);
    std::vector<double> row;
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < t.lengths.size(); ++i) {
      row.push_back(r.accuracy(acc[s][i], at_index(fs, i)));
      if (t.lengths[i] > t.train_length) sum += row.back(), ++n;  // as run_study: NaN stays
    }
    c.accuracy.push_back(row);
    const std::string fb = at_index(f + ".beyond", s);
    c.beyond.push_back(r.accuracy(beyond[s], fb));
    // "beyond" is the mean of the lengths past L_train: a file edited in one place is refused
    const double mean = n ? sum / double(n) : NAN;
    if (std::isfinite(mean) != std::isfinite(c.beyond.back()) ||
        (n && std::abs(mean - c.beyond.back()) > 1e-9))
      r.fail(fb,
             "the mean of " + fs + " over the lengths past L_train (" +
                 (n ? fmt("%.17g", mean) : std::string("null")) + ")",
             beyond[s]);
  }
  c.seconds = r.number(j, f, "seconds", 0, 1e12);
  return c;
}

}  // namespace

StudyResult study_from_json(const std::string& text, const std::string& where) {
  const Reader r{where};
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded())
    throw std::invalid_argument(where + ": not JSON (expected what --study --json writes)");
  if (!j.is_object() || !j.contains("study"))
    throw std::invalid_argument(
        where + ": study is missing: not the JSON of a study (--study --json writes it)");
  StudyResult res;
  CommandLine c;
  xenc_app::read_echoed_options(r.member(j, "", "options"), c, option_records(), where);
  res.options = c;
  const Options& o = res.options;
  if (!o.study) throw std::invalid_argument(where + ": options.study: expected true, got false");
  const json& study = r.member(j, "", "study");
  res.models = r.whole(r.member(study, "study", "models"), "study.models", 1, 1u << 20);
  res.seconds = r.number(study, "study", "seconds", 0, 1e12);
  res.blas_threads =
      int(r.whole(r.member(study, "study", "blas_threads"), "study.blas_threads", 1, 1024));
  const json& tasks =
      r.array(study, "study", "tasks", o.study_tasks.size(), "one per task of options.study_tasks");
  for (std::size_t k = 0; k < tasks.size(); ++k) {
    const std::string f = at_index("study.tasks", k);
    const json& tj = tasks[k];
    StudyTask t;
    t.rule = r.text(tj, f, "rule");
    if (t.rule != o.study_tasks[k])
      r.fail(f + ".rule",
             "\"" + o.study_tasks[k] + "\" (options.study_tasks[" + std::to_string(k) + "])",
             tj["rule"]);
    t.symbols = int(r.whole(r.member(tj, f, "symbols"), f + ".symbols", 2, 1000));
    t.chance = r.number(tj, f, "chance", 0, 1);
    const json& train = r.array(tj, f, "train_lengths", 2, "the shortest and the longest");
    t.min_train_length = r.whole(train[0], f + ".train_lengths[0]", 1, 1024);
    t.train_length = r.whole(train[1], f + ".train_lengths[1]", 1, 1024);
    if (t.train_length != std::size_t(o.train_length))
      r.fail(f + ".train_lengths[1]", std::to_string(o.train_length) + " (options.train_length)",
             train[1]);
    t.learned_max_len =
        r.whole(r.member(tj, f, "learned_max_len"), f + ".learned_max_len", 0, 1u << 20);
    const json& lengths = r.array(tj, f, "test_lengths");
    for (std::size_t i = 0; i < lengths.size(); ++i)
      t.lengths.push_back(r.whole(lengths[i], at_index(f + ".test_lengths", i), 1, 1u << 20));
    if (t.lengths.empty() || !std::is_sorted(t.lengths.begin(), t.lengths.end()))
      r.fail(f + ".test_lengths", "test lengths in increasing order", lengths);
    const json& cells = r.array(tj, f, "cells");
    if (cells.empty()) r.fail(f + ".cells", "at least one cell", cells);
    for (std::size_t i = 0; i < cells.size(); ++i)
      t.cells.push_back(read_cell(r, cells[i], at_index(f + ".cells", i), t));
    res.tasks.push_back(std::move(t));
  }
  return res;
}

}  // namespace extrapolate

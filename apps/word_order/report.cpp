// xenc-word-order's report (see report.hpp): every function here is a pure function of a
// Result; every sentence under a table is chosen by the numbers in it.
#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include <nlohmann/json.hpp>
#include <xenc/text/display_width.hpp>
#include <xenc/viz/svg.hpp>

namespace word_order {

namespace {

std::string fixed6(double v) {
  if (std::isnan(v)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

using xenc::display_width;  // columns, not bytes: "CAFÉ" is 4, "猫" is 2
using xenc::pad_left;
using xenc::pad_right;

void print_table(std::ostream& out, const Run& run, const std::vector<Match>& matches) {
  std::size_t name_w = 16;
  for (const auto& s : run.stages) name_w = std::max(name_w, s.name.size() + 2);
  std::vector<std::size_t> col_w;
  for (const auto& m : matches) col_w.push_back(std::max<std::size_t>(9, display_width(m.key) + 1));
  std::string header = "  " + pad_right("stage", name_w);
  for (std::size_t i = 0; i < matches.size(); ++i)
    header += pad_left(matches[i].key, col_w[i]) + " ";
  header += "| " + pad_left("sentence", 9);
  out << header << "\n  " << std::string(display_width(header) - 2, '-') << "\n";
  for (const auto& s : run.stages) {
    out << "  " << pad_right(s.name, name_w);
    for (std::size_t i = 0; i < s.token.size(); ++i)
      out << pad_left(fixed6(s.token[i]), col_w[i]) << " ";
    out << "| " << pad_left(fixed6(s.sentence), 9) << "\n";
  }
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

}  // namespace

// Prints `text` word-wrapped to 90 columns with a two-space indent.
void print_wrapped(std::ostream& out, const std::string& text) {
  std::string line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && display_width(line) + 1 + display_width(word) > 88) {
      out << "  " << line << "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty()) out << "  " << line << "\n";
}

namespace {

// ---- the narration: every sentence below is chosen by the numbers in the table above it ------

// A cosine "is 1" when it prints as 1.000000 (6 decimals): |1 - c| < 5e-7.
constexpr double kOne = 5e-7;
bool is_one(double c) { return std::abs(1.0 - c) < kOne; }  // false for NaN
bool below_one(double c) { return !std::isnan(c) && c <= 1.0 - kOne; }

// "a", "a and b", "a, b and c"
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i)
    s += (i ? (i + 1 == v.size() ? " and " : ", ") : "") + v[i];
  return s;
}
std::string quoted(const std::string& w) { return "\"" + w + "\""; }

}  // namespace

// Largest |1 - cosine| over every defined cosine, and the stages with an undefined one.
double max_deviation(const Run& run, std::vector<std::string>* undefined) {
  double m = 0;
  for (const auto& s : run.stages) {
    bool nan = std::isnan(s.sentence);
    for (double c : s.token) {
      if (std::isnan(c))
        nan = true;
      else
        m = std::max(m, std::abs(1 - c));
    }
    if (!std::isnan(s.sentence)) m = std::max(m, std::abs(1 - s.sentence));
    if (nan && undefined) undefined->push_back(s.name);
  }
  return m;
}

// The sentence for undefined cosines (zero vectors), or "" when there are none.

namespace {

std::string undefined_sentence(const std::vector<std::string>& stages, std::size_t d_model) {
  if (stages.empty()) return "";
  std::string text =
      " The cosines marked n/a (" + join(stages) + ") are undefined: a vector there is all zero.";
  if (d_model == 1)
    text +=
        " With D = 1 layer normalisation subtracts the mean of a single number, so every layer"
        " outputs its bias (zero at initialisation): D is too small for this demo.";
  return text;
}

// Cosine of word i at stage s, as printed.
std::string at(const Run& run, std::size_t s, std::size_t i) {
  return fixed6(run.stages[s].token[i]);
}

// Sentences for a case where every defined cosine should be 1: says whether it is.
std::string all_one_text(const Run& run, const Context& ctx, const std::string& reason) {
  std::vector<std::string> undefined;
  const double dev = max_deviation(run, &undefined);
  std::string text;
  if (dev < kOne)
    text =
        std::string(undefined.empty() ? "Every cosine" : "Every defined cosine") + " is 1 (" +
        (dev == 0 ? std::string("exactly") : "largest deviation " + sci(dev) + ", float rounding") +
        "): " + reason;
  else
    text = "Not every cosine is 1 here (largest deviation " + sci(dev) + ").";
  return text + undefined_sentence(undefined, ctx.d_model);
}

}  // namespace

// ---- explain: a list of rules --------------------------------------------------------------
// Each rule writes its sentences for one run (each but the first starts with a space), or ""
// when the numbers give it nothing to say; explain joins them in order.

namespace explain_rules {

namespace {
constexpr std::size_t kInput = 1, kLayer1 = 2;  // the stages "+ positions" and "layer 1"
}  // namespace

std::string degenerate(const Run& run, const Context& ctx) {
  if (ctx.identical)
    return all_one_text(
        run, ctx,
        "A and B are the same sentence, so both inputs are identical in every run. "
        "No word moved: a degenerate case with no order to detect (give --b the same "
        "words in another order).");
  if (ctx.reversed && run.scheme == "alibi")
    return all_one_text(
        run, ctx,
        "B is A reversed, and the encoder form of alibi, the bias -slope * |i - j|, is the "
        "same for a sentence and its reverse (|i - j| = |(T-1-i) - (T-1-j)|). With nothing "
        "added to the input, the encoder stays equivariant under this one permutation: "
        "alibi cannot tell a sentence from its reverse (try --position rope, or a B that is "
        "not A backwards).");
  if (ctx.permutation && run.scheme == "none")
    return all_one_text(
        run, ctx,
        "without positions the encoder is permutation-equivariant, so each word gets "
        "the same vector whether it comes first or last, and the two sentences are "
        "indistinguishable.");
  return "";
}

std::string moved_words(const Run& run, const Context& ctx) {
  std::vector<std::size_t> moved;
  for (std::size_t i = 0; i < ctx.matches.size(); ++i)
    if (ctx.matches[i].pos_a != ctx.matches[i].pos_b) moved.push_back(i);
  std::string text;
  if (run.in_attention) {
    // rope / alibi: the "+ positions" stage is the token embedding itself; say so from the numbers
    std::vector<std::string> same, separated;
    for (std::size_t i : moved) {
      if (is_one(run.stages[kInput].token[i]))
        same.push_back(quoted(ctx.matches[i].key) + " (" + at(run, kInput, i) + ")");
      if (run.stages.size() > kLayer1 && below_one(run.stages[kLayer1].token[i]))
        separated.push_back(quoted(ctx.matches[i].key) + " (" + at(run, kLayer1, i) + ")");
    }
    text += "With " + run.scheme + " positions nothing is added to the input (" +
            (run.scheme == "rope"
                 ? "the scheme rotates each head's queries and keys by position"
                 : "the scheme adds -slope * |i - j| to each head's attention scores") +
            "), so the \"+ positions\" stage is the token embedding itself";
    if (!moved.empty() && same.size() == moved.size())
      text += std::string(": ") +
              (moved.size() == 1 ? "the word that moved, " : "the words that moved, ") +
              join(same) + (moved.size() == 1 ? ", is" : ", are") + " still identical there.";
    else
      text += ".";
    if (!separated.empty())
      text += " The words separate only inside attention: after layer 1 " + join(separated) +
              (separated.size() == 1 ? " differs." : " differ.");
  } else if (run.scheme != "none") {
    std::vector<std::string> apart, together;
    for (std::size_t i : moved) {
      const std::string w = quoted(ctx.matches[i].key) + " (" + at(run, kInput, i) + ")";
      (below_one(run.stages[kInput].token[i]) ? apart : together).push_back(w);
    }
    if (!apart.empty())
      text += "With " + run.scheme +
              " positions the words at different positions in A and B differ as soon "
              "as positions are added: " +
              join(apart) + ".";
    if (!together.empty())
      text += std::string(text.empty() ? "" : " ") + join(together) + " moved, but " +
              (together.size() == 1 ? "its" : "their") +
              " cosine after adding positions still prints as 1.";
  }
  return text;
}

std::string fixed_words(const Run& run, const Context& ctx) {
  // a word at the same position gets the same input in both sentences (in a permutation); its
  // vector can then change only through attention, the one step that looks at other tokens
  std::vector<std::size_t> fixed;
  for (std::size_t i = 0; i < ctx.matches.size(); ++i)
    if (ctx.matches[i].pos_a == ctx.matches[i].pos_b) fixed.push_back(i);
  if (!ctx.permutation || fixed.empty() || run.stages.size() <= kLayer1) return "";
  std::vector<std::string> same_input, changed, kept;
  for (std::size_t i : fixed) {
    if (is_one(run.stages[kInput].token[i])) same_input.push_back(quoted(ctx.matches[i].key));
    const std::string w = quoted(ctx.matches[i].key) + " (" + at(run, kLayer1, i) + ")";
    if (below_one(run.stages[kLayer1].token[i]))
      changed.push_back(w);
    else if (is_one(run.stages[kLayer1].token[i]))
      kept.push_back(w);
  }
  if (same_input.size() != fixed.size()) return "";
  std::string text = " " + join(same_input) + (fixed.size() == 1 ? " sits" : " sit") +
                     " at the same position in both sentences, so " +
                     (fixed.size() == 1 ? "its" : "their") + " input is identical (cosine 1).";
  if (!changed.empty())
    text += " After layer 1 " + join(changed) + (changed.size() == 1 ? " differs" : " differ") +
            ", and only through attention: every other step of a layer (residual, layer norm, "
            "feed-forward) works on each token alone, and " +
            std::string(fixed.size() == 1 ? "its" : "each one's") +
            " input is the same in A and B.";
  if (!kept.empty())
    text += " After layer 1 " + join(kept) + " still " + (kept.size() == 1 ? "prints" : "print") +
            " as 1.";
  return text;
}

std::string pooled_permutation(const Run& run, const Context& ctx) {
  // the mean-pooled sentences: identical input, separated by the first non-linear step
  if (!ctx.permutation) return "";
  const std::size_t last = run.stages.size() - 1;
  const double in = run.stages[kInput].sentence, l1 = run.stages[kLayer1].sentence;
  const std::string after_last =
      last > kLayer1 ? ", " + fixed6(run.stages[last].sentence) + " after " + run.stages[last].name
                     : std::string();
  std::string text;
  if (is_one(in) && run.in_attention) {
    text += " The mean-pooled input is identical (" + fixed6(in) +
            "): both sentences hold the same embeddings in another order, and " + run.scheme +
            " adds no position vectors.";
    if (below_one(l1))
      text +=
          " Every step of a layer except attention works on each token alone and would keep "
          "the mean of the same vectors in another order, so the pooled sentences separate "
          "in layer 1 (" +
          fixed6(l1) + ") through attention" + after_last + ".";
    else if (is_one(l1))
      text += " It still prints as 1 after layer 1.";
  } else if (is_one(in)) {
    text += " The mean-pooled input is identical (" + fixed6(in) +
            "): averaging is linear, and both sentences hold the same embeddings and the same "
            "position vectors, only paired differently.";
    if (below_one(l1))
      text +=
          " A non-linear step applied to each token on its own (layer norm, the "
          "feed-forward's ReLU) does not commute with the average, so the pooled sentences "
          "separate even without attention; here they separate in layer 1 (" +
          fixed6(l1) + ")" + after_last + ".";
    else if (is_one(l1))
      text += " It still prints as 1 after layer 1.";
  } else if (!std::isnan(in)) {
    text += " The mean-pooled input differs (" + fixed6(in) + ").";
  }
  return text;
}

std::string not_permutation(const Run& run, const Context& ctx) {
  // different context even without positions, different means
  if (ctx.permutation) return "";
  std::string text;
  if (run.scheme == "none") {
    std::vector<std::string> changed;
    for (std::size_t i = 0; i < ctx.matches.size(); ++i)
      if (below_one(run.stages[kLayer1].token[i]))
        changed.push_back(quoted(ctx.matches[i].key) + " (" + at(run, kLayer1, i) + ")");
    if (!changed.empty())
      text +=
          "The sentences are not permutations of each other, so the shared words see "
          "different neighbours: even without positions " +
          join(changed) + (changed.size() == 1 ? " differs" : " differ") +
          " after layer 1, because attention mixes in the other tokens (it ignores order, "
          "not content).";
    else
      text +=
          "The sentences are not permutations of each other, yet every shared word still "
          "prints as 1 after layer 1.";
  }
  const double e = run.stages[0].sentence;
  if (below_one(e))
    text +=
        " The sentence cosine compares the mean of all tokens of each sentence, and A and B "
        "hold different words, so it is below 1 from the token embedding on (" +
        fixed6(e) + ").";
  else if (is_one(e))
    text += " The sentence cosine is 1 at the token embedding (" + fixed6(e) +
            "): the mean word embedding of A equals B's.";
  return text;
}

std::string small_d(const Context& ctx) {
  if (ctx.d_model == 1)
    return " D = 1 is degenerate: a vector of one number can only point forwards or backwards, "
           "so every cosine is +1, -1 or n/a.";
  if (ctx.d_model == 2)
    return " D = 2 is degenerate: layer normalisation removes the mean of the two numbers, so "
           "after any layer a vector points along (1, -1) or (-1, 1) and every cosine there is "
           "+1, -1 or n/a.";
  return "";
}

std::string undefined_cosines(const Run& run, const Context& ctx) {
  std::vector<std::string> undefined;
  max_deviation(run, &undefined);
  return undefined_sentence(undefined, ctx.d_model);
}

}  // namespace explain_rules

// The two to four sentences under a table, each chosen by the numbers in it: the degenerate
// cases say everything alone; otherwise the rules in order.
std::string explain(const Run& run, const Context& ctx) {
  namespace rules = explain_rules;
  if (std::string whole = rules::degenerate(run, ctx); !whole.empty()) return whole;
  std::string text = rules::moved_words(run, ctx) + rules::fixed_words(run, ctx) +
                     rules::pooled_permutation(run, ctx) + rules::not_permutation(run, ctx) +
                     rules::small_d(ctx) + rules::undefined_cosines(run, ctx);
  while (!text.empty() && text[0] == ' ') text.erase(0, 1);
  return text;
}

std::string scale_text(const Run& run, std::size_t d_model) {
  const double emb = run.token_length, pos = run.position_length;
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "--scale-embedding multiplied the token embeddings by sqrt(D) = %.2f. Their entries are "
      "N(0, 1), so a token vector is about sqrt(D) * sqrt(D) = D long, while a %s position "
      "vector is about %s long: here the token vectors are on average %.1f times longer than "
      "the position vectors (mean lengths %.2f and %.2f), so the positions barely turn them and "
      "the cosines stay closer to 1.",
      std::sqrt(double(d_model)), run.scheme.c_str(),
      run.scheme == "sinusoidal" ? "sqrt(D/2)" : "sqrt(D) (N(0, 1) entries)",
      pos > 0 ? emb / pos : 0.0, emb, pos);
  return buf;
}

Context context_of(const Result& r) {
  Context ctx;
  ctx.matches = r.matches;
  ctx.permutation = r.permutation;
  ctx.identical = r.identical;
  ctx.reversed = r.reversed;
  ctx.d_model = r.options.d_model;
  return ctx;
}

void print_text(std::ostream& out, const Result& r) {
  const Options& o = r.options;
  const Context ctx = context_of(r);
  out << "A: \"" << xenc::visible(o.a) << "\"\nB: \"" << xenc::visible(o.b) << "\"\n"
      << "One encoder (D = " << o.d_model << ", " << o.heads
      << (o.heads == 1 ? " head, " : " heads, ") << o.layers << " layers, seed " << o.seed
      << (o.scale_embedding ? ", embeddings x sqrt(D)" : "")
      << "), the same random weights in every run.\n"
      << "Each number is the cosine similarity between a word's vector in A and in B\n"
      << "(\"sentence\": the mean of all token vectors of A vs of B); 1 = identical direction.\n";
  if (r.identical) {
    out << "\n";
    print_wrapped(
        out,
        "Note: A and B are the same sentence. No word moved, so this is a degenerate case: "
        "every run compares two identical inputs.");
  } else if (!r.permutation) {
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& w : v) s += (s.empty() ? "" : ", ") + w;
      return s.empty() ? std::string("-") : s;
    };
    out << "\n";
    print_wrapped(
        out, "Note: the sentences are not permutations of each other; the table compares the " +
                 std::to_string(r.matches.size()) +
                 (r.matches.size() == 1 ? " shared word" : " shared words") +
                 " only (only in A: " + list(r.only_a) + "; only in B: " + list(r.only_b) + ").");
  } else if (r.reversed) {
    out << "\n";
    print_wrapped(
        out,
        "Note: B is A reversed: A's first word is B's last, and so on; a repeated word is "
        "compared with its mirror-image copy.");
  }
  for (const Run& run : r.runs) {
    out << "\n"
        << (run.scheme == "none" ? "Without positional information (--position none)"
                                 : "With " + run.scheme + " positional encoding")
        << "\n";
    print_table(out, run, r.matches);
    out << "\n";
    print_wrapped(out, explain(run, ctx));
    if (o.scale_embedding && run.scheme != "none" && !run.in_attention)
      print_wrapped(out, scale_text(run, o.d_model));
  }
}

namespace {

nlohmann::ordered_json run_json(const Run& run, const std::vector<Match>& matches) {
  nlohmann::ordered_json j;
  j["position"] = run.scheme;
  const Stage& last = run.stages.back();
  nlohmann::ordered_json tok = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < matches.size(); ++i) tok[matches[i].key] = last.token[i];
  j["token_cosine"] = tok;  // final layer
  j["sentence_cosine"] = last.sentence;
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const auto& s : run.stages) {
    nlohmann::ordered_json st;
    st["stage"] = s.name;
    nlohmann::ordered_json t = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < matches.size(); ++i) t[matches[i].key] = s.token[i];
    st["token_cosine"] = t;
    st["sentence_cosine"] = s.sentence;
    stages.push_back(st);
  }
  j["stages"] = stages;
  return j;
}

}  // namespace

std::string to_json(const Result& r) {
  const Options& o = r.options;
  nlohmann::ordered_json j;
  j["a"] = o.a;
  j["b"] = o.b;
  j["tokens_a"] = r.tokens_a;
  j["tokens_b"] = r.tokens_b;
  j["permutation"] = r.permutation;
  j["identical"] = r.identical;
  j["only_in_a"] = r.only_a;
  j["only_in_b"] = r.only_b;
  j["config"] = {{"d_model", o.d_model}, {"heads", o.heads},
                 {"layers", o.layers},   {"dim_feedforward", r.dim_feedforward},
                 {"seed", o.seed},       {"scale_embedding", o.scale_embedding}};
  for (const auto& run : r.runs) j[run.json_key] = run_json(run, r.matches);
  return j.dump(2);
}

void write_figures(const std::string& dir, const Result& r) {
  const std::vector<Run>& runs = r.runs;
  const std::vector<Match>& matches = r.matches;
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::vector<std::string> stage_names;
  for (const auto& s : runs[0].stages) stage_names.push_back(s.name);
  // 1. cosine per stage, one line per word and one for the sentence, one figure per scheme
  for (const auto& run : runs) {
    std::vector<xenc::viz::LineSeries> series;
    for (std::size_t i = 0; i <= matches.size(); ++i) {
      xenc::viz::LineSeries ls;
      ls.label = i < matches.size() ? matches[i].key : "sentence (mean-pooled)";
      ls.dashed = i == matches.size();
      for (std::size_t s = 0; s < run.stages.size(); ++s) {
        ls.x.push_back(double(s));
        ls.y.push_back(i < matches.size() ? run.stages[s].token[i] : run.stages[s].sentence);
      }
      series.push_back(ls);
    }
    xenc::viz::LinePlotOptions o;
    o.title = "Cosine between sentence A and B, position: " + run.scheme;
    o.x_label = "stage of the forward pass";
    o.y_label = "cosine similarity (A vs B)";
    o.x_tick_labels = stage_names;
    o.markers = true;
    // the y range follows the data (rope's and alibi's cosines near 1 get a range of their
    // own), padded so lines at 1 stay off the frame; a legend of many words says how many it
    // leaves out
    xenc::viz::write_text_file(dir + "/cosine_" + run.scheme + ".svg",
                               xenc::viz::line_plot_svg(series, o));
  }
  // 2. final-layer difference A - B per shared word, one panel per scheme; a panel that one
  //    shared scale would leave blank (rope, alibi next to sinusoidal) gets a scale of its own
  std::vector<xenc::Tensor2> panels;
  std::vector<std::string> titles;
  const std::size_t D = runs[0].final_output.shape()[2];
  for (const auto& run : runs) {
    xenc::Tensor2 diff = xenc::Tensor2::from_shape({matches.size(), D});
    for (std::size_t i = 0; i < matches.size(); ++i)
      for (std::size_t d = 0; d < D; ++d)
        diff(i, d) =
            run.final_output(0, matches[i].pos_a, d) - run.final_output(1, matches[i].pos_b, d);
    panels.push_back(diff);
    titles.push_back("position: " + run.scheme);
  }
  xenc::viz::HeatmapOptions h;
  h.title = "Final-layer vector in A minus vector in B, per word";
  h.x_label = "dimension";
  h.y_label = "word";
  for (const auto& m : matches) h.y_ticks.push_back(m.key);
  h.colorbar_label = "A - B";
  h.panel_scale = xenc::viz::PanelScale::automatic;
  xenc::viz::write_text_file(dir + "/final_difference.svg",
                             xenc::viz::heatmap_grid_svg(panels, titles, h, 1));
}

}  // namespace word_order

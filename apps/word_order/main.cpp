// xenc-word-order: does the encoder know that "cat chased mouse" and "mouse chased cat" differ?
//
// One encoder, one set of random (seeded, untrained) weights, run on two sentences that use the
// same words in a different order. Only the position scheme changes between runs (none,
// sinusoidal, learned, rope, alibi). For every stage of the forward pass (token embedding, after adding
// positions, after each layer) we print, for each word, the cosine similarity between its vector
// in sentence A and in sentence B, and the cosine similarity of the two mean-pooled sentences.
//
// Without positions self-attention sees a set, not a sequence: permuting the tokens permutes the
// outputs (permutation equivariance), so every cosine is 1. With positions the words differ. The
// mean-pooled input stays identical (averaging is linear: the same embeddings and position
// vectors, paired differently); any non-linear per-token step separates the pooled sentences.
// rope and alibi add nothing to the input ("+ positions" is the token embedding itself): they act
// inside attention, so the words, and the pooled sentences, separate only there.
// The prose under each table is chosen by its numbers (explain()), degenerate cases included.
//
//     xenc-word-order                             # the defaults: D = 16, 2 heads, 2 layers
//     xenc-word-order --a "the dog bit the man" --b "the man bit the dog" --position all
//     xenc-word-order --json                      # machine-readable
//     xenc-word-order --svg-dir figures           # line plots and heatmaps of what changed
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <xenc/xenc.hpp>
#include <xenc/viz/svg.hpp>

#include "../common/cli.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

using xenc::Tensor3;

// One word of the comparison: "cat" or, for a repeated word, "the#2"; where it sits in A and B.
struct Match {
  std::string key;
  std::size_t pos_a, pos_b;
};

// Keys by occurrence: ["the", "cat", "the"] -> ["the", "cat", "the#2"].
std::vector<std::string> occurrence_keys(const std::vector<std::string>& tokens) {
  std::map<std::string, int> seen;
  std::vector<std::string> keys;
  for (const auto& t : tokens) {
    const int n = ++seen[t];
    keys.push_back(n == 1 ? t : t + "#" + std::to_string(n));
  }
  return keys;
}

// Cosine similarity in double precision (so identical vectors give 1 to ~1e-16). NaN when a
// vector is all zero (the cosine is undefined; printed "n/a", JSON null).
double cosine(const std::vector<double>& u, const std::vector<double>& v) {
  double uv = 0, uu = 0, vv = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    uv += u[i] * v[i];
    uu += u[i] * u[i];
    vv += v[i] * v[i];
  }
  if (uu == 0 || vv == 0) return std::nan("");
  return uv / std::sqrt(uu * vv);
}

// x[b, t, :] as doubles.
std::vector<double> row(const Tensor3& x, std::size_t b, std::size_t t) {
  std::vector<double> r(x.shape()[2]);
  for (std::size_t d = 0; d < r.size(); ++d) r[d] = x(b, t, d);
  return r;
}

// Mean over the first `len` tokens of sentence b: [D].
std::vector<double> mean_pool(const Tensor3& x, std::size_t b, std::size_t len) {
  std::vector<double> m(x.shape()[2], 0.0);
  for (std::size_t t = 0; t < len; ++t)
    for (std::size_t d = 0; d < m.size(); ++d) m[d] += x(b, t, d);
  for (auto& v : m) v /= double(len);
  return m;
}

// The cosines at one stage of the forward pass.
struct Stage {
  std::string name;
  std::vector<double> token;  // one per Match
  double sentence;
};

// One run of the model with one position scheme.
struct Run {
  std::string scheme;    // none | sinusoidal | learned | rope | alibi
  std::string json_key;  // without_pe | with_pe | with_learned | with_rope | with_alibi
  bool in_attention = false;  // the scheme acts inside attention (adds nothing to the input)
  std::vector<Stage> stages;
  Tensor3 final_output;  // [2, T, D]
};

Stage compare(const std::string& name, const Tensor3& x, const std::vector<Match>& matches,
              std::size_t len_a, std::size_t len_b) {
  Stage s{name, {}, 0.0};
  for (const auto& m : matches) s.token.push_back(cosine(row(x, 0, m.pos_a), row(x, 1, m.pos_b)));
  s.sentence = cosine(mean_pool(x, 0, len_a), mean_pool(x, 1, len_b));
  return s;
}

std::string fixed6(double v) {
  if (std::isnan(v)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

using xenc::display_width;  // columns, not bytes: "CAFÉ" is 4, "猫" is 2
using xenc::pad_left;
using xenc::pad_right;

void print_table(const Run& run, const std::vector<Match>& matches) {
  std::size_t name_w = 16;
  for (const auto& s : run.stages) name_w = std::max(name_w, s.name.size() + 2);
  std::vector<std::size_t> col_w;
  for (const auto& m : matches) col_w.push_back(std::max<std::size_t>(9, display_width(m.key) + 1));
  std::string header = "  " + pad_right("stage", name_w);
  for (std::size_t i = 0; i < matches.size(); ++i) header += pad_left(matches[i].key, col_w[i]) + " ";
  header += "| " + pad_left("sentence", 9);
  std::cout << header << "\n  " << std::string(display_width(header) - 2, '-') << "\n";
  for (const auto& s : run.stages) {
    std::cout << "  " << pad_right(s.name, name_w);
    for (std::size_t i = 0; i < s.token.size(); ++i) std::cout << pad_left(fixed6(s.token[i]), col_w[i]) << " ";
    std::cout << "| " << pad_left(fixed6(s.sentence), 9) << "\n";
  }
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

// Prints `text` word-wrapped to 90 columns with a two-space indent.
void print_wrapped(const std::string& text) {
  std::string line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && display_width(line) + 1 + display_width(word) > 88) {
      std::cout << "  " << line << "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty()) std::cout << "  " << line << "\n";
}

// ---- the narration: every sentence below is chosen by the numbers in the table above it ------

// A cosine "is 1" when it prints as 1.000000 (6 decimals): |1 - c| < 5e-7.
constexpr double kOne = 5e-7;
bool is_one(double c) { return std::abs(1.0 - c) < kOne; }  // false for NaN
bool below_one(double c) { return !std::isnan(c) && c <= 1.0 - kOne; }

// "a", "a and b", "a, b and c"
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? (i + 1 == v.size() ? " and " : ", ") : "") + v[i];
  return s;
}
std::string quoted(const std::string& w) { return "\"" + w + "\""; }

// What the narration needs besides the run.
struct Context {
  std::vector<Match> matches;
  bool permutation = false;  // B uses A's words in another order (or the same)
  bool identical = false;    // A and B are the same token sequence: nothing moved
  bool reversed = false;     // B is A backwards (and not a palindrome)
  std::size_t d_model = 0;
};

// Largest |1 - cosine| over every defined cosine, and the stages with an undefined one.
double max_deviation(const Run& run, std::vector<std::string>* undefined = nullptr) {
  double m = 0;
  for (const auto& s : run.stages) {
    bool nan = std::isnan(s.sentence);
    for (double c : s.token) {
      if (std::isnan(c)) nan = true;
      else m = std::max(m, std::abs(1 - c));
    }
    if (!std::isnan(s.sentence)) m = std::max(m, std::abs(1 - s.sentence));
    if (nan && undefined) undefined->push_back(s.name);
  }
  return m;
}

// The sentence for undefined cosines (zero vectors), or "" when there are none.
std::string undefined_sentence(const std::vector<std::string>& stages, std::size_t d_model) {
  if (stages.empty()) return "";
  std::string text = " The cosines marked n/a (" + join(stages) +
                     ") are undefined: a vector there is all zero.";
  if (d_model == 1)
    text += " With D = 1 layer normalisation subtracts the mean of a single number, so every layer"
            " outputs its bias (zero at initialisation): D is too small for this demo.";
  return text;
}

// Cosine of word i at stage s, as printed.
std::string at(const Run& run, std::size_t s, std::size_t i) { return fixed6(run.stages[s].token[i]); }

// Sentences for a case where every defined cosine should be 1: says whether it is.
std::string all_one_text(const Run& run, const Context& ctx, const std::string& reason) {
  std::vector<std::string> undefined;
  const double dev = max_deviation(run, &undefined);
  std::string text;
  if (dev < kOne)
    text = std::string(undefined.empty() ? "Every cosine" : "Every defined cosine") + " is 1 (" +
           (dev == 0 ? std::string("exactly") : "largest deviation " + sci(dev) + ", float rounding") + "): " + reason;
  else
    text = "Not every cosine is 1 here (largest deviation " + sci(dev) + ").";
  return text + undefined_sentence(undefined, ctx.d_model);
}

// The two to four sentences under a table, each chosen by the numbers in it.
std::string explain(const Run& run, const Context& ctx) {
  const std::size_t kInput = 1, kLayer1 = 2, last = run.stages.size() - 1;
  const std::string last_name = run.stages[last].name;
  if (ctx.identical)
    return all_one_text(run, ctx,
                        "A and B are the same sentence, so both inputs are identical in every run. "
                        "No word moved: a degenerate case with no order to detect (give --b the same "
                        "words in another order).");
  if (ctx.reversed && run.scheme == "alibi")
    return all_one_text(run, ctx,
                        "B is A reversed, and the encoder form of alibi, the bias -slope * |i - j|, is the "
                        "same for a sentence and its reverse (|i - j| = |(T-1-i) - (T-1-j)|). With nothing "
                        "added to the input, the encoder stays equivariant under this one permutation: "
                        "alibi cannot tell a sentence from its reverse (try --position rope, or a B that is "
                        "not A backwards).");
  if (ctx.permutation && run.scheme == "none")
    return all_one_text(run, ctx,
                        "without positions the encoder is permutation-equivariant, so each word gets "
                        "the same vector whether it comes first or last, and the two sentences are "
                        "indistinguishable.");

  std::vector<std::string> undefined;
  max_deviation(run, &undefined);
  std::string text;
  // 1. words at different positions in A and B, and words at the same position
  std::vector<std::size_t> moved, fixed;
  for (std::size_t i = 0; i < ctx.matches.size(); ++i)
    (ctx.matches[i].pos_a == ctx.matches[i].pos_b ? fixed : moved).push_back(i);
  std::vector<std::string> apart, together;
  for (std::size_t i : ctx.permutation || run.scheme != "none" ? moved : std::vector<std::size_t>{}) {
    const std::string w = quoted(ctx.matches[i].key) + " (" + at(run, kInput, i) + ")";
    (below_one(run.stages[kInput].token[i]) ? apart : together).push_back(w);
  }
  if (run.in_attention) {
    // rope / alibi: the "+ positions" stage is the token embedding itself; say so from the numbers
    std::vector<std::string> same, separated;
    for (std::size_t i : moved) {
      if (is_one(run.stages[kInput].token[i])) same.push_back(quoted(ctx.matches[i].key) + " (" + at(run, kInput, i) + ")");
      if (run.stages.size() > kLayer1 && below_one(run.stages[kLayer1].token[i]))
        separated.push_back(quoted(ctx.matches[i].key) + " (" + at(run, kLayer1, i) + ")");
    }
    text += "With " + run.scheme + " positions nothing is added to the input (" +
            (run.scheme == "rope" ? "the scheme rotates each head's queries and keys by position"
                                  : "the scheme adds -slope * |i - j| to each head's attention scores") +
            "), so the \"+ positions\" stage is the token embedding itself";
    if (!moved.empty() && same.size() == moved.size())
      text += std::string(": ") + (moved.size() == 1 ? "the word that moved, " : "the words that moved, ") +
              join(same) + (moved.size() == 1 ? ", is" : ", are") + " still identical there.";
    else
      text += ".";
    if (!separated.empty())
      text += " The words separate only inside attention: after layer 1 " + join(separated) +
              (separated.size() == 1 ? " differs." : " differ.");
  } else if (run.scheme != "none") {
    if (!apart.empty())
      text += "With " + run.scheme + " positions the words at different positions in A and B differ as soon "
              "as positions are added: " + join(apart) + ".";
    if (!together.empty())
      text += std::string(text.empty() ? "" : " ") + join(together) + " moved, but " +
              (together.size() == 1 ? "its" : "their") + " cosine after adding positions still prints as 1.";
  }
  // a word at the same position gets the same input in both sentences (in a permutation); its
  // vector can then change only through attention, the one step that looks at other tokens
  if (ctx.permutation && !fixed.empty() && run.stages.size() > kLayer1) {
    std::vector<std::string> same_input, changed, kept;
    for (std::size_t i : fixed) {
      if (is_one(run.stages[kInput].token[i])) same_input.push_back(quoted(ctx.matches[i].key));
      const std::string w = quoted(ctx.matches[i].key) + " (" + at(run, kLayer1, i) + ")";
      if (below_one(run.stages[kLayer1].token[i])) changed.push_back(w);
      else if (is_one(run.stages[kLayer1].token[i])) kept.push_back(w);
    }
    if (same_input.size() == fixed.size()) {
      text += " " + join(same_input) + (fixed.size() == 1 ? " sits" : " sit") +
              " at the same position in both sentences, so " + (fixed.size() == 1 ? "its" : "their") +
              " input is identical (cosine 1).";
      if (!changed.empty())
        text += " After layer 1 " + join(changed) + (changed.size() == 1 ? " differs" : " differ") +
                ", and only through attention: every other step of a layer (residual, layer norm, "
                "feed-forward) works on each token alone, and " + std::string(fixed.size() == 1 ? "its" : "each one's") +
                " input is the same in A and B.";
      if (!kept.empty())
        text += " After layer 1 " + join(kept) + " still " + (kept.size() == 1 ? "prints" : "print") + " as 1.";
    }
  }
  if (ctx.permutation) {
    // 2. the mean-pooled sentences: identical input, separated by the first non-linear step
    const double in = run.stages[kInput].sentence, l1 = run.stages[kLayer1].sentence;
    if (is_one(in) && run.in_attention) {
      text += " The mean-pooled input is identical (" + fixed6(in) + "): both sentences hold the same "
              "embeddings in another order, and " + run.scheme + " adds no position vectors.";
      if (below_one(l1))
        text += " Every step of a layer except attention works on each token alone and would keep the mean "
                "of the same vectors in another order, so the pooled sentences separate in layer 1 (" +
                fixed6(l1) + ") through attention" + (last > kLayer1 ? ", " + fixed6(run.stages[last].sentence) + " after " +
                                                         last_name : std::string()) + ".";
      else if (is_one(l1))
        text += " It still prints as 1 after layer 1.";
    } else if (is_one(in)) {
      text += " The mean-pooled input is identical (" + fixed6(in) + "): averaging is linear, and both "
              "sentences hold the same embeddings and the same position vectors, only paired differently.";
      if (below_one(l1))
        text += " A non-linear step applied to each token on its own (layer norm, the feed-forward's ReLU) "
                "does not commute with the average, so the pooled sentences separate even without attention; "
                "here they separate in layer 1 (" +
                fixed6(l1) + ")" + (last > kLayer1 ? ", " + fixed6(run.stages[last].sentence) + " after " +
                                                         last_name : std::string()) + ".";
      else if (is_one(l1))
        text += " It still prints as 1 after layer 1.";
    } else if (!std::isnan(in)) {
      text += " The mean-pooled input differs (" + fixed6(in) + ").";
    }
  } else {
    // 3. not a permutation: different context even without positions, different means
    if (run.scheme == "none") {
      std::vector<std::string> changed;
      for (std::size_t i = 0; i < ctx.matches.size(); ++i)
        if (below_one(run.stages[kLayer1].token[i]))
          changed.push_back(quoted(ctx.matches[i].key) + " (" + at(run, kLayer1, i) + ")");
      if (!changed.empty())
        text += "The sentences are not permutations of each other, so the shared words see different "
                "neighbours: even without positions " + join(changed) + (changed.size() == 1 ? " differs" : " differ") +
                " after layer 1, because attention mixes in the other tokens (it ignores order, not content).";
      else
        text += "The sentences are not permutations of each other, yet every shared word still prints as 1 "
                "after layer 1.";
    }
    const double e = run.stages[0].sentence;
    if (below_one(e))
      text += " The sentence cosine compares the mean of all tokens of each sentence, and A and B hold "
              "different words, so it is below 1 from the token embedding on (" + fixed6(e) + ").";
    else if (is_one(e))
      text += " The sentence cosine is 1 at the token embedding (" + fixed6(e) + "): the mean word "
              "embedding of A equals B's.";
  }
  if (ctx.d_model == 1)
    text += " D = 1 is degenerate: a vector of one number can only point forwards or backwards, so every "
            "cosine is +1, -1 or n/a.";
  if (ctx.d_model == 2)
    text += " D = 2 is degenerate: layer normalisation removes the mean of the two numbers, so after any "
            "layer a vector points along (1, -1) or (-1, 1) and every cosine there is +1, -1 or n/a.";
  text += undefined_sentence(undefined, ctx.d_model);
  while (!text.empty() && text[0] == ' ') text.erase(0, 1);
  return text;
}

// With --scale-embedding: how much longer the token vectors are than the position vectors
// (mean Euclidean lengths over the tokens of sentence A, measured in this run).
std::string scale_text(const xenc::ModelTrace& trace, std::size_t len_a, std::size_t d_model,
                       const std::string& scheme) {
  double emb = 0, pos = 0;
  for (std::size_t t = 0; t < len_a; ++t) {
    double e2 = 0, p2 = 0;
    for (std::size_t d = 0; d < d_model; ++d) {
      const double e = trace.token_embedding(0, t, d), p = trace.with_positions(0, t, d) - e;
      e2 += e * e;
      p2 += p * p;
    }
    emb += std::sqrt(e2) / double(len_a);
    pos += std::sqrt(p2) / double(len_a);
  }
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "--scale-embedding multiplied the token embeddings by sqrt(D) = %.2f. Their entries are "
                "N(0, 1), so a token vector is about sqrt(D) * sqrt(D) = D long, while a %s position "
                "vector is about %s long: here the token vectors are on average %.1f times longer than "
                "the position vectors (mean lengths %.2f and %.2f), so the positions barely turn them and "
                "the cosines stay closer to 1.",
                std::sqrt(double(d_model)), scheme.c_str(),
                scheme == "sinusoidal" ? "sqrt(D/2)" : "sqrt(D) (N(0, 1) entries)", pos > 0 ? emb / pos : 0.0,
                emb, pos);
  return buf;
}

nlohmann::ordered_json to_json(const Run& run, const std::vector<Match>& matches) {
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

void write_figures(const std::string& dir, const std::vector<Run>& runs,
                   const std::vector<Match>& matches) {
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
    xenc::viz::write_text_file(dir + "/cosine_" + run.scheme + ".svg", xenc::viz::line_plot_svg(series, o));
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
        diff(i, d) = run.final_output(0, matches[i].pos_a, d) - run.final_output(1, matches[i].pos_b, d);
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"xenc-word-order: the same encoder, with the same weights, on \"cat chased mouse\" and\n"
               "\"mouse chased cat\", without and with positional encoding. For each stage it prints the\n"
               "cosine similarity between each word's vector in sentence A and in sentence B.\n"
               "The model is random (seeded, untrained): its words carry no meaning."};
  xenc_app::add_version(app, "xenc-word-order");
  std::string a = "cat chased mouse", b = "mouse chased cat", position = "sinusoidal", svg_dir;
  std::size_t d_model = 16, heads = 2, layers = 2, ff = 0;
  std::uint32_t seed = 42;
  bool json = false, scale = false;
  app.add_option("--a", a, "sentence A")->capture_default_str();
  app.add_option("--b", b, "sentence B (words are matched to A's by occurrence: the, the#2, ...)")
      ->capture_default_str();
  app.add_option("--position", position,
                 "compare no positions with: sinusoidal | learned (untrained, N(0,1)) | rope | alibi "
                 "(these two act inside attention) | all (every scheme); none = only the run without positions")
      ->check(CLI::IsMember({"none", "sinusoidal", "learned", "rope", "alibi", "all"}))
      ->capture_default_str();
  app.add_option("--d-model", d_model, "D, the vector size")->check(xenc_app::whole_range(1, 4096))->capture_default_str();
  app.add_option("--heads", heads, "H, attention heads (must divide D)")->check(xenc_app::whole_range(1, 256))->capture_default_str();
  app.add_option("--layers", layers, "N, encoder layers")->check(xenc_app::whole_range(1, 48))->capture_default_str();
  app.add_option("--ff", ff, "F, feed-forward width (0 = 4 D)")->check(xenc_app::whole_range(0, 65536))->capture_default_str();
  app.add_option("--seed", seed, "seed of the random weights")
      ->check(xenc_app::whole_range(0, 4294967295LL))->capture_default_str();
  app.add_flag("--scale-embedding", scale,
               "multiply token embeddings by sqrt(D) as in the paper; this model's embeddings are N(0, 1), so "
               "they become about sqrt(2D) times longer than sinusoidal positions, which then barely change "
               "the cosines (the output measures it)");
  app.add_flag("--json", json, "print one JSON object instead of the tables");
  app.add_option("--svg-dir", svg_dir, "write SVG figures of the cosines and the final-layer differences here");
  CLI11_PARSE(app, argc, argv);

  try {
    // 1. tokens, matched by occurrence
    const auto tok_a = xenc::tokenize(a), tok_b = xenc::tokenize(b);
    if (tok_a.empty()) throw std::invalid_argument("--a is empty: sentence A has no words (got \"" + a + "\")");
    if (tok_b.empty()) throw std::invalid_argument("--b is empty: sentence B has no words (got \"" + b + "\")");
    const auto keys_a = occurrence_keys(tok_a), keys_b = occurrence_keys(tok_b);
    std::vector<Match> matches;
    std::vector<std::string> only_a, only_b;
    for (std::size_t i = 0; i < keys_a.size(); ++i) {
      auto it = std::find(keys_b.begin(), keys_b.end(), keys_a[i]);
      if (it == keys_b.end()) only_a.push_back(keys_a[i]);
      else matches.push_back({keys_a[i], i, std::size_t(it - keys_b.begin())});
    }
    for (const auto& k : keys_b)
      if (std::find(keys_a.begin(), keys_a.end(), k) == keys_a.end()) only_b.push_back(k);
    if (matches.empty())
      throw std::invalid_argument("sentences \"" + a + "\" and \"" + b + "\" share no word: nothing to compare");
    Context ctx;
    ctx.matches = matches;
    ctx.permutation = only_a.empty() && only_b.empty();
    ctx.identical = tok_a == tok_b;
    ctx.reversed = !ctx.identical && std::equal(tok_a.begin(), tok_a.end(), tok_b.rbegin(), tok_b.rend());
    ctx.d_model = d_model;
    const bool permutation = ctx.permutation;

    // 2. one model (built without positions); each run swaps in a position scheme, nothing else
    const auto vocab = xenc::Vocabulary::from_texts({a, b});
    const auto batch = vocab.encode_batch({a, b});  // ids [2, T], padding mask [2, T]
    const std::size_t T = batch.ids.shape()[1], F = ff ? ff : 4 * d_model;
    // refuse a model that would not fit before allocating it (inference: weights + activations)
    const double need = xenc_app::encoder_inference_bytes(vocab.size(), std::max<std::size_t>(64, T), d_model,
                                                          heads, F, layers, 2, T);
    if (need > xenc_app::kMemoryLimitBytes)
      throw std::invalid_argument("this model needs about " + xenc_app::human_bytes(need) +
                                  " of memory for inference (D = " + std::to_string(d_model) + ", " +
                                  std::to_string(layers) + " layers, F = " + std::to_string(F) + ", T = " +
                                  std::to_string(T) + "), more than this demo's limit of " +
                                  xenc_app::human_bytes(xenc_app::kMemoryLimitBytes) +
                                  ": use a smaller --d-model, --layers or --ff");
    xenc::EncoderModelConfig cfg;
    cfg.vocab_size = vocab.size();
    cfg.layer.d_model = d_model;
    cfg.layer.nhead = heads;
    cfg.layer.dim_feedforward = F;
    cfg.layer.dropout = 0.0f;
    cfg.num_layers = layers;
    cfg.position = xenc::PositionKind::none;
    cfg.scale_embedding = scale;
    cfg.seed = seed;
    xenc::EncoderModel model(cfg);  // eval mode: no dropout
    xenc::NoGradGuard no_grad;

    std::vector<std::string> schemes = {"none"};
    for (xenc::PositionKind kind : xenc::all_position_kinds()) {
      const std::string name = xenc::to_string(kind);
      if (name != "none" && (position == name || position == "all")) schemes.push_back(name);
    }
    std::vector<Run> runs;
    std::vector<std::string> scale_notes;  // one per run, "" without positions or --scale-embedding
    for (const auto& scheme : schemes) {
      xenc::Rng pos_rng(seed + 1);  // only learned positions draw from it
      model.position = xenc::make_position_scheme(xenc::parse_position_kind(scheme), d_model,
                                                  std::max<std::size_t>(64, T), pos_rng);
      xenc::ModelTrace trace;
      Run run;
      run.scheme = scheme;
      run.json_key = scheme == "none" ? "without_pe" : scheme == "sinusoidal" ? "with_pe" : "with_" + scheme;
      run.in_attention = model.position->acts_in_attention();
      run.final_output = model.forward(batch.ids, batch.padding_mask, &trace);
      const std::size_t la = tok_a.size(), lb = tok_b.size();
      run.stages.push_back(compare("token embedding", trace.token_embedding, matches, la, lb));
      run.stages.push_back(compare("+ positions", trace.with_positions, matches, la, lb));
      for (std::size_t l = 0; l < trace.encoder.layer_outputs.size(); ++l)
        run.stages.push_back(compare("layer " + std::to_string(l + 1), trace.encoder.layer_outputs[l], matches, la, lb));
      scale_notes.push_back(scale && scheme != "none" && !run.in_attention ? scale_text(trace, la, d_model, scheme) : "");
      runs.push_back(run);
    }

    // 3. report
    if (json) {
      nlohmann::ordered_json j;
      j["a"] = a;
      j["b"] = b;
      j["tokens_a"] = tok_a;
      j["tokens_b"] = tok_b;
      j["permutation"] = permutation;
      j["identical"] = ctx.identical;
      j["only_in_a"] = only_a;
      j["only_in_b"] = only_b;
      j["config"] = {{"d_model", d_model}, {"heads", heads}, {"layers", layers},
                     {"dim_feedforward", cfg.layer.dim_feedforward}, {"seed", seed},
                     {"scale_embedding", scale}};
      for (const auto& run : runs) j[run.json_key] = to_json(run, matches);
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << "A: \"" << a << "\"\nB: \"" << b << "\"\n"
                << "One encoder (D = " << d_model << ", " << heads << (heads == 1 ? " head, " : " heads, ") << layers
                << " layers, seed " << seed << (scale ? ", embeddings x sqrt(D)" : "")
                << "), the same random weights in every run.\n"
                << "Each number is the cosine similarity between a word's vector in A and in B\n"
                << "(\"sentence\": the mean of all token vectors of A vs of B); 1 = identical direction.\n";
      if (ctx.identical) {
        std::cout << "\n";
        print_wrapped("Note: A and B are the same sentence. No word moved, so this is a degenerate case: "
                      "every run compares two identical inputs.");
      } else if (!permutation) {
        auto list = [](const std::vector<std::string>& v) {
          std::string s;
          for (const auto& w : v) s += (s.empty() ? "" : ", ") + w;
          return s.empty() ? std::string("-") : s;
        };
        std::cout << "\n";
        print_wrapped("Note: the sentences are not permutations of each other; the table compares the " +
                      std::to_string(matches.size()) + " shared words only (only in A: " + list(only_a) +
                      "; only in B: " + list(only_b) + ").");
      }
      for (std::size_t r = 0; r < runs.size(); ++r) {
        const Run& run = runs[r];
        std::cout << "\n" << (run.scheme == "none" ? "Without positional information (--position none)"
                                                   : "With " + run.scheme + " positional encoding")
                  << "\n";
        print_table(run, matches);
        std::cout << "\n";
        print_wrapped(explain(run, ctx));
        if (!scale_notes[r].empty()) print_wrapped(scale_notes[r]);
      }
    }
    if (!svg_dir.empty()) {
      write_figures(svg_dir, runs, matches);
      if (!json) std::cout << "\nFigures written to " << svg_dir << "/ (cosine_<scheme>.svg, final_difference.svg)\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "xenc-word-order: error: " << e.what() << "\n";
    return 1;
  }
  return xenc_app::finish_stdout("xenc-word-order");
}

// word_order: does the encoder know that "cat chased mouse" and "mouse chased cat" differ?
//
// One encoder, one set of weights, run on two sentences that use the same words in a different
// order. Only the position scheme changes between runs (none, sinusoidal, learned). For every
// stage of the forward pass (token embedding, after adding positions, after each layer) we print,
// for each word, the cosine similarity between its vector in sentence A and in sentence B, and
// the cosine similarity of the two mean-pooled sentence vectors.
//
// Without positions self-attention sees a set, not a sequence: permuting the tokens permutes the
// outputs (permutation equivariance), so every cosine is 1. With positions the words differ.
//
//     word_order                                  # the defaults: D = 16, 2 heads, 2 layers
//     word_order --a "the dog bit the man" --b "the man bit the dog" --position all
//     word_order --json                           # machine-readable
//     word_order --svg-dir figures                # line plots and heatmaps of what changed
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <xenc/xenc.hpp>
#include <xenc/viz/svg.hpp>

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

// Cosine similarity in double precision (so identical vectors give 1 to ~1e-16).
double cosine(const std::vector<double>& u, const std::vector<double>& v) {
  double uv = 0, uu = 0, vv = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    uv += u[i] * v[i];
    uu += u[i] * u[i];
    vv += v[i] * v[i];
  }
  if (uu == 0 || vv == 0) return 0.0;
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
  std::string scheme;    // none | sinusoidal | learned
  std::string json_key;  // without_pe | with_pe | with_learned
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
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

std::string pad_right(const std::string& s, std::size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}
std::string pad_left(const std::string& s, std::size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}

void print_table(const Run& run, const std::vector<Match>& matches) {
  std::size_t name_w = 16;
  for (const auto& s : run.stages) name_w = std::max(name_w, s.name.size() + 2);
  std::vector<std::size_t> col_w;
  for (const auto& m : matches) col_w.push_back(std::max<std::size_t>(9, m.key.size() + 1));
  std::string header = "  " + pad_right("stage", name_w);
  for (std::size_t i = 0; i < matches.size(); ++i) header += pad_left(matches[i].key, col_w[i]) + " ";
  header += "| " + pad_left("sentence", 9);
  std::cout << header << "\n  " << std::string(header.size() - 2, '-') << "\n";
  for (const auto& s : run.stages) {
    std::cout << "  " << pad_right(s.name, name_w);
    for (std::size_t i = 0; i < s.token.size(); ++i) std::cout << pad_left(fixed6(s.token[i]), col_w[i]) << " ";
    std::cout << "| " << pad_left(fixed6(s.sentence), 9) << "\n";
  }
}

// Largest |1 - cosine| over every word and stage and the sentence.
double max_deviation(const Run& run) {
  double m = 0;
  for (const auto& s : run.stages) {
    for (double c : s.token) m = std::max(m, std::abs(1 - c));
    m = std::max(m, std::abs(1 - s.sentence));
  }
  return m;
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
    if (!line.empty() && line.size() + 1 + word.size() > 88) {
      std::cout << "  " << line << "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty()) std::cout << "  " << line << "\n";
}

// The two or three sentences under a table, from the numbers in it.
void explain(const Run& run, const std::vector<Match>& matches, bool permutation) {
  const Stage& input = run.stages[1];  // after adding positions
  const Stage& first = run.stages[2];  // after layer 1
  const Stage& last = run.stages.back();
  if (!permutation) {
    std::string text = "The sentences are not permutations of each other, so the shared words see "
                       "different neighbours: ";
    text += run.scheme == "none"
                ? "even without positions their vectors differ once attention mixes in the context"
                  " (layer 1), because attention only ignores order, not content."
                : "their vectors differ after attention, and words at different positions differ as"
                  " soon as positions are added.";
    text += " The sentence cosine compares the mean of all tokens of each sentence, so it is below 1"
            " from the start (" + fixed6(run.stages[0].sentence) + ").";
    print_wrapped(text);
    return;
  }
  if (run.scheme == "none") {
    print_wrapped("Every cosine is 1 (largest deviation " + sci(max_deviation(run)) +
                  ", float rounding): without positions the encoder is permutation-equivariant, so "
                  "each word gets the same vector whether it comes first or last, and the two "
                  "sentences are indistinguishable.");
    return;
  }
  // words at the same position in both sentences keep an identical input vector
  std::vector<std::string> fixed, moved;
  std::size_t fixed_i = matches.size();
  for (std::size_t i = 0; i < matches.size(); ++i) {
    if (matches[i].pos_a == matches[i].pos_b) {
      fixed.push_back("\"" + matches[i].key + "\"");
      if (fixed_i == matches.size()) fixed_i = i;
    } else {
      moved.push_back("\"" + matches[i].key + "\"");
    }
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i)
      s += (i ? (i + 1 == v.size() ? " and " : ", ") : "") + v[i];
    return s;
  };
  std::string text = "With " + run.scheme + " positions the words that moved (" + join(moved) +
                     ") differ as soon as positions are added.";
  if (fixed_i < matches.size())
    text += " " + join(fixed) + (fixed.size() == 1 ? " sits" : " sit") +
            " at the same position in both sentences: " + (fixed.size() == 1 ? "its" : "their") +
            " input is identical (" + fixed6(input.token[fixed_i]) +
            ") and changes only after attention mixes in the neighbours (" +
            fixed6(first.token[fixed_i]) + " after layer 1).";
  text += " The mean-pooled input is still identical (" + fixed6(input.sentence) +
          ": the same words at the same set of positions); the sentences separate only after "
          "attention (" + fixed6(last.sentence) + " after layer " +
          std::to_string(run.stages.size() - 2) + ").";
  print_wrapped(text);
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
    double lo = 1.0;
    for (std::size_t i = 0; i <= matches.size(); ++i) {
      xenc::viz::LineSeries ls;
      ls.label = i < matches.size() ? matches[i].key : "sentence (mean-pooled)";
      ls.dashed = i == matches.size();
      for (std::size_t s = 0; s < run.stages.size(); ++s) {
        ls.x.push_back(double(s));
        ls.y.push_back(i < matches.size() ? run.stages[s].token[i] : run.stages[s].sentence);
        lo = std::min(lo, ls.y.back());
      }
      series.push_back(ls);
    }
    xenc::viz::LinePlotOptions o;
    o.title = "Cosine between sentence A and B, position: " + run.scheme;
    o.x_label = "stage of the forward pass";
    o.y_label = "cosine similarity (A vs B)";
    o.x_tick_labels = stage_names;
    o.markers = true;
    o.y_max = 1.0;
    o.y_min = std::min(0.9, std::floor(lo * 10) / 10);
    xenc::viz::write_text_file(dir + "/cosine_" + run.scheme + ".svg", xenc::viz::line_plot_svg(series, o));
  }
  // 2. final-layer difference A - B per shared word, one panel per scheme, one colour scale
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
  xenc::viz::write_text_file(dir + "/final_difference.svg",
                             xenc::viz::heatmap_grid_svg(panels, titles, h, 1));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"word_order: the same encoder, with the same weights, on \"cat chased mouse\" and\n"
               "\"mouse chased cat\", without and with positional encoding. For each stage it prints the\n"
               "cosine similarity between each word's vector in sentence A and in sentence B."};
  std::string a = "cat chased mouse", b = "mouse chased cat", position = "sinusoidal", svg_dir;
  std::size_t d_model = 16, heads = 2, layers = 2, ff = 0;
  std::uint32_t seed = 42;
  bool json = false, scale = false;
  app.add_option("--a", a, "sentence A")->capture_default_str();
  app.add_option("--b", b, "sentence B (words are matched to A's by occurrence: the, the#2, ...)")
      ->capture_default_str();
  app.add_option("--position", position,
                 "compare no positions with: sinusoidal | learned (untrained, N(0,1)) | all; "
                 "none = only the run without positions")
      ->check(CLI::IsMember({"none", "sinusoidal", "learned", "all"}))
      ->capture_default_str();
  app.add_option("--d-model", d_model, "D, the vector size")->check(CLI::Range(1, 4096))->capture_default_str();
  app.add_option("--heads", heads, "H, attention heads (must divide D)")->check(CLI::Range(1, 256))->capture_default_str();
  app.add_option("--layers", layers, "N, encoder layers")->check(CLI::Range(1, 48))->capture_default_str();
  app.add_option("--ff", ff, "F, feed-forward width (0 = 4 D)")->capture_default_str();
  app.add_option("--seed", seed, "seed of the random weights")->capture_default_str();
  app.add_flag("--scale-embedding", scale, "multiply token embeddings by sqrt(D) as in the paper");
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
    const bool permutation = only_a.empty() && only_b.empty();

    // 2. one model (built without positions); each run swaps in a position scheme, nothing else
    const auto vocab = xenc::Vocabulary::from_texts({a, b});
    const auto batch = vocab.encode_batch({a, b});  // ids [2, T], padding mask [2, T]
    xenc::EncoderModelConfig cfg;
    cfg.vocab_size = vocab.size();
    cfg.layer.d_model = d_model;
    cfg.layer.nhead = heads;
    cfg.layer.dim_feedforward = ff ? ff : 4 * d_model;
    cfg.layer.dropout = 0.0f;
    cfg.num_layers = layers;
    cfg.position = xenc::PositionKind::none;
    cfg.scale_embedding = scale;
    cfg.seed = seed;
    xenc::EncoderModel model(cfg);  // eval mode: no dropout
    xenc::NoGradGuard no_grad;

    std::vector<std::string> schemes = {"none"};
    if (position == "sinusoidal" || position == "all") schemes.push_back("sinusoidal");
    if (position == "learned" || position == "all") schemes.push_back("learned");
    std::vector<Run> runs;
    for (const auto& scheme : schemes) {
      xenc::Rng pos_rng(seed + 1);  // only learned positions draw from it
      model.position = xenc::make_position_scheme(xenc::parse_position_kind(scheme), d_model,
                                                  std::max<std::size_t>(64, batch.ids.shape()[1]), pos_rng);
      xenc::ModelTrace trace;
      Run run;
      run.scheme = scheme;
      run.json_key = scheme == "none" ? "without_pe" : scheme == "sinusoidal" ? "with_pe" : "with_learned";
      run.final_output = model.forward(batch.ids, batch.padding_mask, &trace);
      const std::size_t la = tok_a.size(), lb = tok_b.size();
      run.stages.push_back(compare("token embedding", trace.token_embedding, matches, la, lb));
      run.stages.push_back(compare("+ positions", trace.with_positions, matches, la, lb));
      for (std::size_t l = 0; l < trace.encoder.layer_outputs.size(); ++l)
        run.stages.push_back(compare("layer " + std::to_string(l + 1), trace.encoder.layer_outputs[l], matches, la, lb));
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
      j["only_in_a"] = only_a;
      j["only_in_b"] = only_b;
      j["config"] = {{"d_model", d_model}, {"heads", heads}, {"layers", layers},
                     {"dim_feedforward", cfg.layer.dim_feedforward}, {"seed", seed},
                     {"scale_embedding", scale}};
      for (const auto& run : runs) j[run.json_key] = to_json(run, matches);
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << "A: \"" << a << "\"\nB: \"" << b << "\"\n"
                << "One encoder (D = " << d_model << ", " << heads << " heads, " << layers
                << " layers, seed " << seed << "), the same weights in every run.\n"
                << "Each number is the cosine similarity between a word's vector in A and in B\n"
                << "(\"sentence\": the mean of all token vectors of A vs of B); 1 = identical direction.\n";
      if (!permutation) {
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
      for (const auto& run : runs) {
        std::cout << "\n" << (run.scheme == "none" ? "Without positional information (--position none)"
                                                   : "With " + run.scheme + " positional encoding")
                  << "\n";
        print_table(run, matches);
        std::cout << "\n";
        explain(run, matches, permutation);
      }
    }
    if (!svg_dir.empty()) {
      write_figures(svg_dir, runs, matches);
      if (!json) std::cout << "\nFigures written to " << svg_dir << "/ (cosine_<scheme>.svg, final_difference.svg)\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "word_order: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

// xenc-word-order's experiment (see experiment.hpp).
#include "experiment.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <xenc/xenc.hpp>

#include "../common/analysis.hpp"
#include "../common/model_options.hpp"

namespace word_order {

using xenc::Tensor3;
using xenc_app::cosine;
using xenc_app::mean_pool;
using xenc_app::row;

std::vector<std::string> occurrence_keys(const std::vector<std::string>& tokens) {
  std::map<std::string, int> seen;
  std::vector<std::string> keys;
  for (const auto& t : tokens) {
    const int n = ++seen[t];
    keys.push_back(n == 1 ? t : t + "#" + std::to_string(n));
  }
  return keys;
}

namespace {

Stage compare(const std::string& name, const Tensor3& x, const std::vector<Match>& matches,
              std::size_t len_a, std::size_t len_b) {
  Stage s{name, {}, 0.0};
  for (const auto& m : matches) s.token.push_back(cosine(row(x, 0, m.pos_a), row(x, 1, m.pos_b)));
  s.sentence = cosine(mean_pool(x, 0, len_a), mean_pool(x, 1, len_b));
  return s;
}

// Mean Euclidean lengths over the tokens of sentence A of the token vectors and of what the
// position scheme added to them.
void measure_lengths(const xenc::ModelTrace& trace, std::size_t len_a, std::size_t d_model,
                     Run& run) {
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
  run.token_length = emb;
  run.position_length = pos;
}

}  // namespace

Result run_experiment(const Options& o) {
  Result r;
  r.options = o;
  // 1. tokens, and the words the two sentences share
  r.tokens_a = xenc::tokenize(o.a);
  r.tokens_b = xenc::tokenize(o.b);
  const auto& tok_a = r.tokens_a;
  const auto& tok_b = r.tokens_b;
  if (tok_a.empty())
    throw std::invalid_argument("--a is empty: sentence A has no words (got \"" +
                                xenc::visible(o.a) + "\")");
  if (tok_b.empty())
    throw std::invalid_argument("--b is empty: sentence B has no words (got \"" +
                                xenc::visible(o.b) + "\")");
  r.identical = tok_a == tok_b;
  r.reversed = !r.identical && std::equal(tok_a.begin(), tok_a.end(), tok_b.rbegin(), tok_b.rend());
  // Each word of A is paired with a position of B by the permutation between the sentences, not
  // by occurrence: in a reversal word p of A is word T-1-p of B; otherwise a word at the same
  // position in both stays paired with itself, and the remaining copies of a repeated word are
  // paired in order.
  const auto keys_a = occurrence_keys(tok_a), keys_b = occurrence_keys(tok_b);
  const std::size_t none = std::size_t(-1);
  std::vector<std::size_t> pair_of(tok_a.size(), none);
  std::vector<bool> used_b(tok_b.size(), false);
  auto pair = [&](std::size_t p, std::size_t q) {
    pair_of[p] = q;
    used_b[q] = true;
  };
  if (r.reversed)
    for (std::size_t p = 0; p < tok_a.size(); ++p) pair(p, tok_a.size() - 1 - p);
  for (std::size_t p = 0; p < tok_a.size(); ++p)
    if (pair_of[p] == none && p < tok_b.size() && !used_b[p] && tok_b[p] == tok_a[p]) pair(p, p);
  for (std::size_t p = 0; p < tok_a.size(); ++p)
    for (std::size_t q = 0; q < tok_b.size() && pair_of[p] == none; ++q)
      if (!used_b[q] && tok_b[q] == tok_a[p]) pair(p, q);
  for (std::size_t p = 0; p < tok_a.size(); ++p)
    if (pair_of[p] == none)
      r.only_a.push_back(keys_a[p]);
    else
      r.matches.push_back({keys_a[p], p, pair_of[p]});
  for (std::size_t q = 0; q < tok_b.size(); ++q)
    if (!used_b[q]) r.only_b.push_back(keys_b[q]);
  if (r.matches.empty())
    throw std::invalid_argument("sentences \"" + xenc::visible(o.a) + "\" and \"" +
                                xenc::visible(o.b) + "\" share no word: nothing to compare");
  r.permutation = r.only_a.empty() && r.only_b.empty();

  // 2. one model (built without positions); each run swaps in a position scheme, nothing else
  const auto vocab = xenc::Vocabulary::from_texts({o.a, o.b});
  const std::size_t T = std::max(tok_a.size(), tok_b.size()), F = o.ff ? o.ff : 4 * o.d_model;
  r.dim_feedforward = F;
  // refuse a model that would not fit before allocating it (inference: weights + activations)
  xenc_app::check_inference_memory(vocab.size(), std::max<std::size_t>(64, T), o.d_model, o.heads,
                                   F, o.layers, 2, T, o.max_memory_mb, "sentences (--a, --b)");
  const auto batch =
      vocab.encode_batch({o.a, o.b}, T);  // ids [2, T], padding mask [2, T]: T checked above
  xenc::EncoderModelConfig cfg = xenc_app::encoder_config(
      o, vocab.size(), xenc::PositionKind::none, xenc::EncoderModelConfig{}.max_len, o.seed);
  cfg.layer.dim_feedforward = F;  // --ff 0: 4 D
  cfg.scale_embedding = o.scale_embedding;

  std::vector<std::string> schemes = {"none"};
  for (xenc::PositionKind kind : xenc::all_position_kinds()) {
    const std::string name = xenc::to_string(kind);
    if (name != "none" && (o.position == name || o.position == "all")) schemes.push_back(name);
  }
  // every scheme's configuration is checked before the first runs, and an odd size is named
  // with the schemes that take it (sinusoidal needs an even D, rope an even D / H)
  for (const auto& scheme : schemes) {
    xenc::EncoderModelConfig c = cfg;
    c.position = xenc::parse_position_kind(scheme);
    try {
      c.validate("--position " + scheme);
    } catch (const xenc::config_error& e) {
      if (scheme != "sinusoidal" && scheme != "rope")
        throw;  // "none" comes first: D % H, zero sizes
      throw std::invalid_argument(std::string(e.what()) + " (--d-model " +
                                  std::to_string(o.d_model) + ", --heads " +
                                  std::to_string(o.heads) + "): use an even " +
                                  (scheme == "rope" ? "--d-model / --heads" : "--d-model") +
                                  ", or --position learned or alibi, which take any size");
    }
  }
  xenc::EncoderModel model(cfg);  // eval mode: no dropout
  xenc::NoGradGuard no_grad;
  for (const auto& scheme : schemes) {
    xenc::Rng pos_rng(o.seed + 1);  // only learned positions draw from it
    try {
      model.position = xenc::make_position_scheme(xenc::parse_position_kind(scheme), o.d_model,
                                                  std::max<std::size_t>(64, T), pos_rng);
    } catch (const std::invalid_argument& e) {
      // the scheme refuses this D (sinusoidal needs it even, rope an even D / H): name the options
      throw std::invalid_argument(std::string(e.what()) +
                                  ". Give another --d-model (or --heads), or "
                                  "use --position learned, which works with any D");
    }
    xenc::ModelTrace trace;
    Run run;
    run.scheme = scheme;
    run.json_key = scheme == "none"         ? "without_pe"
                   : scheme == "sinusoidal" ? "with_pe"
                                            : "with_" + scheme;
    run.in_attention = model.position->acts_in_attention();
    run.final_output = model.forward(batch.ids, batch.padding_mask, &trace);
    const std::size_t la = tok_a.size(), lb = tok_b.size();
    run.stages.push_back(compare("token embedding", trace.token_embedding, r.matches, la, lb));
    run.stages.push_back(compare("+ positions", trace.with_positions, r.matches, la, lb));
    for (std::size_t l = 0; l < trace.encoder.layer_outputs.size(); ++l)
      run.stages.push_back(compare("layer " + std::to_string(l + 1), trace.encoder.layer_outputs[l],
                                   r.matches, la, lb));
    measure_lengths(trace, la, o.d_model, run);
    if (o.keep_attention) run.attention = std::move(trace.encoder.attention_weights);
    r.runs.push_back(run);
  }
  return r;
}

}  // namespace word_order

// xenc-word-order's experiment: one random encoder, two sentences, one run per position scheme,
// and the cosine between each word's vector in A and in B at every stage of the forward pass.
// Pure: options in, a Result out (nothing printed); report.hpp turns a Result into text, JSON and
// figures, so tests can check the narration on hand-made Results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <xenc/core/tensor.hpp>

#include "../common/options.hpp"

namespace word_order {

/// The model's sizes are the model group of apps/common/options.hpp (ff 0: 4 D); this program's
/// defaults: d_model 16, heads 2, layers 2, ff 0.
struct Options : xenc_app::ModelGroupOptions<std::size_t> {
  Options() {
    d_model = 16;
    heads = 2;
    layers = 2;
    ff = 0;
  }
  std::string a = "cat chased mouse", b = "mouse chased cat";
  std::string position = "sinusoidal";  ///< none | sinusoidal | learned | rope | alibi | all
  std::uint32_t seed = 42;
  bool scale_embedding = false;
  std::size_t max_memory_mb = 1024;  ///< --max-memory-mb: the model is refused over it
  /// Keep every layer's attention weights in each Run (the browser page draws them; the
  /// command line does not, so its memory stays one forward pass's).
  bool keep_attention = false;
};

/// One word of the comparison: "cat" or, for a repeated word, "the#2"; where it sits in A and B.
struct Match {
  std::string key;
  std::size_t pos_a, pos_b;
};

/// The cosines at one stage of the forward pass.
struct Stage {
  std::string name;
  std::vector<double> token;  ///< one per Match (NaN: undefined, a zero vector)
  double sentence;            ///< cosine of the mean-pooled sentences
};

/// One run of the model with one position scheme.
struct Run {
  std::string scheme;          ///< none | sinusoidal | learned | rope | alibi
  std::string json_key;        ///< without_pe | with_pe | with_learned | with_rope | with_alibi
  bool in_attention = false;   ///< the scheme acts inside attention (adds nothing to the input)
  std::vector<Stage> stages;   ///< token embedding, + positions, layer 1, ..., layer N
  xenc::Tensor3 final_output;  ///< [2, T, D]
  /// With Options::keep_attention: each layer's attention weights [2, H, T, T] (row 0: A, row 1:
  /// B; T: the longer sentence, the shorter padded); else empty.
  std::vector<xenc::Tensor4> attention;
  /// Mean Euclidean lengths over the tokens of A of the token vectors and of what the scheme
  /// added to them (zero for none, rope, alibi): the --scale-embedding note.
  double token_length = 0, position_length = 0;
};

struct Result {
  Options options;
  std::size_t dim_feedforward = 0;  ///< F actually used
  std::vector<std::string> tokens_a, tokens_b;
  std::vector<Match> matches;               ///< the shared words
  std::vector<std::string> only_a, only_b;  ///< occurrence keys in one sentence only
  bool permutation = false;                 ///< B uses A's words in another order (or the same)
  bool identical = false;                   ///< A and B are the same token sequence
  bool reversed = false;                    ///< B is A backwards (and not a palindrome)
  std::vector<Run> runs;                    ///< "none" first, then the schemes asked for
};

/// Keys by occurrence: ["the", "cat", "the"] -> ["the", "cat", "the#2"].
std::vector<std::string> occurrence_keys(const std::vector<std::string>& tokens);

/// Runs the experiment. Throws std::invalid_argument (the message names the option) for empty
/// sentences, sentences without a shared word, or a model over the memory limit, and the
/// library's errors for settings it refuses.
Result run_experiment(const Options& o);

}  // namespace word_order

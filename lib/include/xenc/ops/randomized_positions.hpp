// Randomized positions (Ruoss et al., 2023, "Randomized Positional Encodings Boost Length
// Generalization of Transformers", ACL 2023).
//
// A model trained on sequences of at most N tokens never sees a position ≥ N, so at test time a
// longer sequence brings position values (and distances) it has no training for. The fix: in
// training, a sequence of T tokens gets positions drawn as a sorted sample, without
// replacement, from a range [0, L) far longer than any test sequence (L = 2048 in the paper's
// code), one sample per forward shared by the batch:
//
//     training:  p_0 < p_1 < ... < p_{T−1},  {p_t} uniform among the T-subsets of [0, L)
//     test:      p_t = t
//
// The order is kept (the task still sees which token comes first); the values cover [0, L).
// Any scheme that reads a position index takes p_t instead of t: sinusoidal PE(p_t), learned
// weight[p_t] (a table of L rows), RoPE R(p_t). The schemes that read a distance (ALiBi,
// Transformer-XL's relative positions) follow the authors' code
// (google-deepmind/randomized_positional_encodings, models/positional_encodings.py,
// NOISY_RELATIVE and NOISY_ALIBI): the distance n = |i − j| becomes s_n, with s_0 = 0 and
// s_1 < ... < s_{T−1} a sorted sample from [1, L), the sign of i − j kept. Two differences from
// that code: one sample per forward serves every layer (theirs draws one per layer), and the
// test uses 0 .. T − 1 as the paper's method section states (their evaluation script samples
// too).
//
// Shapes:  positions: T values;  distances: 2T − 1 values, row m for δ = T − 1 − m
//          (ops/relative_attention.hpp's order)
// Throws:  config_error if T > L (T − 1 > L − 1 for distances): no sample without replacement.
#pragma once

#include <cstddef>
#include <vector>

#include "xenc/core/random.hpp"

namespace xenc {

/// count values drawn without replacement from [lo, hi), sorted ascending (Floyd's algorithm:
/// every count-subset equally likely). Reproducible: a function of the generator's state.
/// Throws:  config_error if count > hi − lo.
std::vector<std::size_t> sample_sorted(std::size_t count, std::size_t lo, std::size_t hi, Rng& rng);

/// Positions of T tokens: a sorted sample from [0, max_len).
std::vector<double> randomized_positions(std::size_t T, std::size_t max_len, Rng& rng);
/// The 2T − 1 signed distances for δ = T − 1 .. −(T − 1): sign(δ)·s_|δ|, s_0 = 0 and
/// s_1 < ... < s_{T−1} a sorted sample from [1, max_len).
std::vector<double> randomized_distances(std::size_t T, std::size_t max_len, Rng& rng);
/// 0, 1, ..., T − 1: the positions at test time.
std::vector<double> plain_positions(std::size_t T);

}  // namespace xenc

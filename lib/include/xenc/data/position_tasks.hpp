// Generated tasks that need position information and whose rule does not depend on the length
// of the sequence, for "train short, test long" (xenc-extrapolate, notebook 07).
//
// A sequence is T random symbols s[0..T-1], drawn uniformly and independently from V symbols
// written "t0", "t1", ..., "t{V-1}" (seeded, no download). Each position p gets a label:
//
//   neighbour_sum  y[p] = (s[p-k] + s[p+k]) mod V     for k <= p < T-k, else kIgnoreIndex
//                  (the two symbols k places away on either side, added as numbers; the rule
//                  is the same read left to right or right to left, so a scheme that cannot
//                  tell left from right, such as the symmetric ALiBi of an encoder, can still
//                  solve it exactly)
//   copy_left      y[p] = s[p-k]                        for p >= k, else kIgnoreIndex
//                  (the symbol k places to the left: needs the direction, not only the
//                  distance. The symmetric ALiBi bias −m·|i − j| makes an encoder give the
//                  reversed sequence the reversed outputs, so it cannot tell s[p-k] from
//                  s[p+k] and is capped near 50% inside the sequence.)
//
// Why `none` cannot solve either: without positions the encoder is permutation-equivariant, so
// the output at p depends only on s[p] and on the multiset (the bag) of the sequence's symbols,
// not on which symbol sits k places away. Those neighbours are then a random draw from the
// bag, and a position-free model is near chance (1/V). It is not exactly at chance on short
// sequences: a symbol that occurs often in the bag is a likelier neighbour. That edge shrinks
// as T grows (the bag of a long sequence is close to uniform).
//
// The labels are symbol indices 0..V-1 (label_names() gives "t0", ...); the loss ignores the
// positions without one. Lengths are drawn per sequence, uniformly in [min_length, max_length]
// (equal bounds: every sequence has that length), so the same config type describes a training
// set of mixed short lengths and a test set of one long length.
//
//     xenc::PositionTaskConfig c;        // neighbour_sum, V = 8, k = 1, T in [8, 16]
//     c.seed = 1;
//     const xenc::PositionTaskDataset d = xenc::make_position_task(c);
//     xenc::LabelledBatch b = xenc::make_batch(d.sequences, {0, 1, 2}, d.vocab);  // batching.hpp
//
// Throws:  config_error naming the rule and the value (see PositionTaskConfig::validate).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "xenc/data/batching.hpp"
#include "xenc/text/vocabulary.hpp"

namespace xenc {

enum class PositionRule { neighbour_sum, copy_left };

/// "neighbour_sum" | "copy_left". Throws config_error otherwise.
PositionRule parse_position_rule(const std::string& name);
std::string to_string(PositionRule rule);
/// Every rule, in declaration order.
const std::vector<PositionRule>& all_position_rules();

struct PositionTaskConfig {
  PositionRule rule = PositionRule::neighbour_sum;
  std::size_t num_symbols = 8;  ///< V, 2...1000; the labels are 0..V-1
  std::size_t offset = 1;       ///< k, 1...64
  std::size_t min_length = 8;   ///< shortest sequence; must leave at least one labelled position
  std::size_t max_length = 16;  ///< longest sequence, min_length...100000
  std::size_t num_sequences = 1000;  ///< 1...10,000,000
  std::uint32_t seed = 0;

  /// Throws config_error naming the rule and the value, e.g.
  /// "make_position_task: min_length is 2, expected >= 3 (neighbour_sum needs 2k + 1 with k = 1)".
  void validate() const;
};

struct PositionTaskDataset {
  PositionTaskConfig config;
  std::vector<LabelledSentence> sequences;         ///< tokens "t<s>", labels per the rule
  std::vector<std::vector<std::int64_t>> symbols;  ///< the same sequences as numbers 0..V-1
  Vocabulary vocab;                                ///< position_task_vocabulary(V)
  std::size_t labelled_positions = 0;              ///< labels != kIgnoreIndex, all sequences
  std::vector<std::string> label_names() const;    ///< "t0", ..., "t{V-1}"
  /// Accuracy of guessing: 1 / V.
  double chance() const { return 1.0 / double(config.num_symbols); }
};

/// Generates the dataset (the same config gives the same sequences everywhere).
PositionTaskDataset make_position_task(const PositionTaskConfig& config);

/// <pad>, <unk>, then "t0" ... "t{V-1}" (ids 2 ... V+1): the same for every length and seed,
/// so a model trained on one dataset reads every other with the same V.
Vocabulary position_task_vocabulary(std::size_t num_symbols);

/// The rule itself: the label of position p of `symbols` with offset k and V symbols, or
/// kIgnoreIndex where the rule needs a position outside the sequence.
/// Throws:  std::invalid_argument if p >= symbols.size().
std::int64_t position_task_label(PositionRule rule, const std::vector<std::int64_t>& symbols,
                                 std::size_t p, std::size_t k, std::size_t num_symbols);

/// The shortest sequence that has a labelled position: 2k + 1 (neighbour_sum), k + 1 (copy_left).
std::size_t position_task_min_length(PositionRule rule, std::size_t k);

}  // namespace xenc

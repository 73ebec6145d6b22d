// Generated tasks that need position information and whose rule does not depend on the length
// of the sequence, for "train short, test long" (xenc-extrapolate, notebooks 07 and 10).
//
// Two families, one dataset type. Symbols are written "t0", "t1", ..., "t{V-1}" and drawn
// uniformly and independently (seeded, no download).
//
// 1. A label at every position (the input is T random symbols s[0..T-1] from V symbols):
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
// 2. Tasks of Ruoss et al., "Randomized Positional Encodings Boost Length Generalization of
//    Transformers" (ACL 2023), as their code defines them (google-deepmind/
//    randomized_positional_encodings, tasks/). The input x has n tokens; the answer y has
//    m = output_length(n) classes. Their encoder-only model reads x followed by m placeholder
//    tokens and answers at the placeholders, so a sequence here is
//
//        tokens:  x[0] ... x[n-1] <out> ... <out>        (n + m tokens)
//        labels:  -    ...  -     y[0] ... y[m-1]        (- = kIgnoreIndex)
//
//   reverse_string            x: n symbols             y = x[n-1] ... x[0]                m = n
//   duplicate_string          x: n symbols             y = x x                           m = 2n
//   odds_first                x: n symbols             y = x[1] x[3] x[5] ... x[0] x[2] ...
//                             (0-based odd positions first, as the authors' code does; their
//                             docstring counts from 1 and shows the even ones first)  m = n
//   bucket_sort               x: n symbols             y = x sorted ascending            m = n
//   parity_check              x: n bits                y = (number of 1s) mod 2          m = 1
//   missing_duplicate_string  x: w w with one symbol replaced by "?" (w: n/2 bits, rounded
//                             down), then "#" if n is odd; y = the replaced bit          m = 1
//                             e.g. 0 1 1 0 0 ? 1 0 -> 1   (w = 0110, position 5 is w[1])
//   binary_addition           x: a + b, little-endian bits: a of n_a bits, "+", b of
//                             n - 1 - n_a bits, n_a uniform in [1, n-2], a and b uniform in
//                             [1, 2^bits - 1]; y = a + b little-endian without trailing zeros,
//                             then <end> (class 2)                               m = n + 1
//                             e.g. 0 0 1 + 0 1 1 0 1 (4 + 22) -> 0 1 0 1 1 <end> (26)
//                             The paper pads y with 0s after <end> and its accuracy ignores
//                             them; here those positions are kIgnoreIndex (neither loss nor
//                             accuracy): the accuracy is the paper's, the loss skips the padding.
//   even_pairs                x: n bits                y = (number of 01 and 10 pairs) mod 2
//                             (= 1 when the first and last bits differ)               m = 1
//   cycle_navigation          x: n actions t0 t1 t2 = left, stay, right on a cycle of 5 states,
//                             starting at 0; y = the final state                      m = 1
//                             e.g. t2 t0 t1 t0 t0: +1 -1 0 -1 -1 = -2 -> state 3
//   The paper's alphabets: binary for all but bucket_sort (V = 5) and cycle_navigation (3
//   actions). parity_check, missing_duplicate_string, binary_addition and even_pairs read bits
//   only and need num_symbols = 2, cycle_navigation needs 3; the others take any V. These tasks
//   ignore the offset k.
//
// Why `none` (no positions) cannot solve the position tasks: without positions the encoder is
// permutation-equivariant, so the output at p depends only on the token at p and on the
// multiset (the bag) of the sequence's tokens, not on which symbol sits k places away. Those
// neighbours are then a random draw from the bag, and a position-free model is near chance
// (1/V). It is not exactly at chance on short sequences: a symbol that occurs often in the bag
// is a likelier neighbour. That edge shrinks as T grows (the bag of a long sequence is close to
// uniform). The same argument holds at the <out> placeholders of family 2, which all look
// alike: without positions they all get the same answer. parity_check, cycle_navigation and
// bucket_sort are the exceptions: the parity, the final state and the sorted string depend on
// the bag only (bucket_sort still needs each placeholder's rank).
//
// The labels are class indices 0..C-1 (C = num_classes(); label_names() gives their names);
// the loss ignores the positions without one. Input lengths are drawn per sequence, uniformly in
// [min_length, max_length] (equal bounds: every input has that length), so the same config type
// describes a training set of mixed short lengths and a test set of one long length.
//
//     xenc::PositionTaskConfig c;        // neighbour_sum, V = 8, k = 1, T in [8, 16]
//     c.seed = 1;
//     const xenc::PositionTaskDataset d = xenc::make_position_task(c);
//     xenc::LabelledBatch b = xenc::make_batch(d.sequences, {0, 1, 2}, d.vocab);  // batching.hpp
//
//     c.rule = xenc::PositionRule::parity_check;  // n bits, then one <out>
//     c.num_symbols = 2;
//     c.min_length = 1;
//     c.max_length = 40;
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

enum class PositionRule {
  neighbour_sum,
  copy_left,
  reverse_string,
  duplicate_string,
  missing_duplicate_string,
  odds_first,
  parity_check,
  bucket_sort,
  binary_addition,
  even_pairs,
  cycle_navigation
};

/// The rule's name as to_string writes it ("neighbour_sum", "reverse_string", ...). Throws
/// config_error for another name, listing the known ones.
PositionRule parse_position_rule(const std::string& name);
std::string to_string(PositionRule rule);
/// Every rule, in declaration order.
const std::vector<PositionRule>& all_position_rules();

struct PositionTaskConfig {
  PositionRule rule = PositionRule::neighbour_sum;
  std::size_t num_symbols = 8;       ///< V, 2...1000 (2 for the bit tasks, see the top of the file)
  std::size_t offset = 1;            ///< k, 1...64 (neighbour_sum and copy_left only)
  std::size_t min_length = 8;        ///< shortest input; at least position_task_min_length(rule, k)
  std::size_t max_length = 16;       ///< longest input, min_length...100000 (without the <out>s)
  std::size_t num_sequences = 1000;  ///< 1...10,000,000
  std::uint32_t seed = 0;

  /// Throws config_error naming the rule and the value, e.g.
  /// "make_position_task: min_length is 2, expected >= 3 (neighbour_sum needs 2k + 1 with k = 1
  /// for one labelled position)" or "make_position_task: num_symbols is 8, expected 2
  /// (parity_check reads bits)".
  void validate() const;
};

struct PositionTaskDataset {
  PositionTaskConfig config;
  std::vector<LabelledSentence> sequences;  ///< tokens (input, then <out>s), labels per the rule
  /// The inputs x as numbers, without the <out>s: symbols 0..V-1, and the paper's codes for
  /// the other input tokens ("?" = 2 and "#" = 3 in missing_duplicate_string, "+" = 2 in
  /// binary_addition).
  std::vector<std::vector<std::int64_t>> symbols;
  Vocabulary vocab;                              ///< position_task_vocabulary(rule, V)
  std::size_t labelled_positions = 0;            ///< labels != kIgnoreIndex, all sequences
  std::size_t num_classes() const;               ///< C = position_task_num_classes(rule, V)
  std::vector<std::string> label_names() const;  ///< "t0", ..., "t{C-1}" ("<end>" for class 2
                                                 ///< of binary_addition)
  /// Accuracy of guessing uniformly: 1 / C.
  double chance() const { return 1.0 / double(num_classes()); }
};

/// Generates the dataset (the same config gives the same sequences everywhere).
PositionTaskDataset make_position_task(const PositionTaskConfig& config);

/// <pad>, <unk>, then "t0" ... "t{V-1}" (ids 2 ... V+1): the same for every length and seed,
/// so a model trained on one dataset reads every other with the same V. The vocabulary of
/// neighbour_sum and copy_left.
Vocabulary position_task_vocabulary(std::size_t num_symbols);
/// The rule's vocabulary: position_task_vocabulary(V), then the rule's other input tokens
/// ("?", "#" for missing_duplicate_string; "+" for binary_addition), then "<out>" for the rules
/// of family 2. The same for every length and seed.
Vocabulary position_task_vocabulary(PositionRule rule, std::size_t num_symbols);

/// C, the number of classes: V for the symbol tasks, 2 for parity_check,
/// missing_duplicate_string and even_pairs, 3 for binary_addition (0, 1, <end>), 5 for
/// cycle_navigation (the states).
std::size_t position_task_num_classes(PositionRule rule, std::size_t num_symbols);

/// m, the number of answer positions (<out> placeholders) after an input of n tokens: 0 for
/// neighbour_sum and copy_left (they label the input itself), n, 2n, 1 or n + 1 (see above).
std::size_t position_task_output_length(PositionRule rule, std::size_t n);

/// The answer y to the input x of a family-2 rule (m = output_length(n) classes), computed from
/// x alone. For binary_addition, y is the paper's target: the sum, <end> (2), then 0s up to m.
/// x holds numbers as PositionTaskDataset::symbols does.
/// Throws:  std::invalid_argument naming the argument and the value if x is shorter than
///          position_task_min_length, holds a value outside the rule's input alphabet, has not
///          exactly one "?" (missing_duplicate_string, where the two halves must also agree
///          elsewhere) or one "+" with bits on both sides (binary_addition), or if the rule
///          labels every position (neighbour_sum, copy_left: use position_task_label).
std::vector<std::int64_t> position_task_output(PositionRule rule,
                                               const std::vector<std::int64_t>& x,
                                               std::size_t num_symbols);

/// The rule itself: the label of position p of the sequence made of the input `symbols` (and,
/// for family 2, its m <out>s), with offset k and V symbols; kIgnoreIndex where the rule needs
/// a position outside the sequence, on the inputs of family 2, and after binary_addition's <end>.
/// Throws:  std::invalid_argument if p >= symbols.size() + m, or as position_task_output does.
std::int64_t position_task_label(PositionRule rule, const std::vector<std::int64_t>& symbols,
                                 std::size_t p, std::size_t k, std::size_t num_symbols);

/// The shortest input that has a labelled position: 2k + 1 (neighbour_sum), k + 1 (copy_left),
/// 2 (missing_duplicate_string: w has a bit), 3 (binary_addition: a bit, "+", a bit), 1 (others).
std::size_t position_task_min_length(PositionRule rule, std::size_t k);

/// True for family 2 (the rules that answer at <out> placeholders after the input).
bool position_task_has_outputs(PositionRule rule);

}  // namespace xenc

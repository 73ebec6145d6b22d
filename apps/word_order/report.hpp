// xenc-word-order's report: the tables, the narration under them, the JSON and the figures, each
// a pure function of the experiment's Result (experiment.hpp).
// tests/apps/test_word_order_report.cpp checks the narration on hand-made Results, degenerate cases
// included.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "experiment.hpp"

namespace word_order {

/// What the narration needs besides the run.
struct Context {
  std::vector<Match> matches;
  bool permutation = false;  ///< B uses A's words in another order (or the same)
  bool identical = false;    ///< A and B are the same token sequence: nothing moved
  bool reversed = false;     ///< B is A backwards (and not a palindrome)
  std::size_t d_model = 0;
};

Context context_of(const Result& r);

/// Largest |1 - cosine| over every defined cosine; appends the stages with an undefined
/// (NaN) cosine to `undefined` when given.
double max_deviation(const Run& run, std::vector<std::string>* undefined = nullptr);

/// The two to four sentences under a run's table, each chosen by the numbers in it: a
/// degenerate case alone, else the rules below in order, joined.
std::string explain(const Run& run, const Context& ctx);

/// explain's rules, each testable alone: the sentences it adds for one run, or "" when the
/// numbers give it nothing to say (every one but the first text starts with a space).
namespace explain_rules {
/// Identical sentences, a reversal under alibi, or a permutation without positions: the whole
/// text (every cosine should be 1, and whether it is), or "".
std::string degenerate(const Run& run, const Context& ctx);
/// The words at different positions in A and B: where they separate (at the input, or only
/// inside attention for rope and alibi).
std::string moved_words(const Run& run, const Context& ctx);
/// In a permutation, the words at the same position: identical input, changed only by attention.
std::string fixed_words(const Run& run, const Context& ctx);
/// In a permutation, the mean-pooled sentences: identical input, and where they separate.
std::string pooled_permutation(const Run& run, const Context& ctx);
/// Not a permutation: shared words see different neighbours; the sentence cosine.
std::string not_permutation(const Run& run, const Context& ctx);
/// D = 1 and D = 2 are degenerate.
std::string small_d(const Context& ctx);
/// The stages whose cosines are undefined (a zero vector).
std::string undefined_cosines(const Run& run, const Context& ctx);
}  // namespace explain_rules

/// With --scale-embedding: how much longer the token vectors are than the position vectors.
std::string scale_text(const Run& run, std::size_t d_model);

/// Prints `text` word-wrapped to 90 columns with a two-space indent.
void print_wrapped(std::ostream& out, const std::string& text);

/// The whole text report: header, notes, one table and its narration per run.
void print_text(std::ostream& out, const Result& r);

/// The JSON report (2-space indent, no trailing newline).
std::string to_json(const Result& r);

/// Writes cosine_<scheme>.svg (one per run) and final_difference.svg into `dir` (created).
void write_figures(const std::string& dir, const Result& r);

}  // namespace word_order

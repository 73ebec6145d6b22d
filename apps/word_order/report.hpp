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

/// The two to four sentences under a run's table, each chosen by the numbers in it.
std::string explain(const Run& run, const Context& ctx);

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

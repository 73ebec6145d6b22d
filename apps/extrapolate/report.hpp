// xenc-extrapolate's report: the header, the accuracy table, the conclusions, the JSON and the
// figure, each a pure function of the experiment's Result (experiment.hpp).
// tests/apps/test_extrapolate_report.cpp checks the conclusions on hand-made Results.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "experiment.hpp"

namespace extrapolate {

/// What the run is about (task, data, model), printed before training.
std::string header_text(const Result& res);

/// The accuracy table: one row per scheme, one column per test length, and the library's
/// message for a length a model cannot read.
std::string table_text(const Result& res);

/// The conclusions, one sentence each, computed from the numbers: conclusion_rules::margin, one
/// verdict per scheme (the first rule of scheme() that applies), then the summary, then scope.
/// Every verdict names the task (--rule) it was measured on.
std::vector<std::string> conclusions(const Result& res);

/// The rules conclusions() is made of, each testable alone on a hand-made Result.
namespace conclusion_rules {

/// What every rule reads, computed once from the Result: chance (1/C, C the answer's classes),
/// its name in the text, --tolerance as a fraction
/// and as text, the margin "clearly above chance" (chance_margin: where the fewest positions
/// were tested), halfway from chance to 100%, L_train and the longest test length.
struct Context {
  double chance = 0, tol = 0, margin = 0, halfway = 0;
  std::size_t L = 0, longest = 0, fewest = 0, fewest_at = 0;
  std::string tol_txt, longest_txt, margin_txt;
  /// "1/V = 12.5%" (neighbour_sum, copy_left: the answer is a symbol) or "1/C = 20.0%" (the
  /// tasks of Ruoss et al., whose C classes may differ from V: cycle_navigation, binary_addition)
  std::string chance_txt;
  bool copy_left = false;  ///< --rule copy_left (ALiBi's symmetry cap)
  std::string task;        ///< --rule: every verdict names it (a verdict holds for its task only)
};
Context context(const Result& res);

/// One scheme's sentence, and what the summary counts of it.
struct Verdict {
  std::string sentence;
  bool learned = false;   ///< clearly above chance at L_train
  bool capped = false;    ///< held at ALiBi's symmetry cap
  bool kept = false;      ///< keeps its accuracy up to the longest length
  bool compared = false;  ///< a candidate for "best at the longest length"
};

/// "Clearly above chance means more than ... points above 1/V (or 1/C) ...".
std::string margin(const Context& c);
/// A learned table that cannot read some lengths (no embedding beyond it).
std::optional<Verdict> unreadable(const SchemeResult& r, const Context& c);
/// Within the margin of chance at every length.
std::optional<Verdict> at_chance(const SchemeResult& r, const Context& c);
/// Not clearly above chance at L_train.
std::optional<Verdict> not_learned(const SchemeResult& r, const Context& c);
/// ALiBi on copy_left: held at its symmetry cap.
std::optional<Verdict> symmetry_cap(const SchemeResult& r, const Context& c);
/// A scheme that learned the task: only partly, keeps its accuracy, stays just above chance, or
/// degrades (from which length).
Verdict learned(const SchemeResult& r, const Context& c);
/// The first of unreadable, at_chance, not_learned, symmetry_cap that applies, else learned.
Verdict scheme(const SchemeResult& r, const Context& c);
/// The closing sentences: nothing learned, or who kept its accuracy and who is best at the
/// longest length.
std::vector<std::string> summary(const std::vector<SchemeResult>& results,
                                 const std::vector<Verdict>& verdicts, const Context& c);
/// The last sentence: these verdicts hold for this task only, and which other task to try.
std::string scope(const Context& c);

}  // namespace conclusion_rules

/// Accuracy against test length, one line per scheme (extrapolate_accuracy.svg).
std::string accuracy_svg(const Result& res);

/// Everything as JSON (2-space indent, no trailing newline); `written`: the files written.
std::string to_json(const Result& res, const std::vector<std::string>& written);

// ---- the study (--study) --------------------------------------------------------------------

/// Mean, smallest and largest of a cell's seeds (NaN values skipped; all NaN when none is left).
struct Spread {
  double mean = NAN, min = NAN, max = NAN;
};
Spread spread(const std::vector<double>& values);

/// "rope" or "rope+rand" (randomized positions).
std::string cell_name(const StudyCell& c);

/// What the study trains, printed before training: the grid, the sizes, the score.
std::string study_header_text(const Options& o, std::size_t models);

/// One table per task: a row per scheme (plain, then randomized), a column per test length and
/// the mean beyond L_train (the paper's score), each "mean [min-max]" over the seeds.
std::string study_table_text(const StudyResult& res);

/// The study's conclusions, computed from the table; each names its task (or lists the tasks).
/// A cell that did not learn its task at L_train (a seed below halfway from chance to 100% at
/// length L_train) is left out of every comparison beyond L_train, and the sentence says so.
/// namespace study_rules: each rule alone.
std::vector<std::string> study_conclusions(const StudyResult& res);

namespace study_rules {
/// The cell with both forms of one scheme on one task: "randomized beats plain" when every
/// randomized seed is more than --tolerance above every plain seed (the ranges of the mean
/// beyond L_train do not overlap), "plain beats randomized" the other way round, else no claim.
/// One sentence per task: the schemes of each kind.
std::string randomization(const StudyTask& t, double tolerance);
/// The best cell beyond L_train on a task: named "best" only when its smallest seed is above
/// every other cell's largest; else the highest mean and the cells that overlap it; or that no
/// cell is clearly (more than --tolerance) above chance.
std::string best(const StudyTask& t, double tolerance);
/// Whether the highest mean beyond L_train is the same cell on every task, naming each task, and
/// on how many tasks it is the best in every seed (as best() says "Best").
std::string best_by_task(const std::vector<StudyTask>& tasks, double tolerance);
/// A scheme on a task whose plain and randomized cells both learned the task at L_train: what
/// the mean gain averages over.
struct GainPair {
  const StudyTask* task;
  const StudyCell *plain, *randomized;
};
std::vector<GainPair> gain_pairs(const std::vector<StudyTask>& tasks);
/// Randomized minus plain, beyond L_train, averaged over the gain_pairs (how many, and the tasks
/// they are on, named); with the same average seed by seed (min-max).
std::string mean_gain(const std::vector<StudyTask>& tasks);
/// The number mean_gain states (points of accuracy, as a fraction), and per seed.
double mean_gain_value(const std::vector<StudyTask>& tasks, std::vector<double>* per_seed);
}  // namespace study_rules

/// The mean accuracy beyond L_train as three heatmaps side by side (min over seeds, mean, max):
/// a row per scheme, a column per task (study_accuracy.svg).
std::string study_svg(const StudyResult& res);

/// The study as JSON: options, every cell with every seed's accuracies (and whether it learned
/// its task at L_train), the conclusions.
std::string study_to_json(const StudyResult& res, const std::vector<std::string>& written);

/// The inverse of study_to_json: the StudyResult a study's JSON holds (its options, through the
/// records' echo, and every cell's seeds, accuracies and time). What the JSON derives from those
/// (the spreads, the mean gain, the conclusions) is not read: the report computes it again, so
/// study_to_json(study_from_json(text)) is `text` again up to "files". Each cell's "beyond" must
/// be the mean of its accuracies beyond L_train. Throws std::invalid_argument naming `where`
/// (the option and the file), the field and what it holds.
StudyResult study_from_json(const std::string& text, const std::string& where);

/// Whether a cell learned its task at L_train: every seed at least halfway from chance to 100%
/// at length L_train. Every study conclusion beyond L_train compares only such cells, the figure
/// hatches the others, and the JSON gives each cell's answer ("learned_at_train_length").
bool learned_at_train_length(const StudyTask& t, const StudyCell& c);

}  // namespace extrapolate

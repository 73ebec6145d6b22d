// xenc-train-order's report: the header, the accuracy table with the ceiling sentence, the
// JSON and the figures, each a pure function of the experiment's Result (experiment.hpp).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiment.hpp"

namespace train_order {

/// What the run is about (task, data, model), printed before training.
std::string header_text(const Result& res);

/// The accuracy table, its total time, and (with none) why none is capped at 50%.
std::string table_text(const Result& res);

/// Why a model without positions is capped at 50%, with its measured mirror agreement.
std::string ceiling_line(const SchemeResult& r);

/// Training loss and held-out accuracy per epoch, one line per scheme (train_order_curves.svg).
std::string curves_svg(const std::vector<SchemeResult>& results);

/// Every head of every layer for the sentence (top) and its mirror (bottom).
std::string attention_svg(const SchemeResult& r);

nlohmann::json eval_json(const Eval& e);
nlohmann::json options_json(const Options& o);

/// The "extra" metadata of a checkpoint of scheme r: the task settings (--evaluate rebuilds the
/// held-out set from them), the nouns and the accuracies.
nlohmann::json checkpoint_extra(const Result& res, const SchemeResult& r);

/// Everything as JSON (2-space indent, no trailing newline); `written`: the files written.
std::string to_json(const Result& res, const std::vector<std::string>& written);

}  // namespace train_order

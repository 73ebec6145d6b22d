// xenc-extrapolate's report: the header, the accuracy table, the conclusions, the JSON and the
// figure, each a pure function of the experiment's Result (experiment.hpp).
// tests/apps/test_extrapolate_report.cpp checks the conclusions on hand-made Results.
#pragma once

#include <string>
#include <vector>

#include "experiment.hpp"

namespace extrapolate {

/// What the run is about (task, data, model), printed before training.
std::string header_text(const Result& res);

/// The accuracy table: one row per scheme, one column per test length, and the library's
/// message for a length a model cannot read.
std::string table_text(const Result& res);

/// The conclusions, one sentence each, computed from the numbers.
std::vector<std::string> conclusions(const Result& res);

/// Accuracy against test length, one line per scheme (extrapolate_accuracy.svg).
std::string accuracy_svg(const Result& res);

/// Everything as JSON (2-space indent, no trailing newline); `written`: the files written.
std::string to_json(const Result& res, const std::vector<std::string>& written);

}  // namespace extrapolate

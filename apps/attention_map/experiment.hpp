// xenc-attention-map's experiment: one sentence through a seeded (or loaded) encoder, after the
// checks that refuse it before anything is loaded, built or written (the model's memory, each
// output's size). The command line's options in, a Run out (report.hpp's: the tokens and every
// layer's attention weights); report.hpp turns the Run into JSON, tables and heatmaps.
#pragma once

#include "options.hpp"
#include "report.hpp"

namespace attention_map {

/// Throws std::invalid_argument for --weights with --d-model or --layers (`*_given`: the command
/// line named them) or an empty sentence, xenc_app::resource_error over --max-memory-mb or
/// --max-output-mb, and the library's error for a bad model (heads not dividing D, a bad file).
/// Creates --svg-dir before the work (an unusable directory fails there).
Run run_experiment(const CommandLine& c, bool d_model_given, bool layers_given);

}  // namespace attention_map

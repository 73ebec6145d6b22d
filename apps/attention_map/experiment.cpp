#include "experiment.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <xenc/io.hpp>
#include <xenc/xenc.hpp>

#include "../common/weights.hpp"

namespace attention_map {

namespace {

/// The model's config: the options' sizes, or the weights file's (from its headers: nothing is
/// loaded); `file_parameters`: the file's parameter count (0 without a file).
xenc::EncoderModelConfig model_config(const CommandLine& c, std::size_t vocab_size, std::size_t T,
                                      const xenc::LoadLimits& limits, double& file_parameters) {
  xenc::EncoderModelConfig cfg;
  cfg.vocab_size = vocab_size;
  cfg.layer.d_model = c.d_model;
  cfg.layer.nhead = c.heads;
  cfg.layer.dim_feedforward = 4 * c.d_model;
  cfg.final_norm = false;
  cfg.layer.dropout = 0.0f;
  cfg.num_layers = c.layers;
  file_parameters = 0;
  if (!c.weights.empty()) {
    const xenc_app::WeightsShape w = xenc_app::weights_shape(c.weights, limits);
    cfg.layer.d_model = w.d_model;
    cfg.num_layers = w.num_layers;
    cfg.layer.dim_feedforward = w.dim_feedforward;
    cfg.final_norm = w.final_norm;
    file_parameters = w.parameters;
  }
  cfg.position = xenc::parse_position_kind(c.position);
  cfg.max_len = std::max<std::size_t>(64, T);
  cfg.seed = c.seed;
  return cfg;
}

/// The run's memory (the forward with its trace; the file's state_dict while it is copied in;
/// the JSON document, about 80 bytes per number in nlohmann) and each output's size (about 75
/// bytes per heatmap cell, 10 per JSON number, one column per key in the text tables), checked
/// against the limits; creates --svg-dir.
void check_resources(const CommandLine& c, const xenc::EncoderModelConfig& cfg,
                     const std::vector<std::string>& tokens, double file_parameters) {
  const std::size_t T = tokens.size(), d_model = cfg.layer.d_model, layers = cfg.num_layers,
                    heads = c.heads, ff = cfg.layer.dim_feedforward;
  const double weights_count = double(layers) * double(heads) * double(T) * double(T);  // L·H·T²
  const double need = xenc::estimate_pass_cost(cfg, 1, T, xenc::Pass::traced_inference).peak_bytes +
                      4 * file_parameters + (c.json ? 80 * weights_count : 0.0);
  c.memory(need, "this model",
           "D = " + std::to_string(d_model) + ", " + std::to_string(layers) +
               " layers, F = " + std::to_string(ff) + ", T = " + std::to_string(T) + " tokens" +
               (c.weights.empty() ? "" : ", weights from " + c.weights),
           "use a smaller --d-model or --layers, or a shorter sentence");
  const std::string advice = "a shorter --sentence (" + std::to_string(T) +
                             " tokens), fewer --layers or --heads, or a higher --max-output-mb";
  if (!c.svg_dir.empty()) {
    c.output(75.0 * weights_count + 20e3,
             c.svg_dir + "/attention_all.svg (" + std::to_string(layers * heads) + " heatmaps of " +
                 std::to_string(T) + " x " + std::to_string(T) + ")",
             advice);
    // an unusable directory fails here, before the work
    std::filesystem::create_directories(c.svg_dir);
  }
  const std::size_t w0 = column_width(tokens);
  c.output(c.json ? 10.0 * weights_count : weights_count * double(w0 + 1),
           c.json ? "the JSON on standard output" : "the text tables on standard output", advice);
}

}  // namespace

Run run_experiment(const CommandLine& c, bool d_model_given, bool layers_given) {
  if (!c.weights.empty() && (d_model_given || layers_given))
    throw std::invalid_argument("--weights " + c.weights +
                                " sets D and the number of layers; do not give " +
                                std::string(d_model_given ? "--d-model" : "--layers") + " with it");
  // 1. tokens
  const auto tokens = xenc::tokenize(c.sentence);
  if (tokens.empty())
    throw std::invalid_argument("--sentence is empty: no words in \"" + xenc::visible(c.sentence) +
                                "\"");
  const auto vocab = xenc::Vocabulary::from_tokens(tokens);
  const std::size_t T = tokens.size();

  // 2. what the run needs, before anything is loaded, built or written: the model's sizes (from
  //    the weights file's headers when given), its memory, and the size of each output
  const xenc::LoadLimits limits = xenc_app::limits_for_memory(c.max_memory_mb);
  double file_parameters = 0;
  const xenc::EncoderModelConfig cfg = model_config(c, vocab.size(), T, limits, file_parameters);
  check_resources(c, cfg, tokens, file_parameters);

  // 3. ids [1, T] (T checked above: the vocabulary's length limit raised to it), a seeded model;
  //    the trace keeps each layer's attention weights [1, H, T, T]
  const auto batch = vocab.encode_batch({c.sentence}, T);
  xenc::EncoderModel model(cfg);
  if (!c.weights.empty())  // checks every key and shape; messages name the file and the key
    model.encoder = xenc::load_transformer_encoder(c.weights, c.heads, xenc::Activation::relu,
                                                   /*norm_first=*/false, 1e-5f, limits);
  xenc::NoGradGuard no_grad;
  xenc::ModelTrace trace;
  model.forward(batch.ids, batch.padding_mask, &trace);  // N x [1, H, T, T]
  return Run{c.sentence,
             c.position,
             c.weights,
             tokens,
             cfg.layer.d_model,
             c.heads,
             cfg.num_layers,
             c.seed,
             trace.encoder.attention_weights};
}

}  // namespace attention_map

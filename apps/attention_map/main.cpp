// attention_map: who attends to whom, in every layer and head of the encoder.
//
// Each self-attention head turns its scores into weights P = softmax(Q Kᵀ / √Dh): row i says how
// much token i (the query) takes from every token j (the keys); each row sums to 1. This app
// runs an encoder on one sentence and writes P of every layer and head as an SVG heatmap with the
// tokens on both axes, plus one figure with all heads side by side. The encoder is seeded and
// random, or (--weights) takes its layers from a torch.nn.TransformerEncoder state_dict saved as
// .npz (xenc/io); the token embedding and positions stay the seeded ones either way.
//
// --json prints the weights (and writes SVGs only when --svg-dir is given too) in the layout
// bertviz's head_view(attention, tokens) takes:
//     {"tokens": [...], "attention": [ layer 0: [batch = 1][H][T][T], layer 1: ..., ... ]}
// (in Python: head_view([torch.tensor(a) for a in j["attention"]], j["tokens"])).
//
//     xenc-attention-map                              # "the cat chased the mouse", D = 16, 2
//     heads, 2 layers xenc-attention-map --sentence "a b c d" --heads 4 --svg-dir maps
//     xenc-attention-map --json > attention.json
//     xenc-attention-map --weights encoder.npz --heads 2    # a torch.nn.TransformerEncoder's
//     weights
//
// Before it loads, builds or writes anything it estimates the memory (xenc/nn/cost.hpp, the
// weights' sizes from the .npz headers) and the size of each output (about 75 bytes per heatmap
// cell: all heads in one figure hold L·H·T² cells), and refuses over --max-memory-mb (1024) or
// --max-output-mb (100) with the estimate, the limit and what to change.
//
// This file is the command line and the run; report.hpp turns the weights into the JSON, the
// text tables and the heatmaps.
#include <CLI/CLI.hpp>
#include <xenc/io.hpp>
#include <xenc/xenc.hpp>

#include "../common/cli.hpp"
#include "../common/weights.hpp"
#include "options.hpp"
#include "report.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{
      "xenc-attention-map: the attention weights of every layer and head of a seeded random\n"
      "encoder, as SVG heatmaps (tokens on both axes) or as JSON for bertviz's head_view.\n"
      "The model is random (seeded, untrained): its words carry no meaning."};
  xenc_app::add_version(app, "xenc-attention-map");
  attention_map::CommandLine c;
  xenc_app::add_options(app, c, attention_map::option_records());
  CLI11_PARSE(app, argc, argv);
  if (c.json && app.get_option("--svg-dir")->count() == 0)
    c.svg_dir.clear();  // --json alone writes only JSON
  const bool d_model_given = app.get_option("--d-model")->count() > 0,
             layers_given = app.get_option("--layers")->count() > 0;
  const std::string &sentence = c.sentence, &position = c.position, &svg_dir = c.svg_dir,
                    &weights = c.weights;
  std::size_t d_model = c.d_model, layers = c.layers;
  const std::size_t heads = c.heads;
  const std::uint32_t seed = c.seed;
  const bool json = c.json;
  const xenc_app::Guard& guard = c;

  try {
    if (!weights.empty() && (d_model_given || layers_given))
      throw std::invalid_argument(
          "--weights " + weights + " sets D and the number of layers; do not give " +
          std::string(d_model_given ? "--d-model" : "--layers") + " with it");
    // 1. tokens
    const auto tokens = xenc::tokenize(sentence);
    if (tokens.empty())
      throw std::invalid_argument("--sentence is empty: no words in \"" + xenc::visible(sentence) +
                                  "\"");
    const auto vocab = xenc::Vocabulary::from_tokens(tokens);
    const std::size_t T = tokens.size();

    // 2. what the run needs, before anything is loaded, built or written: the model's sizes
    //    (from the weights file's headers when given), its memory, and the size of each output
    std::size_t ff = 4 * d_model;
    bool final_norm = false;
    const xenc::LoadLimits limits = xenc_app::limits_for_memory(guard.max_memory_mb);
    double file_parameters = 0;
    if (!weights.empty()) {
      const xenc_app::WeightsShape w = xenc_app::weights_shape(weights, limits);
      d_model = w.d_model;
      layers = w.num_layers;
      ff = w.dim_feedforward;
      final_norm = w.final_norm;
      file_parameters = w.parameters;
    }
    xenc::EncoderModelConfig cfg;
    cfg.vocab_size = vocab.size();
    cfg.layer.d_model = d_model;
    cfg.layer.nhead = heads;
    cfg.layer.dim_feedforward = ff;
    cfg.final_norm = final_norm;
    cfg.layer.dropout = 0.0f;
    cfg.num_layers = layers;
    cfg.position = xenc::parse_position_kind(position);
    cfg.max_len = std::max<std::size_t>(64, T);
    cfg.seed = seed;
    const double weights_count = double(layers) * double(heads) * double(T) * double(T);  // L·H·T²
    // the forward with its trace; the file's state_dict while it is copied in; the JSON document
    // (nlohmann keeps about 80 bytes per number)
    const double need =
        xenc::estimate_pass_cost(cfg, 1, T, xenc::Pass::traced_inference).peak_bytes +
        4 * file_parameters + (json ? 80 * weights_count : 0.0);
    guard.memory(need, "this model",
                 "D = " + std::to_string(d_model) + ", " + std::to_string(layers) +
                     " layers, F = " + std::to_string(ff) + ", T = " + std::to_string(T) +
                     " tokens" + (weights.empty() ? "" : ", weights from " + weights),
                 "use a smaller --d-model or --layers, or a shorter sentence");
    // about 75 bytes per heatmap cell (a <rect> and its colour), 10 per JSON number, one column
    // per key in the text tables
    const std::string advice = "a shorter --sentence (" + std::to_string(T) +
                               " tokens), fewer --layers or "
                               "--heads, or a higher --max-output-mb";
    if (!svg_dir.empty()) {
      guard.output(75.0 * weights_count + 20e3,
                   svg_dir + "/attention_all.svg (" + std::to_string(layers * heads) +
                       " heatmaps of " + std::to_string(T) + " x " + std::to_string(T) + ")",
                   advice);
      std::filesystem::create_directories(
          svg_dir);  // an unusable directory fails here, before the work
    }
    const std::size_t w0 = attention_map::column_width(tokens);
    guard.output(json ? 10.0 * weights_count : weights_count * double(w0 + 1),
                 json ? "the JSON on standard output" : "the text tables on standard output",
                 advice);

    // 3. ids [1, T] (T checked above: the vocabulary's length limit raised to it), a seeded
    //    model; the trace keeps each layer's attention weights [1, H, T, T]
    const auto batch = vocab.encode_batch({sentence}, T);
    xenc::EncoderModel model(cfg);
    if (!weights.empty())  // checks every key and shape; messages name the file and the key
      model.encoder = xenc::load_transformer_encoder(weights, heads, xenc::Activation::relu,
                                                     /*norm_first=*/false, 1e-5f, limits);
    xenc::NoGradGuard no_grad;
    xenc::ModelTrace trace;
    model.forward(batch.ids, batch.padding_mask, &trace);  // N x [1, H, T, T]

    // 4. JSON for bertviz, or text tables (report.hpp); 5. the figures
    attention_map::Run run{sentence, position, weights,
                           tokens,   d_model,  heads,
                           layers,   seed,     trace.encoder.attention_weights};
    if (json)
      std::cout << attention_map::to_json(run) << "\n";
    else
      std::cout << attention_map::table_text(run);
    if (!svg_dir.empty()) {
      const std::size_t n = attention_map::write_figures(run, svg_dir);
      if (!json)
        std::cout << "\nWrote " << n << " heatmaps to " << svg_dir
                  << "/attention_layer<l>_head<h>.svg and all of them to " << svg_dir
                  << "/attention_all.svg\n";
    }
  } catch (const std::exception& e) {
    return xenc_app::report_error("xenc-attention-map", e);
  }
  return xenc_app::finish_stdout("xenc-attention-map");
}

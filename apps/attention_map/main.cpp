// attention_map: who attends to whom, in every layer and head of the encoder.
//
// Each self-attention head turns its scores into weights P = softmax(Q Kᵀ / √Dh): row i says how
// much token i (the query) takes from every token j (the keys); each row sums to 1. This app
// runs an encoder on one sentence and writes P of every layer and head as an SVG heatmap with the
// tokens on both axes, plus one figure with all heads side by side. The encoder is seeded and
// random, or (--weights) takes its layers from a torch.nn.TransformerEncoder state_dict saved as
// .npz (xenc/io); the token embedding and positions stay the seeded ones either way.
//
// --json prints the weights (and writes SVGs only when --svg-dir is given too) in the layout bertviz's head_view(attention, tokens) takes:
//     {"tokens": [...], "attention": [ layer 0: [batch = 1][H][T][T], layer 1: ..., ... ]}
// (in Python: head_view([torch.tensor(a) for a in j["attention"]], j["tokens"])).
//
//     xenc-attention-map                              # "the cat chased the mouse", D = 16, 2 heads, 2 layers
//     xenc-attention-map --sentence "a b c d" --heads 4 --svg-dir maps
//     xenc-attention-map --json > attention.json
//     xenc-attention-map --weights encoder.npz --heads 2    # a torch.nn.TransformerEncoder's weights
//
// Before it loads, builds or writes anything it estimates the memory (xenc/nn/cost.hpp, the
// weights' sizes from the .npz headers) and the size of each output (about 75 bytes per heatmap
// cell: all heads in one figure hold L·H·T² cells), and refuses over --max-memory-mb (1024) or
// --max-output-mb (100) with the estimate, the limit and what to change.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <xenc/io.hpp>
#include <xenc/xenc.hpp>
#include <xenc/viz/svg.hpp>

#include "../common/cli.hpp"
#include "../common/weights.hpp"

#include <xtensor/xreducer.hpp>
#include <xtensor/xview.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{"xenc-attention-map: the attention weights of every layer and head of a seeded random\n"
               "encoder, as SVG heatmaps (tokens on both axes) or as JSON for bertviz's head_view.\n"
               "The model is random (seeded, untrained): its words carry no meaning."};
  xenc_app::add_version(app, "xenc-attention-map");
  std::string sentence = "the cat chased the mouse", position = "sinusoidal", svg_dir = "attention_maps", weights;
  std::size_t d_model = 16, heads = 2, layers = 2;
  std::uint32_t seed = 42;
  bool json = false;
  app.add_option("--sentence", sentence, "the input sentence")->capture_default_str();
  auto* d_model_opt = app.add_option("--d-model", d_model, "D (not with --weights)")
                          ->check(xenc_app::whole_range(1, 4096))->capture_default_str();
  app.add_option("--heads", heads, "H (must divide D)")->check(xenc_app::whole_range(1, 256))->capture_default_str();
  auto* layers_opt = app.add_option("--layers", layers, "N (not with --weights)")
                         ->check(xenc_app::whole_range(1, 48))->capture_default_str();
  app.add_option("--seed", seed, "seed of the random weights")
      ->check(xenc_app::whole_range(0, 4294967295LL))->capture_default_str();
  std::vector<std::string> scheme_names;  // every registered scheme
  for (xenc::PositionKind kind : xenc::all_position_kinds()) scheme_names.push_back(xenc::to_string(kind));
  app.add_option("--position", position,
                 "none | sinusoidal | learned | rope | alibi (rope and alibi act inside attention)")
      ->check(CLI::IsMember(scheme_names))->capture_default_str();
  auto* svg_dir_opt = app.add_option("--svg-dir", svg_dir, "directory for the SVG heatmaps (\"\" = none; "
                                     "with --json only when given)")->capture_default_str();
  app.add_flag("--json", json, "print the weights as JSON (bertviz head_view layout) instead of text; "
               "writes no SVG unless --svg-dir is given");
  app.add_option("--weights", weights,
                 ".npz of a torch.nn.TransformerEncoder(Layer) state_dict (np.savez(path, **sd)); "
                 "D, F and the number of layers come from the file, --heads must match the model");
  xenc_app::Guard guard;
  xenc_app::add_guard_options(app, guard, xenc_app::kMemory | xenc_app::kOutput);
  CLI11_PARSE(app, argc, argv);
  if (json && svg_dir_opt->count() == 0) svg_dir.clear();  // --json alone writes only JSON

  try {
    if (!weights.empty() && (d_model_opt->count() > 0 || layers_opt->count() > 0))
      throw std::invalid_argument("--weights " + weights + " sets D and the number of layers; do not give " +
                                  std::string(d_model_opt->count() > 0 ? "--d-model" : "--layers") +
                                  " with it");
    // 1. tokens
    const auto tokens = xenc::tokenize(sentence);
    if (tokens.empty())
      throw std::invalid_argument("--sentence is empty: no words in \"" + sentence + "\"");
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
    const double need = xenc::estimate_pass_cost(cfg, 1, T, xenc::Pass::traced_inference).peak_bytes +
                        4 * file_parameters + (json ? 80 * weights_count : 0.0);
    guard.memory(need, "this model",
                           "D = " + std::to_string(d_model) + ", " + std::to_string(layers) + " layers, F = " +
                               std::to_string(ff) + ", T = " + std::to_string(T) + " tokens" +
                               (weights.empty() ? "" : ", weights from " + weights),
                           "use a smaller --d-model or --layers, or a shorter sentence");
    // about 75 bytes per heatmap cell (a <rect> and its colour), 10 per JSON number, one column
    // per key in the text tables
    const std::string advice = "a shorter --sentence (" + std::to_string(T) + " tokens), fewer --layers or "
                               "--heads, or a higher --max-output-mb";
    if (!svg_dir.empty()) {
      guard.output(75.0 * weights_count + 20e3,
                   svg_dir + "/attention_all.svg (" + std::to_string(layers * heads) + " heatmaps of " +
                       std::to_string(T) + " x " + std::to_string(T) + ")",
                   advice);
      std::filesystem::create_directories(svg_dir);  // an unusable directory fails here, before the work
    }
    std::size_t w0 = 6;
    for (const auto& t : tokens) w0 = std::max(w0, t.size() + 2);
    guard.output(json ? 10.0 * weights_count : weights_count * double(w0 + 1),
                 json ? "the JSON on standard output" : "the text tables on standard output", advice);

    // 3. ids [1, T] (T checked above: the vocabulary's length limit raised to it), a seeded
    //    model; the trace keeps each layer's attention weights [1, H, T, T]
    const auto batch = vocab.encode_batch({sentence}, T);
    xenc::EncoderModel model(cfg);
    if (!weights.empty())  // checks every key and shape; messages name the file and the key
      model.encoder = xenc::load_transformer_encoder(weights, heads, xenc::Activation::relu,
                                                     /*norm_first=*/false, 1e-5f, limits);
    xenc::NoGradGuard no_grad;
    xenc::ModelTrace trace;
    model.forward(batch.ids, batch.padding_mask, &trace);
    const auto& att = trace.encoder.attention_weights;  // N x [1, H, T, T]

    // 4. JSON for bertviz, or a text summary
    if (json) {
      nlohmann::ordered_json j;
      j["tokens"] = tokens;
      j["attention"] = nlohmann::ordered_json::array();
      for (const auto& w : att) {
        nlohmann::ordered_json layer = nlohmann::ordered_json::array();  // [batch][H][T][T]
        for (std::size_t b = 0; b < w.shape()[0]; ++b) {
          nlohmann::ordered_json hs = nlohmann::ordered_json::array();
          for (std::size_t h = 0; h < w.shape()[1]; ++h) {
            nlohmann::ordered_json rows = nlohmann::ordered_json::array();
            for (std::size_t i = 0; i < T; ++i) {
              std::vector<float> r(T);
              for (std::size_t k = 0; k < T; ++k) r[k] = w(b, h, i, k);
              rows.push_back(r);
            }
            hs.push_back(rows);
          }
          layer.push_back(hs);
        }
        j["attention"].push_back(layer);
      }
      j["config"] = {{"d_model", d_model}, {"heads", heads}, {"layers", layers},
                     {"position", position}, {"seed", seed}, {"weights", weights}};
      std::cout << j.dump() << "\n";
    } else {
      std::cout << "Sentence: \"" << sentence << "\" (" << T << " tokens); "
                << (weights.empty() ? "random encoder" : "encoder layers from " + weights + ",") << " D = " << d_model
                << ", " << heads << " heads, " << layers << " layers, " << position
                << " positions, seed " << seed << "\n"
                << "Row = query token, column = key token; each row sums to 1.\n";
      for (std::size_t l = 0; l < att.size(); ++l)
        for (std::size_t h = 0; h < heads; ++h) {
          std::cout << "\nLayer " << l + 1 << ", head " << h + 1 << "\n" << std::string(w0 + 2, ' ');
          for (const auto& t : tokens) std::printf("%*s", int(w0), t.c_str());
          std::printf("   strongest\n");
          for (std::size_t i = 0; i < T; ++i) {
            std::printf("  %-*s", int(w0), tokens[i].c_str());
            std::size_t best = 0;
            for (std::size_t k = 0; k < T; ++k) {
              std::printf("%*.3f", int(w0), double(att[l](0, h, i, k)));
              if (att[l](0, h, i, k) > att[l](0, h, i, best)) best = k;
            }
            std::printf("   -> %s\n", tokens[best].c_str());
          }
        }
    }

    // 5. figures: one heatmap per layer and head, and all heads in one grid
    if (!svg_dir.empty()) {
      xenc::viz::HeatmapOptions o;
      o.x_label = "key (attended to)";
      o.y_label = "query (attending)";
      o.x_ticks = tokens;
      o.y_ticks = tokens;
      o.diverging = false;
      // one colour scale for every head: 0 .. the largest weight anywhere (with T tokens the
      // weights average 1/T, so a fixed [0, 1] range would leave long sentences all dark)
      o.vmin = 0;
      o.vmax = 0;
      for (const auto& w : att) o.vmax = std::max(o.vmax, double(xt::amax(w)()));
      o.colorbar_label = "attention weight";
      o.annotate = T <= 12;
      std::vector<xenc::Tensor2> panels;
      std::vector<std::string> titles;
      for (std::size_t l = 0; l < att.size(); ++l)
        for (std::size_t h = 0; h < heads; ++h) {
          xenc::Tensor2 p = xt::view(att[l], 0, h, xt::all(), xt::all());  // [T, T]
          o.title = "Attention weights, layer " + std::to_string(l + 1) + ", head " + std::to_string(h + 1);
          xenc::viz::write_text_file(svg_dir + "/attention_layer" + std::to_string(l + 1) + "_head" +
                                         std::to_string(h + 1) + ".svg",
                                     xenc::viz::heatmap_svg(p, o));
          panels.push_back(p);
          titles.push_back("layer " + std::to_string(l + 1) + ", head " + std::to_string(h + 1));
        }
      o.title = "Attention weights of every head: \"" + sentence + "\"";
      o.annotate = false;
      // one row per layer when the heads fit side by side, else as many per row as fit
      const int columns = heads <= 4 && heads * (T * 8 + 90) <= 560 ? int(heads) : 0;
      xenc::viz::write_text_file(svg_dir + "/attention_all.svg",
                                 xenc::viz::heatmap_grid_svg(panels, titles, o, columns));
      if (!json)
        std::cout << "\nWrote " << panels.size() << " heatmaps to " << svg_dir
                  << "/attention_layer<l>_head<h>.svg and all of them to " << svg_dir << "/attention_all.svg\n";
    }
  } catch (const std::exception& e) {
    return xenc_app::report_error("xenc-attention-map", e);
  }
  return xenc_app::finish_stdout("xenc-attention-map");
}

// init_encoder: build a transformer encoder in xencoder (its own seeded initialisation),
// optionally train it for a few Adam steps on a toy task, and save its state_dict as .npz,
// which torch.nn.TransformerEncoder.load_state_dict accepts (scripts/torch_roundtrip.py).
//
//   init_encoder --layers N --d-model D --heads H --dim-feedforward F [--activation relu|gelu]
//                [--norm-first] [--final-norm] [--layer-norm-eps E] [--seed S]
//                [--train-steps K] [--compressed] --output W.npz
//
// Toy task for --train-steps: Y should be X shifted by one position (y_t = x_{t+1}, cyclic),
// mean squared error, Adam (lr 1e-2) on random X [4, 6, D]. It moves every parameter away
// from its initial value, so the round trip checks trained weights, not only the init.
//
// Limits, checked before anything is built: the memory (xenc/nn/cost.hpp) against
// --max-memory-mb (1024), and the time of the steps against --max-minutes (10), first from the
// FLOPs at a fast machine's rate, then after every step from the rate measured so far (the run
// stops at once, writing nothing, when it would exceed the limit). A long run prints its
// progress and ETA every 2 s.
#include <chrono>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "../common/cli.hpp"
#include "options.hpp"

#include "xenc/core/random.hpp"
#include "xenc/io/state_dict.hpp"
#include "xenc/nn/cost.hpp"
#include "xenc/nn/optim.hpp"
#include "xenc/nn/transformer_encoder.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "Build (and optionally train) an xencoder TransformerEncoder; save its state_dict (.npz)"};
  xenc_app::add_version(app, "xenc-init-encoder");
  encode_app::InitOptions o;
  xenc_app::add_options(app, o, encode_app::init_records());
  CLI11_PARSE(app, argc, argv);

  const std::size_t layers = o.layers, train_steps = o.train_steps;
  const bool final_norm = o.final_norm;
  const xenc_app::Guard& guard = o;
  try {
    xenc::EncoderLayerConfig config;
    config.d_model = o.d_model;
    config.nhead = o.heads;
    config.dim_feedforward = o.ff;
    config.dropout = 0.0f;
    config.norm_first = o.norm_first;
    config.layer_norm_eps = o.layer_norm_eps;
    config.activation = xenc::parse_activation(o.activation);
    // refuse work over the limits before allocating anything: the memory of a training step
    // (weights, gradients, Adam's moments, the caches of the toy batch [4, 6, D]) or of the
    // weights alone, plus the state_dict copy and its .npy bytes written out; and the time of
    // the steps at a fast machine's rate (a lower bound: checked again once steps have run)
    xenc::EncoderModelConfig cfg;
    cfg.vocab_size = 0;  // a bare TransformerEncoder
    cfg.layer = config;
    cfg.num_layers = layers;
    cfg.final_norm = final_norm;
    const xenc::PassCost cost = xenc::estimate_pass_cost(
        cfg, 4, 6, train_steps > 0 ? xenc::Pass::training : xenc::Pass::inference);
    const std::string sizes = "D = " + std::to_string(config.d_model) + ", " +
                              std::to_string(layers) +
                              " layers, F = " + std::to_string(config.dim_feedforward);
    guard.memory(cost.peak_bytes + 8 * cost.parameters, "this encoder",
                 sizes + (train_steps > 0 ? ", with gradients and Adam's moments" : ""),
                 "a smaller --d-model, --dim-feedforward or --layers");
    guard.time(double(train_steps) * cost.flops, std::to_string(train_steps) + " training steps",
               sizes, "fewer --train-steps, a smaller model, or a higher --max-minutes");
    xenc::Rng rng(o.seed);
    xenc::TransformerEncoder encoder(config, layers, rng, final_norm);

    if (train_steps > 0) {
      // X [4, 6, D] random; target y_t = x_{(t+1) mod T}; loss = mean((Y - target)^2)
      const std::size_t B = 4, T = 6, D = config.d_model;
      xenc::Tensor3 x = xenc::Tensor3::from_shape({B, T, D});
      xenc::fill_normal(x, rng);
      xenc::Tensor3 target = xenc::Tensor3::from_shape({B, T, D});
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t t = 0; t < T; ++t)
          for (std::size_t d = 0; d < D; ++d) target(b, t, d) = x(b, (t + 1) % T, d);
      xenc::Adam adam(encoder.parameters(), 1e-2f);
      encoder.train();
      // progress on stdout at most every 2 s, with the rate measured so far; from the 50th step
      // (or 2 s) on, the run stops, writing nothing, as soon as that rate says it would exceed
      // --max-minutes
      const auto start = std::chrono::steady_clock::now();
      auto last_report = start;
      for (std::size_t step = 0; step < train_steps; ++step) {
        adam.zero_grad();
        xenc::Tensor3 y = encoder.forward(x);
        xenc::Tensor3 diff = y - target;
        const float loss = xt::mean(diff * diff)();
        xenc::Tensor3 grad = diff * (2.0f / static_cast<float>(diff.size()));  // dloss/dY
        encoder.backward(grad);
        adam.step();
        const auto now = std::chrono::steady_clock::now();
        const double elapsed = std::chrono::duration<double>(now - start).count();
        const double per_step = elapsed / double(step + 1),
                     left = per_step * double(train_steps - step - 1);
        if (step + 1 >= 50 || elapsed >= 2)  // past the first steps' warm-up
          xenc_app::check_time(
              elapsed + left, guard.max_minutes, std::to_string(train_steps) + " training steps",
              "measured: " + xenc_app::fmt_seconds_per_step(per_step) + " over the first " +
                  std::to_string(step + 1) + " step(s); " + sizes,
              "fewer --train-steps, a smaller model, or a higher --max-minutes");
        const bool report = now - last_report >= std::chrono::seconds(2);
        if (step == 0 || step + 1 == train_steps || report) {
          std::cout << "init_encoder: step " << step + 1 << " of " << train_steps << ", loss "
                    << loss;
          if (report && step + 1 != train_steps)
            std::cout << ", " << xenc_app::fmt_seconds_per_step(per_step) << ", ETA "
                      << xenc_app::human_seconds(left);
          std::cout << std::endl;
          last_report = now;
        }
      }
      encoder.eval();
    }

    xenc::save_state_dict(o.output, encoder, o.compressed);
    std::cout << "init_encoder: " << encoder.num_layers() << " layer(s), D = " << config.d_model
              << ", H = " << config.nhead << ", F = " << config.dim_feedforward << ", "
              << encoder.state_dict().size() << " tensors (" << encoder.num_parameters()
              << " parameters) written to " << o.output << "\n";
  } catch (const std::exception& e) {
    return xenc_app::report_error("xenc-init-encoder", e);
  }
  return xenc_app::finish_stdout("xenc-init-encoder");
}

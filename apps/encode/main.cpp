// encode: run a transformer encoder whose weights come from PyTorch (an .npz of its state_dict)
// on an input array (.npy) and write the output (.npy): the command-line face of xenc/io.
//
//   encode --weights W.npz --heads H [--activation relu|gelu] [--norm-first] [--layer-norm-eps E]
//          --input X.npy [--padding-mask M.npy] --output Y.npy
//
// X: [T, D] or [B, T, D], float32 or float64.  M: bool [B, T] or [T] (the same for every batch
// row), true = padding (PyTorch's src_key_padding_mask).  Y: float32, X's shape. Y equals
// torch.nn.TransformerEncoder(...).eval()(X, src_key_padding_mask=M) at every non-padded
// position (batch_first=True). Errors go to stderr as "encode: error: ..." with exit status 1.
//
// Before loading either file, the memory and the time of the whole run are estimated from their
// headers (the weights' shapes, X's [B, T, D]) and a run over --max-memory-mb (default 1024) or
// --max-minutes (default 1, at a fast machine's rate) is refused with the estimate, the limit
// and the sizes that cause it. A long input whose estimate is over a second is then timed on its
// first 2048 positions and checked again at the rate measured there.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <xtensor/xview.hpp>

#include "../common/cli.hpp"
#include "../common/weights.hpp"
#include "options.hpp"

#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/core/tensor.hpp"
#include "xenc/io/npy.hpp"
#include "xenc/io/state_dict.hpp"
#include "xenc/nn/cost.hpp"
#include "xenc/nn/transformer_encoder.hpp"

namespace {

using Options = encode_app::EncodeOptions;

// The memory and time of the whole run, from the headers of both files before either is loaded:
// the weights twice (the loaded state_dict and the encoder), X as read and as [B, T, D], Y and
// its copy, and the forward pass itself (xenc/nn/cost.hpp: in tiles from T = 512, so memory
// grows as T and time as T²). Throws resource_error over either limit.
const char* const kTimeAdvice =
    "a shorter --input (attention takes T² time per head), smaller weights, or a higher "
    "--max-minutes";

struct RunCost {
  xenc::EncoderModelConfig config;
  double flops = 0;
  std::string sizes;
};

RunCost check_resources(const Options& opt, const xenc::NpyHeader& x,
                        const xenc_app::WeightsShape& w) {
  const std::size_t rank = x.shape.size(), T = rank >= 2 ? x.shape[rank - 2] : 1;
  const std::size_t B = rank == 3 ? x.shape[0] : 1;
  xenc::EncoderModelConfig cfg;
  cfg.vocab_size = 0;  // a bare TransformerEncoder
  cfg.layer.d_model = w.d_model;
  cfg.layer.nhead = opt.heads;
  cfg.layer.dim_feedforward = w.dim_feedforward;
  cfg.num_layers = w.num_layers;
  cfg.final_norm = w.final_norm;
  const double io = 4.0 * 4 * double(B) * double(T) * double(w.d_model);
  const xenc::PassCost cost = xenc::estimate_pass_cost(cfg, B, T, xenc::Pass::inference);
  const std::string sizes =
      std::to_string(w.num_layers) + " layer(s), D = " + std::to_string(w.d_model) +
      ", F = " + std::to_string(w.dim_feedforward) + ", " +
      std::to_string(std::size_t(w.parameters)) + " parameters in " + opt.weights + "; X " +
      xenc::shape_str(x.shape) + ": B = " + std::to_string(B) + ", T = " + std::to_string(T);
  opt.memory(cost.peak_bytes + 4 * w.parameters + io, "this run", sizes,
             "a shorter or smaller --input, smaller weights, or a higher --max-memory-mb");
  opt.time(cost.flops, "this run", sizes, kTimeAdvice);
  return {cfg, cost.flops, sizes};
}

int run(const Options& opt) {
  // 0. What the run will need, from the files' headers (nothing loaded yet).
  const xenc::Activation activation = xenc::parse_activation(opt.activation);
  const xenc::LoadLimits limits = xenc_app::limits_for_memory(opt.max_memory_mb);
  const RunCost cost = check_resources(opt, xenc::load_npy_header(opt.input, limits),
                                       xenc_app::weights_shape(opt.weights, limits));

  // 1. The encoder: num_layers, D, F and the final norm come from the weights' keys and shapes.
  xenc::TransformerEncoder encoder = xenc::load_transformer_encoder(
      opt.weights, opt.heads, activation, opt.norm_first, opt.layer_norm_eps, limits);
  const std::size_t D = encoder.layer_config().d_model;

  // 2. X: [T, D] is one sequence, handled as [1, T, D].
  const xt::xarray<float> x_in = xenc::load_npy(opt.input, limits);
  const std::size_t rank = x_in.dimension();
  if ((rank != 2 && rank != 3) || x_in.shape(rank - 1) != D || x_in.shape(rank - 2) == 0)
    throw xenc::shape_error("--input " + opt.input + " has shape " + xenc::shape_str(x_in.shape()) +
                            ", expected [T, D] or [B, T, D] with D = " + std::to_string(D) +
                            " (from --weights) and T >= 1");
  const std::size_t B = rank == 3 ? x_in.shape(0) : 1, T = x_in.shape(rank - 2);
  xenc::Tensor3 x = xenc::Tensor3::from_shape({B, T, D});
  std::copy(x_in.begin(), x_in.end(), x.begin());

  // 3. M: [B, T], or [T] applied to every batch row.
  xenc::Mask2 mask;
  if (!opt.padding_mask.empty()) {
    const xt::xarray<bool> m = xenc::load_npy_bool(opt.padding_mask, limits);
    const bool row = m.dimension() == 1 && m.shape(0) == T;
    const bool full = m.dimension() == 2 && m.shape(0) == B && m.shape(1) == T;
    if (!row && !full)
      throw xenc::shape_error(
          "--padding-mask " + opt.padding_mask + " has shape " + xenc::shape_str(m.shape()) +
          ", expected [B, T] = " + xenc::shape_str(std::vector<std::size_t>{B, T}) + " or [T] = [" +
          std::to_string(T) + "] (from --input)");
    mask = xenc::Mask2::from_shape({B, T});
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < T; ++t) mask(b, t) = row ? m(t) : m(b, t);
  }

  // 4. Forward in evaluation mode without the backward caches. A long input is first timed on
  // its first positions (Guard::time_measured), so a run far slower than the estimate is refused
  // in a second instead of running for many minutes.
  xenc::Tensor3 y;
  {
    xenc::NoGradGuard no_grad;
    if (opt.worth_measuring(cost.flops, T)) {
      const std::size_t T0 = xenc_app::Guard::kSamplePositions;
      const xenc::Tensor3 x0 = xt::view(x, xt::range(0, 1), xt::range(0, T0), xt::all());
      xenc::Mask2 mask0;
      if (mask.size() != 0) mask0 = xt::view(mask, xt::range(0, 1), xt::range(0, T0));
      opt.time_measured(
          cost.flops, xenc::estimate_pass_cost(cost.config, 1, T0, xenc::Pass::inference).flops,
          [&] { encoder.forward(x0, mask0); }, "this run", cost.sizes, kTimeAdvice);
    }
    y = encoder.forward(x, mask);
  }

  // 5. Y with X's shape.
  xt::xarray<float> y_out = xt::xarray<float>::from_shape(x_in.shape());
  std::copy(y.begin(), y.end(), y_out.begin());
  xenc::save_npy(opt.output, y_out);

  const auto& c = encoder.layer_config();
  std::size_t padded = 0;
  for (bool p : mask) padded += p;
  std::cout << "encode: " << encoder.num_layers() << " layer(s), D = " << c.d_model
            << ", H = " << c.nhead << ", F = " << c.dim_feedforward << ", "
            << (c.norm_first ? "pre-norm" : "post-norm") << ", " << xenc::to_string(c.activation)
            << ", eps = " << c.layer_norm_eps << ", final norm: " << (encoder.norm ? "yes" : "no")
            << " (" << encoder.num_parameters() << " parameters from " << opt.weights << ")\n"
            << "encode: X " << xenc::shape_str(x_in.shape()) << " from " << opt.input;
  if (!opt.padding_mask.empty())
    std::cout << ", " << padded << " of " << B * T << " positions padded";
  std::cout << " -> Y " << xenc::shape_str(y_out.shape()) << " float32 written to " << opt.output
            << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Run a transformer encoder with PyTorch weights (.npz of a state_dict) on X (.npy); "
      "writes Y (.npy)"};
  xenc_app::add_version(app, "xenc-encode");
  Options opt;
  xenc_app::add_options(app, opt, encode_app::encode_records());
  CLI11_PARSE(app, argc, argv);
  try {
    run(opt);
  } catch (const std::exception& e) {
    return xenc_app::report_error("xenc-encode", e);
  }
  return xenc_app::finish_stdout("xenc-encode");
}

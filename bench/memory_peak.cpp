// xencoder_memory: peak resident memory of one encoder-layer forward, in its own process.
//
//     xencoder_memory T D H [--grad | --step] [--train] [--path auto|plain|tiled] [--steps N]
//
// Builds TransformerEncoderLayer(D, H, F = 4·D, post-norm, relu) and an input [1, T, D],
// reads the high-water mark of resident memory (VmHWM in /proc/self/status) before and after
// one forward, and prints both with the difference. Without --grad the forward runs inside a
// NoGradGuard (inference); with --grad it caches what backward needs, as in training.
// --step runs the forward with gradients and then the backward (a training step without the
// optimiser, whose two moments per parameter do not depend on T).
// --train puts the layer in training mode with dropout 0.1 (PyTorch's default) everywhere,
// attention included: with --step, a training step as it runs in training.
// --path forces the attention path (default auto: chosen by size, nn/multihead_attention.hpp).
// --steps N runs it N times (default 1): from the second on, the layer still holds the last
// step's cache while the next forward runs, as in a training loop.
// One process per measurement, because the high-water mark never goes down.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

#include "xenc/core/grad_mode.hpp"
#include "xenc/core/random.hpp"
#include "xenc/nn/transformer_encoder.hpp"

namespace {

// "VmHWM:    123456 kB" -> bytes
double vm_hwm_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) * 1024.0;
  }
  throw std::runtime_error("xencoder_memory: no VmHWM line in /proc/self/status");
}

double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: %s T D H [--grad | --step] [--train] [--path auto|plain|tiled] "
                 "[--steps N]\n",
                 argv[0]);
    return 2;
  }
  try {
    const std::size_t T = std::stoul(argv[1]), D = std::stoul(argv[2]), H = std::stoul(argv[3]);
    bool grad = false, step = false, train = false;
    std::size_t steps = 1;
    xenc::AttentionPath path = xenc::AttentionPath::automatic;
    std::string path_name = "auto";
    for (int i = 4; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--grad" || arg == "--step") {
        grad = true;
        step = step || arg == "--step";
      } else if (arg == "--steps" && i + 1 < argc) {
        steps = std::stoul(argv[++i]);
        if (steps == 0) throw std::invalid_argument("xencoder_memory: --steps is 0, expected >= 1");
      } else if (arg == "--train") {
        train = true;
      } else if (arg == "--path" && i + 1 < argc) {
        path_name = argv[++i];
        if (path_name == "plain")
          path = xenc::AttentionPath::plain;
        else if (path_name == "tiled")
          path = xenc::AttentionPath::tiled;
        else if (path_name != "auto")
          throw std::invalid_argument("xencoder_memory: --path is '" + path_name +
                                      "', expected auto, plain or tiled");
      } else {
        throw std::invalid_argument("xencoder_memory: unknown argument '" + arg + "'");
      }
    }
    xenc::EncoderLayerConfig config;
    config.d_model = D;
    config.nhead = H;
    config.dim_feedforward = 4 * D;
    config.dropout = train ? 0.1f : 0.0f;
    xenc::TransformerEncoderLayer layer(config, /*seed=*/1);
    layer.train(train);
    layer.self_attn.set_attention_path(path);
    xenc::Tensor3 x = xenc::Tensor3::from_shape({1, T, D});
    xenc::Rng rng(2);
    xenc::fill_normal(x, rng);
    const double before = vm_hwm_bytes();  // weights, input, libraries

    double checksum = 0.0;
    {
      xenc::GradMode::set_enabled(grad);
      for (std::size_t s = 0; s < steps; ++s) {
        xenc::Tensor3 y = layer.forward(x);
        checksum = static_cast<double>(y(0, T - 1, D - 1));
        if (step) {
          const xenc::Tensor3 dx = layer.backward(y);  // dL/dy = y: any [1, T, D] will do
          checksum += static_cast<double>(dx(0, 0, 0));
        }
      }
    }
    const double after = vm_hwm_bytes();

    // What the math needs at least: the [T, T] scores of one head, and the [T, F] hidden layer.
    const double scores = 4.0 * T * T, hidden = 4.0 * T * 4 * D;
    std::printf(
        "T=%zu D=%zu H=%zu mode=%s%s steps=%zu path=%s  before=%.1f MiB  peak=%.1f MiB  "
        "forward_added=%.1f "
        "MiB  "
        "(one [T,T] score matrix = %.1f MiB, [T,F] hidden = %.1f MiB)  y[-1]=%.4f\n",
        T, D, H,
        step   ? "step"
        : grad ? "grad"
               : "no_grad",
        train ? "+train" : "", steps, path_name.c_str(), mib(before), mib(after),
        mib(after - before), mib(scores), mib(hidden), checksum);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}

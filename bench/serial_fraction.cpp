// xencoder_serial T D H forward|train [reps]: which part of one encoder layer runs on one
// thread, measured in CPU time, and what Amdahl's law then predicts (bench/README.md, "One
// pool").
//
// Run it with OPENBLAS_NUM_THREADS=2 (or more). The pool's workers only ever run items of
// parallel regions; the calling (main) thread runs the serial steps plus its share of every
// region, and kernels::region_cpu_seconds() says how much CPU time it spent inside regions. So
// serial = main thread's CPU time − its CPU time inside regions, and parallel = all the other
// CPU time: no assumption on how the items were shared, so a machine loaded by other processes
// changes the numbers little (CPU time, not wall-clock time; the thread CPU times come from
// /proc/self/task/<tid>/schedstat). Prints the CPU times, the serial fraction
// f = serial / (serial + parallel) (the part of the 1-thread work that stays on one thread) and
// Amdahl's speed-up 1 / (f + (1 − f)/n) for n = 2, 4, 8, 16.
//
// The layer is BM_EncoderLayerForward's / BM_EncoderLayerTrainStep's: batch 1, F = 4·D,
// post-norm, relu, dropout 0; train = zero_grad, forward, backward, AdamW step.
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/kernels.hpp"  // lib/src: region_cpu_seconds
#include "xenc/core/grad_mode.hpp"
#include "xenc/core/random.hpp"
#include "xenc/nn/optim.hpp"
#include "xenc/nn/transformer_encoder.hpp"

namespace {

// Nanoseconds thread `tid` of this process has run.
double thread_ns(const std::string& tid) {
  std::ifstream f("/proc/self/task/" + tid + "/schedstat");
  double ns = 0;
  f >> ns;
  return ns;
}

struct ThreadTimes {
  double main = 0, others = 0;
};
ThreadTimes thread_times() {
  ThreadTimes t;
  const std::string self = std::to_string(getpid());
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return t;
  while (const dirent* e = readdir(dir)) {
    const std::string tid = e->d_name;
    if (tid == "." || tid == "..") continue;
    (tid == self ? t.main : t.others) += thread_ns(tid);
  }
  closedir(dir);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: xencoder_serial T D H forward|train [reps]\n");
    return 2;
  }
  const std::size_t T = std::stoul(argv[1]), D = std::stoul(argv[2]), H = std::stoul(argv[3]);
  const std::string mode = argv[4];
  const int reps = argc > 5 ? std::stoi(argv[5]) : 3;
  if (mode != "forward" && mode != "train") {
    std::fprintf(stderr, "xencoder_serial: mode is \"%s\", expected forward or train\n", argv[4]);
    return 2;
  }
  xenc::EncoderLayerConfig c;
  c.d_model = D;
  c.nhead = H;
  c.dim_feedforward = 4 * D;
  c.dropout = 0.0f;
  c.activation = xenc::Activation::relu;
  xenc::TransformerEncoderLayer layer(c, /*seed=*/1);
  xenc::Rng rng(1);
  xenc::Tensor3 x = xenc::Tensor3::from_shape({1, T, D}), dy = x;
  xenc::fill_uniform(x, rng, -1.0f, 1.0f);
  xenc::fill_uniform(dy, rng, -1.0f, 1.0f);
  xenc::AdamW opt(layer.parameters(), 1e-4f);
  const bool train = mode == "train";
  if (train) layer.train();
  const auto step = [&] {
    if (!train) {
      const xenc::NoGradGuard no_grad;
      return layer.forward(x);
    }
    opt.zero_grad();
    layer.forward(x);
    xenc::Tensor3 dx = layer.backward(dy);
    opt.step();
    return dx;
  };
  step();  // warm-up: the pool's worker, the buffers
  const ThreadTimes before = thread_times();
  const double region_before = xenc::kernels::region_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) step();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3 / reps;
  const ThreadTimes after = thread_times();
  const double region_ms = (xenc::kernels::region_cpu_seconds() - region_before) * 1e3 / reps;
  const double main_ms = (after.main - before.main) * 1e-6 / reps;
  const double others_ms = (after.others - before.others) * 1e-6 / reps;
  const double serial = main_ms > region_ms ? main_ms - region_ms : 0.0;
  const double total = main_ms + others_ms;
  const double f = total > 0 ? serial / total : 0.0;
  std::printf(
      "T %zu D %zu H %zu %s: wall %.2f ms, CPU main %.2f ms (%.2f in regions), "
      "other threads %.2f ms\n",
      T, D, H, mode.c_str(), wall, main_ms, region_ms, others_ms);
  std::printf("serial %.2f ms of %.2f ms CPU: f = %.4f\n", serial, total, f);
  for (int n : {2, 4, 8, 16})
    std::printf("Amdahl at %2d threads: %.2fx\n", n, 1.0 / (f + (1.0 - f) / n));
  return 0;
}

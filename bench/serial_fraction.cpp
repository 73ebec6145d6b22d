// xencoder_serial T D H forward|train [reps] [auto|plain|tiled] [blocks] [split] [--dropout=P]
// [--whole-sums=off]: where one
// encoder layer's time goes on 2 threads, against the same layer on 1 thread (bench/README.md,
// "One pool"). To time both sides of a choice with one build: blocks, a split GEMM's blocks per
// thread (kernels::set_gemm_blocks_per_thread; 0 or absent: the rule,
// kernels::gemm_blocks_per_thread); split, the multiply-adds from which a GEMM is split
// (kernels::set_split_gemm_work; absent: kernels::kSplitGemmWork); --whole-sums=off, gemm_many cuts
// every split product even where the products would balance on the threads whole
// (kernels::set_gemm_whole_sums).
//
// Run it with OPENBLAS_NUM_THREADS=2 (the thread budget). Each repetition runs the layer once
// with the budget at 1 (kernels::BlasOnOneThread: no region, the plain sgemms) and once at 2,
// in one process, the order alternating; every figure printed is the median over repetitions.
// Its second line is the BLAS and its kernel set (xenc::blas_summary): like every program, it
// re-executes itself with OPENBLAS_CORETYPE when OpenBLAS fell back to a weaker set.
//
// 1. The serial fraction, in CPU time (little changed by a machine loaded by other processes):
//    serial = the main thread's CPU time outside the pool's regions (kernels::region_cpu_seconds
//    counts the inside), f = serial / the process's CPU time at 2 threads, and Amdahl's speed-up
//    1 / (f + (1 − f)/n) for n = 2, 4, 8, 16.
// 2. The decomposition of the 2-thread wall time W2 (kernels::pool_stats): the serial wall
//    (outside regions) and the regions' wall R, where 2·R = busy (the participants' spans from
//    their first item to the end of their last, summed) + wake (the worker's latency from the
//    region's start to its first item) + tail (the caller's wait from its last item to the
//    region's end) + dispatch and lag (the caller's start, the worker's report).
// 3. The busy inflation: the items' CPU time at 2 threads (summed over both) over the CPU time
//    the same work takes at 1 thread, C1 − serial (the serial steps are the same code at both
//    budgets): what sharing the chip and cutting the work into blocks cost.
// 4. The predicted speed-up C1 / (serial + (items' CPU + waits) / 2), built up term by term, and
//    what each term takes from 2×: 2 · term / predicted time. Against it, the measured W1 / W2;
//    the difference is what the CPU times do not see (a loaded machine's preemption).
//
// The layer is BM_EncoderLayerForward's / BM_EncoderLayerTrainStep's: batch 1, F = 4·D,
// post-norm, relu, dropout 0; train = zero_grad, forward, backward, AdamW step. The third
// argument forces the attention path as BM_EncoderLayerForwardPlain / ...Tiled do.
// --dropout=P (anywhere among the arguments): the layer's dropout, on the attention
// probabilities and the three others (PyTorch's default is 0.1); it acts in training only.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/kernels.hpp"  // lib/src: region_cpu_seconds, pool_stats, BlasOnOneThread
#include "median.hpp"
#include "xenc/core/blas_core.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/core/random.hpp"
#include "xenc/nn/optim.hpp"
#include "xenc/nn/transformer_encoder.hpp"

namespace {
using xenc::bench::median;

double clock_ms(clockid_t id) {
  timespec t{};
  clock_gettime(id, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) * 1e-6;
}

// One run of the layer: wall, process CPU, main thread CPU, its CPU inside regions (ms), and the
// pool's totals over the run.
struct Run {
  double wall = 0, cpu = 0, main_cpu = 0, region_cpu = 0;
  xenc::kernels::PoolStats pool;
};

template <class Step>
Run measure(const Step& step) {
  namespace k = xenc::kernels;
  k::reset_pool_stats();
  const double w0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
  const double m0 = clock_ms(CLOCK_THREAD_CPUTIME_ID), r0 = k::region_cpu_seconds();
  step();
  Run r;
  r.main_cpu = clock_ms(CLOCK_THREAD_CPUTIME_ID) - m0;
  r.cpu = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
  r.wall = clock_ms(CLOCK_MONOTONIC) - w0;
  r.region_cpu = (k::region_cpu_seconds() - r0) * 1e3;
  r.pool = k::pool_stats();
  return r;
}

}  // namespace

int main(int argc_all, char** argv_all) {
  // --dropout=P and --whole-sums=off may stand anywhere; the other arguments are positional
  float dropout = 0.0f;
  bool whole_sums = true;
  std::vector<char*> args;
  for (int i = 0; i < argc_all; ++i) {
    const std::string a = argv_all[i];
    if (a.rfind("--dropout=", 0) == 0)
      dropout = std::stof(a.substr(10));
    else if (a == "--whole-sums=off")
      whole_sums = false;
    else
      args.push_back(argv_all[i]);
  }
  const int argc = int(args.size());
  char** argv = args.data();
  if (argc < 5) {
    std::fprintf(stderr,
                 "usage: xencoder_serial T D H forward|train [reps] [auto|plain|tiled] [blocks] "
                 "[split] [--dropout=P] [--whole-sums=off]\n");
    return 2;
  }
  const std::size_t T = std::stoul(argv[1]), D = std::stoul(argv[2]), H = std::stoul(argv[3]);
  const std::string mode = argv[4];
  const int reps = argc > 5 ? std::max(1, std::stoi(argv[5])) : 3;
  const std::string path_name = argc > 6 ? argv[6] : "auto";
  const std::size_t blocks = argc > 7 ? std::stoul(argv[7]) : 0;
  if (blocks > 0) xenc::kernels::set_gemm_blocks_per_thread(blocks);
  xenc::kernels::set_gemm_whole_sums(whole_sums);
  if (argc > 8) xenc::kernels::set_split_gemm_work(std::stoul(argv[8]));
  if (mode != "forward" && mode != "train") {
    std::fprintf(stderr, "xencoder_serial: mode is \"%s\", expected forward or train\n", argv[4]);
    return 2;
  }
  if (path_name != "auto" && path_name != "plain" && path_name != "tiled") {
    std::fprintf(stderr, "xencoder_serial: path is \"%s\", expected auto, plain or tiled\n",
                 path_name.c_str());
    return 2;
  }
  xenc::EncoderLayerConfig c;
  c.d_model = D;
  c.nhead = H;
  c.dim_feedforward = 4 * D;
  c.dropout = dropout;
  c.activation = xenc::Activation::relu;
  xenc::TransformerEncoderLayer layer(c, /*seed=*/1);
  layer.self_attn.set_attention_path(path_name == "plain"   ? xenc::AttentionPath::plain
                                     : path_name == "tiled" ? xenc::AttentionPath::tiled
                                                            : xenc::AttentionPath::automatic);
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
  const auto one_thread = [&] {
    const xenc::kernels::BlasOnOneThread one;  // the budget is 1 inside: no region
    step();
  };
  const std::size_t budget = xenc::kernels::thread_budget();
  // Warm-up: the buffers, the pool's worker, and OpenBLAS's start-up spin. With
  // OPENBLAS_NUM_THREADS >= 2, OpenBLAS's idle worker spins for its first 0.11 s after the library
  // loads (bench/README.md, "OpenBLAS's start-up spin") and takes the core the pool's worker
  // needs: at T = 128 a step takes milliseconds, and without this the first 0.1 s of steps would
  // be timed beside it. One step of each at least, until 0.15 s have passed.
  const double warm_start = clock_ms(CLOCK_MONOTONIC);
  do {
    one_thread();
    step();
  } while (clock_ms(CLOCK_MONOTONIC) - warm_start < 150.0);
  std::vector<Run> ones, twos;
  for (int r = 0; r < reps; ++r) {
    if (r % 2 == 0) ones.push_back(measure(one_thread));
    twos.push_back(measure(step));
    if (r % 2 == 1) ones.push_back(measure(one_thread));
  }
  // medians over the repetitions, in ms
  const auto med = [](const std::vector<Run>& runs, auto get) {
    std::vector<double> v;
    for (const Run& r : runs) v.push_back(get(r));
    return median(v);
  };
  const auto serial_of = [](const Run& r) { return std::max(0.0, r.main_cpu - r.region_cpu); };
  const auto waits_of = [](const Run& r) {
    return (r.pool.wake + r.pool.dispatch + r.pool.tail + r.pool.lag) * 1e3;
  };
  const double w1 = med(ones, [](const Run& r) { return r.wall; });
  const double c1 = med(ones, [](const Run& r) { return r.cpu; });
  const double w2 = med(twos, [](const Run& r) { return r.wall; });
  const double c2 = med(twos, [](const Run& r) { return r.cpu; });
  const double serial = med(twos, serial_of);
  const double serial_wall = med(twos, [](const Run& r) { return r.wall - r.pool.wall * 1e3; });
  const double region_wall = med(twos, [](const Run& r) { return r.pool.wall * 1e3; });
  const double busy_wall = med(twos, [](const Run& r) { return r.pool.busy_wall * 1e3; });
  const double busy = med(twos, [](const Run& r) { return r.pool.busy_cpu * 1e3; });
  const double wake = med(twos, [](const Run& r) { return r.pool.wake * 1e3; });
  const double tail = med(twos, [](const Run& r) { return r.pool.tail * 1e3; });
  const double other = med(twos, [](const Run& r) { return (r.pool.dispatch + r.pool.lag) * 1e3; });
  const double waits = med(twos, waits_of);
  std::vector<double> speedups;  // per repetition: its 1-thread wall / its 2-thread wall
  for (std::size_t r = 0; r < twos.size(); ++r) speedups.push_back(ones[r].wall / twos[r].wall);
  const double speedup = median(speedups);
  const Run& last = twos.back();

  // 1. The serial fraction (the lines bench/scaling.py and the serial_smoke test read).
  const double f = c2 > 0 ? serial / c2 : 0.0;
  std::printf(
      "T %zu D %zu H %zu %s, path %s, budget %zu, GEMM blocks per thread %zu, split from %zu, "
      "whole sums %s, dropout %g, median of %d\n",
      T, D, H, mode.c_str(), path_name.c_str(), budget,
      xenc::kernels::gemm_blocks_per_thread(budget), xenc::kernels::split_gemm_work(),
      whole_sums ? "on" : "off", double(dropout), reps);
  std::printf("%s\n", xenc::blas_summary(xenc::blas_report()).c_str());
  std::printf("wall %.2f ms, CPU main %.2f ms (%.2f in regions), other threads %.2f ms\n", w2,
              med(twos, [](const Run& r) { return r.main_cpu; }),
              med(twos, [](const Run& r) { return r.region_cpu; }),
              med(twos, [](const Run& r) { return r.cpu - r.main_cpu; }));
  std::printf("serial %.2f ms of %.2f ms CPU: f = %.4f\n", serial, c2, f);
  for (int n : {2, 4, 8, 16})
    std::printf("Amdahl at %2d threads: %.2fx\n", n, 1.0 / (f + (1.0 - f) / n));

  // 2. The decomposition of the 2-thread wall time.
  std::printf("\n1 thread: wall %.2f ms, CPU %.2f ms\n", w1, c1);
  std::printf("%zu threads: wall %.2f ms, CPU %.2f ms (%.2fx of 1 thread's); speed-up %.2fx\n",
              budget, w2, c2, c1 > 0 ? c2 / c1 : 0.0, speedup);
  std::printf("  serial, outside regions: wall %.2f ms, CPU %.2f ms\n", serial_wall, serial);
  std::printf("  regions: wall %.2f ms (%llu regions, %llu items); per thread (sums / %zu):\n",
              region_wall, static_cast<unsigned long long>(last.pool.regions),
              static_cast<unsigned long long>(last.pool.items), budget);
  const double p = double(std::max<std::size_t>(budget, 1));
  std::printf("    busy in items %.2f ms wall, %.2f ms CPU\n", busy_wall / p, busy / p);
  std::printf("    wake latency %.2f ms, caller's tail %.2f ms, dispatch + report %.2f ms\n",
              wake / p, tail / p, other / p);
  // 3. The busy inflation.
  const double items1 = std::max(c1 - serial, 1e-9);
  std::printf("  busy inflation: items' CPU %.2f ms at %zu threads / %.2f ms at 1 = %.3f\n", busy,
              budget, items1, busy / items1);
  // 4. The prediction, term by term, and what each term takes from the ideal.
  const double ideal = serial + items1 / p, inflated = serial + busy / p;
  const double with_waits = serial + (busy + waits) / p;
  std::printf(
      "predicted speed-up (1-thread CPU / predicted time): serial only %.2fx, "
      "+ inflation %.2fx, + waits %.2fx; measured (wall) %.2fx\n",
      c1 / ideal, c1 / inflated, c1 / with_waits, speedup);
  const auto lost = [&](double term) { return p * term / with_waits; };
  std::printf(
      "lost from %zux: serial %.3fx, inflation %.3fx, waits %.3fx "
      "(wake %.3fx, tail %.3fx, dispatch + report %.3fx)\n",
      budget, lost(serial * (p - 1) / p), lost((busy - items1) / p), lost(waits / p),
      lost(wake / p), lost(tail / p), lost(other / p));
  return 0;
}

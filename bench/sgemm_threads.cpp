// xencoder_sgemm M N K OPA OPB REPS [xencoder|pair]: one product C[M, N] = op(A) op(B) (K summed,
// OPA and OPB each "n" or "t"), timed three ways.
//
// Without the last argument: one cblas_sgemm with OpenBLAS's OWN threads, at the budget
// OPENBLAS_NUM_THREADS gives it (xencoder never lets OpenBLAS thread: its pool splits large GEMMs,
// bench/README.md "One pool"). Prints "wall MS cpu MS threads N core NAME": the mean per call,
// wall clock and process CPU time, after 3 calls that warm the caches and start OpenBLAS's
// threads.
//
// With "xencoder": the product as xencoder runs it (kernels::gemm: from kSplitGemmWork
// multiply-adds on a budget of 2 or more, blocks of C on xencoder's pool, each a 1-thread sgemm),
// on a budget of 1 (kernels::BlasOnOneThread) and of OPENBLAS_NUM_THREADS. Prints "wall1 MS cpu1
// MS wall2 MS cpu2 MS threads N blocks B wake_us U core NAME": per call on each budget, the blocks
// C was cut into on the second (1 where it was not split), and the mean time the pool's workers
// waited to be woken per region (kernels::pool_stats; 0 where there was no region).
//
// With "pair": no cut at all. One whole product alone on a budget of 1, against two whole
// products at once, each a 1-thread sgemm on its own thread of xencoder's pool (the same A and B,
// a C each). Prints "alone wall MS cpu MS pair wall MS cpu MS threads P core NAME": what the
// second core costs the first with no cut and no packing added (the pair's CPU is for both; P is
// 2, or 1 on a budget of 1, where the two run one after the other).
//
// In the last two the sides alternate call by call in one process, which goes first alternating
// too, after 0.15 s of warm-up; each figure is the median over REPS calls, so the machine's drift
// and its bursts fall on both sides alike. Every way, the last word is the kernel set that ran
// (like every program, it re-executes itself with OPENBLAS_CORETYPE when OpenBLAS fell back to a
// weaker set than the CPU runs: apps/common/blas_core_reexec.cpp).
//
// What it is for: bench/gemm_bound.py runs an encoder layer's GEMM shapes through it on 1 and on
// 2 threads, to measure what a second core gives those shapes apart from the rest of the layer:
// with OpenBLAS's threads (separate processes), with xencoder's own cut (what the layer runs),
// and with no cut (what the chip gives two products at once).
#include <cblas.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/kernels.hpp"  // lib/src: gemm, gemm_blocks, BlasOnOneThread, thread_budget
#include "median.hpp"

namespace {
using xenc::bench::median;
double seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

bool parse_op(const char* s, CBLAS_TRANSPOSE& op) {
  const std::string v = s;
  if (v == "n")
    op = CblasNoTrans;
  else if (v == "t")
    op = CblasTrans;
  else
    return false;
  return true;
}
}  // namespace

int main(int argc, char** argv) {
  CBLAS_TRANSPOSE op_a = CblasNoTrans, op_b = CblasNoTrans;
  long M = 0, N = 0, K = 0, reps = 0;
  std::string mode;  // "", "xencoder" or "pair"
  if (argc == 8) {
    mode = argv[7];
    --argc;
  }
  if (argc == 7) {
    M = std::atol(argv[1]);
    N = std::atol(argv[2]);
    K = std::atol(argv[3]);
    reps = std::atol(argv[6]);
  }
  if (argc != 7 || (mode != "" && mode != "xencoder" && mode != "pair") || M <= 0 || N <= 0 ||
      K <= 0 || reps <= 0 || !parse_op(argv[4], op_a) || !parse_op(argv[5], op_b)) {
    std::fprintf(
        stderr,
        "usage: xencoder_sgemm M N K OPA OPB REPS [xencoder|pair] (M, N, K, REPS >= 1; "
        "OPA, OPB: n or t)\n"
        "  times cblas_sgemm with OpenBLAS's own threads (OPENBLAS_NUM_THREADS); with\n"
        "  xencoder, xencoder's gemm on 1 thread and on OPENBLAS_NUM_THREADS, alternating;\n"
        "  with pair, one product alone and two at once on 2 threads, alternating\n");
    return 2;
  }
  // row-major: op(A) is [M, K] and op(B) is [K, N]; A and B as stored
  const long lda = op_a == CblasNoTrans ? K : M, ldb = op_b == CblasNoTrans ? N : K;
  std::vector<float> a(std::size_t(M * K)), b(std::size_t(K * N)), c(std::size_t(M * N));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(i % 7) * 0.1f - 0.3f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(i % 5) * 0.1f - 0.2f;
  const auto call = [&] {
    cblas_sgemm(CblasRowMajor, op_a, op_b, int(M), int(N), int(K), 1.0f, a.data(), int(lda),
                b.data(), int(ldb), 0.0f, c.data(), int(N));
  };
  if (!mode.empty()) {
    namespace k = xenc::kernels;
    const auto views = [&](const std::vector<float>& x, const std::vector<float>& y,
                           std::vector<float>& z) {
      return std::make_tuple(
          k::ConstMatView{x.data(), std::size_t(op_a == CblasNoTrans ? M : K),
                          std::size_t(op_a == CblasNoTrans ? K : M), std::size_t(lda)},
          k::ConstMatView{y.data(), std::size_t(op_b == CblasNoTrans ? K : N),
                          std::size_t(op_b == CblasNoTrans ? N : K), std::size_t(ldb)},
          k::MatView{z.data(), std::size_t(M), std::size_t(N), std::size_t(N)});
    };
    const k::Op oa = op_a == CblasNoTrans ? k::Op::none : k::Op::transpose;
    const k::Op ob = op_b == CblasNoTrans ? k::Op::none : k::Op::transpose;
    const auto [va, vb, vc] = views(a, b, c);
    std::vector<float> c2(c.size());  // pair: the second product's C (A and B are shared)
    const auto [va2, vb2, vc2] = views(a, b, c2);
    const auto run = [&] { k::gemm(va, oa, vb, ob, vc); };
    // side 0: the product on a budget of 1; side 1: xencoder's cut on the budget, or two whole
    // products at once, each a 1-thread sgemm on its own thread of the pool
    const auto side = [&](int s) {
      if (s == 0) {
        const k::BlasOnOneThread one;
        run();
      } else if (mode == "xencoder") {
        run();
      } else {
        k::parallel_for(2, 2, [&](std::size_t item, std::size_t) {
          item == 0 ? k::gemm(va, oa, vb, ob, vc) : k::gemm(va2, oa, vb2, ob, vc2);
        });
      }
    };
    // Warm-up: the caches, the pool's worker, and OpenBLAS's start-up spin (its idle worker
    // spins for its first 0.11 s after the library loads, bench/README.md "OpenBLAS's start-up
    // spin", and would be timed as the 1-thread side's CPU): both sides, until 0.15 s passed.
    const double warm_start = seconds(CLOCK_MONOTONIC);
    do {
      side(0);
      side(1);
    } while (seconds(CLOCK_MONOTONIC) - warm_start < 0.15);
    // per call, the sides alternating and which goes first too; medians (this VM's host takes
    // the cores away in bursts: a mean would carry them)
    std::vector<double> wall[2], cpu[2];
    k::reset_pool_stats();  // side 0 runs no region: the pool's totals are side 1's
    for (long i = 0; i < reps; ++i)
      for (int turn = 0; turn < 2; ++turn) {
        const int s = turn ^ int(i & 1);
        const double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
        side(s);
        wall[s].push_back((seconds(CLOCK_MONOTONIC) - w0) * 1e3);
        cpu[s].push_back((seconds(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e3);
      }
    if (mode == "pair") {
      // the pair's threads: 2 unless the budget (OPENBLAS_NUM_THREADS) is 1
      std::printf("alone wall %.4f cpu %.4f pair wall %.4f cpu %.4f threads %zu core %s\n",
                  median(wall[0]), median(cpu[0]), median(wall[1]), median(cpu[1]),
                  std::min<std::size_t>(2, k::thread_budget()), openblas_get_corename());
      return 0;
    }
    const std::size_t threads = k::thread_budget();
    const std::size_t work = std::size_t(M) * std::size_t(N) * std::size_t(K);
    const std::size_t blocks = threads > 1 && work >= k::split_gemm_work()
                                   ? k::gemm_blocks(std::size_t(M), std::size_t(N),
                                                    k::gemm_blocks_per_thread(threads) * threads)
                                         .count()
                                   : 1;
    const k::PoolStats pool = k::pool_stats();
    const double wake_us =  // per region, the workers' wait for it summed
        pool.regions > 0 ? pool.wake * 1e6 / double(pool.regions) : 0.0;
    std::printf(
        "wall1 %.4f cpu1 %.4f wall2 %.4f cpu2 %.4f threads %zu blocks %zu wake_us %.1f core %s\n",
        median(wall[0]), median(cpu[0]), median(wall[1]), median(cpu[1]), threads, blocks, wake_us,
        openblas_get_corename());
    return 0;
  }
  for (int i = 0; i < 3; ++i) call();
  const double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
  for (long i = 0; i < reps; ++i) call();
  const double wall = (seconds(CLOCK_MONOTONIC) - w0) / double(reps);
  const double cpu = (seconds(CLOCK_PROCESS_CPUTIME_ID) - c0) / double(reps);
  std::printf("wall %.4f cpu %.4f threads %d core %s\n", wall * 1e3, cpu * 1e3,
              openblas_get_num_threads(), openblas_get_corename());
  return 0;
}

// Benchmarks of the ops, each beside its loop reference (reference::, xenc/reference/ops.hpp,
// plain loops in double: the baseline, not a competitor): matmul, softmax, layer norm, the
// activations and scaled dot-product attention; and BM_Sgemm, the BLAS speed every other
// number is compared with.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include <xtensor/xmath.hpp>

#include "bench_common.hpp"
#include "kernels/kernels.hpp"  // lib/src: the kernels layer (internal, not installed)
#include "xenc/ops/activation.hpp"
#include "xenc/ops/attention.hpp"
#include "xenc/ops/gemm.hpp"
#include "xenc/ops/layer_norm.hpp"
#include "xenc/ops/softmax.hpp"
#include "xenc/reference/ops.hpp"

namespace xenc::bench {
namespace {

// ---- GEMM ------------------------------------------------------------------------------
// C = A B for square N x N matrices: 2·N³ FLOPs.

void BM_Sgemm(benchmark::State& state) {
  // OpenBLAS's cblas_sgemm (through kernels::gemm): the ceiling for everything else.
  // (CPU time is the whole process's, all threads, as for BM_EncoderLayerForward.)
  const auto N = static_cast<std::size_t>(state.range(0));
  Tensor2 a = random_tensor<Tensor2>(std::vector<std::size_t>{N, N}, 1);
  Tensor2 b = random_tensor<Tensor2>(std::vector<std::size_t>{N, N}, 2);
  Tensor2 c = Tensor2::from_shape({N, N});
  for (auto _ : state) {
    kernels::gemm(kernels::as_matrix(a), kernels::Op::none, kernels::as_matrix(b),
                  kernels::Op::none, kernels::as_matrix(c));
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_flops(state, 2.0 * double(N) * N * N);
}
BENCHMARK(BM_Sgemm)->ArgName("N")->Arg(64)->Arg(1024)->MeasureProcessCPUTime()->UseRealTime()->Unit(
    benchmark::kMillisecond);

// A layer's projection, y [T, D] = x [T, D] W [D, D], on 1 thread (split 0: one sgemm) or cut
// into blocks on the pool (split 1: kernels::gemm_split on the budget, OPENBLAS_NUM_THREADS), at
// work T·D² from 2²¹ to 2²⁶ = kSplitGemmWork (bench/scaling.sh prints where split wins).
void BM_GemmSplit(benchmark::State& state) {
  const auto T = static_cast<std::size_t>(state.range(0)),
             D = static_cast<std::size_t>(state.range(1));
  const bool split = state.range(2) != 0;
  // blocks 0: the rule (kernels::gemm_blocks_per_thread: 1 per thread on 2 threads)
  const std::size_t old_blocks =
      kernels::set_gemm_blocks_per_thread(static_cast<std::size_t>(state.range(3)));
  Tensor2 x = random_tensor<Tensor2>(std::vector<std::size_t>{T, D}, 1);
  Tensor2 w = random_tensor<Tensor2>(std::vector<std::size_t>{D, D}, 2);
  Tensor2 y = Tensor2::from_shape({T, D});
  const std::size_t threads = split ? kernels::thread_budget() : 1;
  for (auto _ : state) {
    kernels::gemm_split(kernels::as_matrix(x), kernels::Op::none, kernels::as_matrix(w),
                        kernels::Op::none, kernels::as_matrix(y), 1.0f, 0.0f, threads);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  kernels::set_gemm_blocks_per_thread(old_blocks);
  set_flops(state, 2.0 * double(T) * D * D);
}
BENCHMARK(BM_GemmSplit)
    ->ArgNames({"T", "D", "split", "blocks"})
    ->ArgsProduct({{8, 16, 32, 64, 128, 256}, {512}, {0, 1}, {0}})
    ->ArgsProduct({{512, 2048}, {512, 2048}, {1}, {2, 4, 8}})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// What cutting a layer's GEMMs into blocks costs by itself: every GEMM of one encoder layer
// (D = 512, F = 2048; train 0: the forward's six, train 1: with the backward's dx and dW, 18),
// each as the sum of its blocks, run one after another on ONE thread, so the machine's sharing of
// two cores is out of it. Each iteration runs the layer's GEMMs three ways, in an order that
// rotates: whole; cut as before 2026-11-29 (rows first, then columns where the rows give too
// few); cut by kernels::gemm_blocks (least packing). This VM's speed drifts by 10% over seconds,
// so the three are timed side by side, not as three benchmarks. want: the blocks asked for
// (2 threads: 4; 16 threads: 32). Counters: rows_first and least_packing, each cut's time over
// the whole products' (bench/README.md, "Where to cut a split GEMM").
struct CutShape {
  std::size_t M, N, K;
  kernels::Op op_a, op_b;
};
kernels::GemmBlocks rows_first_cut(std::size_t M, std::size_t N, std::size_t want) {
  kernels::GemmBlocks g;
  g.M = M;
  g.N = N;
  g.row_step = kernels::gemm_block_step(M, want);
  g.row_parts = (M + g.row_step - 1) / g.row_step;
  g.col_step = kernels::gemm_block_step(N, (want + g.row_parts - 1) / g.row_parts);
  g.col_parts = (N + g.col_step - 1) / g.col_step;
  return g;
}
void BM_SplitGemmCost(benchmark::State& state) {
  const auto T = static_cast<std::size_t>(state.range(0)),
             want = static_cast<std::size_t>(state.range(1));
  const bool train = state.range(2) != 0;
  const std::size_t D = 512, F = 2048;
  using kernels::Op;
  std::vector<CutShape> shapes;
  const auto add = [&](CutShape s, int times) { shapes.insert(shapes.end(), times, s); };
  // y = x Wᵀ (linear_rows): q, k, v, out; ff1; ff2
  add({T, D, D, Op::none, Op::transpose}, 4);
  add({T, F, D, Op::none, Op::transpose}, 1);
  add({T, D, F, Op::none, Op::transpose}, 1);
  if (train) {  // dx = dy W and dW = dyᵀ x (linear_rows_backward)
    add({T, D, D, Op::none, Op::none}, 4);
    add({T, D, F, Op::none, Op::none}, 1);
    add({T, F, D, Op::none, Op::none}, 1);
    add({D, D, T, Op::transpose, Op::none}, 4);
    add({F, D, T, Op::transpose, Op::none}, 1);
    add({D, F, T, Op::transpose, Op::none}, 1);
  }
  std::vector<Tensor2> as, bs, cs;
  double flops = 0;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const CutShape& s = shapes[i];
    const bool ta = s.op_a == Op::transpose, tb = s.op_b == Op::transpose;
    as.push_back(random_tensor<Tensor2>(std::vector<std::size_t>{ta ? s.K : s.M, ta ? s.M : s.K},
                                        std::uint32_t(2 * i + 1)));
    bs.push_back(random_tensor<Tensor2>(std::vector<std::size_t>{tb ? s.N : s.K, tb ? s.K : s.N},
                                        std::uint32_t(2 * i + 2)));
    cs.push_back(Tensor2::from_shape({s.M, s.N}));
    flops += 2.0 * double(s.M) * s.N * s.K;
  }
  // the layer's GEMMs cut one way (0 whole, 1 rows first, 2 least packing); its seconds
  const auto run = [&](int cut) {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const CutShape& s = shapes[i];
      const bool ta = s.op_a == Op::transpose, tb = s.op_b == Op::transpose;
      const kernels::GemmBlocks g = cut == 0   ? kernels::GemmBlocks{s.M, s.N, s.M, 1, s.N, 1}
                                    : cut == 1 ? rows_first_cut(s.M, s.N, want)
                                               : kernels::gemm_blocks(s.M, s.N, want);
      const kernels::ConstMatView a = kernels::as_matrix(as[i]), b = kernels::as_matrix(bs[i]);
      for (std::size_t p = 0; p < g.count(); ++p) {
        const kernels::GemmBlocks::Block k = g.block(p);
        kernels::gemm(ta ? a.block(0, k.r0, s.K, k.m) : a.block(k.r0, 0, k.m, s.K), s.op_a,
                      tb ? b.block(k.c0, 0, k.n, s.K) : b.block(0, k.c0, s.K, k.n), s.op_b,
                      kernels::as_matrix(cs[i]).block(k.r0, k.c0, k.m, k.n));
      }
    }
    benchmark::ClobberMemory();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const kernels::BlasOnOneThread one;  // the budget is 1: every block a plain sgemm, in order
  double seconds[3] = {0, 0, 0};
  std::size_t turn = 0;
  for (auto _ : state) {
    for (std::size_t k = 0; k < 3; ++k) {
      const int cut = int((turn + k) % 3);
      seconds[cut] += run(cut);
    }
    ++turn;
  }
  state.counters["rows_first"] = seconds[1] / seconds[0];
  state.counters["least_packing"] = seconds[2] / seconds[0];
  set_flops(state, 3.0 * flops);
}
BENCHMARK(BM_SplitGemmCost)
    ->ArgNames({"T", "want", "train"})
    ->ArgsProduct({{64, 512, 2048}, {4, 32}, {0, 1}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_MatmulReference(benchmark::State& state) {
  const auto N = static_cast<std::size_t>(state.range(0));
  const reference::Tensor2d a = random_tensor<Tensor2>(std::vector<std::size_t>{N, N}, 1);
  const reference::Tensor2d b = random_tensor<Tensor2>(std::vector<std::size_t>{N, N}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(reference::matmul(a, b));
  set_flops(state, 2.0 * double(N) * N * N);
}
BENCHMARK(BM_MatmulReference)
    ->ArgName("N")
    ->Arg(64)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_MatmulBlas(benchmark::State& state) {
  const auto N = static_cast<std::size_t>(state.range(0));
  Tensor2 a = random_tensor<Tensor2>(std::vector<std::size_t>{N, N}, 1);
  Tensor2 b = random_tensor<Tensor2>(std::vector<std::size_t>{N, N}, 2);
  for (auto _ : state) benchmark::DoNotOptimize(matmul(a, b));
  set_flops(state, 2.0 * double(N) * N * N);
}
BENCHMARK(BM_MatmulBlas)
    ->ArgName("N")
    ->Arg(64)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// ---- softmax over the rows of a [T, T] score matrix ------------------------------------

void BM_SoftmaxReference(benchmark::State& state) {
  const auto T = static_cast<std::size_t>(state.range(0));
  const reference::Tensor2d s = random_tensor<Tensor2>(std::vector<std::size_t>{T, T});
  for (auto _ : state) benchmark::DoNotOptimize(reference::softmax_forward(s));
  state.SetItemsProcessed(state.iterations() * std::int64_t(T * T));  // elements/s
}
BENCHMARK(BM_SoftmaxReference)
    ->ArgName("T")
    ->Arg(16)
    ->Arg(1024)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_Softmax(benchmark::State& state) {
  // The kernel the attention uses, in place on one reused buffer (as in a head).
  const auto T = static_cast<std::size_t>(state.range(0));
  Tensor2 s = random_tensor<Tensor2>(std::vector<std::size_t>{T, T});
  Tensor2 work = s;
  for (auto _ : state) {
    std::copy(s.begin(), s.end(), work.begin());
    kernels::softmax_rows(kernels::as_matrix(work));
    benchmark::DoNotOptimize(work.data());
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(T * T));
}
BENCHMARK(BM_Softmax)
    ->ArgName("T")
    ->Arg(16)
    ->Arg(1024)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_ExpStd(benchmark::State& state) {
  // std::exp element by element: a library call per float, no SIMD.
  const auto n = static_cast<std::size_t>(state.range(0));
  Tensor1 x = random_tensor<Tensor1>(std::vector<std::size_t>{n});
  Tensor1 y = Tensor1::from_shape({n});
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) y(i) = std::exp(x(i));
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(n));
}
BENCHMARK(BM_ExpStd)->ArgName("n")->Arg(256)->Arg(1 << 16)->UseRealTime()->Unit(
    benchmark::kMicrosecond);

void BM_ExpInplace(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Tensor1 x = random_tensor<Tensor1>(std::vector<std::size_t>{n});
  Tensor1 y = x;
  for (auto _ : state) {
    std::copy(x.begin(), x.end(), y.begin());
    exp_inplace(y);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(n));
}
BENCHMARK(BM_ExpInplace)
    ->ArgName("n")
    ->Arg(256)
    ->Arg(1 << 16)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// ---- layer norm over [T, D] ------------------------------------------------------------

void BM_LayerNormReference(benchmark::State& state) {
  const auto T = static_cast<std::size_t>(state.range(0)),
             D = static_cast<std::size_t>(state.range(1));
  const reference::Tensor2d x = random_tensor<Tensor2>(std::vector<std::size_t>{T, D});
  const reference::Tensor1d w = xt::ones<double>({D}), b = xt::zeros<double>({D});
  for (auto _ : state) benchmark::DoNotOptimize(reference::layer_norm_forward(x, w, b, 1e-5));
  state.SetItemsProcessed(state.iterations() * std::int64_t(T * D));
}
BENCHMARK(BM_LayerNormReference)
    ->ArgNames({"T", "D"})
    ->Args({16, 64})
    ->Args({1024, 512})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_LayerNorm(benchmark::State& state) {
  const auto T = static_cast<std::size_t>(state.range(0)),
             D = static_cast<std::size_t>(state.range(1));
  Tensor2 x = random_tensor<Tensor2>(std::vector<std::size_t>{T, D});
  Tensor1 w = xt::ones<float>({D}), b = xt::zeros<float>({D});
  for (auto _ : state) benchmark::DoNotOptimize(layer_norm_forward(x, w, b, 1e-5f));
  state.SetItemsProcessed(state.iterations() * std::int64_t(T * D));
}
BENCHMARK(BM_LayerNorm)
    ->ArgNames({"T", "D"})
    ->Args({16, 64})
    ->Args({1024, 512})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// A pass over independent rows, [T, D] floats, on 1 thread (pool 0: the budget set to 1) or as
// blocks of rows on the pool (pool 1: kernels::parallel_rows from any size, on the budget,
// OPENBLAS_NUM_THREADS): layer norm forward (pass 0), relu in place (pass 1), a residual sum
// y += x (pass 2) or a copy y = x (pass 3), at T·D on both sides of kernels::kLayerNormWork and
// kernels::kRowPassWork (bench/README.md, "The optimiser and the row passes on the pool", and
// "The residual sums and the saved copies on the pool": where the pool starts to win, and at
// what CPU cost).
void BM_RowPass(benchmark::State& state) {
  const auto T = static_cast<std::size_t>(state.range(0)),
             D = static_cast<std::size_t>(state.range(1));
  const auto kind = state.range(2);
  const bool pool = state.range(3) != 0;
  Tensor2 x = random_tensor<Tensor2>(std::vector<std::size_t>{T, D}, 1);
  Tensor2 y = Tensor2::from_shape({T, D});
  Tensor1 w = xt::ones<float>({D}), b = xt::zeros<float>({D});
  const auto pass = [&](std::size_t r0, std::size_t r1) {
    const std::size_t n = (r1 - r0) * D;
    float* y0 = kernels::as_matrix(y).row(r0);
    const float* x0 = kernels::as_matrix(x).row(r0);
    switch (kind) {
      case 0:
        kernels::layer_norm_rows(kernels::as_matrix(x).block(r0, 0, r1 - r0, D),
                                 kernels::as_matrix(y).block(r0, 0, r1 - r0, D),
                                 kernels::as_vector(w), kernels::as_vector(b), 1e-5f, nullptr,
                                 nullptr);
        break;
      case 1:
        kernels::relu_inplace(y0, n);
        break;
      case 2:
        kernels::add_inplace(y0, x0, n);
        break;
      default:
        kernels::copy_floats(y0, x0, n);
        break;
    }
  };
  y = x;
  for (auto _ : state) {
    if (pool) {
      kernels::parallel_rows(T, D, pass, 0);  // inside the region each block runs on 1 thread
    } else {
      const kernels::BlasOnOneThread one;  // the budget is 1: no region
      pass(0, T);
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(T * D));
}
BENCHMARK(BM_RowPass)
    ->ArgNames({"T", "D", "pass", "pool"})
    ->ArgsProduct(
        {{8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192}, {512}, {0, 1, 2, 3}, {0, 1}})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// One Adam step over n elements, on the calling thread (pool 0: the budget at 1) or as blocks on
// the pool from any size (pool 1): the crossover behind kernels::kAdamUpdateWork (bench/README.md,
// "The optimiser and the row passes on the pool"). A layer's
// parameters at D = 512 hold 512 (a bias) to 2²⁰ (a feed-forward weight) elements.
void BM_AdamUpdate(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const bool pool = state.range(1) != 0;
  Tensor1 theta = random_tensor<Tensor1>(std::vector<std::size_t>{n}, 1);
  const Tensor1 grad = random_tensor<Tensor1>(std::vector<std::size_t>{n}, 2);
  Tensor1 m = xt::zeros<float>({n}), v = xt::zeros<float>({n});
  const kernels::AdamScalars s{0.9f, 0.999f, 1e-8f, 1.0f - 1e-6f, 0.0f, 1e-4f, 0.03f};
  for (auto _ : state) {
    if (pool) {
      kernels::adam_update(theta.data(), grad.data(), m.data(), v.data(), n, s, 0);
    } else {
      const kernels::BlasOnOneThread one;  // the budget is 1: no region
      kernels::adam_update(theta.data(), grad.data(), m.data(), v.data(), n, s);
    }
    benchmark::DoNotOptimize(theta.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(n));
}
BENCHMARK(BM_AdamUpdate)
    ->ArgNames({"n", "pool"})
    ->ArgsProduct({{1 << 10, 1 << 12, 1 << 14, 1 << 15, 1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20,
                    1 << 21, 1 << 22},
                   {0, 1}})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// ---- activations over [T, F] -----------------------------------------------------------

void BM_GeluXtensor(benchmark::State& state) {
  // The reference written as one xtensor expression: gelu(x) = x/2 · (1 + erf(x / √2)).
  const auto n = static_cast<std::size_t>(state.range(0));
  Tensor1 x = random_tensor<Tensor1>(std::vector<std::size_t>{n});
  for (auto _ : state) {
    Tensor1 y = 0.5f * x * (1.0f + xt::erf(x * 0.70710678f));
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(n));
}
BENCHMARK(BM_GeluXtensor)
    ->ArgName("n")
    ->Arg(256)
    ->Arg(1 << 20)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_Gelu(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Tensor1 x = random_tensor<Tensor1>(std::vector<std::size_t>{n});
  for (auto _ : state) benchmark::DoNotOptimize(gelu_forward(x));
  state.SetItemsProcessed(state.iterations() * std::int64_t(n));
}
BENCHMARK(BM_Gelu)->ArgName("n")->Arg(256)->Arg(1 << 20)->UseRealTime()->Unit(
    benchmark::kMicrosecond);

void BM_Relu(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Tensor1 x = random_tensor<Tensor1>(std::vector<std::size_t>{n});
  for (auto _ : state) benchmark::DoNotOptimize(relu_forward(x));
  state.SetItemsProcessed(state.iterations() * std::int64_t(n));
}
BENCHMARK(BM_Relu)->ArgName("n")->Arg(256)->Arg(1 << 20)->UseRealTime()->Unit(
    benchmark::kMicrosecond);

// ---- scaled dot-product attention on [1, H, T, Dh] ---------------------------------------
// Args: T, D, H (Dh = D / H). FLOPs: Q Kᵀ and P V, 2 · 2·T·T·Dh per head = 4·T²·D.

void attention_inputs(benchmark::State& state, Tensor4& q, Tensor4& k, Tensor4& v) {
  const auto T = static_cast<std::size_t>(state.range(0)),
             D = static_cast<std::size_t>(state.range(1)),
             H = static_cast<std::size_t>(state.range(2));
  const std::vector<std::size_t> shape{1, H, T, D / H};
  q = random_tensor<Tensor4>(shape, 1);
  k = random_tensor<Tensor4>(shape, 2);
  v = random_tensor<Tensor4>(shape, 3);
  set_flops(state, 4.0 * double(T) * T * D);
}

void BM_AttentionReference(benchmark::State& state) {
  Tensor4 q, k, v;
  attention_inputs(state, q, k, v);
  const reference::Tensor4d qd = q, kd = k, vd = v;
  for (auto _ : state)
    benchmark::DoNotOptimize(reference::scaled_dot_product_attention_forward(qd, kd, vd));
}
BENCHMARK(BM_AttentionReference)
    ->ArgNames({"T", "D", "H"})
    ->Args({16, 128, 4})
    ->Args({256, 512, 8})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_Attention(benchmark::State& state) {
  // Two GEMMs around the vectorised row softmax, head by head (returns P for every head).
  Tensor4 q, k, v;
  attention_inputs(state, q, k, v);
  for (auto _ : state) benchmark::DoNotOptimize(scaled_dot_product_attention_forward(q, k, v));
}
BENCHMARK(BM_Attention)
    ->ArgNames({"T", "D", "H"})
    ->Args({16, 128, 4})
    ->Args({256, 512, 8})
    ->Args({1024, 512, 8})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace xenc::bench

namespace xenc::bench {
namespace {

// One head's attention (Dh = 64, as D = 512, H = 8), forward only: the plain kernel (the
// [T, T] matrix) against the tiled kernel at tile sizes Br x Bc (queries x keys), to choose
// kernels::TileSizes. BM_AttentionHeadTiled/T/Br/Bc.
struct HeadData {
  Tensor2 q, k, v, out;
  explicit HeadData(std::size_t T)
      : q(random_tensor<Tensor2>(std::vector<std::size_t>{T, 64}, 1)),
        k(random_tensor<Tensor2>(std::vector<std::size_t>{T, 64}, 2)),
        v(random_tensor<Tensor2>(std::vector<std::size_t>{T, 64}, 3)),
        out(Tensor2::from_shape({T, 64})) {}
  kernels::HeadInputs inputs() const {
    return {kernels::as_matrix(q), kernels::as_matrix(k), kernels::as_matrix(v)};
  }
};

void BM_AttentionHeadPlain(benchmark::State& state) {
  const auto T = static_cast<std::size_t>(state.range(0));
  HeadData d(T);
  Tensor2 probs = Tensor2::from_shape({T, T});
  for (auto _ : state)
    kernels::attention_head_forward(d.inputs(), {0.125f, nullptr, {}, {}},
                                    kernels::as_matrix(probs), {}, {}, kernels::as_matrix(d.out));
  set_flops(state, 4.0 * double(T) * double(T) * 64.0);
}
BENCHMARK(BM_AttentionHeadPlain)
    ->ArgName("T")
    ->Arg(512)
    ->Arg(2048)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_AttentionHeadTiled(benchmark::State& state) {
  const auto T = static_cast<std::size_t>(state.range(0));
  const kernels::TileSizes tiles{static_cast<std::size_t>(state.range(1)),
                                 static_cast<std::size_t>(state.range(2))};
  HeadData d(T);
  std::vector<float> lse(T);
  for (auto _ : state)
    kernels::attention_head_forward_tiled(d.inputs(), {0.125f, nullptr, {}, {}}, {},
                                          kernels::as_matrix(d.out), lse.data(), tiles);
  set_flops(state, 4.0 * double(T) * double(T) * 64.0);
}
BENCHMARK(BM_AttentionHeadTiled)
    ->ArgNames({"T", "Br", "Bc"})
    ->Args({512, 64, 256})
    ->Args({2048, 64, 256})
    ->Args({2048, 32, 256})
    ->Args({2048, 128, 256})
    ->Args({2048, 64, 512})
    ->Args({2048, 128, 512})
    ->Args({2048, 256, 256})
    ->Args({2048, 64, 128})
    ->Args({2048, 256, 128})
    ->Args({2048, 256, 512})
    ->Args({2048, 512, 256})
    ->Args({2048, 512, 512})
    ->Args({2048, 128, 1024})
    ->Args({8192, 64, 256})
    ->Args({8192, 256, 256})
    ->Args({8192, 256, 512})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace xenc::bench

// GEMM on matrix views: the one place xencoder calls BLAS (OpenBLAS's cblas_sgemm). A build
// without BLAS (WebAssembly: XENC_NO_BLAS) runs the plain C++ gemm_portable instead.
//
// Threads: OpenBLAS always runs on one thread here (BlasOnOneThread, threads.cpp). A product of
// kSplitGemmWork multiply-adds or more is cut into blocks of C, one 1-thread sgemm each, run on
// xencoder's pool (parallel_for): every element of C is the same dot product over K (equal to the
// unsplit product within rounding: a different cut can hand an element to another of OpenBLAS's
// micro-kernels, KernelsGemm.LargeProductsOnTwoThreadsEqualOneThreadAndTheLoops), and
// OpenBLAS's own workers are never woken, so none of them spin-waits after the call (for up to
// 2^28 TSC ticks, its THREAD_TIMEOUT) and takes a core from the pool's next region (attention's
// heads, bench/README.md, "One pool"). Blocks are whole multiples of 64 rows or columns
// (OpenBLAS's register blocks divide 64, so no block ends inside one), gemm_blocks_per_thread per
// thread where C is large enough (one each on 2 threads, 2 each on more), cut along the rows, the
// columns or both, whichever packs the operands again the least (gemm_blocks). gemm_many runs
// independent products whole instead, one thread each, as many as balance on the threads (the
// backward's dx and dW on 2 threads; two of the forward's q, k, v, the third cut): a block packs
// its rows of op(A) and its columns of op(B) again, a whole product packs them once.
#ifndef XENC_NO_BLAS
#include <cblas.h>
#endif

#include <algorithm>
#include <atomic>
#include <functional>
#include <vector>

#include "blas_probe.hpp"
#include "kernels.hpp"
#include "xenc/core/blas_core.hpp"

namespace xenc::kernels {

namespace {

std::atomic<bool> whole_sums_off{false};

void sgemm(ConstMatView a, bool ta, ConstMatView b, bool tb, MatView c, std::size_t K, float alpha,
           float beta) {
#ifdef XENC_NO_BLAS
  gemm_portable(a, ta ? Op::transpose : Op::none, b, tb ? Op::transpose : Op::none, c, alpha, beta);
#else
  xenc::require_blas_core_runs_here("gemm");  // a set beyond the CPU: an exception, not SIGILL
  warn_once_if_blas_fallback();  // OpenBLAS on a weaker core set than the CPU runs says so, once
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(c.rows), static_cast<blasint>(c.cols), static_cast<blasint>(K),
              alpha, a.data, static_cast<blasint>(a.stride), b.data, static_cast<blasint>(b.stride),
              beta, c.data, static_cast<blasint>(c.stride));
#endif
}

// Rows r0 .. r0+n of op(A) (columns of A when it is transposed), and columns c0 .. c0+n of op(B).
ConstMatView op_rows(ConstMatView a, bool ta, std::size_t r0, std::size_t n) {
  return ta ? a.block(0, r0, a.rows, n) : a.block(r0, 0, n, a.cols);
}
ConstMatView op_cols(ConstMatView b, bool tb, std::size_t c0, std::size_t n) {
  return tb ? b.block(c0, 0, n, b.cols) : b.block(0, c0, b.rows, n);
}

// How many of these sums (their works, largest first) run whole, one item each, the rest cut into
// blocks: the most w such that the w largest, each given whole by the pool to the thread with the
// least work so far (greedy, largest first), keep every thread within kWholeSumsSlack of an even
// share of ALL the work (the cut rest fills the threads up, block by block). All when they
// balance (a linear layer's dx and dW on 2 threads); the first 2 of q, k, v on 2 threads, the
// third cut; none for fewer sums than threads (every product on 16 threads) or a lone product.
std::size_t whole_sums(const std::vector<std::size_t>& work, std::size_t threads) {
  if (whole_sums_off.load(std::memory_order_relaxed)) return 0;
  double total = 0.0;
  for (std::size_t w : work) total += double(w);
  const double most = kWholeSumsSlack * total / double(threads);
  for (std::size_t w = work.size(); w >= threads; --w) {
    std::vector<double> load(threads, 0.0);
    for (std::size_t i = 0; i < w; ++i)
      *std::min_element(load.begin(), load.end()) += double(work[i]);
    if (*std::max_element(load.begin(), load.end()) <= most) return w;
  }
  return 0;
}

std::atomic<std::size_t> blocks_per_thread{0};  // 0: the rule of gemm_blocks_per_thread
std::atomic<std::size_t> split_work{kSplitGemmWork};
}  // namespace

std::size_t split_gemm_work() { return split_work.load(std::memory_order_relaxed); }

std::size_t set_split_gemm_work(std::size_t work) {
  return split_work.exchange(work, std::memory_order_relaxed);
}

bool set_gemm_whole_sums(bool on) { return !whole_sums_off.exchange(!on); }

std::size_t gemm_blocks_per_thread(std::size_t threads) {
  const std::size_t fixed = blocks_per_thread.load(std::memory_order_relaxed);
  if (fixed > 0) return fixed;
  return threads <= 2 ? kGemmBlocksPerThreadOnTwo : kGemmBlocksPerThread;
}

std::size_t set_gemm_blocks_per_thread(std::size_t blocks) {
  return blocks_per_thread.exchange(blocks, std::memory_order_relaxed);
}

void gemm(ConstMatView a, Op op_a, ConstMatView b, Op op_b, MatView c, float alpha, float beta) {
  const bool ta = op_a == Op::transpose, tb = op_b == Op::transpose;
  const std::size_t M = ta ? a.cols : a.rows, K = ta ? a.rows : a.cols;
  const std::size_t N = tb ? b.rows : b.cols;
  require((tb ? b.cols : b.rows) == K, "gemm", "inner dimensions of op(A) and op(B) differ");
  require(c.rows == M && c.cols == N, "gemm", "C is not [M, N]");
  if (M == 0 || N == 0) return;
  if (K == 0) {
    // BLAS leaves C untouched when K = 0 only if beta = 1; make the empty sum explicit.
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j) c(i, j) = beta == 0.0f ? 0.0f : beta * c(i, j);
    return;
  }
  const std::size_t threads = thread_budget();
  if (threads <= 1 || M * N * K < split_gemm_work()) {
    const BlasOnOneThread one;
    sgemm(a, ta, b, tb, c, K, alpha, beta);
    return;
  }
  gemm_split(a, op_a, b, op_b, c, alpha, beta, threads);
}

void gemm_split(ConstMatView a, Op op_a, ConstMatView b, Op op_b, MatView c, float alpha,
                float beta, std::size_t threads) {
  const bool ta = op_a == Op::transpose, tb = op_b == Op::transpose;
  const std::size_t M = ta ? a.cols : a.rows, K = ta ? a.rows : a.cols;
  const std::size_t N = tb ? b.rows : b.cols;
  require((tb ? b.cols : b.rows) == K && c.rows == M && c.cols == N && K > 0, "gemm_split",
          "expected op(A) [M, K], op(B) [K, N], C [M, N], K > 0");
  threads = std::min(threads, thread_budget());
  if (threads <= 1) {
    const BlasOnOneThread one;
    sgemm(a, ta, b, tb, c, K, alpha, beta);
    return;
  }
  const GemmBlocks g = gemm_blocks(M, N, gemm_blocks_per_thread(threads) * threads);
  parallel_for(g.count(), threads, [&](std::size_t p, std::size_t) {
    const GemmBlocks::Block k = g.block(p);
    sgemm(op_rows(a, ta, k.r0, k.m), ta, op_cols(b, tb, k.c0, k.n), tb,
          c.block(k.r0, k.c0, k.m, k.n), K, alpha, beta);
  });
}

void gemm_many(const std::vector<GemmSum>& sums) {
  const auto inner = [](const GemmTerm& t) {
    return t.op_a == Op::transpose ? t.a.rows : t.a.cols;
  };
  for (const GemmSum& s : sums)
    for (const GemmTerm& t : s.terms) {
      const bool ta = t.op_a == Op::transpose, tb = t.op_b == Op::transpose;
      require((ta ? t.a.cols : t.a.rows) == s.c.rows && (tb ? t.b.rows : t.b.cols) == s.c.cols &&
                  (tb ? t.b.cols : t.b.rows) == inner(t),
              "gemm_many", "expected op(a) [M, K], op(b) [K, N], c [M, N] for every term");
    }
  const std::size_t threads = thread_budget();
  // a block of C (the whole of it when unsplit): the terms in order, each a gemm on that block
  const auto apply = [&](const GemmSum& s, std::size_t r0, std::size_t m, std::size_t c0,
                         std::size_t n) {
    if (s.bias) {
      for (std::size_t r = r0; r < r0 + m; ++r) {
        float* cr = s.c.row(r) + c0;
        const float* br = s.bias + c0;
#pragma omp simd
        for (std::size_t o = 0; o < n; ++o) cr[o] = br[o];
      }
    }
    for (const GemmTerm& t : s.terms)
      gemm(op_rows(t.a, t.op_a == Op::transpose, r0, m), t.op_a,
           op_cols(t.b, t.op_b == Op::transpose, c0, n), t.op_b, s.c.block(r0, c0, m, n), 1.0f,
           t.beta);
  };
  // the split sums: each one's cut, and where its blocks start among the region's items
  struct Split {
    const GemmSum* sum;
    GemmBlocks cut;
    std::size_t first;
  };
  std::vector<Split> splits;
  std::vector<const GemmSum*> large;  // the sums gemm would split, largest work first
  std::vector<std::size_t> work;
  for (const GemmSum& s : sums) {
    std::size_t largest = 0, all = 0;  // gemm splits a term from split_gemm_work() multiply-adds
    for (const GemmTerm& t : s.terms) {
      largest = std::max(largest, s.c.rows * s.c.cols * inner(t));
      all += s.c.rows * s.c.cols * inner(t);
    }
    if (threads <= 1 || s.c.rows == 0 || s.c.cols == 0 || largest < split_gemm_work()) {
      apply(s, 0, s.c.rows, 0, s.c.cols);
      continue;
    }
    const auto at = std::upper_bound(work.begin(), work.end(), all, std::greater<>());
    large.insert(large.begin() + (at - work.begin()), &s);
    work.insert(at, all);
  }
  if (large.empty()) return;
  // the whole sums first, largest first, one item each; then every block of the others
  const std::size_t whole = whole_sums(work, threads);
  std::size_t items = whole;
  for (std::size_t i = whole; i < large.size(); ++i) {
    splits.push_back(
        {large[i],
         gemm_blocks(large[i]->c.rows, large[i]->c.cols, gemm_blocks_per_thread(threads) * threads),
         items});
    items += splits.back().cut.count();
  }
  parallel_for(items, [&](std::size_t p) {
    if (p < whole) {
      apply(*large[p], 0, large[p]->c.rows, 0, large[p]->c.cols);
      return;
    }
    std::size_t i = splits.size() - 1;
    while (splits[i].first > p) --i;
    const GemmBlocks::Block k = splits[i].cut.block(p - splits[i].first);
    apply(*splits[i].sum, k.r0, k.m, k.c0, k.n);
  });
}

GemmBlocks gemm_blocks(std::size_t M, std::size_t N, std::size_t want) {
  want = std::max<std::size_t>(want, 1);
  const auto parts = [](std::size_t side, std::size_t step) { return (side + step - 1) / step; };
  // fewer blocks than `want` only where 64-multiples cannot give more
  const std::size_t most = parts(M, 64) * parts(N, 64);
  const std::size_t need = std::min(want, most);
  GemmBlocks best{};
  std::size_t best_cost = 0;
  for (std::size_t r = want; r >= 1; --r) {  // more row parts first: they win the ties
    GemmBlocks g;
    g.M = M;
    g.N = N;
    g.row_step = gemm_block_step(M, r);
    g.row_parts = parts(M, g.row_step);
    g.col_step = gemm_block_step(N, (want + g.row_parts - 1) / g.row_parts);
    g.col_parts = parts(N, g.col_step);
    const std::size_t cost = g.row_parts * N + g.col_parts * M;  // packed floats / K
    if (g.count() >= need && (best.row_parts == 0 || cost < best_cost)) {
      best = g;
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace xenc::kernels

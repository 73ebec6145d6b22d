// GEMM on matrix views: the one place xencoder calls BLAS (OpenBLAS's cblas_sgemm). A build
// without BLAS (WebAssembly: XENC_NO_BLAS) runs the plain C++ gemm_portable instead.
//
// Threads: where attention runs in tiles (on xencoder's own threads, parallel_for), a large
// product is cut into one block of C's rows (or columns) per thread, each a 1-thread sgemm run by
// parallel_for, instead of letting OpenBLAS split it (split_large_gemms, set by the layers). The
// numbers are the same (every element of C is the same dot product over K, in the same order), and
// the time is better: after each threaded call OpenBLAS's worker spin-waits for the next one, for
// up to 2^28 TSC ticks (its THREAD_TIMEOUT), and on a 2-core machine that spinning takes the second
// core from whatever runs next (layer norms, the softmax, the tiles' own threads). Measured on the
// 2-core EPYC at T = 2048 (bench/README.md, "Two threads"): the layer's forward took 1.58x less
// time than on 1 thread with OpenBLAS splitting, and used 25% more CPU time than on 1 thread. Where
// attention is plain (small T), its per-head GEMMs are OpenBLAS's to split, and mixing the two
// kinds of threads was slower than either (the spinning worker meets our threads), so there the
// flag stays off and every GEMM is OpenBLAS's, as before.
#ifndef XENC_NO_BLAS
#include <cblas.h>
#endif

#include <algorithm>

#include "blas_probe.hpp"
#include "kernels.hpp"

namespace xenc::kernels {

namespace {
thread_local bool split_large = false;

// Below this many multiply-adds a product runs as one sgemm call (starting a thread costs tens of
// µs); above it, in a layer with tiled attention, every projection and feed-forward GEMM.
constexpr std::size_t kSplitWork = std::size_t(1) << 26;

void sgemm(ConstMatView a, bool ta, ConstMatView b, bool tb, MatView c, std::size_t K, float alpha,
           float beta) {
#ifdef XENC_NO_BLAS
  gemm_portable(a, ta ? Op::transpose : Op::none, b, tb ? Op::transpose : Op::none, c, alpha, beta);
#else
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
}  // namespace

bool split_large_gemms(bool on) {
  const bool before = split_large;
  split_large = on;
  return before;
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
  if (!split_large || threads <= 1 || M * N * K < kSplitWork) {
    sgemm(a, ta, b, tb, c, K, alpha, beta);
    return;
  }
  // one block per thread along the longer side of C, in multiples of 64 (OpenBLAS's register
  // blocks divide 64, so no block ends inside one)
  const bool by_rows = M >= N;
  const std::size_t side = by_rows ? M : N;
  const std::size_t step = std::max<std::size_t>(64, (side / threads + 63) / 64 * 64);
  const std::size_t parts = (side + step - 1) / step;
  parallel_for(parts, [&](std::size_t p) {
    const std::size_t lo = p * step, n = std::min(step, side - lo);
    if (by_rows)
      sgemm(op_rows(a, ta, lo, n), ta, b, tb, c.block(lo, 0, n, N), K, alpha, beta);
    else
      sgemm(a, ta, op_cols(b, tb, lo, n), tb, c.block(0, lo, M, n), K, alpha, beta);
  });
}

}  // namespace xenc::kernels

// A linear layer on row matrices: bias broadcast, then one GEMM; and its backward.
#include <algorithm>

#include "kernels.hpp"

namespace xenc::kernels {

void linear_rows(ConstMatView x, ConstMatView w, const float* bias, MatView y) {
  require(x.cols == w.cols && y.rows == x.rows && y.cols == w.rows, "linear_rows",
          "expected x [N, in], w [out, in], y [N, out]");
  // Rows r0 .. r0+n: start from the bias in every row, then add x wᵀ to it (beta = 1);
  // [n, in] x [in, out]: w is stored [out, in], so multiply by its transpose.
  const auto rows = [&](std::size_t r0, std::size_t n) {
    if (bias) {
      for (std::size_t r = r0; r < r0 + n; ++r) {
        float* yr = y.row(r);
#pragma omp simd
        for (std::size_t o = 0; o < y.cols; ++o) yr[o] = bias[o];
      }
    }
    gemm(x.block(r0, 0, n, x.cols), Op::none, w, Op::transpose, y.block(r0, 0, n, y.cols), 1.0f,
         bias ? 1.0f : 0.0f);
  };
  // A large product on several threads: each block of rows writes its bias and runs its GEMM on
  // one thread of the pool, so the bias pass (and the first touch of y's pages) is not a serial
  // step beside the split GEMM (bench/README.md, "One pool"). gemm_blocks_per_thread() blocks of
  // 64-multiples per thread; where the rows give fewer, gemm splits the product itself (along the
  // columns too).
  const std::size_t threads = thread_budget();
  const std::size_t want = gemm_blocks_per_thread() * threads;
  const std::size_t step = gemm_block_step(y.rows, want);
  const std::size_t parts = (y.rows + step - 1) / step;
  if (threads > 1 && x.rows * x.cols * w.rows >= split_gemm_work() && parts >= want) {
    parallel_for(parts, [&](std::size_t p) { rows(p * step, std::min(step, y.rows - p * step)); });
    return;
  }
  rows(0, y.rows);
}

void linear_rows_backward(ConstMatView dy, ConstMatView x, ConstMatView w,
                          const LinearGradViews& g) {
  require(dy.rows == x.rows && dy.cols == w.rows && x.cols == w.cols, "linear_rows_backward",
          "expected dy [N, out], x [N, in], w [out, in]");
  const float beta = g.accumulate ? 1.0f : 0.0f;
  // dx [N, in] = dy [N, out] · w [out, in]   (or +=: the GEMM adds into dx with beta = 1)
  if (!g.dx.empty()) gemm(dy, Op::none, w, Op::none, g.dx, 1.0f, g.accumulate_dx ? 1.0f : 0.0f);
  // dw [out, in] = dyᵀ [out, N] · x [N, in]   (or += into a gradient buffer, beta = 1)
  if (!g.dw.empty()) gemm(dy, Op::transpose, x, Op::none, g.dw, 1.0f, beta);
  // db [out] = column sums of dy
  if (g.db) column_sums(dy, g.db, g.accumulate);
}

}  // namespace xenc::kernels

// A linear layer on row matrices: bias broadcast, then one GEMM; and its backward.
#include <algorithm>
#include <vector>

#include "kernels.hpp"

namespace xenc::kernels {

namespace {
void check_linear(const LinearRowsJob& j, const char* where) {
  require(j.x.cols == j.w.cols && j.y.rows == j.x.rows && j.y.cols == j.w.rows, where,
          "expected x [N, in], w [out, in], y [N, out]");
}

// The block of y at rows r0 .. r0+m, columns c0 .. c0+n: start from the bias, then add x wᵀ to
// it (beta = 1); [m, in] x [in, n]: w is stored [out, in], so multiply by its transpose.
void linear_block(const LinearRowsJob& j, std::size_t r0, std::size_t m, std::size_t c0,
                  std::size_t n) {
  if (j.bias) {
    for (std::size_t r = r0; r < r0 + m; ++r) {
      float* yr = j.y.row(r) + c0;
#pragma omp simd
      for (std::size_t o = 0; o < n; ++o) yr[o] = j.bias[c0 + o];
    }
  }
  gemm(j.x.block(r0, 0, m, j.x.cols), Op::none, j.w.block(c0, 0, n, j.w.cols), Op::transpose,
       j.y.block(r0, c0, m, n), 1.0f, j.bias ? 1.0f : 0.0f);
}

// A large product on several threads: each block of y (gemm_blocks: gemm_blocks_per_thread() per
// thread, cut where it packs the least) writes its bias and runs its GEMM on one thread of the
// pool, so the bias pass (and the first touch of y's pages) is not a serial step beside the split
// GEMM (bench/README.md, "One pool").
bool split(const LinearRowsJob& j, std::size_t threads) {
  return threads > 1 && j.x.rows * j.x.cols * j.w.rows >= split_gemm_work();
}
}  // namespace

void linear_rows(ConstMatView x, ConstMatView w, const float* bias, MatView y) {
  const LinearRowsJob job{x, w, bias, y};
  check_linear(job, "linear_rows");
  if (!split(job, thread_budget())) return linear_block(job, 0, y.rows, 0, y.cols);
  linear_rows_many({job});
}

void linear_rows_many(const std::vector<LinearRowsJob>& jobs) {
  for (const LinearRowsJob& j : jobs) check_linear(j, "linear_rows_many");
  const std::size_t threads = thread_budget();
  std::vector<const LinearRowsJob*> split_jobs;
  std::vector<GemmBlocks> cuts;
  for (const LinearRowsJob& j : jobs) {
    if (!split(j, threads)) {
      linear_block(j, 0, j.y.rows, 0, j.y.cols);
      continue;
    }
    split_jobs.push_back(&j);
    cuts.push_back(gemm_blocks(j.y.rows, j.y.cols, gemm_blocks_per_thread() * threads));
  }
  parallel_blocks(cuts, [&](std::size_t i, const GemmBlocks::Block& k) {
    linear_block(*split_jobs[i], k.r0, k.m, k.c0, k.n);
  });
}

void linear_rows_backward(ConstMatView dy, ConstMatView x, ConstMatView w,
                          const LinearGradViews& g) {
  require(dy.rows == x.rows && dy.cols == w.rows && x.cols == w.cols, "linear_rows_backward",
          "expected dy [N, out], x [N, in], w [out, in]");
  // two independent outputs, so their GEMMs are one region of the pool when split (gemm_many):
  // dx [N, in] = dy [N, out] · w [out, in]   (or +=: the GEMM adds into dx with beta = 1)
  // dw [out, in] = dyᵀ [out, N] · x [N, in]   (or += into a gradient buffer, beta = 1)
  std::vector<GemmSum> sums;
  if (!g.dx.empty())
    sums.push_back({g.dx, {{dy, Op::none, w, Op::none, g.accumulate_dx ? 1.0f : 0.0f}}});
  if (!g.dw.empty())
    sums.push_back({g.dw, {{dy, Op::transpose, x, Op::none, g.accumulate ? 1.0f : 0.0f}}});
  gemm_many(sums);
  // db [out] = column sums of dy
  if (g.db) column_sums(dy, g.db, g.accumulate);
}

}  // namespace xenc::kernels

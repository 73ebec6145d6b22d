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
}  // namespace

void linear_rows(ConstMatView x, ConstMatView w, const float* bias, MatView y) {
  const LinearRowsJob job{x, w, bias, y};
  check_linear(job, "linear_rows");
  linear_rows_many({job});
}

// Each product is one gemm_many sum: y starts from the bias, then x wᵀ is added to it (beta = 1;
// w is stored [out, in], so multiply by its transpose). A split product's blocks each write their
// bias and run their GEMM on one thread of the pool, so the bias pass (and the first touch of y's
// pages) is not a serial step beside the split GEMM (bench/README.md, "One pool").
void linear_rows_many(const std::vector<LinearRowsJob>& jobs) {
  std::vector<GemmSum> sums;
  for (const LinearRowsJob& j : jobs) {
    check_linear(j, "linear_rows_many");
    sums.push_back({j.y, {{j.x, Op::none, j.w, Op::transpose, j.bias ? 1.0f : 0.0f}}, j.bias});
  }
  gemm_many(sums);
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

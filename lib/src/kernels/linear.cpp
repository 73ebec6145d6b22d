// A linear layer on row matrices: bias broadcast, then one GEMM; and its backward.
#include "kernels.hpp"

namespace xenc::kernels {

void linear_rows(ConstMatView x, ConstMatView w, const float* bias, MatView y) {
  require(x.cols == w.cols && y.rows == x.rows && y.cols == w.rows, "linear_rows",
          "expected x [N, in], w [out, in], y [N, out]");
  // Start from the bias in every row, then add x wᵀ to it (beta = 1).
  if (bias) {
    for (std::size_t n = 0; n < y.rows; ++n) {
      float* yr = y.row(n);
#pragma omp simd
      for (std::size_t o = 0; o < y.cols; ++o) yr[o] = bias[o];
    }
  }
  // [N, in] x [in, out]: w is stored [out, in], so multiply by its transpose.
  gemm(x, Op::none, w, Op::transpose, y, 1.0f, bias ? 1.0f : 0.0f);
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

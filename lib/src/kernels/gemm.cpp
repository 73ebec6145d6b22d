// GEMM on matrix views: the one place xencoder calls BLAS (OpenBLAS's cblas_sgemm). A build
// without BLAS (WebAssembly: XENC_NO_BLAS) runs the plain C++ gemm_portable instead.
#ifndef XENC_NO_BLAS
#include <cblas.h>
#endif

#include "kernels.hpp"

namespace xenc::kernels {

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
#ifdef XENC_NO_BLAS
  gemm_portable(a, op_a, b, op_b, c, alpha, beta);
#else
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(M), static_cast<blasint>(N), static_cast<blasint>(K), alpha,
              a.data, static_cast<blasint>(a.stride), b.data, static_cast<blasint>(b.stride), beta,
              c.data, static_cast<blasint>(c.stride));
#endif
}

}  // namespace xenc::kernels

// GEMM through OpenBLAS, and the triple-loop reference.
#include "xenc/ops/gemm.hpp"

#include <cblas.h>

#include "xenc/core/error.hpp"

namespace xenc {

void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K, float alpha,
          const float* A, std::size_t lda, const float* B, std::size_t ldb, float beta, float* C,
          std::size_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    // BLAS leaves C untouched when K = 0 only if beta = 1; make the empty sum explicit.
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    return;
  }
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(M),
              static_cast<blasint>(N), static_cast<blasint>(K), alpha, A,
              static_cast<blasint>(lda), B, static_cast<blasint>(ldb), beta, C,
              static_cast<blasint>(ldc));
}

namespace {
void check_inner(const char* where, const Tensor2& a, const Tensor2& b) {
  if (a.shape(1) != b.shape(0)) {
    throw shape_error(std::string(where) + ": b has shape " + shape_str(b.shape()) +
                      ", expected [K, N] with K = " + std::to_string(a.shape(1)) +
                      " (a has shape " + shape_str(a.shape()) + ")");
  }
}
}  // namespace

Tensor2 matmul(const Tensor2& a, const Tensor2& b) {
  check_inner("matmul", a, b);
  const std::size_t M = a.shape(0), K = a.shape(1), N = b.shape(1);
  Tensor2 c = Tensor2::from_shape({M, N});
  gemm(false, false, M, N, K, 1.0f, a.data(), K, b.data(), N, 0.0f, c.data(), N);
  return c;
}

Tensor2 matmul_naive(const Tensor2& a, const Tensor2& b) {
  check_inner("matmul_naive", a, b);
  const std::size_t M = a.shape(0), K = a.shape(1), N = b.shape(1);
  Tensor2 c = xt::zeros<float>({M, N});
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t j = 0; j < N; ++j) c(i, j) += a(i, k) * b(k, j);
  return c;
}

}  // namespace xenc

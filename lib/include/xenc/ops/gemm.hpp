// Matrix multiplication: the one place xencoder calls BLAS.
//
//     C = alpha * op(A) * op(B) + beta * C        op(X) = X or Xᵀ
//
// Row-major, with leading dimensions, so that a head's slice of a packed [B·T, 3D] buffer can
// be multiplied in place without copying (lda = 3D). Runs OpenBLAS's cblas_sgemm, the same
// routine xtensor-blas's linalg::dot calls; `matmul_naive` is the triple loop, kept as the
// readable reference the tests and benchmarks compare against.
#pragma once

#include <cstddef>

#include "xenc/core/tensor.hpp"

namespace xenc {

/// Shapes: op(A): [M, K]   op(B): [K, N]   C: [M, N]   (all row-major, leading dims lda/ldb/ldc)
void gemm(bool trans_a, bool trans_b, std::size_t M, std::size_t N, std::size_t K, float alpha,
          const float* A, std::size_t lda, const float* B, std::size_t ldb, float beta, float* C,
          std::size_t ldc);

/// C = A B through BLAS.   A: [M, K]   B: [K, N]   C: [M, N]
/// Throws: shape_error if the inner dimensions differ.
Tensor2 matmul(const Tensor2& a, const Tensor2& b);

/// C = A B with three loops (the reference).   A: [M, K]   B: [K, N]   C: [M, N]
Tensor2 matmul_naive(const Tensor2& a, const Tensor2& b);

}  // namespace xenc

// GEMM without BLAS: C = alpha · op(A) · op(B) + beta · C in plain C++, for builds that have no
// OpenBLAS (the WebAssembly build; XENC_BLAS=OFF). Native builds use it only in its tests, where
// it is checked against the formula beside OpenBLAS's sgemm.
//
// The formula, C[i, j] = beta · C[i, j] + alpha · Σ_k op(A)[i, k] · op(B)[k, j], written as three
// loops (i, j, k) reads op(B) down a column: one float per cache line. Reordered (i, k, j), the
// innermost loop runs along a row of C and a row of op(B), both contiguous, and the compiler
// vectorises it (SSE/AVX natively, wasm SIMD with -msimd128): C[i, :] += a_ik · op(B)[k, :].
//
// Speed: op(B) is copied, KB rows × NB columns at a time, into a contiguous panel (transposing
// it on the way when op_b = transpose), so the panel stays in cache while every row of A passes
// over it; op(A)'s element is read once per (i, k). Each C[i, j] sums its K products in the
// order k = 0 .. K-1, block after block: the result differs from sgemm's only by rounding.
#include <algorithm>
#include <vector>

#include "kernels.hpp"

namespace xenc::kernels {

namespace {
constexpr std::size_t KB = 128;  // rows of op(B) per panel
constexpr std::size_t NB = 256;  // columns per panel: 128 × 256 floats = 128 KiB
}  // namespace

void gemm_portable(ConstMatView a, Op op_a, ConstMatView b, Op op_b, MatView c, float alpha,
                   float beta) {
  const bool ta = op_a == Op::transpose, tb = op_b == Op::transpose;
  const std::size_t M = ta ? a.cols : a.rows, K = ta ? a.rows : a.cols;
  const std::size_t N = tb ? b.rows : b.cols;
  require((tb ? b.cols : b.rows) == K, "gemm_portable",
          "inner dimensions of op(A) and op(B) differ");
  require(c.rows == M && c.cols == N, "gemm_portable", "C is not [M, N]");

  // 1. C = beta · C (beta = 0 overwrites: C may hold NaN or garbage, as BLAS allows)
  for (std::size_t i = 0; i < M; ++i) {
    float* ci = c.row(i);
    for (std::size_t j = 0; j < N; ++j) ci[j] = beta == 0.0f ? 0.0f : beta * ci[j];
  }
  if (M == 0 || N == 0 || K == 0 || alpha == 0.0f) return;

  // 2. C += alpha · op(A) · op(B), one panel of op(B) at a time
  std::vector<float> panel(KB * NB);
  for (std::size_t k0 = 0; k0 < K; k0 += KB) {
    const std::size_t kb = std::min(KB, K - k0);
    for (std::size_t j0 = 0; j0 < N; j0 += NB) {
      const std::size_t nb = std::min(NB, N - j0);
      // panel[k, j] = op(B)[k0 + k, j0 + j]
      for (std::size_t k = 0; k < kb; ++k)
        for (std::size_t j = 0; j < nb; ++j)
          panel[k * nb + j] = tb ? b(j0 + j, k0 + k) : b(k0 + k, j0 + j);
      for (std::size_t i = 0; i < M; ++i) {
        float* ci = c.row(i) + j0;
        for (std::size_t k = 0; k < kb; ++k) {
          const float aik = alpha * (ta ? a(k0 + k, i) : a(i, k0 + k));
          const float* pk = panel.data() + k * nb;
          for (std::size_t j = 0; j < nb; ++j) ci[j] += aik * pk[j];  // contiguous: vectorised
        }
      }
    }
  }
}

}  // namespace xenc::kernels

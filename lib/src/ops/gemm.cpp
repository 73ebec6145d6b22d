// Matrix multiplication: BLAS through the kernels layer, and the triple-loop reference.
#include "xenc/ops/gemm.hpp"

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

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
  Tensor2 c = Tensor2::from_shape({a.shape(0), b.shape(1)});
  kernels::gemm(kernels::as_matrix(a), kernels::Op::none, kernels::as_matrix(b),
                kernels::Op::none, kernels::as_matrix(c));
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

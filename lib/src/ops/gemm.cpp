// Matrix multiplication: BLAS through the kernels layer (the triple-loop reference is
// reference::matmul).
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
  kernels::gemm(kernels::as_matrix(a), kernels::Op::none, kernels::as_matrix(b), kernels::Op::none,
                kernels::as_matrix(c));
  return c;
}

}  // namespace xenc

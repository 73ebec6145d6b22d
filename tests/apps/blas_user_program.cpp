// A program of a user's own that links xencoder (and not apps/common/blas_core_reexec.cpp): two
// matrix products, then the library's account of its BLAS. test_blas_core_programs runs it to see
// the one-time warning when OpenBLAS runs a weaker core set than the CPU.
#include <iostream>

#include <xenc/core/blas_core.hpp>
#include <xenc/ops/gemm.hpp>

int main() {
  const xenc::Tensor2 a = {{1.0f, 2.0f}, {3.0f, 4.0f}};
  const xenc::Tensor2 first = xenc::matmul(a, a);       // [[7, 10], [15, 22]]
  const xenc::Tensor2 second = xenc::matmul(first, a);  // [[37, 54], [81, 118]]
  std::cout << second(1, 1) << "\n" << xenc::blas_summary(xenc::blas_report()) << "\n";
}

// Matrix multiplication of two tensors.
//
//     C = A B
//
// `matmul` runs OpenBLAS's cblas_sgemm (through the kernels layer, lib/src/kernels/, the one
// place xencoder calls BLAS), the same routine xtensor-blas's linalg::dot calls;
// `matmul_naive` is the triple loop, kept as the readable reference the tests and benchmarks
// compare against.
#pragma once

#include <cstddef>

#include "xenc/core/tensor.hpp"

namespace xenc {

/// C = A B through BLAS.   A: [M, K]   B: [K, N]   C: [M, N]
/// Throws: shape_error if the inner dimensions differ.
Tensor2 matmul(const Tensor2& a, const Tensor2& b);

/// C = A B with three loops (the reference).   A: [M, K]   B: [K, N]   C: [M, N]
Tensor2 matmul_naive(const Tensor2& a, const Tensor2& b);

}  // namespace xenc

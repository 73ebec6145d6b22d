// Matrix multiplication of two tensors.
//
//     C = A B
//
// `matmul` runs OpenBLAS's cblas_sgemm (through the kernels layer, lib/src/kernels/, the one
// place xencoder calls BLAS), the same routine xtensor-blas's linalg::dot calls. The triple
// loop, the readable reference the tests and benchmarks compare against, is reference::matmul
// (xenc/reference/ops.hpp). Threads: a large product is split over xencoder's thread pool,
// OpenBLAS itself runs on one thread (lib/src/kernels/gemm.cpp says why); the numbers do not
// depend on the thread count.
#pragma once

#include <cstddef>

#include "xenc/core/tensor.hpp"

namespace xenc {

/// C = A B through BLAS.   A: [M, K]   B: [K, N]   C: [M, N]
/// Throws: shape_error if the inner dimensions differ.
Tensor2 matmul(const Tensor2& a, const Tensor2& b);

}  // namespace xenc

// Matrix multiplication of two tensors.
//
//     C = A B
//
// `matmul` runs OpenBLAS's cblas_sgemm (through the kernels layer, lib/src/kernels/, the one
// place xencoder calls BLAS), the same routine xtensor-blas's linalg::dot calls. The triple
// loop, the readable reference the tests and benchmarks compare against, is reference::matmul
// (xenc/reference/ops.hpp).
#pragma once

#include <cstddef>

#include "xenc/core/tensor.hpp"

namespace xenc {

/// C = A B through BLAS.   A: [M, K]   B: [K, N]   C: [M, N]
/// Throws: shape_error if the inner dimensions differ.
Tensor2 matmul(const Tensor2& a, const Tensor2& b);

/// Who splits a large GEMM across threads, while this object lives on the calling thread.
/// on = true: xencoder cuts each product of 2^26 multiply-adds or more into one block per thread,
/// each a 1-thread sgemm; on = false (the default): OpenBLAS splits it. The layers turn it on
/// where attention runs in tiles on xencoder's own threads: OpenBLAS's worker spin-waits after
/// each split GEMM and would take a core from them (bench/README.md, "Two threads"). The numbers
/// are the same either way.
class GemmThreadsScope {
 public:
  explicit GemmThreadsScope(bool own_threads);
  ~GemmThreadsScope();
  GemmThreadsScope(const GemmThreadsScope&) = delete;
  GemmThreadsScope& operator=(const GemmThreadsScope&) = delete;

 private:
  bool saved_;
};

}  // namespace xenc

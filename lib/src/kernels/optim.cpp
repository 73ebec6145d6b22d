// Optimiser updates: one pass over a parameter's elements (Adam's, and SGD's with momentum).
//
// An Adam step reads θ, g, m, v and writes θ, m, v. Written as separate tensor expressions
// (θ *= decay; m = ...; v = ...; θ -= ...) it streams the buffers through memory four or five
// times and allocates a temporary gradient; here each element is loaded once, updated in
// registers, and stored once. The loop is plain arithmetic with one square root (one
// instruction with -fno-math-errno), so the compiler vectorises it; XENC_VECTOR_KERNEL builds
// an AVX2 + FMA copy as well (vector_kernel.hpp). A large parameter's elements are cut into
// blocks on the pool (kAdamUpdateWork).
//
// Denormals. A parameter whose gradient stays zero (a relu unit no input reaches) keeps its moments
// decaying by β1 and β2 each step, through the denormal floats below 2^-126 (m after ~800 steps,
// v after tens of thousands), and a gradient of 1e-20 squares to one. Intel's cores take a
// microcode assist, about a hundred cycles, for each operation that reads or writes a denormal
// (AMD's Zen does not): on an Emerald Rapids VM that made a training step at (T, D) = (3, 64)
// 2.2-2.8x slower. The block therefore runs with the MXCSR's flush-to-zero and denormals-are-zero
// bits set, and puts the caller's back after: a moment that would be denormal is 0 (its step
// m / (√v + eps) was below 1e-30 anyway), and the rest of the program keeps IEEE arithmetic.
// SGD's velocity decays the same way, by the momentum each step (0.9: from a gradient of 1e-31
// to below 2^-126 in about 150 steps), and its block runs under the same flush.
#include <cmath>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "kernels.hpp"
#include "vector_kernel.hpp"

namespace xenc::kernels {

namespace {

// Flush-to-zero and denormals-are-zero on this thread for the scope (x86's MXCSR bits 15 and 6);
// nothing elsewhere.
class DenormalsFlushed {
 public:
#if defined(__SSE__)
  DenormalsFlushed() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }
  ~DenormalsFlushed() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#endif
};

XENC_VECTOR_KERNEL_AVX512
void adam_block(float* theta, const float* grad, float* m, float* v, std::size_t n,
                const AdamScalars& s) {
  // the scalars in locals: the stores below cannot change them (no reloads in the loop)
  const float beta1 = s.beta1, beta2 = s.beta2, eps = s.eps, decay = s.decay, l2 = s.l2;
  const float step_size = s.step_size, bc2_sqrt = s.bias_correction2_sqrt;
  const float one_minus_beta1 = 1.0f - beta1, one_minus_beta2 = 1.0f - beta2;
  const DenormalsFlushed flushed;
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    // decoupled weight decay (AdamW), then the gradient with L2 weight decay (Adam)
    const float t = theta[i] * decay;
    const float g = grad[i] + l2 * t;
    // the two moments
    const float mi = beta1 * m[i] + one_minus_beta1 * g;
    const float vi = beta2 * v[i] + one_minus_beta2 * g * g;
    m[i] = mi;
    v[i] = vi;
    // the step, in torch's order: denom = √v / √(1 - β2^t) + eps;  θ -= step_size · m / denom
    const float denom = std::sqrt(vi) / bc2_sqrt + eps;
    theta[i] = t - step_size * (mi / denom);
  }
}

XENC_VECTOR_KERNEL_AVX512
void sgd_block(float* theta, const float* grad, float* velocity, std::size_t n, float lr,
               float momentum) {
  const DenormalsFlushed flushed;
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) {
    const float vi = momentum * velocity[i] + grad[i];
    velocity[i] = vi;
    theta[i] -= lr * vi;
  }
}

}  // namespace

void sgd_update(float* theta, const float* grad, float* velocity, std::size_t n, float lr,
                float momentum, std::size_t min_work) {
  parallel_rows(
      n, 1,
      [&](std::size_t i0, std::size_t i1) {
        sgd_block(theta + i0, grad + i0, velocity + i0, i1 - i0, lr, momentum);
      },
      min_work);
}

void adam_update(float* theta, const float* grad, float* m, float* v, std::size_t n,
                 const AdamScalars& s, std::size_t min_work) {
  // blocks of elements on the pool from min_work on (4 per thread), else one block here
  parallel_rows(
      n, 1,
      [&](std::size_t i0, std::size_t i1) {
        adam_block(theta + i0, grad + i0, m + i0, v + i0, i1 - i0, s);
      },
      min_work);
}

}  // namespace xenc::kernels

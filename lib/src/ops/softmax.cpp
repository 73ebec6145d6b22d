// Softmax over the last axis: subtract the row max, exponentiate, normalise.
//
// Speed by design: each row is three passes the compiler turns into SIMD code.
//   1. the row max          a reduction: `#pragma omp simd reduction(max: m)` lets the
//                           compiler keep several partial maxima in one vector register
//   2. e = exp(x - m), Σ e  exp_approx below is plain arithmetic (no library call), so the
//                           loop vectorises; the pragma allows the sum to be reordered
//   3. multiply by 1/Σ e
// (The pragmas need -fopenmp-simd, set in lib/CMakeLists.txt: SIMD only, no threads.
// Without them the compiler must add floats in source order, one at a time.)
// XENC_VECTOR_KERNEL (vector_kernel.hpp) compiles the loops for AVX2 CPUs as well.
#include "xenc/ops/softmax.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "vector_kernel.hpp"

namespace xenc {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// exp(x) without a library call (see exp_inplace in softmax.hpp for the derivation and the
// error bound). Every step is arithmetic or a select, so a loop of these vectorises.
inline float exp_approx(float x) {
  constexpr float kLog2e = 1.44269504088896341f;       // 1 / ln 2
  constexpr float kLn2Hi = 0.693145751953125f;         // ln 2 = kLn2Hi + kLn2Lo; kLn2Hi has
  constexpr float kLn2Lo = 1.42860682030941723212e-6f; // few mantissa bits, so k·kLn2Hi is exact
  constexpr float kRound = 12582912.0f;                // 1.5·2²³: adding it rounds to an integer
  constexpr float kMinX = -87.3365447505531f;          // ln(FLT_MIN): below, exp(x) < FLT_MIN
  constexpr float kMaxX = 88.3762626647950f;           // 127.5·ln 2: 2^k stays a finite float

  // Clamp so that k stays in [-126, 127] (a normal float exponent); the edges are fixed below.
  float xc = x < kMinX ? kMinX : x;
  xc = xc > kMaxX ? kMaxX : xc;
  // k = round(x / ln 2): after adding 1.5·2²³ the float has no fractional bits left, so the
  // addition itself rounds; k sits in the low mantissa bits of t.
  const float t = xc * kLog2e + kRound;
  const float k = t - kRound;
  // r = x - k·ln 2 in two steps (Cody-Waite), |r| <= ln2/2 ≈ 0.347
  const float r = (xc - k * kLn2Hi) - k * kLn2Lo;
  // exp(r) ≈ 1 + r + r²/2! + ... + r⁶/6!, evaluated in Horner form
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^k as a float: biased exponent k + 127 in bits 23..30, mantissa 0.
  // t's bit pattern is 0x4B400000 + k (k in its low bits), so k + 127 = bits(t) - 0x4B400000 + 127.
  // (Unsigned arithmetic: a NaN input must not make the shift undefined behaviour.)
  std::uint32_t t_bits;
  std::memcpy(&t_bits, &t, sizeof t_bits);
  const std::uint32_t scale_bits = (t_bits - 0x4B400000u + 127u) << 23;
  float scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);
  float y = p * scale;
  // The edges: exp(-inf) = 0 exactly (masked scores), and overflow gives +inf.
  y = x < kMinX ? 0.0f : y;
  y = x > kMaxX ? kInf : y;
  return y;
}

}  // namespace

XENC_VECTOR_KERNEL
void exp_inplace(float* x, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) x[i] = exp_approx(x[i]);
}

XENC_VECTOR_KERNEL
void softmax_rows_inplace(float* data, std::size_t rows, std::size_t cols, std::size_t ld) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* row = data + r * ld;
    // 1. The max makes every exponent <= 0, so exp never overflows.
    float m = -kInf;
#pragma omp simd reduction(max : m)
    for (std::size_t c = 0; c < cols; ++c) m = row[c] > m ? row[c] : m;
    if (m == -kInf) {
      // Every entry masked: nothing to attend to. Zeros, not 0/0 = NaN.
      for (std::size_t c = 0; c < cols; ++c) row[c] = 0.0f;
      continue;
    }
    // 2. Exponentiate in place and sum; exp(-inf) = 0 for masked entries.
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (std::size_t c = 0; c < cols; ++c) {
      const float e = exp_approx(row[c] - m);
      row[c] = e;
      sum += e;
    }
    // 3. Normalise (the max entry contributes exp(0) = 1, so sum >= 1).
    const float inv = 1.0f / sum;
#pragma omp simd
    for (std::size_t c = 0; c < cols; ++c) row[c] *= inv;
  }
}

template <std::size_t R>
xt::xtensor<float, R> softmax_forward(const xt::xtensor<float, R>& x) {
  xt::xtensor<float, R> y = x;
  const std::size_t cols = R == 0 ? 1 : x.shape(R - 1);
  if (cols != 0) softmax_rows_inplace(y.data(), y.size() / cols, cols, cols);
  return y;
}

template <std::size_t R>
xt::xtensor<float, R> softmax_backward(const xt::xtensor<float, R>& grad_y,
                                       const xt::xtensor<float, R>& y) {
  auto dx = xt::xtensor<float, R>::from_shape(y.shape());
  const std::size_t cols = y.shape(R - 1);
  const std::size_t rows = cols == 0 ? 0 : y.size() / cols;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* yr = y.data() + r * cols;
    const float* dyr = grad_y.data() + r * cols;
    float* dxr = dx.data() + r * cols;
    // dx_i = y_i (dy_i - Σ_j dy_j y_j)
    float dot = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) dot += dyr[c] * yr[c];
    for (std::size_t c = 0; c < cols; ++c) dxr[c] = yr[c] * (dyr[c] - dot);
  }
  return dx;
}

template <std::size_t R>
xt::xtensor<float, R> softmax_naive(const xt::xtensor<float, R>& x) {
  auto y = xt::xtensor<float, R>::from_shape(x.shape());
  const std::size_t cols = x.shape(R - 1);
  const std::size_t rows = cols == 0 ? 0 : x.size() / cols;
  for (std::size_t r = 0; r < rows; ++r) {
    double m = -std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < cols; ++c) m = std::fmax(m, double(x.data()[r * cols + c]));
    double sum = 0.0;
    for (std::size_t c = 0; c < cols; ++c)
      if (std::isfinite(m)) sum += std::exp(double(x.data()[r * cols + c]) - m);
    for (std::size_t c = 0; c < cols; ++c)
      y.data()[r * cols + c] =
          std::isfinite(m) ? float(std::exp(double(x.data()[r * cols + c]) - m) / sum) : 0.0f;
  }
  return y;
}

#define XENC_INSTANTIATE_SOFTMAX(R)                                                             \
  template xt::xtensor<float, R> softmax_forward<R>(const xt::xtensor<float, R>&);              \
  template xt::xtensor<float, R> softmax_backward<R>(const xt::xtensor<float, R>&,              \
                                                     const xt::xtensor<float, R>&);             \
  template xt::xtensor<float, R> softmax_naive<R>(const xt::xtensor<float, R>&);
XENC_INSTANTIATE_SOFTMAX(1)
XENC_INSTANTIATE_SOFTMAX(2)
XENC_INSTANTIATE_SOFTMAX(3)
XENC_INSTANTIATE_SOFTMAX(4)
#undef XENC_INSTANTIATE_SOFTMAX

}  // namespace xenc

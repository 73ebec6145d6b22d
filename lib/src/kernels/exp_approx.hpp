// exp_approx: exp(x) as plain arithmetic, so that a loop of it vectorises (rows.cpp's softmax,
// attention_tiled.cpp's online softmax). Inline in a header: each XENC_VECTOR_KERNEL copy of a
// caller (SSE2, AVX2, AVX-512) gets its own vector code for it, with no call in the loop.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

namespace xenc::kernels {

// exp(x) without a library call (see exp_inplace in ops/softmax.hpp for the derivation and the
// error bound). Every step is arithmetic or a select, so a loop of these vectorises.
inline float exp_approx(float x) {
  constexpr float kLog2e = 1.44269504088896341f;        // 1 / ln 2
  constexpr float kLn2Hi = 0.693145751953125f;          // ln 2 = kLn2Hi + kLn2Lo; kLn2Hi has
  constexpr float kLn2Lo = 1.42860682030941723212e-6f;  // few mantissa bits, so k·kLn2Hi is exact
  constexpr float kRound = 12582912.0f;                 // 1.5·2²³: adding it rounds to an integer
  constexpr float kMinX = -87.3365447505531f;           // ln(FLT_MIN): below, exp(x) < FLT_MIN
  constexpr float kMaxX = 88.3762626647950f;            // 127.5·ln 2: 2^k stays a finite float

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
  y = x > kMaxX ? std::numeric_limits<float>::infinity() : y;
  return y;
}

}  // namespace xenc::kernels

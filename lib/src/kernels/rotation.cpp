// RoPE's rotation on row matrices: every head's column pairs turned by a per-token angle.
//
//     (x_a, x_a2) <- (cos·x_a − sin·x_a2,  sin·x_a + cos·x_a2)
//
// with cos and sin read from a table [T, Dh/2] (row t for token t, column i for pair i), so
// the trigonometry is done once per call, not once per sentence and head.
#include "kernels.hpp"
#include "vector_kernel.hpp"

namespace xenc::kernels {

XENC_VECTOR_KERNEL
void rotate_pairs(MatView x, std::size_t num_heads, const PairRotation& r) {
  const std::size_t T = r.cos.rows, half = r.cos.cols, Dh = 2 * half;
  require(
      r.sin.rows == T && r.sin.cols == half && T > 0 && x.rows % T == 0 && x.cols == num_heads * Dh,
      "rotate_pairs", "expected x [B·T, H·Dh] and cos, sin [T, Dh/2]");
  for (std::size_t n = 0; n < x.rows; ++n) {
    const float* c = r.cos.row(n % T);  // row n of x is token n mod T of its sentence
    const float* s = r.sin.row(n % T);
    for (std::size_t h = 0; h < num_heads; ++h) {
      float* head = x.row(n) + h * Dh;
      if (r.interleaved) {
        // pair i = columns (2i, 2i+1)
#pragma omp simd
        for (std::size_t i = 0; i < half; ++i) {
          const float x0 = head[2 * i], x1 = head[2 * i + 1];
          head[2 * i] = c[i] * x0 - s[i] * x1;
          head[2 * i + 1] = s[i] * x0 + c[i] * x1;
        }
      } else {
        // pair i = columns (i, i + Dh/2): "rotate half"
#pragma omp simd
        for (std::size_t i = 0; i < half; ++i) {
          const float x0 = head[i], x1 = head[i + half];
          head[i] = c[i] * x0 - s[i] * x1;
          head[i + half] = s[i] * x0 + c[i] * x1;
        }
      }
    }
  }
}

}  // namespace xenc::kernels

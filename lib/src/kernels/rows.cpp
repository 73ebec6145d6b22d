// Row kernels: exp, softmax, layer norm, activations, cross-entropy, embedding rows, column sums.
//
// Speed by design: each row is a few passes the compiler turns into SIMD code.
//   softmax: 1. the row max     a reduction: `#pragma omp simd reduction(max: m)` lets the
//                               compiler keep several partial maxima in one vector register
//            2. e = exp(x - m), Σ e   exp_approx below is plain arithmetic (no library call),
//                               so the loop vectorises; the pragma allows the sum's reordering
//            3. multiply by 1/Σ e
//   layer norm: the mean, the variance around it (two passes: no cancellation), normalise.
// (The pragmas need -fopenmp-simd, set in lib/CMakeLists.txt: SIMD only, no threads. Without
// them the compiler must add floats in source order, one at a time.)
// XENC_VECTOR_KERNEL (vector_kernel.hpp) compiles the loops for AVX2 CPUs as well.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "exp_approx.hpp"
#include "kernels.hpp"
#include "vector_kernel.hpp"

namespace xenc::kernels {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

constexpr float kInvSqrt2 = 0.70710678118654752f;    // 1/√2
constexpr float kInvSqrt2Pi = 0.39894228040143268f;  // 1/√(2π)
inline float gelu(float x) { return 0.5f * x * (1.0f + std::erf(x * kInvSqrt2)); }
// gelu'(x) = Φ(x) + x φ(x)
inline float gelu_grad(float x) {
  const float cdf = 0.5f * (1.0f + std::erf(x * kInvSqrt2));  // Φ(x)
  const float pdf = kInvSqrt2Pi * std::exp(-0.5f * x * x);    // φ(x)
  return cdf + x * pdf;
}

}  // namespace

XENC_VECTOR_KERNEL
void exp_inplace(float* x, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) x[i] = exp_approx(x[i]);
}

XENC_VECTOR_KERNEL
void softmax_rows(MatView x) {
  const std::size_t cols = x.cols;
  for (std::size_t r = 0; r < x.rows; ++r) {
    float* row = x.row(r);
    // 1. The max makes every exponent <= 0, so exp never overflows.
    float m = -kInf;
#pragma omp simd reduction(max : m)
    for (std::size_t c = 0; c < cols; ++c) m = row[c] > m ? row[c] : m;
    if (m == -kInf) {
      // The comparison above skips NaN, so m = -inf means every entry is -inf or NaN. Every
      // entry -inf: the caller masked the row, nothing to attend to, zeros (not 0/0 = NaN).
      // A NaN: NaN everywhere, as PyTorch (and as a NaN among finite entries gives below,
      // through exp and the sum). The rule's reference: reference::softmax_row.
      bool has_nan = false;
      for (std::size_t c = 0; c < cols; ++c) has_nan = has_nan || row[c] != row[c];
      const float fill = has_nan ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
      for (std::size_t c = 0; c < cols; ++c) row[c] = fill;
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

XENC_VECTOR_KERNEL
void softmax_rows_backward(ConstMatView y, ConstMatView dy, MatView dx) {
  require(dy.rows == y.rows && dy.cols == y.cols && dx.rows == y.rows && dx.cols == y.cols,
          "softmax_rows_backward", "y, dy and dx differ in shape");
  for (std::size_t r = 0; r < y.rows; ++r) {
    const float* yr = y.row(r);
    const float* dyr = dy.row(r);
    float* dxr = dx.row(r);
    // dx_i = y_i (dy_i - Σ_j dy_j y_j)
    float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
    for (std::size_t c = 0; c < y.cols; ++c) dot += dyr[c] * yr[c];
#pragma omp simd
    for (std::size_t c = 0; c < y.cols; ++c) dxr[c] = yr[c] * (dyr[c] - dot);
  }
}

namespace {

// The row loops of the passes below, on a block of rows (of columns, for the sums over rows);
// the functions after them run the blocks on the pool from kLayerNormWork or kRowPassWork floats
// on (parallel_rows, parallel_columns). Every row, and every column's sum, is computed by the
// same code on any thread, so the bits do not depend on the thread count.
XENC_VECTOR_KERNEL
void layer_norm_block(ConstMatView x, MatView y, const float* weight, const float* bias, float eps,
                      float* mean_out, float* rstd_out) {
  const std::size_t D = x.cols;
  for (std::size_t n = 0; n < x.rows; ++n) {
    const float* xr = x.row(n);
    float* yr = y.row(n);
    // mean, then the biased variance around it (two passes: no cancellation)
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (std::size_t d = 0; d < D; ++d) sum += xr[d];
    const float mean = sum / static_cast<float>(D);
    float sq = 0.0f;
#pragma omp simd reduction(+ : sq)
    for (std::size_t d = 0; d < D; ++d) sq += (xr[d] - mean) * (xr[d] - mean);
    const float var = sq / static_cast<float>(D);
    const float rstd = 1.0f / std::sqrt(var + eps);  // eps inside the root, as PyTorch
    // normalise, then scale and shift (safe in place: yr[d] depends on xr[d] only)
#pragma omp simd
    for (std::size_t d = 0; d < D; ++d) yr[d] = (xr[d] - mean) * rstd * weight[d] + bias[d];
    if (mean_out) mean_out[n] = mean;
    if (rstd_out) rstd_out[n] = rstd;
  }
}

// dx of rows r0 .. r0 + dx.rows (stats point at row r0's).
XENC_VECTOR_KERNEL
void layer_norm_backward_block(ConstMatView dy, ConstMatView x, const float* weight, RowStats stats,
                               MatView dx) {
  const std::size_t D = x.cols;
  const float inv_d = 1.0f / static_cast<float>(D);
  for (std::size_t n = 0; n < x.rows; ++n) {
    const float* xr = x.row(n);
    const float* dyr = dy.row(n);
    float* dxr = dx.row(n);
    const float mean = stats.mean[n], rstd = stats.rstd[n];
    // mean(g) and mean(g · x̂), with g = dy · weight
    float mean_g = 0.0f, mean_gx = 0.0f;
#pragma omp simd reduction(+ : mean_g, mean_gx)
    for (std::size_t d = 0; d < D; ++d) {
      const float xhat = (xr[d] - mean) * rstd;
      const float gd = dyr[d] * weight[d];
      mean_g += gd;
      mean_gx += gd * xhat;
    }
    mean_g *= inv_d;
    mean_gx *= inv_d;
    // dx = rstd · (g - mean(g) - x̂ · mean(g · x̂))
#pragma omp simd
    for (std::size_t d = 0; d < D; ++d) {
      const float xhat = (xr[d] - mean) * rstd;
      dxr[d] = rstd * (dyr[d] * weight[d] - mean_g - xhat * mean_gx);
    }
  }
}

// The parameter gradients of a block of columns, row after row in the order of the rows: each
// column's sum runs in the same order whatever the blocks, so the bits do not depend on the
// thread count.
XENC_VECTOR_KERNEL
void layer_norm_parameter_grads(ConstMatView dy, ConstMatView x, RowStats stats, float* dweight,
                                float* dbias) {
  const std::size_t D = x.cols;
  for (std::size_t n = 0; n < x.rows; ++n) {
    const float* xr = x.row(n);
    const float* dyr = dy.row(n);
    const float mean = stats.mean[n], rstd = stats.rstd[n];
#pragma omp simd
    for (std::size_t d = 0; d < D; ++d) {
      const float xhat = (xr[d] - mean) * rstd;
      dweight[d] += dyr[d] * xhat;
      dbias[d] += dyr[d];
    }
  }
}

// sums[j] (+)= Σ_i m(i, j), row by row, so that the inner loop runs along memory (vector adds)
XENC_VECTOR_KERNEL
void column_sums_block(ConstMatView m, float* sums, bool accumulate) {
  if (!accumulate)
    for (std::size_t j = 0; j < m.cols; ++j) sums[j] = 0.0f;
  for (std::size_t i = 0; i < m.rows; ++i) {
    const float* r = m.row(i);
#pragma omp simd
    for (std::size_t j = 0; j < m.cols; ++j) sums[j] += r[j];
  }
}

XENC_VECTOR_KERNEL
void add_block(float* y, const float* x, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) y[i] += x[i];
}

XENC_VECTOR_KERNEL
void multiply_block(float* g, const float* m, std::size_t n) {
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) g[i] *= m[i];
}

XENC_VECTOR_KERNEL
void copy_block(float* dst, const float* src, std::size_t n) {
  // a loop of vector moves, not memcpy: for blocks of 64 KiB – 1 MiB, glibc's memcpy takes
  // `rep movsb`, which ran 10 times slower on this project's AMD machine when two threads
  // copied at once (bench/README.md, "The residual sums and the saved copies on the pool")
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) dst[i] = src[i];
}

XENC_VECTOR_KERNEL
void relu_block(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

XENC_VECTOR_KERNEL
void relu_backward_block(float* g, const float* x, std::size_t n) {
  // a select, not a branch: the signs of x are random, a branch would be mispredicted half the time
#pragma omp simd
  for (std::size_t i = 0; i < n; ++i) g[i] = x[i] > 0.0f ? g[i] : 0.0f;
}

}  // namespace

void layer_norm_rows(ConstMatView x, MatView y, const float* weight, const float* bias, float eps,
                     float* mean, float* rstd) {
  require(y.rows == x.rows && y.cols == x.cols, "layer_norm_rows", "x and y differ in shape");
  parallel_rows(
      x.rows, x.cols,
      [&](std::size_t r0, std::size_t r1) {
        layer_norm_block(x.block(r0, 0, r1 - r0, x.cols), y.block(r0, 0, r1 - r0, y.cols), weight,
                         bias, eps, mean ? mean + r0 : nullptr, rstd ? rstd + r0 : nullptr);
      },
      kLayerNormWork);
}

void layer_norm_rows_backward(ConstMatView dy, ConstMatView x, const float* weight, RowStats stats,
                              MatView dx, float* dweight, float* dbias) {
  require(dy.rows == x.rows && dy.cols == x.cols && dx.rows == x.rows && dx.cols == x.cols,
          "layer_norm_rows_backward", "dy, x and dx differ in shape");
  // dx row by row (independent rows: blocks of rows on the pool), then the column sums in row
  // order (independent columns: blocks of columns)
  parallel_rows(
      x.rows, x.cols,
      [&](std::size_t r0, std::size_t r1) {
        const std::size_t n = r1 - r0;
        layer_norm_backward_block(dy.block(r0, 0, n, dy.cols), x.block(r0, 0, n, x.cols), weight,
                                  {stats.mean + r0, stats.rstd + r0}, dx.block(r0, 0, n, dx.cols));
      },
      kLayerNormWork);
  parallel_columns(
      x.rows, x.cols,
      [&](std::size_t c0, std::size_t c1) {
        layer_norm_parameter_grads(dy.block(0, c0, dy.rows, c1 - c0),
                                   x.block(0, c0, x.rows, c1 - c0), stats, dweight + c0,
                                   dbias + c0);
      },
      kLayerNormWork);
}

void relu_inplace(float* x, std::size_t n) {
  parallel_rows(n, 1, [&](std::size_t i0, std::size_t i1) { relu_block(x + i0, i1 - i0); });
}

void add_inplace(float* y, const float* x, std::size_t n) {
  parallel_rows(n, 1, [&](std::size_t i0, std::size_t i1) { add_block(y + i0, x + i0, i1 - i0); });
}

void copy_floats(float* dst, const float* src, std::size_t n) {
  parallel_rows(n, 1,
                [&](std::size_t i0, std::size_t i1) { copy_block(dst + i0, src + i0, i1 - i0); });
}

void multiply_inplace(float* g, const float* m, std::size_t n) {
  parallel_rows(n, 1,
                [&](std::size_t i0, std::size_t i1) { multiply_block(g + i0, m + i0, i1 - i0); });
}

void dropout_rows(const DropoutKey& key, ConstMatView x, MatView mask, MatView y) {
  parallel_rows(x.rows, x.cols, [&](std::size_t r0, std::size_t r1) {
    const std::size_t n = r1 - r0;
    const MatView m = mask.block(r0, 0, n, mask.cols);
    dropout_factors(key, r0, 0, m);
    for (std::size_t r = 0; r < n; ++r) {
      const float* xr = x.row(r0 + r);
      const float* mr = m.row(r);
      float* yr = y.row(r0 + r);
      for (std::size_t c = 0; c < x.cols; ++c) yr[c] = xr[c] * mr[c];
    }
  });
}

void dropout_heads(const DropoutKey& key, std::size_t queries, MatView z) {
  parallel_rows(z.rows, z.cols, [&](std::size_t r0, std::size_t r1) {
    // the block's rows, head by head: head s's row i is z's row s·Tq + i, factor (i, j) of
    // stream s
    for (std::size_t r = r0; r < r1;) {
      const std::size_t s = r / queries, i = r % queries;
      const std::size_t n = std::min(r1 - r, queries - i);
      dropout_factors({key.p, key.seed, s}, i, 0, z.block(r, 0, n, z.cols));
      r += n;
    }
  });
}

void relu_backward_inplace(float* g, const float* x, std::size_t n) {
  parallel_rows(
      n, 1, [&](std::size_t i0, std::size_t i1) { relu_backward_block(g + i0, x + i0, i1 - i0); });
}

void gelu_inplace(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = gelu(x[i]);
}

void gelu_backward_inplace(float* g, const float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) g[i] *= gelu_grad(x[i]);
}

double cross_entropy_rows(ConstMatView z, const std::int64_t* targets, std::int64_t ignore_index) {
  double total = 0.0;
  for (std::size_t n = 0; n < z.rows; ++n) {
    if (targets[n] == ignore_index) continue;
    // -log softmax(z)[t] = logsumexp(z) - z_t, with the max subtracted for stability
    const float* zr = z.row(n);
    double m = zr[0];
    for (std::size_t c = 1; c < z.cols; ++c) m = std::fmax(m, double(zr[c]));
    double s = 0.0;
    for (std::size_t c = 0; c < z.cols; ++c) s += std::exp(double(zr[c]) - m);
    total += m + std::log(s) - double(zr[targets[n]]);
  }
  return total;
}

void cross_entropy_rows_backward(ConstMatView z, const std::int64_t* targets,
                                 std::int64_t ignore_index, float scale, MatView d) {
  require(d.rows == z.rows && d.cols == z.cols, "cross_entropy_rows_backward",
          "logits and dlogits differ in shape");
  for (std::size_t n = 0; n < z.rows; ++n) std::memcpy(d.row(n), z.row(n), z.cols * sizeof(float));
  softmax_rows(d);
  for (std::size_t n = 0; n < d.rows; ++n) {
    float* row = d.row(n);
    if (targets[n] == ignore_index) {
      for (std::size_t c = 0; c < d.cols; ++c) row[c] = 0.0f;
      continue;
    }
    // (softmax - onehot) · scale, scale = 1 / (the rows that count)
    row[targets[n]] -= 1.0f;
    for (std::size_t c = 0; c < d.cols; ++c) row[c] *= scale;
  }
}

void gather_rows(ConstMatView table, const std::int64_t* ids, MatView out) {
  require(out.cols == table.cols, "gather_rows", "table and out differ in width");
  for (std::size_t n = 0; n < out.rows; ++n)
    std::memcpy(out.row(n), table.row(std::size_t(ids[n])), table.cols * sizeof(float));
}

void scatter_add_rows(ConstMatView grad, const std::int64_t* ids, std::int64_t skip_id,
                      MatView dtable) {
  require(grad.cols == dtable.cols, "scatter_add_rows", "grad and dtable differ in width");
  for (std::size_t n = 0; n < grad.rows; ++n) {
    if (ids[n] == skip_id) continue;  // the padding row is never trained
    // several positions may share a token: their gradients add up
    const float* g = grad.row(n);
    float* row = dtable.row(std::size_t(ids[n]));
    for (std::size_t d = 0; d < grad.cols; ++d) row[d] += g[d];
  }
}

XENC_VECTOR_KERNEL
void column_sums(ConstMatView m, float* sums, bool accumulate) {
  parallel_columns(m.rows, m.cols, [&](std::size_t c0, std::size_t c1) {
    column_sums_block(m.block(0, c0, m.rows, c1 - c0), sums + c0, accumulate);
  });
}

}  // namespace xenc::kernels

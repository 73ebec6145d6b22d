// The kernels layer: the one place in xencoder with raw pointers, row strides, SIMD pragmas and
// BLAS calls. Everything above it (ops/, nn/) takes and returns tensors; this header is
// internal (lib/src, never installed).
//
// A kernel works on matrices given as views: `rows × cols` floats inside a bigger buffer, row i
// starting at `data + i·stride`. A view of a [B·T, D] tensor has stride D; a head's slice of it
// (columns h·Dh .. (h+1)·Dh) has stride D too, so a head is multiplied in place, without a
// [B, T, D] -> [B, H, T, Dh] copy. Shapes below are [rows, cols] of the views.
//
// Threads: OPENBLAS_NUM_THREADS is the budget, and one persistent pool (threads.cpp) its only
// user: a large GEMM is cut into blocks of C, each a 1-thread cblas_sgemm run by parallel_for,
// as do attention's heads × query blocks (ops/multi_head_attention.cpp decides how many threads)
// and the row passes from kRowPassWork or kLayerNormWork on (parallel_rows; parallel_columns for
// the sums over rows: relu, layer norm, the bias gradients, the residual sums and the copies a
// module keeps for backward), and the Adam step from kAdamUpdateWork; smaller ones run on the
// calling thread.
// SIMD: the loops marked XENC_VECTOR_KERNEL (vector_kernel.hpp) are compiled for SSE2 and for
// AVX2 + FMA, the loader picks one; `#pragma omp simd reduction` lets sums and maxima be
// vectorised (-fopenmp-simd: no OpenMP runtime).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "xenc/core/tensor.hpp"

namespace xenc::kernels {

/// A row-major matrix inside a buffer: element (i, j) is data[i·stride + j].
/// T is float (a mutable view) or const float.
template <class T>
struct Matrix {
  T* data = nullptr;
  std::size_t rows = 0, cols = 0, stride = 0;

  T* row(std::size_t i) const { return data + i * stride; }
  T& operator()(std::size_t i, std::size_t j) const { return data[i * stride + j]; }
  bool empty() const { return data == nullptr; }
  /// Rows r0 .. r0+nr, columns c0 .. c0+nc of this matrix (same stride).
  Matrix block(std::size_t r0, std::size_t c0, std::size_t nr, std::size_t nc) const {
    return {data + r0 * stride + c0, nr, nc, stride};
  }
  /// A mutable view converts to a const one.
  template <class U = T, class = std::enable_if_t<!std::is_const_v<U>>>
  operator Matrix<const float>() const {
    return {data, rows, cols, stride};
  }
};
using MatView = Matrix<float>;
using ConstMatView = Matrix<const float>;

/// A tensor as a [N, C] matrix: C is its last dimension, N the product of the others.
template <std::size_t R>
std::size_t leading_rows(const xt::xtensor<float, R>& t) {
  std::size_t rows = 1;
  for (std::size_t i = 0; i + 1 < R; ++i) rows *= t.shape(i);
  return rows;
}
template <std::size_t R>
MatView as_matrix(xt::xtensor<float, R>& t) {
  return {t.data(), leading_rows(t), t.shape(R - 1), t.shape(R - 1)};
}
template <std::size_t R>
ConstMatView as_matrix(const xt::xtensor<float, R>& t) {
  return {t.data(), leading_rows(t), t.shape(R - 1), t.shape(R - 1)};
}
/// Element (b, h) of a [B, H, R, C] tensor as an [R, C] matrix.
inline MatView as_matrix(Tensor4& t, std::size_t b, std::size_t h) {
  return {&t(b, h, 0, 0), t.shape(2), t.shape(3), t.shape(3)};
}
inline ConstMatView as_matrix(const Tensor4& t, std::size_t b, std::size_t h) {
  return {&t(b, h, 0, 0), t.shape(2), t.shape(3), t.shape(3)};
}

/// A contiguous run of `size` elements: a 1-D tensor, one row of a tensor, or every element of
/// a tensor in order. It converts to the plain pointer the kernels below take (null when
/// empty, which kernels read as "none", e.g. no bias), so ops/ hands tensors to kernels through
/// as_vector and row_of and never holds a pointer itself.
template <class T>
struct Vector {
  T* data = nullptr;
  std::size_t size = 0;

  operator T*() const { return data; }
  /// Elements i0 .. i0+n of this run (an empty run stays empty: "none" stays "none").
  Vector block(std::size_t i0, std::size_t n) const {
    return data ? Vector{data + i0, n} : Vector{};
  }
};
/// Every element of t, in row-major order (empty -> a null Vector).
template <class T, std::size_t R>
Vector<T> as_vector(xt::xtensor<T, R>& t) {
  return {t.size() ? t.data() : nullptr, t.size()};
}
template <class T, std::size_t R>
Vector<const T> as_vector(const xt::xtensor<T, R>& t) {
  return {t.size() ? t.data() : nullptr, t.size()};
}
/// Row i of a [N, C] tensor (empty when t is empty: an absent mask stays absent).
template <class T>
Vector<const T> row_of(const xt::xtensor<T, 2>& t, std::size_t i) {
  return as_vector(t).block(i * t.shape(1), t.shape(1));
}

/// A kernel was called with views whose shapes do not fit: a bug in the caller inside the
/// library (public functions check their tensors before they get here).
inline void require(bool ok, const char* where, const char* what) {
  if (!ok) throw std::logic_error(std::string("kernels::") + where + ": " + what);
}

// ---- GEMM (gemm.cpp) ---------------------------------------------------------------------

enum class Op { none, transpose };

/// C = alpha · op(A) · op(B) + beta · C     op(A): [M, K]   op(B): [K, N]   C: [M, N]
/// OpenBLAS's cblas_sgemm on the views (their strides are BLAS's leading dimensions), always on
/// one OpenBLAS thread. A product of kSplitGemmWork multiply-adds or more, with a thread budget
/// above 1, runs as blocks of C on the pool (parallel_for), each a 1-thread sgemm (gemm.cpp).
void gemm(ConstMatView a, Op op_a, ConstMatView b, Op op_b, MatView c, float alpha = 1.0f,
          float beta = 0.0f);
/// From this many multiply-adds a GEMM is split over the pool. Set from the layer: a GEMM alone
/// wins on 2 threads from 2²¹ (BM_GemmSplit), and the layer at T = 128 (D = 256, F = 1024: its
/// largest GEMMs are 2²⁵) ran 1.03–1.18× faster with them split, but at 1.10–1.36× the CPU time
/// of one thread, against issue #28's ≤ 1.1× (bench/README.md, "The layer at T = 128, past
/// OpenBLAS's start-up spin"). From T = 512 at D = 512 every GEMM of a layer is 2²⁷ or more.
inline constexpr std::size_t kSplitGemmWork = std::size_t(1) << 26;
/// What gemm runs from kSplitGemmWork on: C cut into blocks (gemm_blocks_per_thread(threads) per
/// thread, 64-multiples, placed by gemm_blocks), each a 1-thread sgemm on the pool, on min(threads,
/// thread_budget()) threads, at any size (BM_GemmSplit times it on both sides of kSplitGemmWork,
/// bench/scaling.sh, and at 2, 4 and 8 blocks per thread, its blocks argument).
void gemm_split(ConstMatView a, Op op_a, ConstMatView b, Op op_b, MatView c, float alpha,
                float beta, std::size_t threads);
/// Blocks per thread of a split GEMM (gemm_split, gemm_many's cut sums) on 3 or more threads. The
/// pool hands them out one at a time, so at a region's end a thread waits for at most one block of
/// another's; more blocks shorten that wait, and each block packs its share of the operands again.
/// On 16 threads this gives 32 blocks: a thread that starts late or runs on a slower core (a
/// laptop's efficiency cores) leaves the others at most half a share to wait for. Not measurable
/// on this project's 2-core machines.
inline constexpr std::size_t kGemmBlocksPerThread = 2;
/// The same on 2 threads: one block each. Measured in one process on a 2-core Zen 5 VM
/// (bench/README.md, "Zen 5: one block per thread on 2 threads"): a layer's forward at T = 512
/// gained 1.69× at 1.10× the CPU with 1 block per thread against 1.53× at 1.21× with 2, and
/// 1.75× against 1.67× under Haswell's kernels; a training step 1.67× against 1.63×, and T = 2048
/// a tie. Two equal cores finish their halves together; the second block's packing cost more
/// than the wait it saved (2 blocks against 4 before: "4 blocks per thread, once more").
inline constexpr std::size_t kGemmBlocksPerThreadOnTwo = 1;
/// Blocks per thread for a split on `threads` threads: kGemmBlocksPerThreadOnTwo on 2 (or fewer),
/// kGemmBlocksPerThread above, unless set_gemm_blocks_per_thread fixed it for every count (the
/// benchmarks time both sides of the choice in one build: xencoder_serial's blocks argument).
std::size_t gemm_blocks_per_thread(std::size_t threads);
/// Fixes gemm_blocks_per_thread() for the process at any thread count (0: back to the rule
/// above); returns the old setting (0 for the rule).
std::size_t set_gemm_blocks_per_thread(std::size_t blocks);
/// The block length that cuts `side` rows (or columns) into about `parts` blocks for a split GEMM:
/// a whole multiple of 64 (OpenBLAS's register blocks divide it), at least 64.
inline std::size_t gemm_block_step(std::size_t side, std::size_t parts) {
  return std::max<std::size_t>(64, (side / std::max<std::size_t>(parts, 1) + 63) / 64 * 64);
}
/// How a split GEMM cuts C [M, N]: row_parts × col_parts blocks of row_step × col_step (the last
/// of each may be shorter).
struct GemmBlocks {
  std::size_t M, N, row_step, row_parts, col_step, col_parts;
  std::size_t count() const { return row_parts * col_parts; }
  /// Block p of count(), row-major over the parts: its first row and column, and its size.
  struct Block {
    std::size_t r0, c0, m, n;
  };
  Block block(std::size_t p) const {
    const std::size_t r0 = (p / col_parts) * row_step, c0 = (p % col_parts) * col_step;
    return {r0, c0, std::min(row_step, M - r0), std::min(col_step, N - c0)};
  }
};
/// The cut of C [M, N] into at least `want` blocks (as many as 64-multiples allow, when fewer)
/// that packs the least: each block is its own sgemm, which packs its rows of op(A) and its
/// columns of op(B) again, so r row parts and c column parts pack (r·N + c·M)·K floats. Cutting
/// along the rows alone, as before, packed op(B) once per block: one T = 512 layer's forward
/// GEMMs in 4 blocks took 6–9% longer than the whole products on one thread, 3–6% cut this way
/// (BM_SplitGemmCost; bench/README.md, "Where to cut a split GEMM"). Ties go to more row parts.
GemmBlocks gemm_blocks(std::size_t M, std::size_t N, std::size_t want);
/// kSplitGemmWork, unless set_split_gemm_work changed it (xencoder_serial's split argument: a
/// layer timed with its GEMMs split from another size, in the same build).
std::size_t split_gemm_work();
/// Sets split_gemm_work() for the process; returns the old value.
std::size_t set_split_gemm_work(std::size_t work);
/// One term of a GemmSum: C = op(a) op(b) + beta · C.
struct GemmTerm {
  ConstMatView a;
  Op op_a;
  ConstMatView b;
  Op op_b;
  float beta;
};
/// C = its terms, applied in order (the first usually with beta 0, the rest with 1, to sum them).
/// With a bias (C's columns floats), every row of C starts as the bias first (a linear layer's
/// y = x wᵀ + b: then its term has beta 1).
struct GemmSum {
  MatView c;
  std::vector<GemmTerm> terms;
  const float* bias = nullptr;
};
/// gemm for independent outputs (linear_rows_many's products, each a sum with a bias; a linear
/// layer's backward dx and dW; the in-projection backward's dx = dq W_q + dk W_k + dv W_v and
/// its dW_q, dW_k, dW_v). The sums whose largest term gemm would split go to the pool as ONE
/// region, so the threads meet once at its end instead of once per product:
/// - whole, one item each, largest first, as many as keep every thread within kWholeSumsSlack of
///   an even share of all the region's work (whole_sums in gemm.cpp): on 2 threads a linear
///   layer's dx and dW, the in-projection's dx against its three dW, and two of the forward's
///   q, k, v. Each packs its operands once, as on one thread, and gives one thread's bits;
/// - the rest each cut as gemm cuts it, every block one item after the whole ones, so the threads
///   fill up with blocks where the whole sums left them uneven (the third of q, k, v on 2
///   threads; a lone product; everything on 16 threads, where there are fewer sums than threads).
/// A block or a whole sum applies the sum's terms to its part of C in order, so each element gets
/// the terms one at a time. The other sums run first, whole, on the caller. Outputs must not
/// overlap.
void gemm_many(const std::vector<GemmSum>& sums);
/// How far the busiest thread may go over an even share of a gemm_many region's work for its sums
/// to run whole: 5% (equal products balance exactly; a cut costs 3–11% in packing on one thread,
/// bench/README.md, "The layer's GEMMs three ways").
inline constexpr double kWholeSumsSlack = 1.05;
/// Lets gemm_many run balanced sums whole (true, the default) or always cut them (false), for the
/// benchmarks' A/B in one build (xencoder_serial's --whole-sums=off); returns the previous setting.
bool set_gemm_whole_sums(bool on);
/// The same product in plain C++ (gemm_portable.cpp): what gemm runs in a build without BLAS
/// (WebAssembly), checked against the formula and sgemm in the native tests.
void gemm_portable(ConstMatView a, Op op_a, ConstMatView b, Op op_b, MatView c, float alpha = 1.0f,
                   float beta = 0.0f);

// ---- Element-wise and row kernels (rows.cpp) ------------------------------------------------

/// exp of n floats in place, vectorisable (see ops/softmax.hpp for the method and error bound).
void exp_inplace(float* x, std::size_t n);

/// Softmax of every row in place; a row of -inf only (masked) becomes zeros, a row holding
/// NaN becomes NaN (PyTorch's behaviour; reference::softmax_row is the rule's oracle).
void softmax_rows(MatView x);
/// dx = y ⊙ (dy - rowsum(dy ⊙ y)), row by row. dx may be dy (in place).
void softmax_rows_backward(ConstMatView y, ConstMatView dy, MatView dx);

/// Layer norm of every row: y = (x - mean) · rstd · weight + bias, rstd = 1/√(var + eps).
/// y may be x (in place). mean and rstd (one float per row) are written when not null.
void layer_norm_rows(ConstMatView x, MatView y, const float* weight, const float* bias, float eps,
                     float* mean, float* rstd);

/// What layer_norm_rows saved, per row.
struct RowStats {
  const float* mean;
  const float* rstd;
};
/// dx = rstd · (g - mean(g) - x̂ · mean(g ⊙ x̂)), g = dy ⊙ weight;
/// dweight += Σ_rows dy ⊙ x̂, dbias += Σ_rows dy (accumulated: zero them first), summed in row
/// order. From kLayerNormWork floats dx runs as blocks of rows, the sums as blocks of columns.
void layer_norm_rows_backward(ConstMatView dy, ConstMatView x, const float* weight, RowStats stats,
                              MatView dx, float* dweight, float* dbias);

void relu_inplace(float* x, std::size_t n);
/// y += x over n floats: a residual sum. From kRowPassWork floats as blocks on the pool.
void add_inplace(float* y, const float* x, std::size_t n);
/// dst = src over n floats (non-overlapping): the inputs a module keeps for its backward. From
/// kRowPassWork floats as blocks on the pool.
void copy_floats(float* dst, const float* src, std::size_t n);
/// g ⊙= m over n floats: dropout's backward, in place in the gradient. From kRowPassWork floats
/// as blocks on the pool.
void multiply_inplace(float* g, const float* m, std::size_t n);
/// g = g where x > 0, else 0 (relu's backward, in place in the gradient).
void relu_backward_inplace(float* g, const float* x, std::size_t n);
void gelu_inplace(float* x, std::size_t n);
/// g = g · gelu'(x), gelu'(x) = Φ(x) + x φ(x) (gelu's backward, in place in the gradient).
void gelu_backward_inplace(float* g, const float* x, std::size_t n);

/// sums[j] (+)= Σ_i m(i, j), in row order: the bias gradient of a linear layer. From kRowPassWork
/// floats as blocks of columns on the pool (parallel_columns).
void column_sums(ConstMatView m, float* sums, bool accumulate);

/// The summed loss Σ_n (logsumexp(z_n) − z_n[t_n]) over the rows n whose target t_n is not
/// ignore_index, in double.   logits: [N, C]   targets: N ids (checked by the caller)
double cross_entropy_rows(ConstMatView logits, const std::int64_t* targets,
                          std::int64_t ignore_index);
/// dz_n = (softmax(z_n) − onehot(t_n)) · scale; rows whose target is ignore_index get zeros.
/// logits, dlogits: [N, C]
void cross_entropy_rows_backward(ConstMatView logits, const std::int64_t* targets,
                                 std::int64_t ignore_index, float scale, MatView dlogits);

/// out row n = table row ids[n] (the embedding lookup; ids checked by the caller).
/// table: [V, D]   ids: N ids   out: [N, D]
void gather_rows(ConstMatView table, const std::int64_t* ids, MatView out);
/// dtable row ids[n] += grad row n, except where ids[n] == skip_id (-1: none).
/// grad: [N, D]   dtable: [V, D]
void scatter_add_rows(ConstMatView grad, const std::int64_t* ids, std::int64_t skip_id,
                      MatView dtable);

// ---- Linear (linear.cpp) ------------------------------------------------------------------

/// y = x wᵀ + b     x: [N, in]   w: [out, in] (PyTorch layout)   b: out floats or null   y: [N,
/// out]. From kSplitGemmWork multiply-adds, on a budget above 1: the blocks of y that gemm_blocks
/// cuts, each its bias and its 1-thread GEMM, on the pool.
void linear_rows(ConstMatView x, ConstMatView w, const float* bias, MatView y);
/// One product of linear_rows_many: y = x wᵀ + b, shapes as linear_rows's.
struct LinearRowsJob {
  ConstMatView x, w;
  const float* bias;
  MatView y;
};
/// linear_rows for independent products (the in-projection's q, k and v): the products that
/// linear_rows would split go to the pool as ONE region (gemm_many), so the threads meet once at
/// its end instead of once per product: as many whole as balance on the threads (each the bits of
/// linear_rows on one thread; two of three on 2 threads), the rest cut into blocks as linear_rows
/// cuts them (the bits of linear_rows). The products below the split size run first, each whole,
/// on the caller. Their outputs must not overlap.
void linear_rows_many(const std::vector<LinearRowsJob>& jobs);

/// Where linear_rows_backward writes; an empty view or a null bias skips that gradient.
struct LinearGradViews {
  MatView dx;                  ///< [N, in] = dy w
  MatView dw;                  ///< [out, in] = dyᵀ x
  float* db;                   ///< out floats = Σ_rows dy
  bool accumulate;             ///< dw and db: add to them (true) or overwrite (false)
  bool accumulate_dx = false;  ///< dx: add to it (true) or overwrite (false)
};
/// The backward of linear_rows: dx and dw as one gemm_many (one region of the pool when split,
/// each the bits of its own gemm), then db, the column sums of dy.
void linear_rows_backward(ConstMatView dy, ConstMatView x, ConstMatView w,
                          const LinearGradViews& grads);

// ---- Optimisers (optim.cpp) ----------------------------------------------------------------

/// The scalars of one Adam step, the same for every element (nn/optim.cpp computes them).
struct AdamScalars {
  float beta1, beta2, eps;
  float decay;                  ///< θ is multiplied by it first (AdamW: 1 - lr·wd; Adam: 1)
  float l2;                     ///< g + l2·θ is the gradient used (Adam's weight decay; AdamW: 0)
  float step_size;              ///< lr / (1 - β1^t)
  float bias_correction2_sqrt;  ///< √(1 - β2^t)
};
/// From this many elements an Adam step runs as blocks of elements on the pool (parallel_rows).
/// BM_AdamUpdate at 2 threads, idle: the pool won from 2¹⁷ elements, by 1.37–1.46× at a CPU ratio
/// of 1.20–1.25 at 2¹⁸ and 1.48–1.53× at 1.15–1.19 at 2¹⁹; at T = 128 (D = 256), whose two
/// feed-forward weights are 2¹⁸ elements, the training step with them on the pool was a tie
/// (0.98–1.01×), so from 2¹⁹ (bench/README.md, "The optimiser and the row passes on the pool").
/// An element costs a square root and two divisions, several times a relu's float, so the step
/// wins from fewer elements than kRowPassWork. At D = 512, in_proj and the feed-forward weights
/// (2¹⁹·⁶ and 2²⁰ elements) run on the pool, out_proj (2¹⁸), the biases and the norms do not.
inline constexpr std::size_t kAdamUpdateWork = std::size_t(1) << 19;
/// One Adam step on n elements, in place, one pass:
///   θ ← decay·θ;  g ← grad + l2·θ;  m ← β1 m + (1-β1) g;  v ← β2 v + (1-β2) g²;
///   θ ← θ - step_size · m / (√v / √(1-β2^t) + eps)
/// Each element is computed by the same code whatever the blocks: the bits do not depend on
/// the thread count.
void adam_update(float* theta, const float* grad, float* m, float* v, std::size_t n,
                 const AdamScalars& s, std::size_t min_work = kAdamUpdateWork);

/// One SGD step with momentum on n elements, in place, one pass:
///   v ← momentum·v + grad;  θ ← θ - lr·v
/// under flush-to-zero (a velocity below 2^-126 is 0). From min_work elements (ops/optim.cpp
/// passes kRowPassWork: a multiply-add per element, a row pass's cost) as blocks on the pool;
/// each element is computed by the same code whatever the blocks.
void sgd_update(float* theta, const float* grad, float* velocity, std::size_t n, float lr,
                float momentum, std::size_t min_work);

// ---- Attention, one (batch, head) (attention.cpp) -------------------------------------------

/// One head's inputs: q [Tq, Dh], k [Tk, Dh], v [Tk, Dh] (usually column slices, stride D).
struct HeadInputs {
  ConstMatView q, k, v;
};

/// 1/√Dh: the score scale of a head of width Dh.
inline float attention_scale(std::size_t head_dim) {
  return 1.0f / std::sqrt(static_cast<float>(head_dim));
}

/// What is added to the scores S = scale · Q Kᵀ before the softmax; empty/null/0 = nothing.
struct ScoreTerms {
  float scale;                  ///< 1/√Dh
  const bool* key_padding;      ///< Tk flags, true = padding: S[:, j] = -inf
  ConstMatView attn_mask;       ///< [Tq, Tk], added
  ConstMatView bias;            ///< [Tq, Tk], added (a position scheme's per-head bias)
  float distance_slope = 0.0f;  ///< ALiBi: −slope·|i − j| added (computed, no tensor)
  /// The global index of the first query row (a block of a head's queries): ALiBi's i and the
  /// drawn dropout's row count from it; attn_mask and bias are views of the block's rows.
  std::size_t first_row = 0;
};

/// P = softmax(S + terms) into probs [Tq, Tk]; out [Tq, Dh] = P V, or (P ⊙ dropout) V when
/// `dropout` ([Tq, Tk] factors 0 or 1/(1-p)) is not empty, with P ⊙ dropout in `scratch`.
void attention_head_forward(const HeadInputs& in, const ScoreTerms& terms, MatView probs,
                            ConstMatView dropout, MatView scratch, MatView out);

/// Where attention_head_backward writes dq [Tq, Dh], dk, dv [Tk, Dh] (overwritten).
struct HeadGrads {
  MatView dq, dk, dv;
};
/// Backward of one head, given P (and the dropout factors, if any) from the forward.
/// dout: [Tq, Dh]. scratch: [Tq, Tk].
void attention_head_backward(const HeadInputs& in, float scale, ConstMatView probs,
                             ConstMatView dropout, ConstMatView dout, MatView scratch,
                             const HeadGrads& grads);

/// The same backward cut in two kinds of independent parts, so that threads can share one head
/// (ops/multi_head_attention.cpp). By query rows: in.q, probs, dropout, dout and dq are the rows'
/// views ([rows, ...]; in.k, in.v whole); writes dq = scale · dS K for those rows and
/// dk_part [Tk, Dh] = scale · dSᵀ Q_rows, their share of dK (dK = the sum of the parts).
/// scratch: [rows, Tk].
void attention_rows_backward(const HeadInputs& in, float scale, ConstMatView probs,
                             ConstMatView dropout, ConstMatView dout, MatView scratch, MatView dq,
                             MatView dk_part);
/// By key columns: dv [keys, Dv] = (P ⊙ dropout)ᵀ dO for a block of keys, probs and dropout
/// being its columns [Tq, keys] (any stride); scratch [Tq, keys] (read only with dropout).
void attention_values_backward(ConstMatView probs, ConstMatView dropout, ConstMatView dout,
                               MatView scratch, MatView dv);
/// out += a, element by element (same shapes).
void add_into(ConstMatView a, MatView out);

// ---- Relative attention, one (batch, head) (relative.cpp) ----------------------------------

/// out (i, j) = x (i, j) + row[j]: a bias row added to every row (out may be x).
void add_row(ConstMatView x, const float* row, MatView out);

/// The relative shift of z [T, 2T − 1] (contiguous) as a [T, T] view of the same floats:
/// element (i, j) is z(i, T − 1 − i + j) (start z + T − 1, stride 2T − 2). No copy.
MatView relative_shift_view(MatView z);

/// One head of Transformer-XL's attention: qu = q + u and qv = q + v [T, Dh] (the queries with
/// the content and position biases added), k, v [T, Dh], r [2T − 1, Dh] (the head's R W_Rᵀ).
struct RelativeHeadInputs {
  ConstMatView qu, qv, k, v, r;
};
/// Z = scale · qv rᵀ into z [T, 2T − 1]; then attention_head_forward on (qu, k, v) with
/// shift(Z) added to the scores (terms.bias is replaced by it).
void relative_attention_head_forward(const RelativeHeadInputs& in, const ScoreTerms& terms,
                                     MatView z, MatView probs, ConstMatView dropout,
                                     MatView scratch, MatView out);
/// Where relative_attention_head_backward writes: dqu, dk, dv, dqv [T, Dh] (overwritten), dr
/// [2T − 1, Dh] (added to: the heads' shares of one table).
struct RelativeHeadGrads {
  MatView dqu, dk, dv, dqv, dr;
};
/// Backward of one head, given P (and the dropout factors, if any) from the forward.
/// dout: [T, Dh]. scratch: [T, T]. dz: [T, 2T − 1], contiguous (scratch too).
void relative_attention_head_backward(const RelativeHeadInputs& in, float scale, ConstMatView probs,
                                      ConstMatView dropout, ConstMatView dout, MatView scratch,
                                      MatView dz, const RelativeHeadGrads& g);

// ---- Attention in tiles, one (batch, head) (attention_tiled.cpp) ---------------------------

/// Queries per tile (Br) and keys per tile (Bc): the score tile is [Br, Bc] (256 KiB at
/// 256 x 256, in a 1 MiB L2 cache with Q_i, K_j and V_j). Larger query tiles pack K_j and V_j
/// for OpenBLAS fewer times (once per query tile): BM_AttentionHeadTiled measured 256 x 256
/// 8% faster than 64 x 256 at T = 2048 and 12% at T = 8192 (bench/README.md).
struct TileSizes {
  std::size_t queries = 256;
  std::size_t keys = 256;
};

/// Attention dropout drawn tile by tile from a counter-based generator (as FlashAttention does):
/// the factor of score (i, j) of one (batch, head) is a pure function of (seed, stream, i, j), so
/// the backward recomputes the forward's factors and no [Tq, Tk] mask is ever stored.
/// Score (i, j) is dropped when u < p, u = (h >> 8) · 2⁻²⁴ in [0, 1) and h a 32-bit hash of
/// (seed, stream, i, j) (splitmix64 per row, Wellons' lowbias32 per element); kept scores get
/// 1/(1 − p).
struct DropoutKey {
  float p = 0.0f;            ///< probability of dropping a score; 0: no dropout
  std::uint64_t seed = 0;    ///< drawn once per forward
  std::uint64_t stream = 0;  ///< which (batch, head): b·H + h
};
/// z [rows, cols] = the factors (0 or 1/(1 − p)) of the scores (i0 + r, j0 + c).
void dropout_factors(const DropoutKey& key, std::size_t i0, std::size_t j0, MatView z);
/// Dropout of a [rows, cols] matrix from a key: mask = the factors of (r, c) (dropout_factors at
/// (0, 0) over the whole matrix) and y = x ⊙ mask (y may be x). From kRowPassWork floats as
/// blocks of rows on the pool: a factor depends on its position alone, so any cut and any thread
/// count give the same bits.
void dropout_rows(const DropoutKey& key, ConstMatView x, MatView mask, MatView y);
/// Attention dropout of B·H heads at once: z [B·H·Tq, Tk] (a [B, H, Tq, Tk] tensor's as_matrix)
/// receives head s = b·H + h's factors, drawn with stream s (key.stream is not read), in rows
/// s·Tq .. (s + 1)·Tq. Blocks of rows on the pool from kRowPassWork floats, the same bits on any
/// thread count.
void dropout_heads(const DropoutKey& key, std::size_t queries, MatView z);

/// A head's dropout: [Tq, Tk] factors read tile by tile, or factors drawn per tile from a key
/// (used when `factors` is empty and key.p > 0), or none.
struct HeadDropout {
  ConstMatView factors;
  DropoutKey key;
  HeadDropout() = default;
  HeadDropout(ConstMatView f) : factors(f) {}  // NOLINT: a factor view is a head's dropout
  HeadDropout(DropoutKey k) : key(k) {}        // NOLINT: so is a key
  bool active() const { return !factors.empty() || key.p > 0.0f; }
};

/// The same O as attention_head_forward, computed tile by tile with an online softmax; the
/// [Tq, Tk] matrix P is never formed. Writes lse[i] = log Σ_j exp(S[i, j]) (Tq floats; −inf
/// for a query whose every key is masked), which the backward needs. dropout: factors [Tq, Tk]
/// (read tile by tile, so the same factors give the same O as the plain path), a key, or none.
void attention_head_forward_tiled(const HeadInputs& in, const ScoreTerms& terms,
                                  const HeadDropout& dropout, MatView out, float* lse,
                                  TileSizes tiles = {});

/// What the tiled backward reads from the forward.
struct TiledSaved {
  ConstMatView out;     ///< O [Tq, Dv]
  const float* lse;     ///< Tq floats
  HeadDropout dropout;  ///< the forward's dropout (the same factors or key), or none
};
/// Which part of a head's tiled backward to compute: query rows [q0, q1) and key rows [k0, k1)
/// (clamped to Tq, Tk), and which gradients. The whole (the default) writes dq, dk, dv. Parts
/// let threads share one head: dk, dv for a block of keys over every query (q0 = 0, q1 = Tq,
/// dq = false), then dq for a block of queries over every key (dk_dv = false); only the rows a
/// part writes are overwritten. Key blocks must start at multiples of TileSizes::keys.
struct TiledBackwardPart {
  std::size_t q0 = 0, q1 = static_cast<std::size_t>(-1);
  std::size_t k0 = 0, k1 = static_cast<std::size_t>(-1);
  bool dq = true, dk_dv = true;
};
/// Backward of attention_head_forward_tiled: recomputes each tile of P as exp(S − lse).
/// dout: [Tq, Dv]; dq, dk, dv are overwritten (the rows `part` writes).
void attention_head_backward_tiled(const HeadInputs& in, const ScoreTerms& terms,
                                   const TiledSaved& saved, ConstMatView dout,
                                   const HeadGrads& grads, TileSizes tiles = {},
                                   const TiledBackwardPart& part = {});

// ---- Threads (threads.cpp) -----------------------------------------------------------------

/// How many threads xencoder may use: OpenBLAS's setting (OPENBLAS_NUM_THREADS), at least 1.
/// 1 inside the items of a parallel_for that runs on 2 or more threads (OpenBLAS is set to one
/// thread there).
std::size_t thread_budget();
/// fn(item, worker) for item = 0 .. n − 1 on min(threads, thread_budget(), n) threads of the
/// persistent pool (the caller is worker 0; worker < that count, for per-thread scratch), with
/// OpenBLAS set to 1 thread meanwhile (no threads inside threads), restored afterwards. Items
/// must write disjoint memory. The first exception thrown by fn is rethrown here. Inside an item,
/// or while another thread runs a region, the items run on the calling thread.
void parallel_for(std::size_t n, std::size_t threads,
                  const std::function<void(std::size_t, std::size_t)>& fn);
/// CPU time the calling threads have spent inside parallel_for regions of 2 or more threads,
/// since the process started: a thread's CPU time minus this is what it ran alone (the serial
/// part, bench/serial_fraction.cpp).
double region_cpu_seconds();
/// Where the pool's regions (parallel_for on 2 or more threads) spent their time, summed over
/// the regions since the process started or the last reset_pool_stats(); seconds. Per region
/// and per participant (the caller is one) a few clock reads, never per item. With p
/// participants per region, Σ p · region wall = busy_wall + dispatch + wake + tail + lag.
struct PoolStats {
  std::uint64_t regions = 0;       ///< how many regions
  std::uint64_t participants = 0;  ///< Σ threads per region
  std::uint64_t items = 0;         ///< Σ items per region
  double wall = 0;       ///< Σ regions' wall time: the caller's start to the end of its wait
  double busy_wall = 0;  ///< Σ participants' wall time from their first item to their last's end
  double busy_cpu = 0;   ///< the same participants' thread CPU time over those spans
  double wake = 0;       ///< workers: the region's start to their first item (the wake-up)
  double dispatch = 0;   ///< the caller: the region's start to its first item (the notify)
  double tail = 0;       ///< the caller: its last item done to the region's end (the wait)
  double lag = 0;        ///< workers: their last item done to the region's end
};
PoolStats pool_stats();
void reset_pool_stats();
/// The same on every thread of the budget, fn(item) only.
void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn);
/// From this many floats (rows · cols) a cheap pass (relu and its backward, a bias gradient's
/// column sums, a residual sum, a copy: one operation per float) runs as blocks on the pool:
/// BM_RowPass's relu lost on the pool up to 2¹⁹ floats, won at a CPU ratio of 1.26 at 2²⁰ and of
/// 1.06 at 2²¹ (bench/README.md, "The optimiser and the row passes on the pool", idle); the
/// residual sum and the copy at 1.54 and 1.17 at 2²⁰, below 1 at 2²¹ ("The residual sums and the
/// saved copies on the pool").
inline constexpr std::size_t kRowPassWork = std::size_t(1) << 21;
/// The same for layer norm, forward and backward (a mean, a variance and a square root per row,
/// several operations per float): BM_RowPass's layer norm won from 2¹⁷ floats, at a CPU ratio of
/// 1.01 from 2²⁰ (same section).
inline constexpr std::size_t kLayerNormWork = std::size_t(1) << 20;
/// fn(r0, r1) over blocks of rows [r0, r1) covering [0, rows): 4 blocks per thread of the
/// budget on the pool (parallel_for) when rows · cols >= min_work and the budget is 2 or more,
/// else fn(0, rows) on this thread. For passes whose rows are independent: each row is computed
/// by the same code whatever the blocks, so the bits do not depend on the thread count.
void parallel_rows(std::size_t rows, std::size_t cols,
                   const std::function<void(std::size_t, std::size_t)>& fn,
                   std::size_t min_work = kRowPassWork);
/// fn(c0, c1) over blocks of columns [c0, c1) covering [0, cols), for sums over rows kept in row
/// order (every column's sum is computed by the same code whatever the blocks): blocks of a
/// multiple of 16 columns (one 64-byte line of floats), at most 4 per thread of the budget, on the
/// pool when rows · cols >= min_work and the budget is 2 or more, else fn(0, cols) on this thread.
void parallel_columns(std::size_t rows, std::size_t cols,
                      const std::function<void(std::size_t, std::size_t)>& fn,
                      std::size_t min_work = kRowPassWork);
/// OpenBLAS at one thread for the object's lifetime, the old setting restored after it: every
/// sgemm runs so (gemm.cpp), and OpenBLAS never wakes a worker of its own.
class BlasOnOneThread {
 public:
  BlasOnOneThread();
  ~BlasOnOneThread();
  BlasOnOneThread(const BlasOnOneThread&) = delete;
  BlasOnOneThread& operator=(const BlasOnOneThread&) = delete;

 private:
  int saved_;
};

// ---- Position tables (positions.cpp): double precision, stored as float ---------------------

/// ω_i = 10000^(-2i/D), the angular frequency of the sinusoidal pair (2i, 2i+1).
double sinusoidal_frequency(std::size_t i, std::size_t d_model);
/// PE(position, dim): sin(position·ω_{dim/2}) for an even dim, cos for an odd one.
double sinusoidal_value(double position, std::size_t dim, std::size_t d_model);
/// pe [T, D] = PE(offset + t, j).
void sinusoidal_rows(MatView pe, std::size_t offset);
/// r [D, D] = R_k, the block-diagonal rotation with PE(p + k) = R_k PE(p).
void sinusoidal_shift(double k, MatView r);
/// θ_i = base^(−2i/Dh), i = 0 .. Dh/2 − 1.
std::vector<double> rope_frequencies(std::size_t head_dim, double base);
/// cos [T, Dh/2] = cos((t + offset)·θ_i), sin = sign · sin((t + offset)·θ_i).
void rotation_tables(const std::vector<double>& theta, double offset, double sign, MatView cos,
                     MatView sin);
/// cos [T, Dh/2] = cos(positions[t]·θ_i), sin = sign · sin(positions[t]·θ_i): any positions
/// (randomized positions, ops/randomized_positions.hpp), one sin/cos pair per entry.
void rotation_tables_at(const std::vector<double>& theta, const std::vector<double>& positions,
                        double sign, MatView cos, MatView sin);
/// ALiBi's slopes for H heads (the paper's code; ops/position_in_attention.hpp).
std::vector<double> alibi_slopes(std::size_t num_heads);

// ---- RoPE (rotation.cpp) ------------------------------------------------------------------

/// cos and sin of every (token t, pair i) angle, [T, Dh/2] each; which columns form pair i.
struct PairRotation {
  ConstMatView cos, sin;
  bool interleaved;  ///< pair i = (2i, 2i+1); else (i, i + Dh/2)
};
/// x [B·T, H·Dh] in place: in every head, pair i of row n turned by the angle of (n mod T, i).
void rotate_pairs(MatView x, std::size_t num_heads, const PairRotation& r);

}  // namespace xenc::kernels

// Scaled dot-product attention for one (batch, head): two GEMMs around a row softmax, on
// strided views (a head is a column slice of the [B·T, D] projections: no copies).
//
//     S = scale · Q Kᵀ + attn_mask + bias − slope·|i − j|;  S[:, j] = -inf for padded keys j
//     P = softmax(S)          O = (P ⊙ dropout) V
// Backward:  dV = (P ⊙ dropout)ᵀ dO      dP = (dO Vᵀ) ⊙ dropout
//            dS = P ⊙ (dP - rowsum(dP ⊙ P))      dQ = scale · dS K      dK = scale · dSᵀ Q
//
// Speed: S starts as the sum of the additive terms and the GEMM adds scale · Q Kᵀ onto it
// (beta = 1), as linear_rows starts from the bias: with beta = 0 OpenBLAS would first zero S
// anyway, so the masks and ALiBi's line cost one write pass, not an extra read-modify-write.
// ALiBi's −slope·|i − j| is computed in that pass: no [Tq, Tk] bias tensor per head.
#include <cmath>
#include <limits>

#include "kernels.hpp"
#include "vector_kernel.hpp"

namespace xenc::kernels {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// out = a ⊙ b, element by element (same shapes)
XENC_VECTOR_KERNEL
void multiply(ConstMatView a, ConstMatView b, MatView out) {
  for (std::size_t i = 0; i < out.rows; ++i) {
    const float* ar = a.row(i);
    const float* br = b.row(i);
    float* r = out.row(i);
#pragma omp simd
    for (std::size_t j = 0; j < out.cols; ++j) r[j] = ar[j] * br[j];
  }
}

void require_shape(ConstMatView m, std::size_t rows, std::size_t cols, const char* where,
                   const char* what) {
  require(m.empty() || (m.rows == rows && m.cols == cols), where, what);
}

// s = attn_mask + bias − slope·|i − j|, and -inf for padded keys: the terms that the score
// GEMM then adds scale · Q Kᵀ to. Returns false (s untouched) when there are none.
XENC_VECTOR_KERNEL
bool write_score_terms(const ScoreTerms& t, MatView s) {
  if (t.attn_mask.empty() && t.bias.empty() && t.distance_slope == 0.0f && !t.key_padding)
    return false;
  const float slope = t.distance_slope;
  const int cols = static_cast<int>(s.cols);  // an int index converts to float in SIMD
  for (std::size_t i = 0; i < s.rows; ++i) {
    float* r = s.row(i);
    const float fi = static_cast<float>(t.first_row + i);
    // −slope·|i − j| (zeros without ALiBi), then the tensors, row by row (in L1)
#pragma omp simd
    for (int j = 0; j < cols; ++j) r[j] = -slope * std::fabs(fi - static_cast<float>(j));
    if (!t.attn_mask.empty()) {
      const float* mask = t.attn_mask.row(i);
#pragma omp simd
      for (int j = 0; j < cols; ++j) r[j] += mask[j];
    }
    if (!t.bias.empty()) {
      const float* bias = t.bias.row(i);
#pragma omp simd
      for (int j = 0; j < cols; ++j) r[j] += bias[j];
    }
    if (t.key_padding)
      for (int j = 0; j < cols; ++j)
        if (t.key_padding[j]) r[j] = kNegInf;
  }
  return true;
}

// S = scale · Q Kᵀ + the terms : [Tq, Dh] x [Dh, Tk] -> [Tq, Tk]
void scores(const HeadInputs& in, const ScoreTerms& terms, MatView s) {
  const bool has_terms = write_score_terms(terms, s);
  gemm(in.q, Op::none, in.k, Op::transpose, s, terms.scale, has_terms ? 1.0f : 0.0f);
}

}  // namespace

void attention_head_forward(const HeadInputs& in, const ScoreTerms& terms, MatView probs,
                            ConstMatView dropout, MatView scratch, MatView out) {
  const std::size_t Tq = in.q.rows, Tk = in.k.rows;
  const char* where = "attention_head_forward";
  require(in.k.cols == in.q.cols && in.v.rows == Tk && out.rows == Tq && out.cols == in.v.cols,
          where, "expected q [Tq, Dh], k [Tk, Dh], v [Tk, Dv], out [Tq, Dv]");
  require(probs.rows == Tq && probs.cols == Tk, where, "probs is not [Tq, Tk]");
  require_shape(terms.attn_mask, Tq, Tk, where, "attn_mask is not [Tq, Tk]");
  require_shape(terms.bias, Tq, Tk, where, "bias is not [Tq, Tk]");
  require_shape(dropout, Tq, Tk, where, "dropout is not [Tq, Tk]");
  // S = scale · Q Kᵀ + attn_mask + bias − slope·|i − j|; S[:, j] = -inf for padded keys j
  scores(in, terms, probs);
  // P = softmax(S) over keys; fully masked rows become zeros
  softmax_rows(probs);
  // O = P V : [Tq, Tk] x [Tk, Dh] -> [Tq, Dh]   (P ⊙ dropout in training)
  ConstMatView p_used = probs;
  if (!dropout.empty()) {
    require(scratch.rows == Tq && scratch.cols == Tk, where, "scratch is not [Tq, Tk]");
    multiply(probs, dropout, scratch);
    p_used = scratch;
  }
  gemm(p_used, Op::none, in.v, Op::none, out);
}

void attention_head_backward(const HeadInputs& in, float scale, ConstMatView probs,
                             ConstMatView dropout, ConstMatView dout, MatView scratch,
                             const HeadGrads& g) {
  const std::size_t Tq = in.q.rows, Tk = in.k.rows;
  const char* where = "attention_head_backward";
  require(probs.rows == Tq && probs.cols == Tk && scratch.rows == Tq && scratch.cols == Tk, where,
          "probs and scratch must be [Tq, Tk]");
  require(dout.rows == Tq && dout.cols == in.v.cols, where, "dout is not [Tq, Dv]");
  require_shape(dropout, Tq, Tk, where, "dropout is not [Tq, Tk]");
  // dV = P_usedᵀ dO : [Tk, Tq] x [Tq, Dh]   (P_used = P ⊙ dropout in training)
  ConstMatView p_used = probs;
  if (!dropout.empty()) {
    multiply(probs, dropout, scratch);
    p_used = scratch;
  }
  gemm(p_used, Op::transpose, dout, Op::none, g.dv);
  // dP = dO Vᵀ : [Tq, Dh] x [Dh, Tk]   (then through the dropout factors)
  gemm(dout, Op::none, in.v, Op::transpose, scratch);
  if (!dropout.empty()) multiply(scratch, dropout, scratch);
  // dS = P ⊙ (dP - rowsum(dP ⊙ P)): the softmax backward, in place in scratch
  softmax_rows_backward(probs, scratch, scratch);
  // dQ = scale · dS K : [Tq, Tk] x [Tk, Dh];   dK = scale · dSᵀ Q : [Tk, Tq] x [Tq, Dh]
  gemm(scratch, Op::none, in.k, Op::none, g.dq, scale);
  gemm(scratch, Op::transpose, in.q, Op::none, g.dk, scale);
}

void attention_rows_backward(const HeadInputs& in, float scale, ConstMatView probs,
                             ConstMatView dropout, ConstMatView dout, MatView scratch, MatView dq,
                             MatView dk_part) {
  const std::size_t rows = in.q.rows, Tk = in.k.rows;
  const char* where = "attention_rows_backward";
  require(probs.rows == rows && probs.cols == Tk && scratch.rows == rows && scratch.cols == Tk,
          where, "probs and scratch must be [rows, Tk]");
  require(dout.rows == rows && dout.cols == in.v.cols, where, "dout is not [rows, Dv]");
  require(
      dq.rows == rows && dq.cols == in.q.cols && dk_part.rows == Tk && dk_part.cols == in.q.cols,
      where, "expected dq [rows, Dh], dk_part [Tk, Dh]");
  require_shape(dropout, rows, Tk, where, "dropout is not [rows, Tk]");
  // dP = dO Vᵀ : [rows, Dh] x [Dh, Tk]   (then through the dropout factors)
  gemm(dout, Op::none, in.v, Op::transpose, scratch);
  if (!dropout.empty()) multiply(scratch, dropout, scratch);
  // dS = P ⊙ (dP - rowsum(dP ⊙ P)): each row needs only its own P and dP
  softmax_rows_backward(probs, scratch, scratch);
  // dQ = scale · dS K : [rows, Tk] x [Tk, Dh];   dK's part = scale · dSᵀ Q : [Tk, rows] x [rows,
  // Dh]
  gemm(scratch, Op::none, in.k, Op::none, dq, scale);
  gemm(scratch, Op::transpose, in.q, Op::none, dk_part, scale);
}

void attention_values_backward(ConstMatView probs, ConstMatView dropout, ConstMatView dout,
                               MatView scratch, MatView dv) {
  const char* where = "attention_values_backward";
  require(dout.rows == probs.rows && dv.rows == probs.cols && dv.cols == dout.cols, where,
          "expected probs [Tq, keys], dout [Tq, Dv], dv [keys, Dv]");
  require_shape(dropout, probs.rows, probs.cols, where, "dropout is not [Tq, keys]");
  // dV = P_usedᵀ dO : [keys, Tq] x [Tq, Dv]   (P_used = P ⊙ dropout in training)
  ConstMatView p_used = probs;
  if (!dropout.empty()) {
    require(scratch.rows == probs.rows && scratch.cols == probs.cols, where,
            "scratch is not [Tq, keys]");
    multiply(probs, dropout, scratch);
    p_used = scratch;
  }
  gemm(p_used, Op::transpose, dout, Op::none, dv);
}

XENC_VECTOR_KERNEL
void add_into(ConstMatView a, MatView out) {
  require(a.rows == out.rows && a.cols == out.cols, "add_into", "a and out differ in shape");
  for (std::size_t i = 0; i < out.rows; ++i) {
    const float* ar = a.row(i);
    float* r = out.row(i);
#pragma omp simd
    for (std::size_t j = 0; j < out.cols; ++j) r[j] += ar[j];
  }
}

}  // namespace xenc::kernels

// Transformer-XL's relative attention for one (batch, head) (ops/relative_attention.hpp has the
// equation): the position term is one GEMM, the relative shift a strided view of its result,
// and the rest is the plain attention kernel with the content bias u folded into the queries.
//
//     Z = scale · (Q + v) rᵀ  [T, 2T−1]       B = shift(Z)  [T, T], B[i, j] = Z[i, T − 1 − i + j]
//     S = scale · (Q + u) Kᵀ + B + masks      P = softmax(S)      O = (P ⊙ dropout) V
//
// The shift costs nothing: in a contiguous [T, 2T−1] buffer, row i of the shifted matrix starts
// T − 1 − i elements into row i of Z, that is at Z + (T − 1) + i·(2T − 2). So the shifted
// matrix is the view (data + T − 1, stride 2T − 2) of the same floats, the trick of the
// Transformer-XL code (its pad-and-reshape).
// Backward: dS from the plain attention backward (it leaves dS in its scratch), then
//     dZ = shiftᵀ(scale · dS) (zero outside the band)   d(Q + v) = dZ r   dr += dZᵀ (Q + v)
#include <algorithm>

#include "kernels.hpp"
#include "vector_kernel.hpp"

namespace xenc::kernels {

XENC_VECTOR_KERNEL
void add_row(ConstMatView x, const float* row, MatView out) {
  require(x.rows == out.rows && x.cols == out.cols, "add_row", "x and out differ in shape");
  for (std::size_t i = 0; i < out.rows; ++i) {
    const float* xr = x.row(i);
    float* r = out.row(i);
#pragma omp simd
    for (std::size_t j = 0; j < out.cols; ++j) r[j] = xr[j] + row[j];
  }
}

MatView relative_shift_view(MatView z) {
  const std::size_t T = z.rows;
  require(z.cols == 2 * T - 1 && z.stride == z.cols, "relative_shift_view",
          "z must be a contiguous [T, 2T − 1] buffer");
  return {z.data + (T - 1), T, T, T > 1 ? 2 * T - 2 : 0};
}

void relative_attention_head_forward(const RelativeHeadInputs& in, const ScoreTerms& terms,
                                     MatView z, MatView probs, ConstMatView dropout,
                                     MatView scratch, MatView out) {
  const std::size_t T = in.qu.rows;
  require(in.qv.rows == T && in.r.rows == 2 * T - 1 && in.r.cols == in.qv.cols && z.rows == T &&
              z.cols == 2 * T - 1,
          "relative_attention_head_forward", "expected qv [T, Dh], r [2T − 1, Dh], z [T, 2T − 1]");
  // Z = scale · (Q + v) rᵀ : [T, Dh] x [Dh, 2T−1]; its shift is the score bias
  gemm(in.qv, Op::none, in.r, Op::transpose, z, terms.scale);
  ScoreTerms with_position = terms;
  with_position.bias = relative_shift_view(z);
  attention_head_forward({in.qu, in.k, in.v}, with_position, probs, dropout, scratch, out);
}

void relative_attention_head_backward(const RelativeHeadInputs& in, float scale, ConstMatView probs,
                                      ConstMatView dropout, ConstMatView dout, MatView scratch,
                                      MatView dz, const RelativeHeadGrads& g) {
  const std::size_t T = in.qu.rows;
  require(dz.rows == T && dz.cols == 2 * T - 1 && g.dqv.rows == T && g.dqv.cols == in.qv.cols &&
              g.dr.rows == 2 * T - 1 && g.dr.cols == in.r.cols,
          "relative_attention_head_backward",
          "expected dz [T, 2T − 1], dqv [T, Dh], dr [2T − 1, Dh]");
  // The content path: dV, d(Q + u) = scale · dS K, dK = scale · dSᵀ (Q + u); dS stays in scratch
  attention_head_backward({in.qu, in.k, in.v}, scale, probs, dropout, dout, scratch,
                          {g.dqu, g.dk, g.dv});
  // dZ = shiftᵀ(scale · dS): zero, then the band through the same view as the forward's
  for (std::size_t i = 0; i < T; ++i) std::fill(dz.row(i), dz.row(i) + dz.cols, 0.0f);
  const MatView band = relative_shift_view(dz);
  for (std::size_t i = 0; i < T; ++i) {
    const float* ds = scratch.row(i);
    float* out = band.row(i);
    for (std::size_t j = 0; j < T; ++j) out[j] = scale * ds[j];
  }
  // d(Q + v) = dZ r : [T, 2T−1] x [2T−1, Dh];   dr += dZᵀ (Q + v) : [2T−1, T] x [T, Dh]
  gemm(dz, Op::none, in.r, Op::none, g.dqv);
  gemm(dz, Op::transpose, in.qv, Op::none, g.dr, 1.0f, 1.0f);
}

}  // namespace xenc::kernels

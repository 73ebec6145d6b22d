// Scaled dot-product attention for one (batch, head) in tiles, with an online softmax
// (FlashAttention, Dao et al. 2022; the loop order and the backward of FlashAttention-2, Dao
// 2023). Same result as attention_head_forward/backward (attention.cpp), but the [Tq, Tk] score
// matrix is never formed: memory is linear in T.
//
// The online softmax. Split a row of scores s into blocks s⁽¹⁾, s⁽²⁾, ... and keep, after block
// t, the running max m_t, the running sum ℓ_t = Σ_{j seen} exp(s_j − m_t) and the unnormalised
// output o_t = Σ_{j seen} exp(s_j − m_t) v_j. When block t+1 arrives:
//     m_{t+1} = max(m_t, max s⁽ᵗ⁺¹⁾)
//     ℓ_{t+1} = exp(m_t − m_{t+1}) ℓ_t + Σ_{j ∈ t+1} exp(s_j − m_{t+1})
//     o_{t+1} = exp(m_t − m_{t+1}) o_t + Σ_{j ∈ t+1} exp(s_j − m_{t+1}) v_j
// (multiplying by exp(m_t − m_{t+1}) moves the old terms from base m_t to base m_{t+1}). After
// the last block, o / ℓ = Σ_j softmax(s)_j v_j exactly, and lse = m + log ℓ = log Σ_j exp(s_j).
//
// Backward (FlashAttention-2): with the saved lse, a tile of P is recomputed as exp(S − lse)
// (no max, no sum: lse already normalises it). The softmax backward needs rowsum(dP ⊙ P) for
// the whole row, which is known before any tile: rowsum(dP ⊙ P) = rowsum(dO ⊙ O) =: δ, because
// dP = dO Vᵀ (⊙ dropout) and O = (P ⊙ dropout) V. Then per tile (i queries, j keys):
//     dV_j += (P ⊙ Z)ᵀ dO_i     dP = (dO_i V_jᵀ) ⊙ Z     dS = P ⊙ (dP − δ_i)
//     dQ_i += scale · dS K_j    dK_j += scale · dSᵀ Q_i           (Z: dropout factors, or 1)
//
// Edge rows. A query whose every key is masked has m = −inf throughout: it is exponentiated
// around 0 instead (exp(−inf − 0) = 0), so ℓ = 0, and its output is zeros, lse = −inf (the plain
// softmax's rule). A NaN score is skipped by the max but exp(NaN) = NaN enters ℓ, so the row's
// output is NaN, as in the plain path: a NaN is never hidden.
//
// Speed: each tile is two GEMMs of [Br, Dh] x [Dh, Bc] and [Br, Bc] x [Bc, Dh] whose operands
// (Q_i, K_j, V_j and the [Br, Bc] score tile: 256 + 256 rows of Dh = 64 floats and 256 KiB at the
// default 256 x 256) stay in the L2 cache, where the plain path streams its [Tq, Tk] matrix
// through main memory three times (write S, softmax it, read it for P V). The price is the
// rescaling of O once per tile (Br · Dh multiplies, small next to the GEMM's Br · Bc · Dh) and
// GEMMs of a smaller size, which OpenBLAS runs at a lower rate than the plain path's large ones:
// every call packs its operands again (K_j and V_j once per query tile), which is why the query
// tiles are large. The softmax step is two passes over a row (the max, then exp and the sum in
// one vector loop). The backward recomputes S (one GEMM more than the plain backward) to avoid
// storing P; dropout factors are recomputed the same way (dropout_factors, a counter-based hash).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "exp_approx.hpp"
#include "kernels.hpp"
#include "vector_kernel.hpp"

namespace xenc::kernels {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Where a tile sits: rows i0 .. i0+s.rows of the queries, columns j0 .. j0+s.cols of the keys.
struct TileAt {
  std::size_t i0, j0;
};

// s = attn_mask + bias − slope·|i − j| for the tile at `at`, and −inf for padded keys: the terms
// that the score GEMM then adds scale · Q Kᵀ to. Returns false (s untouched) when there are none.
XENC_VECTOR_KERNEL
bool write_tile_terms(const ScoreTerms& t, TileAt at, MatView s) {
  if (t.attn_mask.empty() && t.bias.empty() && t.distance_slope == 0.0f && !t.key_padding)
    return false;
  const float slope = t.distance_slope;
  const int cols = static_cast<int>(s.cols);  // an int index converts to float in SIMD
  const float fj0 = static_cast<float>(at.j0);
  for (std::size_t i = 0; i < s.rows; ++i) {
    float* r = s.row(i);
    const float fi = static_cast<float>(t.first_row + at.i0 + i);
    // −slope·|i − j| in global positions (zeros without ALiBi), then the tensors' tiles
#pragma omp simd
    for (int j = 0; j < cols; ++j) r[j] = -slope * std::fabs(fi - (fj0 + static_cast<float>(j)));
    if (!t.attn_mask.empty()) {
      const float* mask = t.attn_mask.row(at.i0 + i) + at.j0;
#pragma omp simd
      for (int j = 0; j < cols; ++j) r[j] += mask[j];
    }
    if (!t.bias.empty()) {
      const float* bias = t.bias.row(at.i0 + i) + at.j0;
#pragma omp simd
      for (int j = 0; j < cols; ++j) r[j] += bias[j];
    }
    if (t.key_padding)
      for (int j = 0; j < cols; ++j)
        if (t.key_padding[at.j0 + j]) r[j] = kNegInf;
  }
  return true;
}

// S_tile = scale · Q_i K_jᵀ + the terms : [Br, Dh] x [Dh, Bc] -> [Br, Bc]
void tile_scores(const HeadInputs& in, const ScoreTerms& terms, TileAt at, MatView s) {
  const bool has_terms = write_tile_terms(terms, at, s);
  gemm(in.q.block(at.i0, 0, s.rows, in.q.cols), Op::none, in.k.block(at.j0, 0, s.cols, in.k.cols),
       Op::transpose, s, terms.scale, has_terms ? 1.0f : 0.0f);
}

// The running statistics of the tile's rows: m (max) and ℓ (sum), one float per query row.
struct RowState {
  float* m;
  float* l;
};

// One step of the online softmax on a score tile s, in place: s becomes exp(s − m_new),
// ℓ ← exp(m − m_new) ℓ + rowsum, m ← m_new, and the output rows are rescaled by exp(m − m_new).
// Two passes over each row: the max, then exp and the sum together (exp_approx inlined, so the
// loop is one vector loop; 16 floats per instruction on an AVX-512 CPU, as this is bound by the
// exponential's arithmetic, not by memory: the tile sits in the L2 cache).
XENC_VECTOR_KERNEL_AVX512
void online_softmax_step(MatView s, RowState st, MatView out) {
  const std::size_t cols = s.cols;
  for (std::size_t r = 0; r < s.rows; ++r) {
    float* row = s.row(r);
    float tile_max = kNegInf;
#pragma omp simd reduction(max : tile_max)
    for (std::size_t c = 0; c < cols; ++c) tile_max = row[c] > tile_max ? row[c] : tile_max;
    const float m_new = std::max(st.m[r], tile_max);
    // every key so far masked: exponentiate around 0, so that exp(−inf − 0) = 0, not NaN
    const float base = m_new == kNegInf ? 0.0f : m_new;
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (std::size_t c = 0; c < cols; ++c) {
      const float e = exp_approx(row[c] - base);
      row[c] = e;
      sum += e;
    }
    // move the old terms from base m to base m_new (exp(−inf) = 0 when nothing was seen yet)
    const float correction = std::exp(st.m[r] - base);
    if (correction != 1.0f) {
      float* o = out.row(r);
#pragma omp simd
      for (std::size_t c = 0; c < out.cols; ++c) o[c] *= correction;
    }
    st.l[r] = correction * st.l[r] + sum;
    st.m[r] = m_new;
  }
}

// out ⊙= z, element by element (the dropout factors of a tile)
XENC_VECTOR_KERNEL
void multiply_inplace(MatView out, ConstMatView z) {
  for (std::size_t i = 0; i < out.rows; ++i) {
    float* r = out.row(i);
    const float* zr = z.row(i);
#pragma omp simd
    for (std::size_t j = 0; j < out.cols; ++j) r[j] *= zr[j];
  }
}

// After the last tile: out = o / ℓ and lse = m + log ℓ; a row with ℓ = 0 (every key masked)
// gets zeros and lse = −inf. A NaN ℓ makes the row NaN.
void finish_rows(RowState st, MatView out, float* lse) {
  for (std::size_t r = 0; r < out.rows; ++r) {
    float* o = out.row(r);
    if (st.l[r] == 0.0f) {
      std::fill(o, o + out.cols, 0.0f);
      lse[r] = kNegInf;
      continue;
    }
    const float inv = 1.0f / st.l[r];
    for (std::size_t c = 0; c < out.cols; ++c) o[c] *= inv;
    lse[r] = st.m[r] + std::log(st.l[r]);
  }
}

// p = exp(s − lse) row by row, in place: the tile's probabilities, already normalised.
XENC_VECTOR_KERNEL_AVX512
void probabilities_from_lse(MatView s, const float* lse) {
  for (std::size_t r = 0; r < s.rows; ++r) {
    float* row = s.row(r);
    if (lse[r] == kNegInf) {  // every key masked: P = 0
      std::fill(row, row + s.cols, 0.0f);
      continue;
    }
    const float shift = lse[r];
#pragma omp simd
    for (std::size_t c = 0; c < s.cols; ++c) row[c] = exp_approx(row[c] - shift);
  }
}

// ds = p ⊙ (dp − δ) row by row, in place in dp (the softmax backward with δ = rowsum(dO ⊙ O))
XENC_VECTOR_KERNEL
void softmax_tile_backward(ConstMatView p, const float* delta, MatView dp) {
  for (std::size_t r = 0; r < p.rows; ++r) {
    const float* pr = p.row(r);
    float* d = dp.row(r);
    const float dr = delta[r];
#pragma omp simd
    for (std::size_t c = 0; c < p.cols; ++c) d[c] = pr[c] * (d[c] - dr);
  }
}

// splitmix64's finaliser (Steele, Lea & Flood 2014): a 64-bit mix with full avalanche.
std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
// lowbias32 (C. Wellons' hash-prospector): a bijective 32-bit mix of two multiplies, which
// vectorises (32-bit lanes).
inline std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  return x ^ (x >> 16);
}

// The tile's dropout factors: a view into the given [Tq, Tk] factors, or drawn into buf.
// Drawn factors count rows from first_row (the block's first query in the head).
ConstMatView tile_dropout(const HeadDropout& d, std::size_t first_row, TileAt at, std::size_t br,
                          std::size_t bc, std::vector<float>& buf) {
  if (!d.factors.empty()) return d.factors.block(at.i0, at.j0, br, bc);
  const MatView z{buf.data(), br, bc, bc};
  dropout_factors(d.key, first_row + at.i0, at.j0, z);
  return z;
}

void require_shape(ConstMatView m, std::size_t rows, std::size_t cols, const char* where,
                   const char* what) {
  require(m.empty() || (m.rows == rows && m.cols == cols), where, what);
}

void check_inputs(const HeadInputs& in, const ScoreTerms& terms, const HeadDropout& dropout,
                  ConstMatView out, const char* where) {
  const std::size_t Tq = in.q.rows, Tk = in.k.rows;
  require(in.k.cols == in.q.cols && in.v.rows == Tk && out.rows == Tq && out.cols == in.v.cols,
          where, "expected q [Tq, Dh], k [Tk, Dh], v [Tk, Dv], out [Tq, Dv]");
  require_shape(terms.attn_mask, Tq, Tk, where, "attn_mask is not [Tq, Tk]");
  require_shape(terms.bias, Tq, Tk, where, "bias is not [Tq, Tk]");
  require_shape(dropout.factors, Tq, Tk, where, "dropout is not [Tq, Tk]");
  require(dropout.key.p >= 0.0f && dropout.key.p < 1.0f, where, "dropout p is not in [0, 1)");
}

void zero(MatView m) {
  for (std::size_t i = 0; i < m.rows; ++i) std::fill(m.row(i), m.row(i) + m.cols, 0.0f);
}

}  // namespace

XENC_VECTOR_KERNEL_AVX512
void dropout_factors(const DropoutKey& key, std::size_t i0, std::size_t j0, MatView z) {
  const float keep = 1.0f / (1.0f - key.p);
  // one 64-bit key per (seed, stream), one per row; then one 32-bit hash per element
  const std::uint64_t head = mix64(key.seed ^ mix64(key.stream + 0x9E3779B97F4A7C15ull));
  const int cols = static_cast<int>(z.cols);
  for (std::size_t r = 0; r < z.rows; ++r) {
    const std::uint64_t row_key = mix64(head + (i0 + r) * 0x9E3779B97F4A7C15ull);
    const auto lo = static_cast<std::uint32_t>(row_key),
               hi = static_cast<std::uint32_t>(row_key >> 32);
    const auto first = static_cast<std::uint32_t>(j0);
    float* zr = z.row(r);
#pragma omp simd
    for (int c = 0; c < cols; ++c) {
      const std::uint32_t j = first + static_cast<std::uint32_t>(c);
      const std::uint32_t h = mix32(mix32(j * 0x9E3779B9u ^ lo) + hi);
      // u = (h >> 8) · 2⁻²⁴: exact in float, as Rng::uniform draws it
      const float u = static_cast<float>(static_cast<std::int32_t>(h >> 8)) * 0x1p-24f;
      zr[c] = u < key.p ? 0.0f : keep;
    }
  }
}

void attention_head_forward_tiled(const HeadInputs& in, const ScoreTerms& terms,
                                  const HeadDropout& dropout, MatView out, float* lse,
                                  TileSizes tiles) {
  const char* where = "attention_head_forward_tiled";
  check_inputs(in, terms, dropout, out, where);
  require(tiles.queries > 0 && tiles.keys > 0, where, "tile sizes must be positive");
  const std::size_t Tq = in.q.rows, Tk = in.k.rows, Dv = in.v.cols;
  // One score tile [Br, Bc] and the running max and sum of its rows: all the memory it needs.
  std::vector<float> s_buf(tiles.queries * tiles.keys), m(tiles.queries), l(tiles.queries);
  std::vector<float> z_buf(dropout.factors.empty() && dropout.active() ? s_buf.size() : 0);
  zero(out);
  for (std::size_t i0 = 0; i0 < Tq; i0 += tiles.queries) {
    const std::size_t br = std::min(tiles.queries, Tq - i0);
    std::fill(m.begin(), m.end(), kNegInf);
    std::fill(l.begin(), l.end(), 0.0f);
    const MatView o = out.block(i0, 0, br, Dv);  // o: [Br, Dv], the running output
    for (std::size_t j0 = 0; j0 < Tk; j0 += tiles.keys) {
      const std::size_t bc = std::min(tiles.keys, Tk - j0);
      const MatView s{s_buf.data(), br, bc, bc};
      // S = scale · Q_i K_jᵀ + the terms : [Br, Bc]
      tile_scores(in, terms, {i0, j0}, s);
      // P̃ = exp(S − m_new); ℓ and o rescaled to the new max
      online_softmax_step(s, {m.data(), l.data()}, o);
      // o += (P̃ ⊙ Z) V_j : [Br, Bc] x [Bc, Dv]   (ℓ counts P̃ before dropout, as the plain path)
      if (dropout.active())
        multiply_inplace(s, tile_dropout(dropout, terms.first_row, {i0, j0}, br, bc, z_buf));
      gemm(s, Op::none, in.v.block(j0, 0, bc, Dv), Op::none, o, 1.0f, 1.0f);
    }
    // O = o / ℓ; lse = m + log ℓ
    finish_rows({m.data(), l.data()}, o, lse + i0);
  }
}

void attention_head_backward_tiled(const HeadInputs& in, const ScoreTerms& terms,
                                   const TiledSaved& saved, ConstMatView dout, const HeadGrads& g,
                                   TileSizes tiles, const TiledBackwardPart& part) {
  const char* where = "attention_head_backward_tiled";
  check_inputs(in, terms, saved.dropout, saved.out, where);
  require(tiles.queries > 0 && tiles.keys > 0, where, "tile sizes must be positive");
  const std::size_t Tq = in.q.rows, Tk = in.k.rows, Dh = in.q.cols, Dv = in.v.cols;
  require(dout.rows == Tq && dout.cols == Dv, where, "dout is not [Tq, Dv]");
  require(g.dq.rows == Tq && g.dq.cols == Dh && g.dk.rows == Tk && g.dk.cols == Dh &&
              g.dv.rows == Tk && g.dv.cols == Dv,
          where, "expected dq [Tq, Dh], dk [Tk, Dh], dv [Tk, Dv]");
  const std::size_t q0 = std::min(part.q0, Tq), q1 = std::min(part.q1, Tq);
  const std::size_t k0 = std::min(part.k0, Tk), k1 = std::min(part.k1, Tk);
  require(q0 <= q1 && k0 <= k1 && k0 % tiles.keys == 0, where,
          "part: expected q0 <= q1, k0 <= k1, k0 a multiple of the key tile");
  // δ_i = rowsum(dO ⊙ O) = rowsum(dP ⊙ P), for every query row of the part, before any tile
  std::vector<float> delta(Tq);
  for (std::size_t i = q0; i < q1; ++i) {
    const float* d = dout.row(i);
    const float* o = saved.out.row(i);
    float sum = 0.0f;
    for (std::size_t c = 0; c < Dv; ++c) sum += d[c] * o[c];
    delta[i] = sum;
  }
  if (part.dq) zero(g.dq.block(q0, 0, q1 - q0, Dh));
  if (part.dk_dv) {
    zero(g.dk.block(k0, 0, k1 - k0, Dh));
    zero(g.dv.block(k0, 0, k1 - k0, Dv));
  }
  const bool dropped = saved.dropout.active();
  // Two tiles: P (and P ⊙ Z) and dP, then dS in place; a third for drawn dropout factors
  std::vector<float> p_buf(tiles.queries * tiles.keys), dp_buf(tiles.queries * tiles.keys);
  std::vector<float> z_buf(saved.dropout.factors.empty() && dropped ? p_buf.size() : 0);
  for (std::size_t i0 = q0; i0 < q1; i0 += tiles.queries) {
    const std::size_t br = std::min(tiles.queries, q1 - i0);
    const ConstMatView q_i = in.q.block(i0, 0, br, Dh), do_i = dout.block(i0, 0, br, Dv);
    const MatView dq_i = g.dq.block(i0, 0, br, Dh);
    for (std::size_t j0 = k0; j0 < k1; j0 += tiles.keys) {
      const std::size_t bc = std::min(tiles.keys, k1 - j0);
      const MatView p{p_buf.data(), br, bc, bc}, dp{dp_buf.data(), br, bc, bc};
      const ConstMatView k_j = in.k.block(j0, 0, bc, Dh), v_j = in.v.block(j0, 0, bc, Dv);
      // P = exp(S − lse) : [Br, Bc], recomputed from the scores
      tile_scores(in, terms, {i0, j0}, p);
      probabilities_from_lse(p, saved.lse + i0);
      // dV_j += (P ⊙ Z)ᵀ dO_i : [Bc, Br] x [Br, Dv]   (P ⊙ Z in dp for the moment)
      ConstMatView p_used = p, z;
      if (dropped) z = tile_dropout(saved.dropout, terms.first_row, {i0, j0}, br, bc, z_buf);
      if (dropped && part.dk_dv) {
        for (std::size_t r = 0; r < br; ++r) std::copy(p.row(r), p.row(r) + bc, dp.row(r));
        multiply_inplace(dp, z);
        p_used = dp;
      }
      if (part.dk_dv)
        gemm(p_used, Op::transpose, do_i, Op::none, g.dv.block(j0, 0, bc, Dv), 1.0f, 1.0f);
      // dP = (dO_i V_jᵀ) ⊙ Z : [Br, Dv] x [Dv, Bc]
      gemm(do_i, Op::none, v_j, Op::transpose, dp);
      if (dropped) multiply_inplace(dp, z);
      // dS = P ⊙ (dP − δ_i), in place in dp
      softmax_tile_backward(p, delta.data() + i0, dp);
      // dQ_i += scale · dS K_j : [Br, Bc] x [Bc, Dh]
      // dK_j += scale · dSᵀ Q_i : [Bc, Br] x [Br, Dh]
      if (part.dq) gemm(dp, Op::none, k_j, Op::none, dq_i, terms.scale, 1.0f);
      if (part.dk_dv)
        gemm(dp, Op::transpose, q_i, Op::none, g.dk.block(j0, 0, bc, Dh), terms.scale, 1.0f);
    }
  }
}

}  // namespace xenc::kernels

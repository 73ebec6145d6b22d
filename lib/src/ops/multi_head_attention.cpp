// Multi-head attention on [B, T, D] tensors: the packed in-projection and the heads' attention.
// The per-head work (two GEMMs around a row softmax) is the kernel in lib/src/kernels/.
#include "xenc/ops/multi_head_attention.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"
#include "xenc/ops/dropout.hpp"

namespace xenc {

void AttentionPosition::transform_qk(Tensor3&, Tensor3&, std::size_t) const {}
void AttentionPosition::transform_qk_backward(Tensor3&, Tensor3&, std::size_t) const {}
Tensor2 AttentionPosition::score_bias(std::size_t, std::size_t, std::size_t, std::size_t) const {
  return Tensor2();
}
float AttentionPosition::distance_bias_slope(std::size_t, std::size_t) const { return 0.0f; }
RelativeAttentionParameters& AttentionPosition::relative_attention() const {
  throw std::logic_error("AttentionPosition::relative_attention: this scheme has none");
}

namespace {

// Rows i·D .. (i+1)·D of in_proj_weight: W_q (i = 0), W_k (1) or W_v (2), as a [D, D] view.
kernels::ConstMatView weight_block(const Tensor2& w, std::size_t i) {
  const std::size_t D = w.shape(1);
  return kernels::as_matrix(w).block(i * D, 0, D, D);
}

void check_in_projection(const char* where, const Tensor3& query, const Tensor3& key,
                         const Tensor3& value, const Tensor2& w) {
  const std::size_t D = w.shape(1);
  check_shape(where, "in_proj_weight", w, {long(3 * D), long(D)}, [&] {
    return std::string("[3D, D] with D = " + std::to_string(D) + " (its second dimension)");
  });
  check_shape(where, "query", query, {any_dim, any_dim, long(D)},
              [&] { return std::string("[B, Tq, D] with D = " + std::to_string(D)); });
  const long B = long(query.shape(0));
  check_shape(where, "key", key, {B, any_dim, long(D)}, [&] {
    return std::string("[B, Tk, D] with B = " + std::to_string(B) + ", D = " + std::to_string(D));
  });
  check_shape(where, "value", value, {B, long(key.shape(1)), long(D)},
              [&] { return std::string("key's shape " + shape_str(key.shape())); });
}

}  // namespace

const AttentionPosition& no_attention_position() {
  static const AttentionPosition none;
  return none;
}

Projections in_projection_forward(const Tensor3& query, const Tensor3& key, const Tensor3& value,
                                  const Tensor2& in_proj_weight, const Tensor1& in_proj_bias) {
  const char* where = "in_projection_forward";
  check_in_projection(where, query, key, value, in_proj_weight);
  const std::size_t D = in_proj_weight.shape(1);
  if (in_proj_bias.size() != 0)
    check_shape(where, "in_proj_bias", in_proj_bias, {long(3 * D)},
                [&] { return std::string("[3D] with D = " + std::to_string(D)); });
  // x W_iᵀ + b_i for (x, i) = (query, 0), (key, 1), (value, 2): a linear layer on a block, the
  // three as one region of the pool when they are split (kernels::linear_rows_many)
  Projections p{Tensor3::from_shape(query.shape()), Tensor3::from_shape(key.shape()),
                Tensor3::from_shape(value.shape())};
  const auto job = [&](const Tensor3& x, std::size_t i, Tensor3& y) {
    return kernels::LinearRowsJob{kernels::as_matrix(x), weight_block(in_proj_weight, i),
                                  kernels::as_vector(in_proj_bias).block(i * D, D),
                                  kernels::as_matrix(y)};
  };
  kernels::linear_rows_many({job(query, 0, p.q), job(key, 1, p.k), job(value, 2, p.v)});
  return p;
}

namespace {

// Checks for the backward: the gradients' shapes and the buffers' shapes.
void check_in_projection_grads(const char* where, const Projections& grads, const Tensor3& query,
                               const Tensor3& key, const Tensor3& value, const Tensor2& w,
                               const Tensor2& w_grad, const Tensor1& b_grad) {
  check_in_projection(where, query, key, value, w);
  const auto same = [&](const char* arg, const Tensor3& g, const Tensor3& x, const char* name) {
    check_shape(where, arg, g, {long(x.shape(0)), long(x.shape(1)), long(x.shape(2))},
                [&] { return std::string(name) + "'s shape " + shape_str(x.shape()); });
  };
  same("grads.q", grads.q, query, "query");
  same("grads.k", grads.k, key, "key");
  same("grads.v", grads.v, value, "value");
  const std::size_t D = w.shape(1);
  check_shape(where, "in_proj_weight_grad", w_grad, {long(3 * D), long(D)},
              [&] { return "in_proj_weight's shape " + shape_str(w.shape()); });
  if (b_grad.size() != 0)
    check_shape(where, "in_proj_bias_grad", b_grad, {long(3 * D)},
                [&] { return std::string("[3D] with D = " + std::to_string(D)); });
}

}  // namespace

InProjectionGrads in_projection_backward(const Projections& grads, const Tensor3& query,
                                         const Tensor3& key, const Tensor3& value,
                                         const Tensor2& in_proj_weight,
                                         Tensor2& in_proj_weight_grad, Tensor1& in_proj_bias_grad,
                                         bool self_attention) {
  const char* where = "in_projection_backward";
  check_in_projection_grads(where, grads, query, key, value, in_proj_weight, in_proj_weight_grad,
                            in_proj_bias_grad);
  if (self_attention)
    check_shape(where, "key", key, std::vector<long>(query.shape().begin(), query.shape().end()),
                "query's shape " + shape_str(query.shape()) + " (self_attention: one x)");
  InProjectionGrads g;
  g.query = Tensor3::from_shape(query.shape());
  if (!self_attention) {
    g.key = Tensor3::from_shape(key.shape());
    g.value = Tensor3::from_shape(value.shape());
  }
  const std::size_t D = in_proj_weight.shape(1);
  const kernels::ConstMatView dy[3] = {kernels::as_matrix(grads.q), kernels::as_matrix(grads.k),
                                       kernels::as_matrix(grads.v)};
  const kernels::ConstMatView x[3] = {kernels::as_matrix(query),
                                      kernels::as_matrix(self_attention ? query : key),
                                      kernels::as_matrix(self_attention ? query : value)};
  const auto term = [&](std::size_t i, bool add) {  // dx_i (+)= dy_i W_i
    return kernels::GemmTerm{dy[i], kernels::Op::none, weight_block(in_proj_weight, i),
                             kernels::Op::none, add ? 1.0f : 0.0f};
  };
  // the backward of a linear layer on each block, dx = dy W_i, dW_i += dy_iᵀ x, db_i += Σ dy_i,
  // with the GEMMs of all three as one region of the pool (kernels::gemm_many). Self-attention
  // has one x: dx = dq W_q + dk W_k + dv W_v, in that order, into one buffer.
  std::vector<kernels::GemmSum> sums;
  if (self_attention) {
    sums.push_back({kernels::as_matrix(g.query), {term(0, false), term(1, true), term(2, true)}});
  } else {
    sums.push_back({kernels::as_matrix(g.query), {term(0, false)}});
    sums.push_back({kernels::as_matrix(g.key), {term(1, false)}});
    sums.push_back({kernels::as_matrix(g.value), {term(2, false)}});
  }
  for (std::size_t i = 0; i < 3; ++i)
    sums.push_back({kernels::as_matrix(in_proj_weight_grad).block(i * D, 0, D, D),
                    {{dy[i], kernels::Op::transpose, x[i], kernels::Op::none, 1.0f}}});
  kernels::gemm_many(sums);
  if (in_proj_bias_grad.size() != 0)
    for (std::size_t i = 0; i < 3; ++i)
      kernels::column_sums(dy[i], kernels::as_vector(in_proj_bias_grad).block(i * D, D), true);
  return g;
}

namespace {

struct Dims {
  std::size_t B, Tq, Tk, D, H, Dh;
};

Dims check_attention(const char* where, const Tensor3& q, const Tensor3& k, const Tensor3& v,
                     const AttentionInputs& in) {
  const std::size_t D = q.shape(2), H = in.num_heads;
  if (H == 0 || D % H != 0)
    throw config_error(std::string(where) + ": embed_dim (" + std::to_string(D) +
                       ") must be divisible by num_heads (" + std::to_string(H) + ")");
  const Dims d{q.shape(0), q.shape(1), k.shape(1), D, H, D / H};
  check_shape(where, "k", k, {long(d.B), any_dim, long(D)}, [&] {
    return std::string("[B, Tk, D] with B = " + std::to_string(d.B) + ", D = " + std::to_string(D));
  });
  check_shape(where, "v", v, {long(d.B), long(d.Tk), long(D)},
              [&] { return std::string("k's shape " + shape_str(k.shape())); });
  if (in.key_padding_mask.size() != 0)
    check_shape(where, "key_padding_mask", in.key_padding_mask, {long(d.B), long(d.Tk)}, [&] {
      return std::string("[B, Tk] with B = " + std::to_string(d.B) +
                         ", Tk = " + std::to_string(d.Tk));
    });
  if (in.attn_mask.size() != 0)
    check_shape(where, "attn_mask", in.attn_mask, {long(d.Tq), long(d.Tk)}, [&] {
      return std::string("[Tq, Tk] with Tq = " + std::to_string(d.Tq) +
                         ", Tk = " + std::to_string(d.Tk));
    });
  if (in.dropout_mask.size() != 0)
    check_shape(where, "dropout_mask", in.dropout_mask,
                {long(d.B), long(H), long(d.Tq), long(d.Tk)}, [&] {
                  return std::string("[B, H, Tq, Tk] = " +
                                     shape_str(std::vector<std::size_t>{d.B, H, d.Tq, d.Tk}));
                });
  return d;
}

// Head h of batch b: rows b·T .. (b+1)·T, columns h·Dh .. (h+1)·Dh of a [B·T, D] matrix.
template <class M>
M head_of(M m, std::size_t b, std::size_t T, std::size_t h, std::size_t Dh) {
  return m.block(b * T, h * Dh, T, Dh);
}

// What the position scheme adds to head h's scores: nothing, ALiBi's −slope·|i − j| (computed
// by the kernel), or a [Tq, Tk] tensor.
struct HeadBias {
  float slope = 0.0f;
  Tensor2 tensor;
};
std::vector<HeadBias> score_biases(const AttentionPosition& position, const Dims& d) {
  std::vector<HeadBias> biases;
  if (!position.has_score_bias()) return biases;
  for (std::size_t h = 0; h < d.H; ++h) {
    HeadBias b;
    b.slope = position.distance_bias_slope(h, d.H);
    if (b.slope == 0.0f) {
      b.tensor = position.score_bias(h, d.H, d.Tq, d.Tk);
      check_shape("AttentionPosition::score_bias", "result", b.tensor, {long(d.Tq), long(d.Tk)},
                  "[Tq, Tk] with Tq = " + std::to_string(d.Tq) + ", Tk = " + std::to_string(d.Tk));
    }
    biases.push_back(std::move(b));
  }
  return biases;
}

// Head (b, h)'s dropout: its slice of the [B, H, Tq, Tk] factors, or its stream of the
// counter-based generator, or none.
kernels::HeadDropout head_dropout(const AttentionInputs& in, const Dims& d, std::size_t b,
                                  std::size_t h) {
  if (in.dropout_mask.size() != 0) return kernels::as_matrix(in.dropout_mask, b, h);
  if (in.dropout.p > 0.0f) return kernels::DropoutKey{in.dropout.p, in.dropout.seed, b * d.H + h};
  return {};
}

void check_dropout(const char* where, const AttentionInputs& in) {
  check_config(in.dropout.p >= 0.0f && in.dropout.p < 1.0f, where,
               "dropout.p is " + std::to_string(in.dropout.p) + ", expected 0 <= p < 1");
  check_config(in.dropout.p == 0.0f || in.dropout_mask.size() == 0, where,
               "dropout_mask and dropout (p = " + std::to_string(in.dropout.p) +
                   ") are both given; pass one");
}

// ---- The work items, on the pool ---------------------------------------------------------
//
// Every function below runs its items with kernels::parallel_for on `threads` threads; an item
// writes rows no other item writes. Scratch is per worker (allocated once per call), so no item
// allocates or locks.

// Head (b, h)'s score terms for query rows i0 .. i0+rows: the masks' and bias's rows, ALiBi's
// slope and the global index of the first row.
kernels::ScoreTerms score_terms(const AttentionInputs& in, const HeadBias& bias, const Dims& d,
                                std::size_t b, std::size_t i0, std::size_t rows) {
  return {kernels::attention_scale(d.Dh),
          kernels::row_of(in.key_padding_mask, b),
          in.attn_mask.size() ? kernels::as_matrix(in.attn_mask).block(i0, 0, rows, d.Tk)
                              : kernels::ConstMatView{},
          bias.tensor.size() ? kernels::as_matrix(bias.tensor).block(i0, 0, rows, d.Tk)
                             : kernels::ConstMatView{},
          bias.slope,
          i0};
}

const HeadBias& bias_of(const std::vector<HeadBias>& biases, std::size_t h) {
  static const HeadBias no_bias;
  return biases.empty() ? no_bias : biases[h];
}

// How the threads share the work.
struct Split {
  std::size_t threads = 1;
  std::size_t query_block;     // query rows per forward item and per backward dQ item
  bool by_key_blocks = false;  // the tiled backward in two passes
  std::size_t key_block = 0;   // key rows per backward dK, dV item (plain; tiled by key blocks)
};

// Item → (b, h, block) for B·H·blocks items, blocks fastest.
struct ItemAt {
  std::size_t b, h, block;
};
ItemAt item_at(std::size_t item, std::size_t H, std::size_t blocks) {
  return {item / (H * blocks), (item / blocks) % H, item % blocks};
}

std::size_t blocks_of(std::size_t n, std::size_t block) { return (n + block - 1) / block; }

// Plain forward: items (b, h, query block); P rows into `probs` (kept) or a worker's scratch.
// `storage`: a [B, H, Tq, Tk] tensor the kept P may be written into (every element is written),
// or empty.
MultiHeadAttentionResult plain_forward(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                       const AttentionInputs& in, bool keep_weights, const Dims& d,
                                       const Split& split, Tensor4 storage = Tensor4()) {
  const std::vector<HeadBias> biases = score_biases(in.position, d);
  const bool dropped = in.dropout_mask.size() != 0 || in.dropout.p > 0.0f;
  const std::size_t qb = std::min(split.query_block, d.Tq), blocks = blocks_of(d.Tq, qb);
  const std::size_t items = d.B * d.H * blocks;
  const std::size_t workers = std::max<std::size_t>(1, std::min(split.threads, items));
  MultiHeadAttentionResult r;
  r.output = Tensor3::from_shape({d.B, d.Tq, d.D});
  const std::array<std::size_t, 4> p_shape{d.B, d.H, d.Tq, d.Tk};
  Tensor4 probs;
  if (keep_weights)
    probs = storage.shape() == p_shape ? std::move(storage) : Tensor4::from_shape(p_shape);
  // per worker: P rows (inference), P ⊙ dropout rows, drawn factors
  const auto buffers = [&](bool needed) {
    return std::vector<Tensor2>(needed ? workers : 0, Tensor2::from_shape({qb, d.Tk}));
  };
  std::vector<Tensor2> p_buf = buffers(!keep_weights), scratch = buffers(dropped),
                       drawn = buffers(in.dropout.p > 0.0f);
  const auto qm = kernels::as_matrix(q), km = kernels::as_matrix(k), vm = kernels::as_matrix(v);
  const auto om = kernels::as_matrix(r.output);
  kernels::parallel_for(items, split.threads, [&](std::size_t item, std::size_t w) {
    const ItemAt at = item_at(item, d.H, blocks);
    const std::size_t i0 = at.block * qb, rows = std::min(qb, d.Tq - i0);
    const kernels::HeadInputs head{head_of(qm, at.b, d.Tq, at.h, d.Dh).block(i0, 0, rows, d.Dh),
                                   head_of(km, at.b, d.Tk, at.h, d.Dh),
                                   head_of(vm, at.b, d.Tk, at.h, d.Dh)};
    const auto p = keep_weights ? kernels::as_matrix(probs, at.b, at.h).block(i0, 0, rows, d.Tk)
                                : kernels::as_matrix(p_buf[w]).block(0, 0, rows, d.Tk);
    kernels::ConstMatView factors;
    if (in.dropout_mask.size() != 0) {
      factors = kernels::as_matrix(in.dropout_mask, at.b, at.h).block(i0, 0, rows, d.Tk);
    } else if (in.dropout.p > 0.0f) {
      const auto z = kernels::as_matrix(drawn[w]).block(0, 0, rows, d.Tk);
      kernels::dropout_factors({in.dropout.p, in.dropout.seed, at.b * d.H + at.h}, i0, 0, z);
      factors = z;
    }
    kernels::attention_head_forward(
        head, score_terms(in, bias_of(biases, at.h), d, at.b, i0, rows), p, factors,
        dropped ? kernels::as_matrix(scratch[w]).block(0, 0, rows, d.Tk) : kernels::MatView{},
        head_of(om, at.b, d.Tq, at.h, d.Dh).block(i0, 0, rows, d.Dh));
  });
  r.weights = std::move(probs);
  return r;
}

// Plain backward in two passes of independent items, fixed by the sizes (the split), never by
// the thread count, so that every thread count gives the same bits:
//   1. items (b, h, query block): dP, dS for the block's rows, then its rows of dQ and its share
//      of dK, scale · dSᵀ Q_rows (block 0 writes into dK, block n > 0 into part n of `dk_parts`);
//   2. items (b, h, key block): the block's rows of dV = (P ⊙ Z)ᵀ dO, and of dK += the parts
//      1, 2, ... in that order (a sum whose order is the blocks', whoever ran them).
// With one query block (small sizes) this is the head's backward of attention_head_backward.
MultiHeadAttentionGrads plain_backward(const Tensor3& grad_output, const Tensor3& q,
                                       const Tensor3& k, const Tensor3& v, const Tensor4& weights,
                                       const AttentionInputs& in, const Dims& d,
                                       const Split& split) {
  MultiHeadAttentionGrads g;
  g.q = Tensor3::from_shape(q.shape());
  g.k = Tensor3::from_shape(k.shape());
  g.v = Tensor3::from_shape(v.shape());
  const std::size_t qb = std::min(split.query_block, d.Tq), q_blocks = blocks_of(d.Tq, qb);
  const std::size_t kb = std::min(split.key_block ? split.key_block : d.Tk, d.Tk),
                    k_blocks = blocks_of(d.Tk, kb);
  const std::size_t heads = d.B * d.H;
  const std::size_t workers =
      std::max<std::size_t>(1, std::min(split.threads, heads * std::max(q_blocks, k_blocks)));
  const bool mask = in.dropout_mask.size() != 0, drawn = in.dropout.p > 0.0f;
  // per worker: dP / dS rows, drawn factors of those rows; P ⊙ Z and drawn factors of key columns
  std::vector<Tensor2> rows_scratch(workers, Tensor2::from_shape({qb, d.Tk}));
  std::vector<Tensor2> rows_drawn(drawn ? workers : 0, Tensor2::from_shape({qb, d.Tk}));
  std::vector<Tensor2> cols_scratch(mask || drawn ? workers : 0, Tensor2::from_shape({d.Tq, kb}));
  std::vector<Tensor2> cols_drawn(drawn ? workers : 0, Tensor2::from_shape({d.Tq, kb}));
  // dK's shares of query blocks 1 .. q_blocks − 1, per head: [heads · (q_blocks − 1), Tk, Dh]
  Tensor3 dk_parts = Tensor3::from_shape({heads * (q_blocks - 1), d.Tk, d.Dh});
  const auto qm = kernels::as_matrix(q), km = kernels::as_matrix(k), vm = kernels::as_matrix(v);
  const auto dom = kernels::as_matrix(grad_output);
  const auto dqm = kernels::as_matrix(g.q), dkm = kernels::as_matrix(g.k),
             dvm = kernels::as_matrix(g.v);
  const float scale = kernels::attention_scale(d.Dh);
  const auto partm = kernels::as_matrix(dk_parts);
  const auto part_of = [&](std::size_t b, std::size_t h, std::size_t block) {
    return partm.block(((b * d.H + h) * (q_blocks - 1) + block - 1) * d.Tk, 0, d.Tk, d.Dh);
  };
  kernels::parallel_for(heads * q_blocks, split.threads, [&](std::size_t item, std::size_t w) {
    const ItemAt at = item_at(item, d.H, q_blocks);
    const std::size_t i0 = at.block * qb, rows = std::min(qb, d.Tq - i0);
    kernels::ConstMatView factors;
    if (mask) {
      factors = kernels::as_matrix(in.dropout_mask, at.b, at.h).block(i0, 0, rows, d.Tk);
    } else if (drawn) {
      const auto z = kernels::as_matrix(rows_drawn[w]).block(0, 0, rows, d.Tk);
      kernels::dropout_factors({in.dropout.p, in.dropout.seed, at.b * d.H + at.h}, i0, 0, z);
      factors = z;
    }
    kernels::attention_rows_backward(
        {head_of(qm, at.b, d.Tq, at.h, d.Dh).block(i0, 0, rows, d.Dh),
         head_of(km, at.b, d.Tk, at.h, d.Dh), head_of(vm, at.b, d.Tk, at.h, d.Dh)},
        scale, kernels::as_matrix(weights, at.b, at.h).block(i0, 0, rows, d.Tk), factors,
        head_of(dom, at.b, d.Tq, at.h, d.Dh).block(i0, 0, rows, d.Dh),
        kernels::as_matrix(rows_scratch[w]).block(0, 0, rows, d.Tk),
        head_of(dqm, at.b, d.Tq, at.h, d.Dh).block(i0, 0, rows, d.Dh),
        at.block == 0 ? head_of(dkm, at.b, d.Tk, at.h, d.Dh) : part_of(at.b, at.h, at.block));
  });
  kernels::parallel_for(heads * k_blocks, split.threads, [&](std::size_t item, std::size_t w) {
    const ItemAt at = item_at(item, d.H, k_blocks);
    const std::size_t j0 = at.block * kb, cols = std::min(kb, d.Tk - j0);
    kernels::ConstMatView factors;
    if (mask) {
      factors = kernels::as_matrix(in.dropout_mask, at.b, at.h).block(0, j0, d.Tq, cols);
    } else if (drawn) {
      const auto z = kernels::as_matrix(cols_drawn[w]).block(0, 0, d.Tq, cols);
      kernels::dropout_factors({in.dropout.p, in.dropout.seed, at.b * d.H + at.h}, 0, j0, z);
      factors = z;
    }
    kernels::attention_values_backward(
        kernels::as_matrix(weights, at.b, at.h).block(0, j0, d.Tq, cols), factors,
        head_of(dom, at.b, d.Tq, at.h, d.Dh),
        cols_scratch.empty() ? kernels::MatView{}
                             : kernels::as_matrix(cols_scratch[w]).block(0, 0, d.Tq, cols),
        head_of(dvm, at.b, d.Tk, at.h, d.Dh).block(j0, 0, cols, d.Dh));
    const auto dk = head_of(dkm, at.b, d.Tk, at.h, d.Dh).block(j0, 0, cols, d.Dh);
    for (std::size_t block = 1; block < q_blocks; ++block)
      kernels::add_into(part_of(at.b, at.h, block).block(j0, 0, cols, d.Dh), dk);
  });
  return g;
}

// Head (b, h)'s dropout for query rows from i0: its mask's rows, or its key (rows counted from
// score_terms' first_row), or none.
kernels::HeadDropout block_dropout(const AttentionInputs& in, const Dims& d, std::size_t b,
                                   std::size_t h, std::size_t i0, std::size_t rows) {
  if (in.dropout_mask.size() != 0)
    return kernels::as_matrix(in.dropout_mask, b, h).block(i0, 0, rows, d.Tk);
  return head_dropout(in, d, b, h);
}

// Tiled forward: items (b, h, query block); each block is an independent run of the kernel.
TiledAttentionResult tiled_forward(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                                   const AttentionInputs& in, const Dims& d, const Split& split) {
  const std::vector<HeadBias> biases = score_biases(in.position, d);
  const std::size_t qb = std::min(split.query_block, d.Tq), blocks = blocks_of(d.Tq, qb);
  TiledAttentionResult r;
  r.output = Tensor3::from_shape({d.B, d.Tq, d.D});
  r.lse = Tensor3::from_shape({d.B, d.H, d.Tq});
  const auto qm = kernels::as_matrix(q), km = kernels::as_matrix(k), vm = kernels::as_matrix(v);
  const auto om = kernels::as_matrix(r.output);
  kernels::parallel_for(d.B * d.H * blocks, split.threads, [&](std::size_t item, std::size_t) {
    const ItemAt at = item_at(item, d.H, blocks);
    const std::size_t i0 = at.block * qb, rows = std::min(qb, d.Tq - i0);
    kernels::attention_head_forward_tiled(
        {head_of(qm, at.b, d.Tq, at.h, d.Dh).block(i0, 0, rows, d.Dh),
         head_of(km, at.b, d.Tk, at.h, d.Dh), head_of(vm, at.b, d.Tk, at.h, d.Dh)},
        score_terms(in, bias_of(biases, at.h), d, at.b, i0, rows),
        block_dropout(in, d, at.b, at.h, i0, rows),
        head_of(om, at.b, d.Tq, at.h, d.Dh).block(i0, 0, rows, d.Dh),
        kernels::as_vector(r.lse).block((at.b * d.H + at.h) * d.Tq + i0, rows));
  });
  return r;
}

// Tiled backward: items (b, h), or (b, h, key block) for dK, dV then (b, h, query block) for dQ.
MultiHeadAttentionGrads tiled_backward(const Tensor3& grad_output, const Tensor3& q,
                                       const Tensor3& k, const Tensor3& v,
                                       const TiledAttentionResult& saved, const AttentionInputs& in,
                                       const Dims& d, const Split& split) {
  const std::vector<HeadBias> biases = score_biases(in.position, d);
  MultiHeadAttentionGrads g;
  g.q = Tensor3::from_shape(q.shape());
  g.k = Tensor3::from_shape(k.shape());
  g.v = Tensor3::from_shape(v.shape());
  const auto qm = kernels::as_matrix(q), km = kernels::as_matrix(k), vm = kernels::as_matrix(v);
  const auto dom = kernels::as_matrix(grad_output), om = kernels::as_matrix(saved.output);
  const auto dqm = kernels::as_matrix(g.q), dkm = kernels::as_matrix(g.k),
             dvm = kernels::as_matrix(g.v);
  // a part of head (b, h)'s backward (the whole head by default)
  const auto run = [&](std::size_t b, std::size_t h, const kernels::TiledBackwardPart& part) {
    const std::size_t item = b * d.H + h;
    kernels::attention_head_backward_tiled(
        {head_of(qm, b, d.Tq, h, d.Dh), head_of(km, b, d.Tk, h, d.Dh),
         head_of(vm, b, d.Tk, h, d.Dh)},
        score_terms(in, bias_of(biases, h), d, b, 0, d.Tq),
        {head_of(om, b, d.Tq, h, d.Dh), kernels::as_vector(saved.lse).block(item * d.Tq, d.Tq),
         head_dropout(in, d, b, h)},
        head_of(dom, b, d.Tq, h, d.Dh),
        {head_of(dqm, b, d.Tq, h, d.Dh), head_of(dkm, b, d.Tk, h, d.Dh),
         head_of(dvm, b, d.Tk, h, d.Dh)},
        {}, part);
  };
  if (!split.by_key_blocks) {
    kernels::parallel_for(d.B * d.H, split.threads,
                          [&](std::size_t item, std::size_t) { run(item / d.H, item % d.H, {}); });
    return g;
  }
  // dK, dV: every query against a block of keys; then dQ: a block of queries against every key
  const std::size_t kb = split.key_block, k_blocks = blocks_of(d.Tk, kb);
  kernels::parallel_for(d.B * d.H * k_blocks, split.threads, [&](std::size_t item, std::size_t) {
    const ItemAt at = item_at(item, d.H, k_blocks);
    kernels::TiledBackwardPart part;
    part.k0 = at.block * kb;
    part.k1 = part.k0 + kb;
    part.dq = false;
    run(at.b, at.h, part);
  });
  // dQ blocks of whole query tiles: the tiles, and so the bits, of the whole head's backward
  const std::size_t q_tile = kernels::TileSizes{}.queries;
  const std::size_t qb = std::min((split.query_block + q_tile - 1) / q_tile * q_tile, d.Tq),
                    q_blocks = blocks_of(d.Tq, qb);
  kernels::parallel_for(d.B * d.H * q_blocks, split.threads, [&](std::size_t item, std::size_t) {
    const ItemAt at = item_at(item, d.H, q_blocks);
    kernels::TiledBackwardPart part;
    part.q0 = at.block * qb;
    part.q1 = part.q0 + qb;
    part.dk_dv = false;
    run(at.b, at.h, part);
  });
  return g;
}

// Rows per block when n rows are cut into `parts` blocks of 64 rows or more (a multiple of 64).
std::size_t block_rows(std::size_t n, std::size_t parts) {
  const std::size_t rows = (n + parts - 1) / parts;
  return std::max<std::size_t>(1, std::min(n, std::max<std::size_t>(64, (rows + 63) / 64 * 64)));
}

// The split for sizes d on `budget` threads (AttentionPlan's rules, in one place). The work
// items are cut from the sizes alone, for kAttentionDesignThreads threads (4 items per thread
// there, in blocks of 64 rows or more), whatever the budget: the same items run on 1 thread or
// on 16, so every thread count gives the same bits (the plain backward sums dK's shares in the
// blocks' order). Only the tiled backward's two passes depend on the budget: they cost 7 tile
// GEMMs instead of 5, and run the whole head's tiles (key blocks of whole key tiles, dQ blocks
// of whole query tiles) in the same order (dK_j, dV_j over the query tiles, dQ_i over the key
// tiles), so they give its bits.
Split split_for(const Dims& d, bool tiled, std::size_t budget,
                std::size_t threaded_from = kThreadedAttentionMinWork) {
  Split s;
  const std::size_t work = d.B * d.H * d.Tq * d.Tk * d.Dh;
  const bool threaded = work >= threaded_from;
  s.threads = threaded ? std::max<std::size_t>(1, budget) : 1;
  s.query_block = std::max<std::size_t>(d.Tq, 1);
  s.key_block = std::max<std::size_t>(d.Tk, 1);
  if (!threaded) return s;
  const std::size_t heads = d.B * d.H, want = 4 * kAttentionDesignThreads;
  const std::size_t per_head = (want + heads - 1) / heads;
  s.query_block = block_rows(d.Tq, per_head);
  s.key_block = block_rows(d.Tk, per_head);
  // tiled backward: by key blocks when whole heads are fewer than 4 per thread of the budget;
  // a key block is whole key tiles (and a dQ block whole query tiles: tiled_backward), so that
  // each tile's GEMMs have the shapes of the whole head's, and the same bits
  const std::size_t key_tile = kernels::TileSizes{}.keys;
  if (tiled) {
    s.key_block = (s.key_block + key_tile - 1) / key_tile * key_tile;
    s.by_key_blocks = s.threads > 1 && heads < 4 * s.threads && d.Tk > s.key_block;
    if (!s.by_key_blocks) s.key_block = std::max<std::size_t>(d.Tk, 1);
  }
  return s;
}

}  // namespace

MultiHeadAttentionResult multi_head_attention_forward(const Tensor3& q, const Tensor3& k,
                                                      const Tensor3& v, const AttentionInputs& in,
                                                      bool keep_weights) {
  const Dims d = check_attention("multi_head_attention_forward", q, k, v, in);
  check_dropout("multi_head_attention_forward", in);
  return plain_forward(q, k, v, in, keep_weights, d, split_for(d, false, kernels::thread_budget()));
}

MultiHeadAttentionGrads multi_head_attention_backward(const Tensor3& grad_output, const Tensor3& q,
                                                      const Tensor3& k, const Tensor3& v,
                                                      const Tensor4& weights,
                                                      const AttentionInputs& in) {
  const char* where = "multi_head_attention_backward";
  const Dims d = check_attention(where, q, k, v, in);
  check_shape(where, "grad_output", grad_output, {long(d.B), long(d.Tq), long(d.D)},
              "q's shape " + shape_str(q.shape()));
  check_shape(where, "weights", weights, {long(d.B), long(d.H), long(d.Tq), long(d.Tk)},
              "[B, H, Tq, Tk] = " + shape_str(std::vector<std::size_t>{d.B, d.H, d.Tq, d.Tk}));
  check_dropout(where, in);
  return plain_backward(grad_output, q, k, v, weights, in, d,
                        split_for(d, false, kernels::thread_budget()));
}

bool attention_uses_tiles(AttentionPath path, std::size_t Tq, std::size_t Tk, bool need_weights) {
  if (need_weights || path == AttentionPath::plain) return false;
  return path == AttentionPath::tiled || Tq * Tk >= kTiledAttentionMinScores;
}

Tensor4 attention_dropout_mask(const AttentionDropout& dropout, std::size_t B, std::size_t H,
                               std::size_t Tq, std::size_t Tk) {
  check_config(dropout.p >= 0.0f && dropout.p < 1.0f, "attention_dropout_mask",
               "dropout.p is " + std::to_string(dropout.p) + ", expected 0 <= p < 1");
  Tensor4 mask = Tensor4::from_shape({B, H, Tq, Tk});
  if (mask.size() != 0)
    kernels::dropout_heads({dropout.p, dropout.seed, 0}, Tq, kernels::as_matrix(mask));
  return mask;
}

TiledAttentionResult multi_head_attention_forward_tiled(const Tensor3& q, const Tensor3& k,
                                                        const Tensor3& v,
                                                        const AttentionInputs& in) {
  const Dims d = check_attention("multi_head_attention_forward_tiled", q, k, v, in);
  check_dropout("multi_head_attention_forward_tiled", in);
  return tiled_forward(q, k, v, in, d, split_for(d, true, kernels::thread_budget()));
}

namespace {
void check_tiled_saved(const char* where, const Tensor3& grad_output, const Tensor3& q,
                       const TiledAttentionResult& saved, const Dims& d) {
  check_shape(where, "grad_output", grad_output, {long(d.B), long(d.Tq), long(d.D)},
              "q's shape " + shape_str(q.shape()));
  check_shape(where, "saved.output", saved.output, {long(d.B), long(d.Tq), long(d.D)},
              "q's shape " + shape_str(q.shape()));
  check_shape(where, "saved.lse", saved.lse, {long(d.B), long(d.H), long(d.Tq)},
              "[B, H, Tq] = " + shape_str(std::vector<std::size_t>{d.B, d.H, d.Tq}));
}
}  // namespace

MultiHeadAttentionGrads multi_head_attention_backward_tiled(const Tensor3& grad_output,
                                                            const Tensor3& q, const Tensor3& k,
                                                            const Tensor3& v,
                                                            const TiledAttentionResult& saved,
                                                            const AttentionInputs& in) {
  const char* where = "multi_head_attention_backward_tiled";
  const Dims d = check_attention(where, q, k, v, in);
  check_tiled_saved(where, grad_output, q, saved, d);
  check_dropout(where, in);
  return tiled_backward(grad_output, q, k, v, saved, in, d,
                        split_for(d, true, kernels::thread_budget()));
}

// ---- The plan ------------------------------------------------------------------------------

std::size_t AttentionPlan::forward_items() const {
  return shape.batch * shape.heads * ((shape.queries + query_block - 1) / query_block);
}

AttentionPlan plan_attention(const AttentionShape& shape, bool need_weights, float dropout,
                             AttentionPath path, std::size_t thread_budget,
                             std::size_t threaded_from) {
  const char* where = "plan_attention";
  check_config(dropout >= 0.0f && dropout < 1.0f, where,
               "dropout is " + std::to_string(dropout) + ", expected 0 <= dropout < 1");
  check_config(shape.heads > 0 && shape.head_dim > 0, where,
               "heads (" + std::to_string(shape.heads) + ") and head_dim (" +
                   std::to_string(shape.head_dim) + ") must be > 0");
  const bool tiled = attention_uses_tiles(path, shape.queries, shape.keys, need_weights);
  const Dims d{shape.batch, shape.queries, shape.keys, shape.heads * shape.head_dim,
               shape.heads, shape.head_dim};
  const Split s =
      split_for(d, tiled, thread_budget ? thread_budget : kernels::thread_budget(), threaded_from);
  AttentionPlan plan;
  plan.shape = shape;
  plan.path = tiled ? AttentionPath::tiled : AttentionPath::plain;
  plan.need_weights = need_weights;
  plan.dropout = dropout;
  plan.threads = s.threads;
  plan.query_block = s.query_block;
  plan.backward_by_key_blocks = s.by_key_blocks;
  plan.key_block = s.key_block;
  return plan;
}

// The two functions that run a plan; AttentionSaved's friend.
struct AttentionOp {
  static Split split_of(const AttentionPlan& p) {
    return {p.threads, std::max<std::size_t>(p.query_block, 1), p.backward_by_key_blocks,
            p.key_block};
  }

  static AttentionForward forward(const AttentionPlan& plan, const Tensor3& q, const Tensor3& k,
                                  const Tensor3& v, const Mask2& key_padding_mask,
                                  const Tensor2& attn_mask, const AttentionPosition& position,
                                  Rng& rng, bool save, AttentionSaved& recycle) {
    const char* where = "attention_forward";
    const AttentionShape& sh = plan.shape;
    check_shape(where, "q", q, {long(sh.batch), long(sh.queries), long(sh.heads * sh.head_dim)},
                "the plan's [B, Tq, H·Dh] = " + shape_str(std::vector<std::size_t>{
                                                    sh.batch, sh.queries, sh.heads * sh.head_dim}));
    check_shape(where, "k", k, {long(sh.batch), long(sh.keys), long(sh.heads * sh.head_dim)},
                "the plan's [B, Tk, H·Dh] = " +
                    shape_str(std::vector<std::size_t>{sh.batch, sh.keys, sh.heads * sh.head_dim}));
    const bool tiled = plan.path == AttentionPath::tiled;
    // the dropout: one seed; both paths draw its factors block by block where they use them,
    // and the backward draws them again (no [B, H, Tq, Tk] mask is written or kept)
    const AttentionDropout seed =
        plan.dropout > 0.0f ? draw_dropout_seed(plan.dropout, rng) : AttentionDropout{};
    const Tensor4 no_mask;
    const AttentionInputs in{sh.heads, key_padding_mask, attn_mask, no_mask, position, seed};
    const Dims d = check_attention(where, q, k, v, in);
    // P's buffer, from the recycled state when it has one of this shape: its pages are mapped
    // already (at T = 2048, 128 MiB that glibc would otherwise map, fault in and unmap again)
    Tensor4 storage;
    if (save) {
      storage = std::move(recycle.probs_);
      recycle = AttentionSaved();
    }
    AttentionForward r;
    if (tiled) {
      TiledAttentionResult t = tiled_forward(q, k, v, in, d, split_of(plan));
      r.output = save ? t.output : std::move(t.output);
      if (save) {
        r.saved.tiles_ = std::move(t);
        r.saved.key_padding_mask_ = key_padding_mask;
        r.saved.attn_mask_ = attn_mask;
      }
    } else {
      MultiHeadAttentionResult m = plain_forward(q, k, v, in, save || plan.need_weights, d,
                                                 split_of(plan), std::move(storage));
      r.output = std::move(m.output);
      if (save) {
        if (plan.need_weights) r.weights = m.weights;
        r.saved.probs_ = std::move(m.weights);
      } else if (plan.need_weights) {
        r.weights = std::move(m.weights);
      }
    }
    r.saved.valid_ = save;
    r.saved.plan_ = plan;
    r.saved.seed_ = save ? seed : AttentionDropout{};
    return r;
  }

  static MultiHeadAttentionGrads backward(const Tensor3& grad_output, const Tensor3& q,
                                          const Tensor3& k, const Tensor3& v,
                                          const AttentionSaved& saved,
                                          const AttentionPosition& position) {
    const char* where = "attention_backward";
    if (!saved.valid_)
      throw std::logic_error(std::string(where) +
                             ": the saved state is empty (its forward ran with save = false, or a "
                             "later forward took it as recycle)");
    const AttentionPlan& plan = saved.plan_;
    const Tensor4 no_mask;
    const AttentionInputs in{plan.shape.heads, saved.key_padding_mask_,
                             saved.attn_mask_, no_mask,
                             position,         saved.seed_};
    const Dims d = check_attention(where, q, k, v, in);
    check_shape(where, "q", q,
                {long(plan.shape.batch), long(plan.shape.queries),
                 long(plan.shape.heads * plan.shape.head_dim)},
                "the forward's q shape");
    if (plan.path == AttentionPath::tiled) {
      check_tiled_saved(where, grad_output, q, saved.tiles_, d);
      return tiled_backward(grad_output, q, k, v, saved.tiles_, in, d, split_of(plan));
    }
    check_shape(where, "grad_output", grad_output, {long(d.B), long(d.Tq), long(d.D)},
                "q's shape " + shape_str(q.shape()));
    return plain_backward(grad_output, q, k, v, saved.probs_, in, d, split_of(plan));
  }
};

AttentionForward attention_forward(const AttentionPlan& plan, const Tensor3& q, const Tensor3& k,
                                   const Tensor3& v, const Mask2& key_padding_mask,
                                   const Tensor2& attn_mask, const AttentionPosition& position,
                                   Rng& dropout_rng, bool save, AttentionSaved& recycle) {
  return AttentionOp::forward(plan, q, k, v, key_padding_mask, attn_mask, position, dropout_rng,
                              save, recycle);
}

AttentionForward attention_forward(const AttentionPlan& plan, const Tensor3& q, const Tensor3& k,
                                   const Tensor3& v, const Mask2& key_padding_mask,
                                   const Tensor2& attn_mask, const AttentionPosition& position,
                                   Rng& dropout_rng, bool save) {
  AttentionSaved nothing;
  return AttentionOp::forward(plan, q, k, v, key_padding_mask, attn_mask, position, dropout_rng,
                              save, nothing);
}

MultiHeadAttentionGrads attention_backward(const Tensor3& grad_output, const Tensor3& q,
                                           const Tensor3& k, const Tensor3& v,
                                           const AttentionSaved& saved,
                                           const AttentionPosition& position) {
  return AttentionOp::backward(grad_output, q, k, v, saved, position);
}

}  // namespace xenc

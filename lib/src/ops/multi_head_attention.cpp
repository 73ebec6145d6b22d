// Multi-head attention on [B, T, D] tensors: the packed in-projection and the heads' attention.
// The per-head work (two GEMMs around a row softmax) is the kernel in lib/src/kernels/.
#include "xenc/ops/multi_head_attention.hpp"

#include <string>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

void AttentionPosition::transform_qk(Tensor3&, Tensor3&, std::size_t) const {}
void AttentionPosition::transform_qk_backward(Tensor3&, Tensor3&, std::size_t) const {}
Tensor2 AttentionPosition::score_bias(std::size_t, std::size_t, std::size_t, std::size_t) const {
  return Tensor2();
}
float AttentionPosition::distance_bias_slope(std::size_t, std::size_t) const { return 0.0f; }

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
  // x W_iᵀ + b_i for (x, i) = (query, 0), (key, 1), (value, 2): a linear layer on a block
  const auto project = [&](const Tensor3& x, std::size_t i) {
    Tensor3 y = Tensor3::from_shape(x.shape());
    kernels::linear_rows(kernels::as_matrix(x), weight_block(in_proj_weight, i),
                         kernels::as_vector(in_proj_bias).block(i * D, D), kernels::as_matrix(y));
    return y;
  };
  return {project(query, 0), project(key, 1), project(value, 2)};
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

// Block i of the in-projection backward: dx (+)= dy W_i, dW_i += dy_iᵀ x, db_i += Σ dy_i.
void in_projection_block_backward(std::size_t i, const Tensor3& dy, const Tensor3& x,
                                  const Tensor2& w, Tensor2& w_grad, Tensor1& b_grad, Tensor3& dx,
                                  bool add_to_dx) {
  const std::size_t D = w.shape(1);
  kernels::linear_rows_backward(
      kernels::as_matrix(dy), kernels::as_matrix(x), weight_block(w, i),
      {kernels::as_matrix(dx), kernels::as_matrix(w_grad).block(i * D, 0, D, D),
       kernels::as_vector(b_grad).block(i * D, D), true, add_to_dx});
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
  if (self_attention) {
    // dx = dq W_q, then += dk W_k, += dv W_v (beta = 1): no three buffers to add up afterwards
    in_projection_block_backward(0, grads.q, query, in_proj_weight, in_proj_weight_grad,
                                 in_proj_bias_grad, g.query, false);
    in_projection_block_backward(1, grads.k, query, in_proj_weight, in_proj_weight_grad,
                                 in_proj_bias_grad, g.query, true);
    in_projection_block_backward(2, grads.v, query, in_proj_weight, in_proj_weight_grad,
                                 in_proj_bias_grad, g.query, true);
    return g;
  }
  // the backward of a linear layer on each block: dx = dy W_i, dW_i += dyᵀ x, db_i += Σ dy
  g.key = Tensor3::from_shape(key.shape());
  g.value = Tensor3::from_shape(value.shape());
  in_projection_block_backward(0, grads.q, query, in_proj_weight, in_proj_weight_grad,
                               in_proj_bias_grad, g.query, false);
  in_projection_block_backward(1, grads.k, key, in_proj_weight, in_proj_weight_grad,
                               in_proj_bias_grad, g.key, false);
  in_projection_block_backward(2, grads.v, value, in_proj_weight, in_proj_weight_grad,
                               in_proj_bias_grad, g.value, false);
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

// The plain kernels take factors: head (b, h)'s slice of the mask, or its factors drawn from
// in.dropout into `drawn` [Tq, Tk] (the same factors the tiled path draws tile by tile).
kernels::ConstMatView plain_dropout(const AttentionInputs& in, const Dims& d, std::size_t b,
                                    std::size_t h, Tensor2& drawn) {
  const kernels::HeadDropout hd = head_dropout(in, d, b, h);
  if (!hd.factors.empty() || !hd.active()) return hd.factors;
  kernels::dropout_factors(hd.key, 0, 0, kernels::as_matrix(drawn));
  return kernels::as_matrix(drawn);
}

void check_dropout(const char* where, const AttentionInputs& in) {
  check_config(in.dropout.p >= 0.0f && in.dropout.p < 1.0f, where,
               "dropout.p is " + std::to_string(in.dropout.p) + ", expected 0 <= p < 1");
  check_config(in.dropout.p == 0.0f || in.dropout_mask.size() == 0, where,
               "dropout_mask and dropout (p = " + std::to_string(in.dropout.p) +
                   ") are both given; pass one");
}

}  // namespace

MultiHeadAttentionResult multi_head_attention_forward(const Tensor3& q, const Tensor3& k,
                                                      const Tensor3& v, const AttentionInputs& in,
                                                      bool keep_weights) {
  const Dims d = check_attention("multi_head_attention_forward", q, k, v, in);
  check_dropout("multi_head_attention_forward", in);
  const std::vector<HeadBias> biases = score_biases(in.position, d);
  const bool dropped = in.dropout_mask.size() != 0 || in.dropout.p > 0.0f;
  // factors drawn from in.dropout, one head at a time (a mask tensor is read in place)
  Tensor2 drawn = in.dropout.p > 0.0f ? Tensor2::from_shape({d.Tq, d.Tk}) : Tensor2();
  MultiHeadAttentionResult r;
  r.output = Tensor3::from_shape({d.B, d.Tq, d.D});
  // P for every head when kept (backward, need_weights), else one [Tq, Tk] buffer reused.
  Tensor4 probs = Tensor4::from_shape({keep_weights ? d.B : 1, keep_weights ? d.H : 1, d.Tq, d.Tk});
  Tensor2 scratch = dropped ? Tensor2::from_shape({d.Tq, d.Tk}) : Tensor2();
  const auto qm = kernels::as_matrix(q), km = kernels::as_matrix(k), vm = kernels::as_matrix(v);
  const auto om = kernels::as_matrix(r.output);
  // Heads run one after another; OpenBLAS's threads split each GEMM inside (bench/README.md,
  // "Two threads": whole heads on threads of our own measured slower).
  const HeadBias no_bias;
  for (std::size_t b = 0; b < d.B; ++b) {
    for (std::size_t h = 0; h < d.H; ++h) {
      const kernels::HeadInputs head{head_of(qm, b, d.Tq, h, d.Dh), head_of(km, b, d.Tk, h, d.Dh),
                                     head_of(vm, b, d.Tk, h, d.Dh)};
      const HeadBias& bias = biases.empty() ? no_bias : biases[h];
      const kernels::ScoreTerms terms{
          kernels::attention_scale(d.Dh), kernels::row_of(in.key_padding_mask, b),
          in.attn_mask.size() ? kernels::as_matrix(in.attn_mask) : kernels::ConstMatView{},
          bias.tensor.size() ? kernels::as_matrix(bias.tensor) : kernels::ConstMatView{},
          bias.slope};
      const auto p = kernels::as_matrix(probs, keep_weights ? b : 0, keep_weights ? h : 0);
      const auto out = head_of(om, b, d.Tq, h, d.Dh);
      kernels::attention_head_forward(head, terms, p, plain_dropout(in, d, b, h, drawn),
                                      dropped ? kernels::as_matrix(scratch) : kernels::MatView{},
                                      out);
    }
  }
  if (keep_weights) r.weights = std::move(probs);
  return r;
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
  MultiHeadAttentionGrads g;
  g.q = Tensor3::from_shape(q.shape());
  g.k = Tensor3::from_shape(k.shape());
  g.v = Tensor3::from_shape(v.shape());
  Tensor2 scratch = Tensor2::from_shape({d.Tq, d.Tk});
  Tensor2 drawn = in.dropout.p > 0.0f ? Tensor2::from_shape({d.Tq, d.Tk}) : Tensor2();
  const auto qm = kernels::as_matrix(q), km = kernels::as_matrix(k), vm = kernels::as_matrix(v);
  const auto dom = kernels::as_matrix(grad_output);
  const auto dqm = kernels::as_matrix(g.q), dkm = kernels::as_matrix(g.k),
             dvm = kernels::as_matrix(g.v);
  const float scale = kernels::attention_scale(d.Dh);
  for (std::size_t b = 0; b < d.B; ++b) {
    for (std::size_t h = 0; h < d.H; ++h) {
      kernels::attention_head_backward(
          {head_of(qm, b, d.Tq, h, d.Dh), head_of(km, b, d.Tk, h, d.Dh),
           head_of(vm, b, d.Tk, h, d.Dh)},
          scale, kernels::as_matrix(weights, b, h), plain_dropout(in, d, b, h, drawn),
          head_of(dom, b, d.Tq, h, d.Dh), kernels::as_matrix(scratch),
          {head_of(dqm, b, d.Tq, h, d.Dh), head_of(dkm, b, d.Tk, h, d.Dh),
           head_of(dvm, b, d.Tk, h, d.Dh)});
    }
  }
  return g;
}

}  // namespace xenc

// ---- Attention in tiles --------------------------------------------------------------------

namespace xenc {

bool attention_uses_tiles(AttentionPath path, std::size_t Tq, std::size_t Tk, bool need_weights) {
  if (need_weights || path == AttentionPath::plain) return false;
  return path == AttentionPath::tiled || Tq * Tk >= kTiledAttentionMinScores;
}

namespace {

// The kernel's view of head (b, h): its q, k, v slices, its score terms and its dropout.
struct TiledHead {
  kernels::HeadInputs in;
  kernels::ScoreTerms terms;
  kernels::HeadDropout dropout;
};
TiledHead tiled_head(const Tensor3& q, const Tensor3& k, const Tensor3& v,
                     const AttentionInputs& in, const std::vector<HeadBias>& biases, const Dims& d,
                     std::size_t b, std::size_t h) {
  const auto qm = kernels::as_matrix(q), km = kernels::as_matrix(k), vm = kernels::as_matrix(v);
  static const HeadBias no_bias;
  const HeadBias& bias = biases.empty() ? no_bias : biases[h];
  return {
      {head_of(qm, b, d.Tq, h, d.Dh), head_of(km, b, d.Tk, h, d.Dh), head_of(vm, b, d.Tk, h, d.Dh)},
      {kernels::attention_scale(d.Dh), kernels::row_of(in.key_padding_mask, b),
       in.attn_mask.size() ? kernels::as_matrix(in.attn_mask) : kernels::ConstMatView{},
       bias.tensor.size() ? kernels::as_matrix(bias.tensor) : kernels::ConstMatView{}, bias.slope},
      head_dropout(in, d, b, h)};
}

}  // namespace

Tensor4 attention_dropout_mask(const AttentionDropout& dropout, std::size_t B, std::size_t H,
                               std::size_t Tq, std::size_t Tk) {
  check_config(dropout.p >= 0.0f && dropout.p < 1.0f, "attention_dropout_mask",
               "dropout.p is " + std::to_string(dropout.p) + ", expected 0 <= p < 1");
  Tensor4 mask = Tensor4::from_shape({B, H, Tq, Tk});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      kernels::dropout_factors({dropout.p, dropout.seed, b * H + h}, 0, 0,
                               kernels::as_matrix(mask, b, h));
  return mask;
}

TiledAttentionResult multi_head_attention_forward_tiled(const Tensor3& q, const Tensor3& k,
                                                        const Tensor3& v,
                                                        const AttentionInputs& in) {
  const Dims d = check_attention("multi_head_attention_forward_tiled", q, k, v, in);
  check_dropout("multi_head_attention_forward_tiled", in);
  const std::vector<HeadBias> biases = score_biases(in.position, d);
  TiledAttentionResult r;
  r.output = Tensor3::from_shape({d.B, d.Tq, d.D});
  r.lse = Tensor3::from_shape({d.B, d.H, d.Tq});
  const auto om = kernels::as_matrix(r.output);
  // one item per (batch, head): heads write disjoint columns of the output
  kernels::parallel_for(d.B * d.H, [&](std::size_t item) {
    const std::size_t b = item / d.H, h = item % d.H;
    const TiledHead head = tiled_head(q, k, v, in, biases, d, b, h);
    kernels::attention_head_forward_tiled(head.in, head.terms, head.dropout,
                                          head_of(om, b, d.Tq, h, d.Dh),
                                          kernels::as_vector(r.lse).block(item * d.Tq, d.Tq));
  });
  return r;
}

MultiHeadAttentionGrads multi_head_attention_backward_tiled(const Tensor3& grad_output,
                                                            const Tensor3& q, const Tensor3& k,
                                                            const Tensor3& v,
                                                            const TiledAttentionResult& saved,
                                                            const AttentionInputs& in) {
  const char* where = "multi_head_attention_backward_tiled";
  const Dims d = check_attention(where, q, k, v, in);
  check_shape(where, "grad_output", grad_output, {long(d.B), long(d.Tq), long(d.D)},
              "q's shape " + shape_str(q.shape()));
  check_shape(where, "saved.output", saved.output, {long(d.B), long(d.Tq), long(d.D)},
              "q's shape " + shape_str(q.shape()));
  check_shape(where, "saved.lse", saved.lse, {long(d.B), long(d.H), long(d.Tq)},
              "[B, H, Tq] = " + shape_str(std::vector<std::size_t>{d.B, d.H, d.Tq}));
  check_dropout(where, in);
  const std::vector<HeadBias> biases = score_biases(in.position, d);
  MultiHeadAttentionGrads g;
  g.q = Tensor3::from_shape(q.shape());
  g.k = Tensor3::from_shape(k.shape());
  g.v = Tensor3::from_shape(v.shape());
  const auto dom = kernels::as_matrix(grad_output), om = kernels::as_matrix(saved.output);
  const auto dqm = kernels::as_matrix(g.q), dkm = kernels::as_matrix(g.k),
             dvm = kernels::as_matrix(g.v);
  kernels::parallel_for(d.B * d.H, [&](std::size_t item) {
    const std::size_t b = item / d.H, h = item % d.H;
    const TiledHead head = tiled_head(q, k, v, in, biases, d, b, h);
    kernels::attention_head_backward_tiled(
        head.in, head.terms,
        {head_of(om, b, d.Tq, h, d.Dh), kernels::as_vector(saved.lse).block(item * d.Tq, d.Tq),
         head.dropout},
        head_of(dom, b, d.Tq, h, d.Dh),
        {head_of(dqm, b, d.Tq, h, d.Dh), head_of(dkm, b, d.Tk, h, d.Dh),
         head_of(dvm, b, d.Tk, h, d.Dh)});
  });
  return g;
}

}  // namespace xenc

// Multi-head attention module: the packed input projection, the heads' attention (ops), and
// the output projection (a Linear). Backward runs the same three steps in reverse.
#include "xenc/nn/multihead_attention.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/ops/elementwise.hpp"

namespace xenc {

namespace {

// Validates the configuration before any member is built; returns embed_dim.
std::size_t checked_embed_dim(std::size_t embed_dim, std::size_t num_heads) {
  check_config(embed_dim > 0 && num_heads > 0, "MultiheadAttention",
               "embed_dim (" + std::to_string(embed_dim) + ") and num_heads (" +
                   std::to_string(num_heads) + ") must be > 0");
  check_config(embed_dim % num_heads == 0, "MultiheadAttention",
               "embed_dim (" + std::to_string(embed_dim) + ") must be divisible by num_heads (" +
                   std::to_string(num_heads) + ")");
  return embed_dim;
}

}  // namespace

MultiheadAttention::MultiheadAttention(std::size_t embed_dim, std::size_t num_heads, Rng& rng,
                                       float dropout, bool bias)
    : out_proj(checked_embed_dim(embed_dim, num_heads), embed_dim, rng, bias),
      dropout(dropout),
      embed_dim_(embed_dim),
      num_heads_(num_heads),
      dropout_rng_(rng.next_u32()) {
  check_config(dropout >= 0.0f && dropout < 1.0f, "MultiheadAttention",
               "dropout is " + std::to_string(dropout) + ", expected 0 <= dropout < 1");
  // PyTorch: xavier_uniform_ on in_proj_weight: U(-a, a), a = √(6 / (fan_in + fan_out))
  const float a = std::sqrt(6.0f / static_cast<float>(embed_dim + 3 * embed_dim));  // scalar
  in_proj_weight = Tensor2::from_shape({3 * embed_dim, embed_dim});
  fill_uniform(in_proj_weight, rng, -a, a);
  if (bias) {
    // PyTorch sets both in_proj_bias and out_proj.bias to zero
    in_proj_bias = xt::zeros<float>({3 * embed_dim});
    out_proj.bias.fill(0.0f);
  }
}

MultiheadAttention::MultiheadAttention(std::size_t embed_dim, std::size_t num_heads, float dropout,
                                       bool bias, std::uint32_t seed)
    : MultiheadAttention(embed_dim, num_heads, as_lvalue(Rng(seed)), dropout, bias) {}

Tensor3 MultiheadAttention::forward(const Tensor3& x, const Mask2& key_padding_mask,
                                    const Tensor2& attn_mask, Tensor4* weights) {
  auto r = forward_impl(x, x, x, true, key_padding_mask, weights != nullptr, attn_mask);
  if (weights) *weights = std::move(r.weights);
  return std::move(r.output);
}

MultiheadAttentionOutput MultiheadAttention::forward(const Tensor3& query, const Tensor3& key,
                                                     const Tensor3& value,
                                                     const Mask2& key_padding_mask,
                                                     bool need_weights, const Tensor2& attn_mask) {
  return forward_impl(query, key, value, false, key_padding_mask, need_weights, attn_mask);
}

RelativeAttentionSaved MultiheadAttention::relative_attention_step(
    const Projections& qkv, const Mask2& key_padding_mask, const Tensor2& attn_mask,
    const RelativeAttentionParameters& rel, AttentionForward& heads) {
  const std::size_t B = qkv.q.shape(0), T = qkv.q.shape(1), H = num_heads_;
  // The attention dropout as a [B, H, T, T] mask, drawn from a seed of this module's generator
  Tensor4 drop;
  if (training_ && dropout > 0.0f)
    drop = attention_dropout_mask(draw_dropout_seed(dropout, dropout_rng_), B, H, T, T);
  // R: the sinusoids at the distances i − j (or the randomized scheme's sample of them)
  const std::vector<double> distances =
      rel.distances.empty() ? relative_distances(T) : rel.distances;
  if (distances.size() != 2 * T - 1)
    throw shape_error("MultiheadAttention.forward: the relative scheme holds " +
                      std::to_string(distances.size()) + " distances, expected 2T − 1 = " +
                      std::to_string(2 * T - 1) + " (T = " + std::to_string(T) + ")");
  const AttentionInputs in{H, key_padding_mask, attn_mask, drop};
  RelativeAttentionResult r = relative_attention_forward(qkv.q, qkv.k, qkv.v, in, rel,
                                                         relative_sinusoids(distances, embed_dim_));
  heads.output = std::move(r.output);
  heads.weights = r.saved.probs;
  if (!GradMode::is_enabled()) return {};
  return std::move(r.saved);
}

MultiheadAttentionOutput MultiheadAttention::forward_impl(const Tensor3& query, const Tensor3& key,
                                                          const Tensor3& value, bool self,
                                                          const Mask2& key_padding_mask,
                                                          bool need_weights,
                                                          const Tensor2& attn_mask) {
  const char* where = "MultiheadAttention.forward";
  const std::size_t D = embed_dim_, H = num_heads_;
  check_shape(where, "query", query, {any_dim, any_dim, long(D)}, [&] {
    return std::string("[B, T, D] with D = " + std::to_string(D) + " (embed_dim)");
  });
  const std::size_t B = query.shape(0), Tq = query.shape(1);
  check_shape(where, "key", key, {long(B), any_dim, long(D)}, [&] {
    return std::string("[B, Tk, D] with B = " + std::to_string(B) + ", D = " + std::to_string(D));
  });
  const std::size_t Tk = key.shape(1);
  check_shape(where, "value", value, {long(B), long(Tk), long(D)},
              [&] { return std::string("key's shape " + shape_str(key.shape())); });
  if (key_padding_mask.size() != 0)
    check_shape(where, "key_padding_mask", key_padding_mask, {long(B), long(Tk)}, [&] {
      return std::string("[B, T] with B = " + std::to_string(B) + ", T = " + std::to_string(Tk));
    });
  if (attn_mask.size() != 0)
    check_shape(where, "attn_mask", attn_mask, {long(Tq), long(Tk)}, [&] {
      return std::string("[T, T] with T = " + std::to_string(Tq) +
                         (Tq == Tk ? "" : ", Tk = " + std::to_string(Tk)));
    });
  const bool keep = GradMode::is_enabled();

  // 1. Projections: q, k, v = query W_qᵀ + b_q, key W_kᵀ + b_k, value W_vᵀ + b_v   [B, T, D]
  Projections qkv = in_projection_forward(query, key, value, in_proj_weight, in_proj_bias);
  // 2. A position scheme acting inside attention may rotate q and k by position.
  if (position_) position_->transform_qk(qkv.q, qkv.k, H);
  // 3. Attention, head h on columns h·Dh .. (h+1)·Dh: softmax(q_h k_hᵀ / √Dh + masks) v_h,
  //    the probabilities through dropout in training. How it runs (path, threads, dropout's
  //    form) is the op's plan, made from the sizes (ops/multi_head_attention.hpp).
  //    Transformer-XL's relative positions run their own op (ops/relative_attention.hpp).
  AttentionForward heads;
  RelativeAttentionSaved relative;
  if (attention_position().has_relative_attention()) {
    relative = relative_attention_step(qkv, key_padding_mask, attn_mask,
                                       attention_position().relative_attention(), heads);
    if (!need_weights) heads.weights = Tensor4();
  } else {
    const AttentionPlan plan =
        plan_attention({B, H, Tq, Tk, D / H}, need_weights, training_ ? dropout : 0.0f, path_);
    // the last forward's saved state lends its buffers: it is replaced below anyway
    heads = attention_forward(plan, qkv.q, qkv.k, qkv.v, key_padding_mask, attn_mask,
                              attention_position(), dropout_rng_, keep, cache_.saved);
  }
  // 4. Output projection: concat of heads [B, Tq, D] -> [B, Tq, D]
  MultiheadAttentionOutput result{out_proj.forward(heads.output), std::move(heads.weights)};

  cache_.valid = keep;
  if (keep) {
    cache_.self_attention = self;
    cache_.query = copy_of(query);
    cache_.key = self ? Tensor3() : copy_of(key);
    cache_.value = self ? Tensor3() : copy_of(value);
    cache_.qkv = std::move(qkv);
    cache_.saved = std::move(heads.saved);
    cache_.relative = std::move(relative);
  }
  return result;
}

Projections MultiheadAttention::projections_backward(const char* where,
                                                     const Tensor3& grad_output) {
  require_cache(cache_.valid, where);
  const Tensor3& q = cache_.qkv.q;
  check_shape(where, "grad_output", grad_output,
              {long(q.shape(0)), long(q.shape(1)), long(embed_dim_)},
              [&] { return "[B, T, D] = " + shape_str(q.shape()) + " (the forward output)"; });
  // 4'. Output projection (accumulates out_proj's gradients)
  Tensor3 d_heads = out_proj.backward(grad_output);
  // 3'. Attention: dq, dk, dv through every head, from what the forward saved
  MultiHeadAttentionGrads d;
  if (cache_.relative.valid) {
    if (!attention_position().has_relative_attention())
      throw std::logic_error(std::string(where) + ": the relative position scheme was removed");
    RelativeAttentionParameters& rel = attention_position().relative_attention();
    RelativeAttentionGrads g = relative_attention_backward(
        d_heads, cache_.qkv.q, cache_.qkv.k, cache_.qkv.v, cache_.relative, rel, num_heads_);
    relative_attention_accumulate(rel, g);
    d = {std::move(g.q), std::move(g.k), std::move(g.v)};
  } else {
    d = attention_backward(d_heads, cache_.qkv.q, cache_.qkv.k, cache_.qkv.v, cache_.saved,
                           attention_position());
  }
  // 2'. Back through the position transform of q and k
  if (position_) position_->transform_qk_backward(d.q, d.k, num_heads_);
  // gradient buffers are allocated by the first backward (core/parameter.hpp)
  ensure_grad(in_proj_weight_grad, in_proj_weight);
  if (in_proj_bias.size() != 0) ensure_grad(in_proj_bias_grad, in_proj_bias);
  return {std::move(d.q), std::move(d.k), std::move(d.v)};
}

MultiheadAttentionGrads MultiheadAttention::backward_qkv(const Tensor3& grad_output) {
  Projections d = projections_backward("MultiheadAttention.backward", grad_output);
  // 1'. Projections: parameter gradients accumulate in place (ParameterRef.grad points into
  //     in_proj_weight_grad), input gradients are returned
  const bool self = cache_.self_attention;
  const Tensor3& key = self ? cache_.query : cache_.key;
  const Tensor3& value = self ? cache_.query : cache_.value;
  auto g = in_projection_backward(d, cache_.query, key, value, in_proj_weight, in_proj_weight_grad,
                                  in_proj_bias_grad);
  return {std::move(g.query), std::move(g.key), std::move(g.value)};
}

Tensor3 MultiheadAttention::backward(const Tensor3& grad_output) {
  require_cache(cache_.valid, "MultiheadAttention.backward");
  if (cache_.query.shape(1) != cache_.qkv.k.shape(1))
    throw std::logic_error(
        "MultiheadAttention.backward: the last forward had different query and key lengths "
        "(Tq = " +
        std::to_string(cache_.query.shape(1)) + ", Tk = " + std::to_string(cache_.qkv.k.shape(1)) +
        "); use backward_qkv to get the three input gradients");
  if (!cache_.self_attention) {
    // dx = dquery + dkey + dvalue, as if the three inputs had been one tensor
    auto g = backward_qkv(grad_output);
    add_inplace(g.query, g.key);
    add_inplace(g.query, g.value);
    return std::move(g.query);
  }
  Projections d = projections_backward("MultiheadAttention.backward", grad_output);
  // 1'. Self-attention projects one x three times: dx = dq W_q + dk W_k + dv W_v
  const Tensor3& x = cache_.query;
  return in_projection_backward(d, x, x, x, in_proj_weight, in_proj_weight_grad, in_proj_bias_grad,
                                /*self_attention=*/true)
      .query;
}

void MultiheadAttention::collect_parameters(const std::string& prefix, ParameterList& out) {
  out.push_back(
      make_parameter(join_name(prefix, "in_proj_weight"), in_proj_weight, in_proj_weight_grad));
  if (in_proj_bias.size() != 0)
    out.push_back(
        make_parameter(join_name(prefix, "in_proj_bias"), in_proj_bias, in_proj_bias_grad));
  out_proj.collect_parameters(join_name(prefix, "out_proj"), out);
}

void MultiheadAttention::train(bool on) {
  training_ = on;
  out_proj.train(on);
}

}  // namespace xenc

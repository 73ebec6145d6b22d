// Multi-head attention: one packed input projection, the per-head attention kernel on strided
// slices of it (no [B, T, D] -> [B, H, T, Dh] copies), and the output projection.
#include "xenc/nn/multihead_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/ops/attention.hpp"
#include "xenc/ops/gemm.hpp"

namespace xenc {

namespace {

// out [N, D] = x [N, D] · W_blockᵀ + b_block, with W_block the D rows of in_proj_weight that
// start at row `first_row` (W_q, W_k or W_v: contiguous in the packed [3D, D] matrix).
void project(const float* x, std::size_t N, std::size_t D, const Tensor2& w, const Tensor1& b,
             std::size_t first_row, float* out) {
  if (b.size() != 0) {
    for (std::size_t n = 0; n < N; ++n)
      std::copy_n(b.data() + first_row, D, out + n * D);
  }
  gemm(false, true, N, D, D, 1.0f, x, D, w.data() + first_row * D, D, b.size() ? 1.0f : 0.0f,
       out, D);
}

// Validates the configuration before any member is built; returns embed_dim.
std::size_t checked_embed_dim(std::size_t embed_dim, std::size_t num_heads) {
  check_config(embed_dim > 0 && num_heads > 0, "MultiheadAttention",
               "embed_dim (" + std::to_string(embed_dim) + ") and num_heads (" +
                   std::to_string(num_heads) + ") must be > 0");
  check_config(embed_dim % num_heads == 0, "MultiheadAttention",
               "d_model (" + std::to_string(embed_dim) + ") must be divisible by nhead (" +
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
  const float a = std::sqrt(6.0f / static_cast<float>(embed_dim + 3 * embed_dim));
  in_proj_weight = Tensor2::from_shape({3 * embed_dim, embed_dim});
  fill_uniform(in_proj_weight, rng, -a, a);
  if (bias) {
    // PyTorch sets both in_proj_bias and out_proj.bias to zero
    in_proj_bias = xt::zeros<float>({3 * embed_dim});
    out_proj.bias.fill(0.0f);
  }
}

MultiheadAttention::MultiheadAttention(std::size_t embed_dim, std::size_t num_heads,
                                       float dropout, bool bias, std::uint32_t seed)
    : MultiheadAttention(embed_dim, num_heads, *std::make_unique<Rng>(seed), dropout, bias) {}

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
  const bool self = &query == &key && &key == &value;
  return forward_impl(query, key, value, self, key_padding_mask, need_weights, attn_mask);
}

MultiheadAttentionOutput MultiheadAttention::forward_impl(const Tensor3& query, const Tensor3& key,
                                                          const Tensor3& value, bool self,
                                                          const Mask2& key_padding_mask,
                                                          bool need_weights,
                                                          const Tensor2& attn_mask) {
  const char* where = "MultiheadAttention.forward";
  const std::size_t D = embed_dim_, H = num_heads_, Dh = D / H;
  check_shape(where, "query", query, {any_dim, any_dim, long(D)},
              "[B, T, D] with D = " + std::to_string(D));
  const std::size_t B = query.shape(0), Tq = query.shape(1);
  check_shape(where, "key", key, {long(B), any_dim, long(D)},
              "[B, Tk, D] with B = " + std::to_string(B) + ", D = " + std::to_string(D));
  const std::size_t Tk = key.shape(1);
  check_shape(where, "value", value, {long(B), long(Tk), long(D)},
              "key's shape " + shape_str(key.shape()));
  if (key_padding_mask.size() != 0)
    check_shape(where, "key_padding_mask", key_padding_mask, {long(B), long(Tk)},
                "[B, T] with B = " + std::to_string(B) + ", T = " + std::to_string(Tk));
  if (attn_mask.size() != 0)
    check_shape(where, "attn_mask", attn_mask, {long(Tq), long(Tk)},
                "[T, T] with T = " + std::to_string(Tq) + (Tq == Tk ? "" : ", Tk = " + std::to_string(Tk)));

  const bool keep = GradMode::is_enabled();
  const bool use_dropout = training_ && dropout > 0.0f;

  // 1. Projections. Self-attention: one GEMM [B·T, D] x [D, 3D] -> [B·T, 3D], so row n holds
  //    [q_n | k_n | v_n]. Otherwise three GEMMs into [q rows; k rows; v rows], each [., D].
  Tensor2 qkv;
  const float *q, *k, *v;
  std::size_t ld;
  if (self) {
    qkv = Tensor2::from_shape({B * Tq, 3 * D});
    if (in_proj_bias.size() != 0) {
      for (std::size_t n = 0; n < B * Tq; ++n)
        std::copy_n(in_proj_bias.data(), 3 * D, qkv.data() + n * 3 * D);
    }
    gemm(false, true, B * Tq, 3 * D, D, 1.0f, query.data(), D, in_proj_weight.data(), D,
         in_proj_bias.size() ? 1.0f : 0.0f, qkv.data(), 3 * D);
    q = qkv.data();
    k = q + D;
    v = q + 2 * D;
    ld = 3 * D;
  } else {
    qkv = Tensor2::from_shape({B * Tq + 2 * B * Tk, D});
    float* qp = qkv.data();
    float* kp = qp + B * Tq * D;
    float* vp = kp + B * Tk * D;
    project(query.data(), B * Tq, D, in_proj_weight, in_proj_bias, 0, qp);
    project(key.data(), B * Tk, D, in_proj_weight, in_proj_bias, D, kp);
    project(value.data(), B * Tk, D, in_proj_weight, in_proj_bias, 2 * D, vp);
    q = qp;
    k = kp;
    v = vp;
    ld = D;
  }
  const std::size_t q_batch = self ? Tq * ld : Tq * D;  // floats between batches
  const std::size_t kv_batch = self ? Tk * ld : Tk * D;

  // 2. Attention per (batch, head) on strided slices: head h is columns h·Dh .. (h+1)·Dh.
  //    P is kept for every head only when backward or the caller needs it; otherwise one
  //    [Tq, Tk] buffer is reused across heads.
  //    Threads: the heads run one after another, and OpenBLAS's threads (OPENBLAS_NUM_THREADS)
  //    split each GEMM inside. Running whole heads on threads of our own measured slower at
  //    2 threads: after each parallel GEMM, OpenBLAS's idle worker spin-waits for a while and
  //    takes the second core away from our thread (bench/README.md, "Two threads").
  const bool keep_probs = keep || need_weights;
  Tensor4 probs = keep_probs ? Tensor4::from_shape({B, H, Tq, Tk})
                             : Tensor4::from_shape({1, 1, Tq, Tk});
  Tensor4 drop_mask;
  Tensor2 scratch;  // [Tq, Tk]: P ⊙ dropout mask
  if (use_dropout) {
    drop_mask = Tensor4::from_shape({B, H, Tq, Tk});
    const float keep_scale = 1.0f / (1.0f - dropout);
    for (auto& m : drop_mask) m = dropout_rng_.uniform() >= dropout ? keep_scale : 0.0f;
    scratch = Tensor2::from_shape({Tq, Tk});
  }
  Tensor2 ctx = Tensor2::from_shape({B * Tq, D});  // concat of heads: [B·Tq, D]
  const float scale = 1.0f / std::sqrt(static_cast<float>(Dh));
  const float* mask_ptr = attn_mask.size() ? attn_mask.data() : nullptr;
  for (std::size_t b = 0; b < B; ++b) {
    const bool* kpm = key_padding_mask.size() ? key_padding_mask.data() + b * Tk : nullptr;
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t bh = b * H + h;
      float* p = probs.data() + (keep_probs ? bh * Tq * Tk : 0);
      attention_head_forward(Tq, Tk, Dh, scale, q + b * q_batch + h * Dh, ld,
                             k + b * kv_batch + h * Dh, ld, v + b * kv_batch + h * Dh, ld, kpm,
                             mask_ptr, p, ctx.data() + b * Tq * D + h * Dh, D,
                             use_dropout ? drop_mask.data() + bh * Tq * Tk : nullptr,
                             use_dropout ? scratch.data() : nullptr);
    }
  }

  // 3. Output projection: [B·Tq, D] x [D, D] -> [B, Tq, D]
  MultiheadAttentionOutput result;
  result.output = Tensor3::from_shape({B, Tq, D});
  if (out_proj.has_bias()) {
    for (std::size_t n = 0; n < B * Tq; ++n)
      std::copy_n(out_proj.bias.data(), D, result.output.data() + n * D);
  }
  gemm(false, true, B * Tq, D, D, 1.0f, ctx.data(), D, out_proj.weight.data(), D,
       out_proj.has_bias() ? 1.0f : 0.0f, result.output.data(), D);

  if (keep) {
    cache_.valid = true;
    cache_.self_attention = self;
    cache_.B = B;
    cache_.Tq = Tq;
    cache_.Tk = Tk;
    cache_.query = Tensor2::from_shape({B * Tq, D});
    std::copy_n(query.data(), query.size(), cache_.query.data());
    if (!self) {
      cache_.key = Tensor2::from_shape({B * Tk, D});
      std::copy_n(key.data(), key.size(), cache_.key.data());
      cache_.value = Tensor2::from_shape({B * Tk, D});
      std::copy_n(value.data(), value.size(), cache_.value.data());
    }
    cache_.qkv = std::move(qkv);
    cache_.dropout_mask = std::move(drop_mask);
    cache_ctx_ = std::move(ctx);
    if (need_weights) result.weights = probs;
    cache_.probs = std::move(probs);
  } else {
    cache_.valid = false;
    if (need_weights) result.weights = std::move(probs);
  }
  return result;
}

MultiheadAttentionGrads MultiheadAttention::backward_qkv(const Tensor3& grad_output) {
  require_cache(cache_.valid, "MultiheadAttention.backward");
  const std::size_t D = embed_dim_, H = num_heads_, Dh = D / H;
  const std::size_t B = cache_.B, Tq = cache_.Tq, Tk = cache_.Tk;
  check_shape("MultiheadAttention.backward", "grad_output", grad_output,
              {long(B), long(Tq), long(D)},
              "[B, T, D] = " + shape_str(std::vector<std::size_t>{B, Tq, D}) + " (the forward output)");
  const bool self = cache_.self_attention;
  const float* dy = grad_output.data();
  // gradient buffers are allocated by the first backward (core/parameter.hpp)
  ensure_grad(in_proj_weight_grad, in_proj_weight);
  if (in_proj_bias.size() > 0) ensure_grad(in_proj_bias_grad, in_proj_bias);
  ensure_grad(out_proj.weight_grad, out_proj.weight);
  if (out_proj.has_bias()) ensure_grad(out_proj.bias_grad, out_proj.bias);

  // 3'. Output projection: dW_out += dyᵀ ctx, db_out += Σ dy, dctx = dy W_out
  gemm(true, false, D, D, B * Tq, 1.0f, dy, D, cache_ctx_.data(), D, 1.0f,
       out_proj.weight_grad.data(), D);
  if (out_proj.has_bias()) {
    for (std::size_t n = 0; n < B * Tq; ++n)
      for (std::size_t d = 0; d < D; ++d) out_proj.bias_grad(d) += dy[n * D + d];
  }
  Tensor2 dctx = Tensor2::from_shape({B * Tq, D});
  gemm(false, false, B * Tq, D, D, 1.0f, dy, D, out_proj.weight.data(), D, 0.0f, dctx.data(), D);

  // 2'. Attention per (batch, head): d[q | k | v] in the same packed layout as the forward.
  Tensor2 dqkv = Tensor2::from_shape(cache_.qkv.shape());
  const std::size_t ld = self ? 3 * D : D;
  const float* q = cache_.qkv.data();
  const float* k = self ? q + D : q + B * Tq * D;
  const float* v = self ? q + 2 * D : k + B * Tk * D;
  float* dq = dqkv.data();
  float* dk = self ? dq + D : dq + B * Tq * D;
  float* dv = self ? dq + 2 * D : dk + B * Tk * D;
  const std::size_t q_batch = Tq * ld, kv_batch = Tk * ld;
  const float scale = 1.0f / std::sqrt(static_cast<float>(Dh));
  Tensor2 scratch = Tensor2::from_shape({Tq, Tk});
  const bool dropped = cache_.dropout_mask.size() != 0;
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t bh = b * H + h;
      attention_head_backward(Tq, Tk, Dh, scale, q + b * q_batch + h * Dh, ld,
                              k + b * kv_batch + h * Dh, ld, v + b * kv_batch + h * Dh, ld,
                              cache_.probs.data() + bh * Tq * Tk, dctx.data() + b * Tq * D + h * Dh,
                              D, scratch.data(), dq + b * q_batch + h * Dh, ld,
                              dk + b * kv_batch + h * Dh, ld, dv + b * kv_batch + h * Dh, ld,
                              dropped ? cache_.dropout_mask.data() + bh * Tq * Tk : nullptr);
    }
  }

  // 1'. Input projections: dW_in += dqkvᵀ x, db_in += Σ dqkv, dx = dqkv W_in
  MultiheadAttentionGrads g;
  if (self) {
    gemm(true, false, 3 * D, D, B * Tq, 1.0f, dqkv.data(), 3 * D, cache_.query.data(), D, 1.0f,
         in_proj_weight_grad.data(), D);
    if (in_proj_bias.size() != 0)
      for (std::size_t n = 0; n < B * Tq; ++n)
        for (std::size_t j = 0; j < 3 * D; ++j) in_proj_bias_grad(j) += dqkv(n, j);
    g.query = Tensor3::from_shape({B, Tq, D});
    gemm(false, false, B * Tq, D, 3 * D, 1.0f, dqkv.data(), 3 * D, in_proj_weight.data(), D,
         0.0f, g.query.data(), D);
    return g;
  }
  const Tensor2* inputs[3] = {&cache_.query, &cache_.key, &cache_.value};
  Tensor3* outs[3] = {&g.query, &g.key, &g.value};
  const float* dblocks[3] = {dq, dk, dv};
  for (std::size_t i = 0; i < 3; ++i) {
    const std::size_t N = inputs[i]->shape(0), T = i == 0 ? Tq : Tk;
    gemm(true, false, D, D, N, 1.0f, dblocks[i], D, inputs[i]->data(), D, 1.0f,
         in_proj_weight_grad.data() + i * D * D, D);
    if (in_proj_bias.size() != 0)
      for (std::size_t n = 0; n < N; ++n)
        for (std::size_t j = 0; j < D; ++j) in_proj_bias_grad(i * D + j) += dblocks[i][n * D + j];
    *outs[i] = Tensor3::from_shape({B, T, D});
    gemm(false, false, N, D, D, 1.0f, dblocks[i], D, in_proj_weight.data() + i * D * D, D, 0.0f,
         outs[i]->data(), D);
  }
  return g;
}

Tensor3 MultiheadAttention::backward(const Tensor3& grad_output) {
  require_cache(cache_.valid, "MultiheadAttention.backward");
  if (cache_.self_attention) return backward_qkv(grad_output).query;
  if (cache_.Tq != cache_.Tk)
    throw std::logic_error(
        "MultiheadAttention.backward: the last forward had different query and key lengths "
        "(Tq = " + std::to_string(cache_.Tq) + ", Tk = " + std::to_string(cache_.Tk) +
        "); use backward_qkv to get the three input gradients");
  auto g = backward_qkv(grad_output);
  g.query += g.key;
  g.query += g.value;
  return std::move(g.query);
}

void MultiheadAttention::collect_parameters(const std::string& prefix, ParameterList& out) {
  out.push_back(make_parameter(join_name(prefix, "in_proj_weight"), in_proj_weight, in_proj_weight_grad));
  if (in_proj_bias.size() != 0)
    out.push_back(make_parameter(join_name(prefix, "in_proj_bias"), in_proj_bias, in_proj_bias_grad));
  out_proj.collect_parameters(join_name(prefix, "out_proj"), out);
}

void MultiheadAttention::train(bool on) {
  training_ = on;
  out_proj.train(on);
}

}  // namespace xenc

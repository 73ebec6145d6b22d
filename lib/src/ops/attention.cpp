// Scaled dot-product attention: the per-head kernel (two GEMMs around a row softmax), the
// batched op on [B, H, T, Dh] tensors, and a loop-by-loop reference.
#include "xenc/ops/attention.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "xenc/core/error.hpp"
#include "xenc/ops/gemm.hpp"
#include "xenc/ops/softmax.hpp"

namespace xenc {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct Dims {
  std::size_t B, H, Tq, Tk, Dh;
};

Dims check_attention_args(const char* where, const Tensor4& q, const Tensor4& k, const Tensor4& v,
                          const Mask2& key_padding_mask, const Tensor2& attn_mask) {
  const Dims d{q.shape(0), q.shape(1), q.shape(2), k.shape(2), q.shape(3)};
  const std::string bhd = "with B = " + std::to_string(d.B) + ", H = " + std::to_string(d.H) +
                          ", Dh = " + std::to_string(d.Dh) + " (from query)";
  check_shape(where, "key", k, {long(d.B), long(d.H), any_dim, long(d.Dh)}, "[B, H, Tk, Dh] " + bhd);
  check_shape(where, "value", v, {long(d.B), long(d.H), long(d.Tk), long(d.Dh)},
              "[B, H, Tk, Dh] " + bhd + ", Tk = " + std::to_string(d.Tk) + " (from key)");
  if (key_padding_mask.size() != 0)
    check_shape(where, "key_padding_mask", key_padding_mask, {long(d.B), long(d.Tk)},
                "[B, Tk] with B = " + std::to_string(d.B) + ", Tk = " + std::to_string(d.Tk));
  if (attn_mask.size() != 0)
    check_shape(where, "attn_mask", attn_mask, {long(d.Tq), long(d.Tk)},
                "[Tq, Tk] with Tq = " + std::to_string(d.Tq) + ", Tk = " + std::to_string(d.Tk));
  return d;
}

}  // namespace

void attention_head_forward(std::size_t Tq, std::size_t Tk, std::size_t Dh, float scale,
                            const float* q, std::size_t ldq, const float* k, std::size_t ldk,
                            const float* v, std::size_t ldv, const bool* key_padding,
                            const float* attn_mask, float* probs, float* out, std::size_t ldo,
                            const float* dropout_mask, float* scratch) {
  // S = scale · Q Kᵀ : [Tq, Dh] x [Dh, Tk] -> [Tq, Tk]
  gemm(false, true, Tq, Tk, Dh, scale, q, ldq, k, ldk, 0.0f, probs, Tk);
  // S += attn_mask; S[:, j] = -inf for padded keys j
  if (attn_mask) {
    for (std::size_t i = 0; i < Tq * Tk; ++i) probs[i] += attn_mask[i];
  }
  if (key_padding) {
    for (std::size_t i = 0; i < Tq; ++i)
      for (std::size_t j = 0; j < Tk; ++j)
        if (key_padding[j]) probs[i * Tk + j] = kNegInf;
  }
  // P = softmax(S) over keys; fully masked rows become zeros
  softmax_rows_inplace(probs, Tq, Tk, Tk);
  // O = P V : [Tq, Tk] x [Tk, Dh] -> [Tq, Dh]   (P ⊙ dropout_mask in training)
  const float* p_used = probs;
  if (dropout_mask) {
    for (std::size_t i = 0; i < Tq * Tk; ++i) scratch[i] = probs[i] * dropout_mask[i];
    p_used = scratch;
  }
  gemm(false, false, Tq, Dh, Tk, 1.0f, p_used, Tk, v, ldv, 0.0f, out, ldo);
}

void attention_head_backward(std::size_t Tq, std::size_t Tk, std::size_t Dh, float scale,
                             const float* q, std::size_t ldq, const float* k, std::size_t ldk,
                             const float* v, std::size_t ldv, const float* probs,
                             const float* dout, std::size_t lddo, float* scratch, float* dq,
                             std::size_t lddq, float* dk, std::size_t lddk, float* dv,
                             std::size_t lddv, const float* dropout_mask) {
  // dV = P_usedᵀ dO : [Tk, Tq] x [Tq, Dh]   (P_used = P ⊙ dropout_mask in training)
  const float* p_used = probs;
  if (dropout_mask) {
    for (std::size_t i = 0; i < Tq * Tk; ++i) scratch[i] = probs[i] * dropout_mask[i];
    p_used = scratch;
  }
  gemm(true, false, Tk, Dh, Tq, 1.0f, p_used, Tk, dout, lddo, 0.0f, dv, lddv);
  // dP = dO Vᵀ : [Tq, Dh] x [Dh, Tk]   (then through the dropout mask)
  gemm(false, true, Tq, Tk, Dh, 1.0f, dout, lddo, v, ldv, 0.0f, scratch, Tk);
  if (dropout_mask) {
    for (std::size_t i = 0; i < Tq * Tk; ++i) scratch[i] *= dropout_mask[i];
  }
  // dS = P ⊙ (dP - rowsum(dP ⊙ P)), in place in scratch
  for (std::size_t i = 0; i < Tq; ++i) {
    const float* p = probs + i * Tk;
    float* ds = scratch + i * Tk;
    float dot = 0.0f;
    for (std::size_t j = 0; j < Tk; ++j) dot += ds[j] * p[j];
    for (std::size_t j = 0; j < Tk; ++j) ds[j] = p[j] * (ds[j] - dot);
  }
  // dQ = scale · dS K : [Tq, Tk] x [Tk, Dh];   dK = scale · dSᵀ Q : [Tk, Tq] x [Tq, Dh]
  gemm(false, false, Tq, Dh, Tk, scale, scratch, Tk, k, ldk, 0.0f, dq, lddq);
  gemm(true, false, Tk, Dh, Tq, scale, scratch, Tk, q, ldq, 0.0f, dk, lddk);
}

AttentionResult scaled_dot_product_attention_forward(const Tensor4& query, const Tensor4& key,
                                                     const Tensor4& value,
                                                     const Mask2& key_padding_mask,
                                                     const Tensor2& attn_mask) {
  const Dims d = check_attention_args("scaled_dot_product_attention_forward", query, key, value,
                                      key_padding_mask, attn_mask);
  AttentionResult r;
  r.output = Tensor4::from_shape({d.B, d.H, d.Tq, d.Dh});
  r.weights = Tensor4::from_shape({d.B, d.H, d.Tq, d.Tk});
  const float scale = 1.0f / std::sqrt(static_cast<float>(d.Dh));
  for (std::size_t b = 0; b < d.B; ++b) {
    const bool* kpm = key_padding_mask.size() ? key_padding_mask.data() + b * d.Tk : nullptr;
    for (std::size_t h = 0; h < d.H; ++h) {
      const std::size_t bh = b * d.H + h;
      attention_head_forward(d.Tq, d.Tk, d.Dh, scale, query.data() + bh * d.Tq * d.Dh, d.Dh,
                             key.data() + bh * d.Tk * d.Dh, d.Dh, value.data() + bh * d.Tk * d.Dh,
                             d.Dh, kpm, attn_mask.size() ? attn_mask.data() : nullptr,
                             r.weights.data() + bh * d.Tq * d.Tk,
                             r.output.data() + bh * d.Tq * d.Dh, d.Dh);
    }
  }
  return r;
}

AttentionGrads scaled_dot_product_attention_backward(const Tensor4& grad_output,
                                                     const Tensor4& query, const Tensor4& key,
                                                     const Tensor4& value, const Tensor4& weights) {
  const char* where = "scaled_dot_product_attention_backward";
  const Dims d = check_attention_args(where, query, key, value, Mask2(), Tensor2());
  check_shape(where, "grad_output", grad_output, {long(d.B), long(d.H), long(d.Tq), long(d.Dh)},
              "query's shape " + shape_str(query.shape()));
  check_shape(where, "weights", weights, {long(d.B), long(d.H), long(d.Tq), long(d.Tk)},
              "[B, H, Tq, Tk] = " + shape_str(std::vector<std::size_t>{d.B, d.H, d.Tq, d.Tk}));
  AttentionGrads g;
  g.query = Tensor4::from_shape(query.shape());
  g.key = Tensor4::from_shape(key.shape());
  g.value = Tensor4::from_shape(value.shape());
  Tensor2 scratch = Tensor2::from_shape({d.Tq, d.Tk});
  const float scale = 1.0f / std::sqrt(static_cast<float>(d.Dh));
  for (std::size_t bh = 0; bh < d.B * d.H; ++bh) {
    const std::size_t oq = bh * d.Tq * d.Dh, ok = bh * d.Tk * d.Dh;
    attention_head_backward(d.Tq, d.Tk, d.Dh, scale, query.data() + oq, d.Dh, key.data() + ok,
                            d.Dh, value.data() + ok, d.Dh, weights.data() + bh * d.Tq * d.Tk,
                            grad_output.data() + oq, d.Dh, scratch.data(), g.query.data() + oq,
                            d.Dh, g.key.data() + ok, d.Dh, g.value.data() + ok, d.Dh);
  }
  return g;
}

AttentionResult scaled_dot_product_attention_naive(const Tensor4& query, const Tensor4& key,
                                                   const Tensor4& value,
                                                   const Mask2& key_padding_mask,
                                                   const Tensor2& attn_mask) {
  const Dims d = check_attention_args("scaled_dot_product_attention_naive", query, key, value,
                                      key_padding_mask, attn_mask);
  AttentionResult r;
  r.output = xt::zeros<float>({d.B, d.H, d.Tq, d.Dh});
  r.weights = xt::zeros<float>({d.B, d.H, d.Tq, d.Tk});
  const double scale = 1.0 / std::sqrt(double(d.Dh));
  std::vector<double> s(d.Tk);
  for (std::size_t b = 0; b < d.B; ++b)
    for (std::size_t h = 0; h < d.H; ++h)
      for (std::size_t i = 0; i < d.Tq; ++i) {
        // scores for query i against every key j
        double m = -std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j < d.Tk; ++j) {
          double dot = 0.0;
          for (std::size_t e = 0; e < d.Dh; ++e) dot += double(query(b, h, i, e)) * key(b, h, j, e);
          s[j] = dot * scale + (attn_mask.size() ? attn_mask(i, j) : 0.0);
          if (key_padding_mask.size() && key_padding_mask(b, j))
            s[j] = -std::numeric_limits<double>::infinity();
          m = std::fmax(m, s[j]);
        }
        if (!std::isfinite(m)) continue;  // every key masked: weights and output stay 0
        double sum = 0.0;
        for (std::size_t j = 0; j < d.Tk; ++j) sum += std::exp(s[j] - m);
        for (std::size_t j = 0; j < d.Tk; ++j) {
          const double p = std::exp(s[j] - m) / sum;
          r.weights(b, h, i, j) = float(p);
          for (std::size_t e = 0; e < d.Dh; ++e) r.output(b, h, i, e) += float(p * value(b, h, j, e));
        }
      }
  return r;
}

}  // namespace xenc

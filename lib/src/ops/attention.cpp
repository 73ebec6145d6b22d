// Scaled dot-product attention: the batched op on [B, H, T, Dh] tensors (each (batch, head) is
// the kernel in lib/src/kernels/attention.cpp: two GEMMs around a row softmax), and a
// loop-by-loop reference.
#include "xenc/ops/attention.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

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
    const bool* padding = key_padding_mask.size() ? &key_padding_mask(b, 0) : nullptr;
    for (std::size_t h = 0; h < d.H; ++h) {
      const kernels::ScoreTerms terms{
          scale, padding,
          attn_mask.size() ? kernels::as_matrix(attn_mask) : kernels::ConstMatView{}, {}};
      kernels::attention_head_forward(
          {kernels::as_matrix(query, b, h), kernels::as_matrix(key, b, h),
           kernels::as_matrix(value, b, h)},
          terms, kernels::as_matrix(r.weights, b, h), {}, {}, kernels::as_matrix(r.output, b, h));
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
  for (std::size_t b = 0; b < d.B; ++b)
    for (std::size_t h = 0; h < d.H; ++h)
      kernels::attention_head_backward(
          {kernels::as_matrix(query, b, h), kernels::as_matrix(key, b, h),
           kernels::as_matrix(value, b, h)},
          scale, kernels::as_matrix(weights, b, h), {}, kernels::as_matrix(grad_output, b, h),
          kernels::as_matrix(scratch),
          {kernels::as_matrix(g.query, b, h), kernels::as_matrix(g.key, b, h),
           kernels::as_matrix(g.value, b, h)});
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

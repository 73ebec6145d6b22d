// Scaled dot-product attention: the batched op on [B, H, T, Dh] tensors (each (batch, head) is
// the kernel in lib/src/kernels/attention.cpp: two GEMMs around a row softmax). The loop-by-loop
// reference is reference::scaled_dot_product_attention_forward (xenc/reference/ops.hpp).
#include "xenc/ops/attention.hpp"

#include <string>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

namespace {

struct Dims {
  std::size_t B, H, Tq, Tk, Dh;
};

Dims check_attention_args(const char* where, const Tensor4& q, const Tensor4& k, const Tensor4& v,
                          const Mask2& key_padding_mask, const Tensor2& attn_mask) {
  const Dims d{q.shape(0), q.shape(1), q.shape(2), k.shape(2), q.shape(3)};
  const std::string bhd = "with B = " + std::to_string(d.B) + ", H = " + std::to_string(d.H) +
                          ", Dh = " + std::to_string(d.Dh) + " (from query)";
  check_shape(where, "key", k, {long(d.B), long(d.H), any_dim, long(d.Dh)},
              "[B, H, Tk, Dh] " + bhd);
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
  const float scale = kernels::attention_scale(d.Dh);
  for (std::size_t b = 0; b < d.B; ++b) {
    for (std::size_t h = 0; h < d.H; ++h) {
      const kernels::ScoreTerms terms{
          scale,
          kernels::row_of(key_padding_mask, b),
          attn_mask.size() ? kernels::as_matrix(attn_mask) : kernels::ConstMatView{},
          {}};
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
  const float scale = kernels::attention_scale(d.Dh);
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

}  // namespace xenc

// A transformer encoder layer in one file, forward and backward, one loop at a time.
//
// This is the file to read first. It computes what TransformerEncoderLayer (nn/) computes
// in evaluation mode (and what torch.nn.TransformerEncoderLayer computes with dropout off), but
// with nothing between you and the arithmetic: no BLAS, no SIMD, no pointers, no modules. Every
// tensor is indexed with operator(), e.g. x(b, t, i). Linear, layer norm and the attention core
// are written once, in reference/ops.cpp: this file calls them (by the same names as ops/) on
// the [B·T, C] rows of its tensors. The file reads top to bottom:
//
//   1. embedding lookup and sinusoidal positions (what feeds the first layer)
//   2. linear, layer norm, activation (relu, gelu)
//   3. attention: scores, softmax with a key-padding mask, weighted sum of values
//   4. multi-head self-attention = in-projection + attention + out-projection
//   5. the encoder layer, post-norm and pre-norm, forward and then backward
//
// Each step is a _forward/_backward pair. Backward runs the chain rule through the same loops in
// reverse: given dL/d(out), it adds dL/d(input) and dL/d(weights) into the gradient tensors
// (+=, because a tensor that is used twice, like the residual stream, collects a gradient from
// each use). Sums are accumulated in double precision.
// Dropout is left out: this is the evaluation-mode (deterministic) layer.
#include "xenc/reference/encoder_layer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xbuilder.hpp>

#include "xenc/core/error.hpp"
#include "xenc/reference/ops.hpp"

namespace xenc::reference {

namespace {

// "[B, T, D] with D = 8" style checks at every public entry point.
void expect_shape(const char* where, const char* arg, const std::vector<std::size_t>& shape,
                  const std::vector<long>& expected, const std::string& text) {
  check_shape(std::string("reference::") + where, arg, shape, expected, text);
}
template <class E>
std::vector<std::size_t> shape_of(const E& t) {
  return std::vector<std::size_t>(t.shape().begin(), t.shape().end());
}
template <class E>
std::vector<long> shape_long(const E& t) {
  return std::vector<long>(t.shape().begin(), t.shape().end());
}
std::string num(std::size_t n) { return std::to_string(n); }

}  // namespace

void Config::validate(const std::string& where) const {
  check_config(d_model > 0, where, "d_model must be > 0");
  check_config(nhead > 0, where, "nhead must be > 0");
  check_config(d_model % nhead == 0, where,
               "d_model (" + num(d_model) + ") must be divisible by nhead (" + num(nhead) + ")");
  check_config(dim_feedforward > 0, where, "dim_feedforward must be > 0");
  check_config(layer_norm_eps > 0.0f, where,
               "layer_norm_eps is " + std::to_string(layer_norm_eps) + ", expected > 0");
}

// ---- weights ------------------------------------------------------------------------------

AttentionWeights zero_attention_weights(std::size_t D) {
  AttentionWeights w;
  w.in_proj_weight = Tensor2::from_shape({3 * D, D});
  w.in_proj_bias = Tensor1::from_shape({3 * D});
  w.out_proj_weight = Tensor2::from_shape({D, D});
  w.out_proj_bias = Tensor1::from_shape({D});
  for_each_weight(w, [](const std::string&, auto& t) { t.fill(0.0f); });
  return w;
}

LayerWeights zero_layer_weights(const Config& c) {
  c.validate("reference::zero_layer_weights");
  const std::size_t D = c.d_model, F = c.dim_feedforward;
  LayerWeights w;
  w.self_attn = zero_attention_weights(D);
  w.linear1_weight = Tensor2::from_shape({F, D});
  w.linear1_bias = Tensor1::from_shape({F});
  w.linear2_weight = Tensor2::from_shape({D, F});
  w.linear2_bias = Tensor1::from_shape({D});
  w.norm1_weight = w.norm1_bias = w.norm2_weight = w.norm2_bias = Tensor1::from_shape({D});
  for_each_weight(w, [](const std::string&, auto& t) { t.fill(0.0f); });
  return w;
}

namespace {
template <class W>
void load_named(W& w, const StateDict& state, const std::string& prefix) {
  for_each_weight(
      w,
      [&](const std::string& name, auto& t) {
        const auto it = state.find(name);
        if (it == state.end())
          throw std::invalid_argument("reference::load_state_dict: missing key \"" + name +
                                      "\" (expected shape " + shape_str(t.shape()) + ")");
        const auto& src = it->second;
        const std::vector<long> want(t.shape().begin(), t.shape().end());
        expect_shape("load_state_dict", name.c_str(), shape_of(src), want, shape_str(t.shape()));
        std::copy(src.begin(), src.end(), t.begin());
      },
      prefix);
}
}  // namespace

void load_state_dict(AttentionWeights& w, const StateDict& s, const std::string& prefix) {
  load_named(w, s, prefix);
}
void load_state_dict(LayerWeights& w, const StateDict& s, const std::string& prefix) {
  load_named(w, s, prefix);
}

// ---- 1. embedding and positions -----------------------------------------------------------

// ids: [B, T]   weight: [V, D]   out: [B, T, D]
void embedding_forward(Tensor3& out, const Index2& ids, const Tensor2& weight) {
  const std::size_t B = ids.shape(0), T = ids.shape(1), V = weight.shape(0), D = weight.shape(1);
  out = Tensor3::from_shape({B, T, D});
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t t = 0; t < T; ++t) {
      // Each token id picks one row of the table: the token's vector.
      const std::int64_t id = ids(b, t);
      if (id < 0 || static_cast<std::size_t>(id) >= V)
        throw index_error("reference::embedding_forward: ids[" + num(b) + ", " + num(t) +
                          "] = " + std::to_string(id) + ", expected 0 <= id < " + num(V) + " (V)");
      for (std::size_t i = 0; i < D; ++i) out(b, t, i) = weight(id, i);
    }
  }
}

// dout: [B, T, D]   ids: [B, T]   dweight: [V, D]
void embedding_backward(Tensor2& dweight, const Tensor3& dout, const Index2& ids,
                        std::int64_t padding_idx) {
  const std::size_t B = ids.shape(0), T = ids.shape(1), D = dweight.shape(1);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t t = 0; t < T; ++t) {
      // A row that was copied to k positions receives the sum of their k gradients. The padding
      // row stays fixed (PyTorch's padding_idx): it receives nothing.
      const std::int64_t id = ids(b, t);
      if (id == padding_idx) continue;
      for (std::size_t i = 0; i < D; ++i) dweight(id, i) += dout(b, t, i);
    }
  }
}

double sinusoidal_position(double p, std::size_t j, std::size_t D) {
  // Dimensions 2i and 2i+1 share the frequency ω_i = 10000^(-2i/D): sin on the even one, cos on
  // the odd one. Low i turn fast (period 2π tokens), high i slowly (period up to 2π·10000).
  const std::size_t i = j / 2;
  const double angle = p * pair_frequency(i, D);
  return j % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

// inp, out: [B, T, D]
void positions_forward(Tensor3& out, const Tensor3& inp) {
  const std::size_t B = inp.shape(0), T = inp.shape(1), D = inp.shape(2);
  check_config(D % 2 == 0 && D > 0, "reference::positions_forward",
               "d_model (" + num(D) + ") must be even and > 0 for sinusoidal positions");
  out = Tensor3::from_shape({B, T, D});
  // Token t gets PE(t) added: the same vector in every sentence of the batch. Without this,
  // attention cannot tell "cat chased mouse" from "mouse chased cat".
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t j = 0; j < D; ++j)
        out(b, t, j) = static_cast<float>(double(inp(b, t, j)) + sinusoidal_position(t, j, D));
}

// dout, dinp: [B, T, D]
void positions_backward(Tensor3& dinp, const Tensor3& dout) {
  // out = inp + constant, so d(out)/d(inp) is the identity: the gradient passes through.
  for (std::size_t n = 0; n < dout.size(); ++n) dinp.data()[n] += dout.data()[n];
}

// ---- 2. linear, layer norm, activation ----------------------------------------------------
//
// Linear and layer norm are reference/ops.cpp's linear_forward / layer_norm_forward and their
// _backward, on the [B·T, C] rows of a [B, T, C] tensor (rows_of): ops.cpp holds their loops,
// once. The helpers below only move numbers between the layer's float [B, T, C] tensors and
// those rows (in double).

namespace {
// [N, C] rows (double) -> the [B, T, C] float tensor `out` (B and T from `like`).
void store(Tensor3& out, const Tensor2d& rows, const Tensor3& like) {
  out = Tensor3::from_shape({like.shape(0), like.shape(1), rows.shape(1)});
  std::copy(rows.begin(), rows.end(), out.begin());
}
// grad += rows: the backward convention (a tensor used twice collects both gradients).
template <class T, std::size_t R, std::size_t S>
void add_into(xt::xtensor<T, R>& grad, const xt::xtensor<double, S>& rows) {
  auto g = grad.begin();
  for (const double v : rows) *g++ += static_cast<T>(v);
}

// dinp, dweight, dbias += the input, weight and bias gradients that linear_backward or
// layer_norm_backward returned.
template <class Weight, class Grads>
void add_grads(Tensor3& dinp, Weight& dweight, Tensor1& dbias, const Grads& g) {
  add_into(dinp, g.input);
  add_into(dweight, g.weight);
  add_into(dbias, g.bias);
}

constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kInvSqrt2Pi = 0.3989422804014327;  // 1 / √(2π)
}  // namespace

// inp, out: [B, T, F]
void activation_forward(Tensor3& out, const Tensor3& inp, Activation act) {
  out = Tensor3::from_shape(inp.shape());
  for (std::size_t n = 0; n < inp.size(); ++n) {
    const double x = inp.data()[n];
    // relu keeps positive values; gelu weights x by Φ(x), the chance that N(0, 1) is below x.
    const double y =
        act == Activation::relu ? (x > 0.0 ? x : 0.0) : 0.5 * x * (1.0 + std::erf(x / kSqrt2));
    out.data()[n] = static_cast<float>(y);
  }
}

// dout, inp, dinp: [B, T, F]
void activation_backward(Tensor3& dinp, const Tensor3& dout, const Tensor3& inp, Activation act) {
  for (std::size_t n = 0; n < inp.size(); ++n) {
    const double x = inp.data()[n];
    // relu'(x) = 1 for x > 0, else 0; gelu'(x) = Φ(x) + x φ(x) with φ the normal density.
    const double slope = act == Activation::relu ? (x > 0.0 ? 1.0 : 0.0)
                                                 : 0.5 * (1.0 + std::erf(x / kSqrt2)) +
                                                       x * kInvSqrt2Pi * std::exp(-0.5 * x * x);
    dinp.data()[n] += static_cast<float>(dout.data()[n] * slope);
  }
}

// ---- 3. attention ------------------------------------------------------------------------
//
// The attention core is reference/ops.cpp's scaled_dot_product_attention_forward / _backward
// on [B, H, T, Dh]: scores q · k / √Dh, a padded key masked to -inf, softmax (softmax_row), the
// weighted sum of the values. Here only the layout: the in-projection gives one [B, T, 3D]
// tensor [Q | K | V], and head h reads columns h·Dh .. (h+1)·Dh - 1 of each third.

namespace {
// Third `part` (0 = Q, 1 = K, 2 = V) of qkv [B, T, 3D], split into heads: [B, H, T, Dh].
Tensor4d heads_of(const Tensor3& qkv, std::size_t part, std::size_t H) {
  const std::size_t B = qkv.shape(0), T = qkv.shape(1), D = qkv.shape(2) / 3;
  Tensor3d x = Tensor3d::from_shape({B, T, D});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t i = 0; i < D; ++i) x(b, t, i) = qkv(b, t, part * D + i);
  return split_heads(x, H);
}
// The three gradients [B, H, T, Dh] side by side again: [B·T, 3D] rows, [dQ | dK | dV].
Tensor2d qkv_rows(const AttentionGrads& g) {
  const Tensor3d parts[3] = {merge_heads(g.query), merge_heads(g.key), merge_heads(g.value)};
  const std::size_t B = parts[0].shape(0), T = parts[0].shape(1), D = parts[0].shape(2);
  Tensor2d rows = Tensor2d::from_shape({B * T, 3 * D});
  for (std::size_t p = 0; p < 3; ++p)
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < D; ++i) rows(b * T + t, p * D + i) = parts[p](b, t, i);
  return rows;
}
}  // namespace

// ---- 4. multi-head self-attention -----------------------------------------------------------

// x, out: [B, T, D]   key_padding_mask: [B, T] or empty
void multihead_attention_forward(Tensor3& out, AttentionActivations& a, const Tensor3& x,
                                 const Mask2& key_padding_mask, const AttentionWeights& w,
                                 std::size_t H) {
  const std::size_t B = x.shape(0), T = x.shape(1), D = w.out_proj_weight.shape(0);
  check_config(H > 0 && D % H == 0, "reference::multihead_attention_forward",
               "d_model (" + num(D) + ") must be divisible by nhead (" + num(H) + ")");
  expect_shape("multihead_attention_forward", "x", shape_of(x), {-1, -1, long(D)},
               "[B, T, D] with D = " + num(D));
  if (key_padding_mask.size() > 0)
    expect_shape("multihead_attention_forward", "key_padding_mask", shape_of(key_padding_mask),
                 {long(B), long(T)}, "[B, T] = [" + num(B) + ", " + num(T) + "] or empty");
  a.x = x;
  a.key_padding_mask = key_padding_mask;
  // 1. One projection gives queries, keys and values for all heads: [B, T, D] -> [B, T, 3D].
  store(a.qkv, linear_forward(rows_of(x), w.in_proj_weight, w.in_proj_bias), x);
  // 2. Each head attends with its own Dh columns: [B, T, 3D] -> Q, K, V [B, H, T, Dh] -> the
  //    heads' outputs [B, H, T, Dh], side by side again in ctx [B, T, D].
  const AttentionResult r = scaled_dot_product_attention_forward(
      heads_of(a.qkv, 0, H), heads_of(a.qkv, 1, H), heads_of(a.qkv, 2, H), key_padding_mask);
  a.att = r.weights;
  store(a.ctx, rows_of(merge_heads(r.output)), x);
  // 3. The output projection mixes the heads: [B, T, D] -> [B, T, D].
  store(out, linear_forward(rows_of(a.ctx), w.out_proj_weight, w.out_proj_bias), x);
}

// dout, dx: [B, T, D]
void multihead_attention_backward(Tensor3& dx, AttentionWeights& dw, const Tensor3& dout,
                                  const AttentionActivations& a, const AttentionWeights& w,
                                  std::size_t H) {
  expect_shape("multihead_attention_backward", "dout", shape_of(dout), shape_long(a.x),
               shape_str(a.x.shape()) + " (the forward input's shape)");
  expect_shape("multihead_attention_backward", "dx", shape_of(dx), shape_long(a.x),
               shape_str(a.x.shape()) + " (the forward input's shape)");
  const std::size_t B = a.x.shape(0), T = a.x.shape(1), D = a.x.shape(2);
  // The forward steps in reverse: 3. out-projection, 2. attention, 1. in-projection.
  Tensor3 dctx = xt::zeros<float>({B, T, D});
  add_grads(dctx, dw.out_proj_weight, dw.out_proj_bias,
            linear_backward(rows_of(dout), rows_of(a.ctx), w.out_proj_weight));
  const Tensor3d dctx_d = dctx;
  const AttentionGrads g = scaled_dot_product_attention_backward(
      split_heads(dctx_d, H), heads_of(a.qkv, 0, H), heads_of(a.qkv, 1, H), heads_of(a.qkv, 2, H),
      Tensor4d(a.att));
  Tensor3 dqkv = xt::zeros<float>({B, T, 3 * D});
  add_into(dqkv, qkv_rows(g));
  add_grads(dx, dw.in_proj_weight, dw.in_proj_bias,
            linear_backward(rows_of(dqkv), rows_of(a.x), w.in_proj_weight));
}

// ---- 5. the encoder layer -----------------------------------------------------------------

namespace {
// out = a + b (the residual connection), and its backward: both inputs get dout.
void residual_forward(Tensor3& out, const Tensor3& a, const Tensor3& b) {
  out = Tensor3::from_shape(a.shape());
  for (std::size_t n = 0; n < a.size(); ++n) out.data()[n] = a.data()[n] + b.data()[n];
}
void residual_backward(Tensor3& da, Tensor3& db, const Tensor3& dout) {
  for (std::size_t n = 0; n < dout.size(); ++n) {
    da.data()[n] += dout.data()[n];
    db.data()[n] += dout.data()[n];
  }
}
}  // namespace

// x, y: [B, T, D]   key_padding_mask: [B, T] or empty
void encoder_layer_forward(Tensor3& y, LayerActivations& a, const Tensor3& x,
                           const Mask2& key_padding_mask, const LayerWeights& w, const Config& c) {
  c.validate("reference::encoder_layer_forward");
  expect_shape("encoder_layer_forward", "x", shape_of(x), {-1, -1, long(c.d_model)},
               "[B, T, D] with D = " + num(c.d_model));
  a.x = x;
  // Attention block. Post-norm: h = norm1(x + self_attn(x)). Pre-norm: h = x + self_attn(norm1(x)).
  // 1. Pre-norm normalises the attention's input (the residual stream x itself stays raw).
  if (c.norm_first)
    store(a.ln1, layer_norm_forward(rows_of(x), w.norm1_weight, w.norm1_bias, c.layer_norm_eps), x);
  // 2. Every token looks at every (unpadded) token.
  multihead_attention_forward(a.attn_out, a.attn, c.norm_first ? a.ln1 : x, key_padding_mask,
                              w.self_attn, c.nhead);
  // 3. The residual connection adds what attention found to the token's own vector.
  residual_forward(a.res1, x, a.attn_out);
  // 4. Post-norm normalises the sum; pre-norm passes it on as it is.
  if (!c.norm_first)
    store(a.ln1,
          layer_norm_forward(rows_of(a.res1), w.norm1_weight, w.norm1_bias, c.layer_norm_eps),
          a.res1);
  a.h = c.norm_first ? a.res1 : a.ln1;

  // Feed-forward block. Post-norm: y = norm2(h + ff(h)). Pre-norm: y = h + ff(norm2(h)).
  // 5. Pre-norm normalises the feed-forward's input.
  if (c.norm_first)
    store(a.ln2, layer_norm_forward(rows_of(a.h), w.norm2_weight, w.norm2_bias, c.layer_norm_eps),
          a.h);
  // 6. Each token on its own (no mixing across positions): widen to F, activate, back to D.
  const Tensor3& ff_in = c.norm_first ? a.ln2 : a.h;
  store(a.fc1, linear_forward(rows_of(ff_in), w.linear1_weight, w.linear1_bias), ff_in);
  activation_forward(a.fc1_act, a.fc1, c.activation);
  store(a.fc2, linear_forward(rows_of(a.fc1_act), w.linear2_weight, w.linear2_bias), a.fc1_act);
  // 7. Second residual connection.
  residual_forward(a.res2, a.h, a.fc2);
  // 8. Post-norm normalises the sum; pre-norm's output is the sum itself.
  if (!c.norm_first)
    store(y, layer_norm_forward(rows_of(a.res2), w.norm2_weight, w.norm2_bias, c.layer_norm_eps),
          a.res2);
  else
    y = a.res2;
}

// dy, dx: [B, T, D]   dw: every tensor at its weight's shape
void encoder_layer_backward(Tensor3& dx, LayerWeights& dw, const Tensor3& dy,
                            const LayerActivations& a, const LayerWeights& w, const Config& c) {
  expect_shape("encoder_layer_backward", "dy", shape_of(dy), shape_long(a.x),
               shape_str(a.x.shape()) + " (the forward input's shape)");
  expect_shape("encoder_layer_backward", "dx", shape_of(dx), shape_long(a.x),
               shape_str(a.x.shape()) + " (the forward input's shape)");
  const std::size_t B = a.x.shape(0), T = a.x.shape(1), D = c.d_model, F = c.dim_feedforward;
  // The forward steps 8 .. 1 in reverse order; each gradient starts at zero and collects.
  Tensor3 dres2 = xt::zeros<float>({B, T, D});
  // 8. Post-norm: back through norm2 to the sum. Pre-norm: the output was the sum.
  if (!c.norm_first)
    add_grads(dres2, dw.norm2_weight, dw.norm2_bias,
              layer_norm_backward(rows_of(dy), rows_of(a.res2), w.norm2_weight, c.layer_norm_eps));
  else
    dres2 = dy;
  // 7. The sum h + fc2 sends its gradient to both terms.
  Tensor3 dh = xt::zeros<float>({B, T, D}), dfc2 = xt::zeros<float>({B, T, D});
  residual_backward(dh, dfc2, dres2);
  // 6. Back through linear2, the activation and linear1.
  Tensor3 dfc1_act = xt::zeros<float>({B, T, F}), dfc1 = xt::zeros<float>({B, T, F});
  add_grads(dfc1_act, dw.linear2_weight, dw.linear2_bias,
            linear_backward(rows_of(dfc2), rows_of(a.fc1_act), w.linear2_weight));
  activation_backward(dfc1, dfc1_act, a.fc1, c.activation);
  // 5. linear1's input was norm2(h) (pre-norm) or h itself (post-norm); either way the gradient
  //    lands in dh, next to the residual's share from step 7.
  if (c.norm_first) {
    Tensor3 dln2 = xt::zeros<float>({B, T, D});
    add_grads(dln2, dw.linear1_weight, dw.linear1_bias,
              linear_backward(rows_of(dfc1), rows_of(a.ln2), w.linear1_weight));
    add_grads(dh, dw.norm2_weight, dw.norm2_bias,
              layer_norm_backward(rows_of(dln2), rows_of(a.h), w.norm2_weight, c.layer_norm_eps));
  } else {
    add_grads(dh, dw.linear1_weight, dw.linear1_bias,
              linear_backward(rows_of(dfc1), rows_of(a.h), w.linear1_weight));
  }
  // 4. Post-norm: back through norm1 to the sum. Pre-norm: h was the sum.
  Tensor3 dres1 = xt::zeros<float>({B, T, D});
  if (!c.norm_first)
    add_grads(dres1, dw.norm1_weight, dw.norm1_bias,
              layer_norm_backward(rows_of(dh), rows_of(a.res1), w.norm1_weight, c.layer_norm_eps));
  else
    dres1 = dh;
  // 3. The sum x + attn_out: dx gets the residual's share directly.
  Tensor3 dattn_out = xt::zeros<float>({B, T, D});
  residual_backward(dx, dattn_out, dres1);
  // 2. Back through self-attention to its input.
  Tensor3 dattn_in = xt::zeros<float>({B, T, D});
  multihead_attention_backward(dattn_in, dw.self_attn, dattn_out, a.attn, w.self_attn, c.nhead);
  // 1. Pre-norm: the attention's input was norm1(x), so go back through norm1 into dx.
  //    Post-norm: the attention's input was x itself.
  if (c.norm_first)
    add_grads(
        dx, dw.norm1_weight, dw.norm1_bias,
        layer_norm_backward(rows_of(dattn_in), rows_of(a.x), w.norm1_weight, c.layer_norm_eps));
  else
    dx += dattn_in;  // x fed both the residual and the attention: it collects both gradients
}

}  // namespace xenc::reference

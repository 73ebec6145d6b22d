// The encoder block (post-norm or pre-norm) and the stack of N blocks.
#include "xenc/nn/transformer_encoder.hpp"

#include <algorithm>
#include <memory>
#include <string>

#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/ops/dropout.hpp"
#include "xenc/ops/elementwise.hpp"
#include "xenc/ops/feed_forward.hpp"
#include "xenc/ops/multi_head_attention.hpp"

namespace xenc {

void EncoderLayerConfig::validate(const std::string& where) const {
  check_config(d_model > 0, where, "d_model must be > 0");
  check_config(nhead > 0, where, "nhead must be > 0");
  check_config(d_model % nhead == 0, where,
               "d_model (" + std::to_string(d_model) + ") must be divisible by nhead (" +
                   std::to_string(nhead) + ")");
  check_config(dim_feedforward > 0, where, "dim_feedforward must be > 0");
  check_config(dropout >= 0.0f && dropout < 1.0f, where,
               "dropout is " + std::to_string(dropout) + ", expected 0 <= dropout < 1");
  check_config(layer_norm_eps > 0.0f, where,
               "layer_norm_eps is " + std::to_string(layer_norm_eps) + ", expected > 0");
}

namespace {
const EncoderLayerConfig& validated(const EncoderLayerConfig& c) {
  c.validate("TransformerEncoderLayer");
  return c;
}
}  // namespace

// ---- TransformerEncoderLayer -------------------------------------------------------------

TransformerEncoderLayer::TransformerEncoderLayer(const EncoderLayerConfig& config, Rng& rng)
    : self_attn(validated(config).d_model, config.nhead, rng, config.dropout),
      linear1(config.d_model, config.dim_feedforward, rng),
      linear2(config.dim_feedforward, config.d_model, rng),
      norm1(config.d_model, config.layer_norm_eps),
      norm2(config.d_model, config.layer_norm_eps),
      config_(config),
      dropout_rng_(rng.next_u32()) {}

TransformerEncoderLayer::TransformerEncoderLayer(const EncoderLayerConfig& config,
                                                 std::uint32_t seed)
    : TransformerEncoderLayer(config, as_lvalue(Rng(seed))) {}

Tensor3 TransformerEncoderLayer::dropout_apply(const Tensor3& x, Tensor3& mask) {
  if (!training_ || config_.dropout == 0.0f) {
    mask = Tensor3();
    return x;
  }
  // one seed per call; the mask is drawn from it as blocks of rows on the pool
  return dropout_forward(x, draw_dropout_seed(config_.dropout, dropout_rng_), true, mask);
}

Tensor3 TransformerEncoderLayer::feed_forward(const Tensor3& x) {
  // Inference on many rows: chunk by chunk, so that the hidden layer is [C, F], not [B·T, F].
  const std::size_t rows = x.shape(0) * x.shape(1);
  if (!GradMode::is_enabled() && !training_ && rows > kFeedForwardChunkRows) {
    cache_.drop_ff = Tensor3();
    cache_.drop2 = Tensor3();
    return feed_forward_in_chunks(x);
  }
  // linear2(dropout(act(linear1(x)))), then the residual-branch dropout.
  // In evaluation mode dropout is the identity: skip it (no [B, T, F] copy).
  Tensor3 u = linear1.forward(x);  // [B, T, F]
  if (GradMode::is_enabled()) cache_.ff_pre = copy_of(u);
  activation_inplace(config_.activation, u);
  if (training_)
    u = dropout_apply(u, cache_.drop_ff);
  else
    cache_.drop_ff = Tensor3();
  Tensor3 y = linear2.forward(u);  // [B, T, D]
  if (training_)
    y = dropout_apply(y, cache_.drop2);
  else
    cache_.drop2 = Tensor3();
  return y;
}

Tensor3 TransformerEncoderLayer::feed_forward_in_chunks(const Tensor3& x) {
  // Rows are independent in the feed-forward block: y[r] = linear2(act(linear1(x[r]))), run on
  // kFeedForwardChunkRows rows at a time, read and written in place (ops/feed_forward.hpp).
  return xenc::feed_forward_in_chunks(x, linear1.weight, linear1.bias, config_.activation,
                                      linear2.weight, linear2.bias, kFeedForwardChunkRows);
}

Tensor3 TransformerEncoderLayer::feed_forward_backward(const Tensor3& grad) {
  // The same steps in reverse. Each intermediate gradient is moved into the next step, which
  // writes its result into the same buffer (dropout, activation): no [B, T, F] copies.
  Tensor3 g = linear2.backward(dropout_backward(grad, cache_.drop2));  // [B, T, F]
  g = dropout_backward(std::move(g), cache_.drop_ff);
  g = activation_backward(config_.activation, std::move(g), cache_.ff_pre);
  return linear1.backward(g);  // [B, T, D]
}

Tensor3 TransformerEncoderLayer::forward(const Tensor3& x, const Mask2& src_key_padding_mask,
                                         const Tensor2& mask, Tensor4* attention_weights) {
  check_shape("TransformerEncoderLayer.forward", "x", x, {any_dim, any_dim, long(config_.d_model)},
              [&] { return "[B, T, D] with D = " + std::to_string(config_.d_model); });
  cache_.valid = GradMode::is_enabled();
  if (!config_.norm_first) {
    // post-norm: h = norm1(x + dropout(sa(x))); y = norm2(h + ff(h))
    // (residual sums are added in place into the branch output: no temporaries)
    Tensor3 sa = self_attn.forward(x, src_key_padding_mask, mask, attention_weights);
    if (training_)
      sa = dropout_apply(sa, cache_.drop1);
    else
      cache_.drop1 = Tensor3();
    add_inplace(sa, x);
    Tensor3 h = norm1.forward(sa);
    Tensor3 f = feed_forward(h);
    add_inplace(f, h);
    return norm2.forward(f);
  }
  // pre-norm: h = x + dropout(sa(norm1(x))); y = h + ff(norm2(h))
  Tensor3 h = self_attn.forward(norm1.forward(x), src_key_padding_mask, mask, attention_weights);
  if (training_)
    h = dropout_apply(h, cache_.drop1);
  else
    cache_.drop1 = Tensor3();
  add_inplace(h, x);
  Tensor3 y = feed_forward(norm2.forward(h));
  add_inplace(y, h);
  return y;
}

Tensor3 TransformerEncoderLayer::backward(const Tensor3& grad_y) {
  require_cache(cache_.valid, "TransformerEncoderLayer.backward");
  // (each residual sum is added in place into the branch's fresh gradient: no temporaries)
  if (!config_.norm_first) {
    // through norm2, then the feed-forward branch and the residual path into h:
    // dh = dz2 + ff'(dz2)
    Tensor3 dz2 = norm2.backward(grad_y);
    Tensor3 dh = feed_forward_backward(dz2);
    add_inplace(dh, dz2);
    // through norm1, then the attention branch and the residual path into x:
    // dx = dz1 + sa'(dropout'(dz1))
    Tensor3 dz1 = norm1.backward(dh);
    Tensor3 dx = self_attn.backward(dropout_backward(dz1, cache_.drop1));
    add_inplace(dx, dz1);
    return dx;
  }
  // dh = dy + norm2'(ff'(dy));  dx = dh + norm1'(sa'(dropout'(dh)))
  Tensor3 dh = norm2.backward(feed_forward_backward(grad_y));
  add_inplace(dh, grad_y);
  Tensor3 dx = norm1.backward(self_attn.backward(dropout_backward(dh, cache_.drop1)));
  add_inplace(dx, dh);
  return dx;
}

template <class F>
void TransformerEncoderLayer::for_each_child(F&& f) {
  // The children and their state_dict names, in PyTorch's order: listed once, here.
  f("self_attn", self_attn);
  f("linear1", linear1);
  f("linear2", linear2);
  f("norm1", norm1);
  f("norm2", norm2);
}

void TransformerEncoderLayer::collect_parameters(const std::string& prefix, ParameterList& out) {
  for_each_child([&](const char* name, Module& child) {
    child.collect_parameters(join_name(prefix, name), out);
  });
}

void TransformerEncoderLayer::train(bool on) {
  training_ = on;
  for_each_child([on](const char*, Module& child) { child.train(on); });
}

// ---- TransformerEncoder ------------------------------------------------------------------

TransformerEncoder::TransformerEncoder(const EncoderLayerConfig& layer_config,
                                       std::size_t num_layers, Rng& rng, bool final_norm)
    : layer_config_(layer_config) {
  layer_config.validate("TransformerEncoder");
  check_config(num_layers > 0, "TransformerEncoder", "num_layers must be > 0");
  layers.reserve(num_layers);
  for (std::size_t i = 0; i < num_layers; ++i) layers.emplace_back(layer_config, rng);
  if (final_norm)
    norm = std::make_unique<LayerNorm>(layer_config.d_model, layer_config.layer_norm_eps);
}

TransformerEncoder::TransformerEncoder(const EncoderLayerConfig& layer_config,
                                       std::size_t num_layers, bool final_norm, std::uint32_t seed)
    : TransformerEncoder(layer_config, num_layers, as_lvalue(Rng(seed)), final_norm) {}

Tensor3 TransformerEncoder::forward(const Tensor3& x, const Mask2& src_key_padding_mask,
                                    const Tensor2& mask, EncoderTrace* trace) {
  if (trace) {
    trace->layer_outputs.clear();
    trace->attention_weights.clear();
  }
  Tensor3 h = x;
  for (auto& layer : layers) {
    Tensor4 weights;
    h = layer.forward(h, src_key_padding_mask, mask, trace ? &weights : nullptr);
    if (trace) {
      trace->layer_outputs.push_back(h);
      trace->attention_weights.push_back(std::move(weights));
    }
  }
  if (norm) h = norm->forward(h);
  return h;
}

Tensor3 TransformerEncoder::backward(const Tensor3& grad_y) {
  Tensor3 g = norm ? norm->backward(grad_y) : grad_y;
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) g = it->backward(g);
  return g;
}

void TransformerEncoder::set_attention_position(const AttentionPosition* position) {
  for (auto& layer : layers) layer.self_attn.set_position(position);
}

void TransformerEncoder::collect_parameters(const std::string& prefix, ParameterList& out) {
  for (std::size_t i = 0; i < layers.size(); ++i)
    layers[i].collect_parameters(join_name(prefix, "layers." + std::to_string(i)), out);
  if (norm) norm->collect_parameters(join_name(prefix, "norm"), out);
}

void TransformerEncoder::train(bool on) {
  training_ = on;
  for (auto& layer : layers) layer.train(on);
  if (norm) norm->train(on);
}

}  // namespace xenc

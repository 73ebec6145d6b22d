// The library's reference encoder (xenc/reference/encoder_layer.hpp) as the oracle of the module
// tests: its weights are filled from a module's state_dict (public, so the reference itself never
// sees nn/), its outputs and gradients compared with the module's by state_dict name.
//
//     const auto ref = reference_run(layer, x, kpm, dy);      // y, dx and every weight gradient
//     EXPECT_TRUE(AllClose(layer.forward(x, kpm), ref.y, kReferenceAtol, kReferenceRtol));
//     EXPECT_TRUE(GradientsEqual(layer, ref.grads, kReferenceAtol, kReferenceRtol));
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>

#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>

#include "support/allclose.hpp"
#include "support/helpers.hpp"
#include "xenc/core/tensor.hpp"
#include "xenc/nn/module.hpp"
#include "xenc/nn/multihead_attention.hpp"
#include "xenc/nn/transformer_encoder.hpp"
#include "xenc/ops/activation.hpp"
#include "xenc/reference/encoder_layer.hpp"

namespace xenc::test {

inline reference::Activation reference_activation(Activation a) {
  return a == Activation::relu ? reference::Activation::relu : reference::Activation::gelu;
}

/// The reference's hyper-parameters for an nn layer's (dropout has no counterpart: eval mode).
inline reference::Config reference_config(const EncoderLayerConfig& c) {
  reference::Config r;
  r.d_model = c.d_model;
  r.nhead = c.nhead;
  r.dim_feedforward = c.dim_feedforward;
  r.activation = reference_activation(c.activation);
  r.layer_norm_eps = c.layer_norm_eps;
  r.norm_first = c.norm_first;
  return r;
}

/// A copy of the module's weights, by state_dict name.
inline reference::LayerWeights reference_weights(TransformerEncoderLayer& layer) {
  reference::LayerWeights w = reference::zero_layer_weights(reference_config(layer.config()));
  reference::load_state_dict(w, layer.state_dict());
  return w;
}
inline reference::AttentionWeights reference_weights(MultiheadAttention& mha) {
  reference::AttentionWeights w = reference::zero_attention_weights(mha.embed_dim());
  reference::load_state_dict(w, mha.state_dict());
  return w;
}

/// The reference's forward output, input gradient and weight gradients for loss Σ dy ⊙ y.
struct ReferenceRun {
  Tensor3 y, dx;
  reference::LayerWeights grads;           ///< for a layer
  reference::AttentionWeights attn_grads;  ///< for a MultiheadAttention
  Tensor4 att;                             ///< attention probabilities [B, H, T, T]
};

inline ReferenceRun reference_run(TransformerEncoderLayer& layer, const Tensor3& x,
                                  const Mask2& kpm, const Tensor3& dy = Tensor3()) {
  const reference::Config c = reference_config(layer.config());
  const reference::LayerWeights w = reference_weights(layer);
  ReferenceRun r;
  reference::LayerActivations a;
  reference::encoder_layer_forward(r.y, a, x, kpm, w, c);
  r.att = a.attn.att;
  if (dy.size() == 0) return r;
  r.dx = xt::zeros<float>(x.shape());
  r.grads = reference::zero_layer_weights(c);
  reference::encoder_layer_backward(r.dx, r.grads, dy, a, w, c);
  return r;
}

inline ReferenceRun reference_run(MultiheadAttention& mha, const Tensor3& x, const Mask2& kpm,
                                  const Tensor3& dy = Tensor3()) {
  const reference::AttentionWeights w = reference_weights(mha);
  ReferenceRun r;
  reference::AttentionActivations a;
  reference::multihead_attention_forward(r.y, a, x, kpm, w, mha.num_heads());
  r.att = a.att;
  if (dy.size() == 0) return r;
  r.dx = xt::zeros<float>(x.shape());
  r.attn_grads = reference::zero_attention_weights(mha.embed_dim());
  reference::multihead_attention_backward(r.dx, r.attn_grads, dy, a, w, mha.num_heads());
  return r;
}

/// Every parameter gradient of `module` against the reference's gradient of the same name.
template <class W>
::testing::AssertionResult GradientsEqual(Module& module, W grads, double atol, double rtol) {
  std::map<std::string, xt::xarray<float>> ours;
  for (const ParameterRef& p : module.parameters()) ours.emplace(p.name, grad_of(p));
  ::testing::AssertionResult result = ::testing::AssertionSuccess();
  std::size_t seen = 0;
  reference::for_each_weight(grads, [&](const std::string& name, const auto& g) {
    const auto it = ours.find(name);
    if (it == ours.end()) {
      result = ::testing::AssertionFailure() << "the module has no parameter " << name;
      return;
    }
    ++seen;
    const ::testing::AssertionResult r = AllClose(it->second, g, atol, rtol);
    if (!r && result) result = ::testing::AssertionFailure() << name << ": " << r.message();
  });
  if (result && seen != ours.size())
    return ::testing::AssertionFailure()
           << "the module has " << ours.size() << " parameters, the reference " << seen;
  return result;
}

}  // namespace xenc::test

// The per-token classifier: encoder model + Linear head.
#include "xenc/nn/token_classifier.hpp"

#include <string>

#include "xenc/core/error.hpp"

namespace xenc {

namespace {
std::size_t checked_labels(std::size_t num_labels) {
  check_config(num_labels > 0, "TokenClassifier", "num_labels must be > 0");
  return num_labels;
}
}  // namespace

TokenClassifier::TokenClassifier(const EncoderModelConfig& config, std::size_t num_labels)
    : model(config),
      head(config.layer.d_model, checked_labels(num_labels), /*bias=*/true, config.seed + 1) {}

Tensor3 TokenClassifier::forward(const Index2& ids, const Mask2& key_padding_mask,
                                 ModelTrace* trace) {
  const Tensor3 h = model.forward(ids, key_padding_mask, trace);  // [B, T, D]
  return head.forward(h);                                         // [B, T, C]
}

void TokenClassifier::backward(const Tensor3& grad_logits) {
  model.backward(head.backward(grad_logits));
}

void TokenClassifier::collect_parameters(const std::string& prefix, ParameterList& out) {
  // the encoder model's names stay unprefixed (embedding.*, position.*, encoder.*)
  model.collect_parameters(prefix, out);
  head.collect_parameters(join_name(prefix, "head"), out);
}

void TokenClassifier::train(bool on) {
  training_ = on;
  model.train(on);
  head.train(on);
}

}  // namespace xenc

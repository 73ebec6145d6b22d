// LayerNorm module over the last dimension.
#include "xenc/nn/layer_norm.hpp"

#include <string>

#include <xtensor/xnoalias.hpp>

#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/ops/elementwise.hpp"

namespace xenc {

LayerNorm::LayerNorm(std::size_t normalized_shape, float eps) : eps(eps) {
  check_config(normalized_shape > 0, "LayerNorm", "normalized_shape must be > 0");
  check_config(eps > 0.0f, "LayerNorm", "eps is " + std::to_string(eps) + ", expected > 0");
  weight = xt::ones<float>({normalized_shape});
  bias = xt::zeros<float>({normalized_shape});
}

Tensor3 LayerNorm::forward(const Tensor3& x) {
  check_shape("LayerNorm.forward", "x", x, {any_dim, any_dim, long(normalized_shape())},
              "[B, T, D] with D = " + std::to_string(normalized_shape()));
  if (!GradMode::is_enabled()) {
    has_cache_ = false;  // a no-grad forward must not leave an old cache behind
    return layer_norm_forward(x, weight, bias, eps);
  }
  cache_x_ = copy_of(x);
  has_cache_ = true;
  return layer_norm_forward(x, weight, bias, eps, cache_);
}

Tensor3 LayerNorm::backward(const Tensor3& grad_y) {
  require_cache(has_cache_, "LayerNorm.backward");
  auto g = layer_norm_backward(grad_y, cache_x_, weight, cache_);
  ensure_grad(weight_grad, weight);  // allocated by the first backward
  ensure_grad(bias_grad, bias);
  xt::noalias(weight_grad) += g.weight;  // in place: ParameterRef.grad points into this buffer
  xt::noalias(bias_grad) += g.bias;
  return g.input;
}

void LayerNorm::collect_parameters(const std::string& prefix, ParameterList& out) {
  out.push_back(make_parameter(join_name(prefix, "weight"), weight, weight_grad));
  out.push_back(make_parameter(join_name(prefix, "bias"), bias, bias_grad));
}

}  // namespace xenc

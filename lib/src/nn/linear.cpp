// Linear module: parameters, PyTorch's initialisation, and the cached forward/backward.
#include "xenc/nn/linear.hpp"

#include <cmath>

#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/ops/elementwise.hpp"
#include "xenc/ops/linear.hpp"

namespace xenc {

Linear::Linear(std::size_t in_features, std::size_t out_features, Rng& rng, bool bias) {
  check_config(in_features > 0 && out_features > 0, "Linear",
               "in_features (" + std::to_string(in_features) + ") and out_features (" +
                   std::to_string(out_features) + ") must be > 0");
  // PyTorch: kaiming_uniform_(a=√5) gives U(-1/√in, 1/√in); the bias uses the same bound.
  const float bound = 1.0f / std::sqrt(static_cast<float>(in_features));  // scalar
  weight = Tensor2::from_shape({out_features, in_features});
  fill_uniform(weight, rng, -bound, bound);
  if (bias) {
    this->bias = Tensor1::from_shape({out_features});
    fill_uniform(this->bias, rng, -bound, bound);
  }
}

Linear::Linear(std::size_t in_features, std::size_t out_features, bool bias, std::uint32_t seed)
    : Linear(in_features, out_features, as_lvalue(Rng(seed)), bias) {}

Tensor2 Linear::forward(const Tensor2& x) {
  check_shape("Linear.forward", "x", x, {any_dim, long(in_features())},
              [&] { return "[N, in] with in = " + std::to_string(in_features()); });
  has_cache_ = GradMode::is_enabled();  // a no-grad forward must not leave an old cache behind
  if (has_cache_) cache_x_ = copy_of(x);
  return linear_forward(x, weight, bias);
}

Tensor3 Linear::forward(const Tensor3& x) {
  check_shape("Linear.forward", "x", x, {any_dim, any_dim, long(in_features())},
              [&] { return "[B, T, in] with in = " + std::to_string(in_features()); });
  has_cache_ = GradMode::is_enabled();  // a no-grad forward must not leave an old cache behind
  if (has_cache_) cache_x_ = copy_as_rows(x);  // [B·T, in], for dW = dyᵀ x
  return linear_forward(x, weight, bias);
}

Tensor2 Linear::backward(const Tensor2& grad_y) {
  require_cache(has_cache_, "Linear.backward");
  check_shape("Linear.backward", "grad_y", grad_y, {long(cache_x_.shape(0)), long(out_features())},
              [&] {
                return "[N, out] = " +
                       shape_str(std::vector<std::size_t>{cache_x_.shape(0), out_features()});
              });
  return accumulate_backward(grad_y);
}

Tensor3 Linear::backward(const Tensor3& grad_y) {
  require_cache(has_cache_, "Linear.backward");
  const std::size_t N = grad_y.shape(0) * grad_y.shape(1);
  check_shape("Linear.backward", "grad_y", grad_y, {any_dim, any_dim, long(out_features())}, [&] {
    return "[B, T, out] with B·T = " + std::to_string(cache_x_.shape(0)) +
           ", out = " + std::to_string(out_features());
  });
  if (N != cache_x_.shape(0))
    throw shape_error("Linear.backward: grad_y has shape " + shape_str(grad_y.shape()) +
                      ", expected B·T = " + std::to_string(cache_x_.shape(0)) + " rows");
  return accumulate_backward(grad_y);
}

template <std::size_t R>
xt::xtensor<float, R> Linear::accumulate_backward(const xt::xtensor<float, R>& grad_y) {
  ensure_grad(weight_grad, weight);  // gradient buffers exist from the first backward on
  if (has_bias()) ensure_grad(bias_grad, bias);
  // dx = dy W, returned;  weight_grad += dyᵀ x, bias_grad += Σ dy, in place (ParameterRef.grad
  // points into these buffers)
  return linear_backward(grad_y, cache_x_, weight, weight_grad, bias_grad);
}

void Linear::collect_parameters(const std::string& prefix, ParameterList& out) {
  out.push_back(make_parameter(join_name(prefix, "weight"), weight, weight_grad));
  if (has_bias()) out.push_back(make_parameter(join_name(prefix, "bias"), bias, bias_grad));
}

}  // namespace xenc

// One parameter's SGD or Adam update: checks, then the one-pass kernel (lib/src/kernels/optim.cpp).
#include "xenc/ops/optim.hpp"

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

namespace {
// The state tensors have the parameter's size, and its gradient exists.
void check_update(const char* where, const ParameterRef& param,
                  std::initializer_list<std::pair<const char*, const Tensor1*>> state) {
  const auto expected = [&] {
    return "[" + std::to_string(param.size()) + "] (the size of " + param.name + ")";
  };
  for (const auto& [name, t] : state) check_shape(where, name, *t, {long(param.size())}, expected);
  if (!param.grad.allocated())
    throw std::logic_error(std::string(where) + ": the gradient of " + param.name +
                           " is not allocated (no backward reached it)");
}
}  // namespace

void sgd_update(const ParameterRef& param, Tensor1& velocity, float lr, float momentum) {
  check_update("sgd_update", param, {{"velocity", &velocity}});
  kernels::sgd_update(param.value, param.grad, kernels::as_vector(velocity), param.size(), lr,
                      momentum, kernels::kRowPassWork);
}

void adam_update(const ParameterRef& param, Tensor1& m, Tensor1& v, const AdamCoefficients& c) {
  check_update("adam_update", param, {{"m", &m}, {"v", &v}});
  kernels::adam_update(
      param.value, param.grad, kernels::as_vector(m), kernels::as_vector(v), param.size(),
      {c.beta1, c.beta2, c.eps, c.decay, c.l2, c.step_size, c.bias_correction2_sqrt});
}

}  // namespace xenc

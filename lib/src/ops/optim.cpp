// One parameter's Adam update: checks, then the one-pass kernel (lib/src/kernels/optim.cpp).
#include "xenc/ops/optim.hpp"

#include <stdexcept>
#include <string>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

void adam_update(const ParameterRef& param, Tensor1& m, Tensor1& v, const AdamCoefficients& c) {
  const char* where = "adam_update";
  const auto expected = [&] {
    return "[" + std::to_string(param.size()) + "] (the size of " + param.name + ")";
  };
  check_shape(where, "m", m, {long(param.size())}, expected);
  check_shape(where, "v", v, {long(param.size())}, expected);
  if (!param.grad.allocated())
    throw std::logic_error(std::string(where) + ": the gradient of " + param.name +
                           " is not allocated (no backward reached it)");
  kernels::adam_update(
      param.value, param.grad, kernels::as_vector(m), kernels::as_vector(v), param.size(),
      {c.beta1, c.beta2, c.eps, c.decay, c.l2, c.step_size, c.bias_correction2_sqrt});
}

}  // namespace xenc

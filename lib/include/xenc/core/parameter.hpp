// Named parameters: how optimisers, gradient checks and weight files reach a module's tensors.
//
// A module owns its parameters as typed tensors (Linear.weight is a Tensor2 [out, in]).
// parameters() hands out ParameterRef views: the PyTorch state_dict name, the shape, and
// pointers to the value and to the gradient buffer (same size, accumulated by backward).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "xenc/core/tensor.hpp"

namespace xenc {

struct ParameterRef {
  std::string name;                ///< state_dict name, e.g. "layers.0.self_attn.in_proj_weight"
  std::vector<std::size_t> shape;  ///< e.g. {3 * D, D}
  float* value = nullptr;          ///< size() floats, row-major
  float* grad = nullptr;           ///< size() floats, accumulated by backward()
  std::size_t size() const;
};

using ParameterList = std::vector<ParameterRef>;

/// Parameter values by name, as torch.nn.Module.state_dict() (copies, not views).
using StateDict = std::map<std::string, xt::xarray<float>>;

/// A ParameterRef for a tensor and its gradient buffer (which must have the same shape).
template <class T>
ParameterRef make_parameter(const std::string& name, T& value, T& grad) {
  ParameterRef p;
  p.name = name;
  p.shape.assign(value.shape().begin(), value.shape().end());
  p.value = value.data();
  p.grad = grad.data();
  return p;
}

/// "prefix.name", or "name" when prefix is empty.
std::string join_name(const std::string& prefix, const std::string& name);

}  // namespace xenc

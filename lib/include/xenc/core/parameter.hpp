// Named parameters: how optimisers, gradient checks and weight files reach a module's tensors.
//
// A module owns its parameters as typed tensors (Linear.weight is a Tensor2 [out, in]).
// parameters() hands out ParameterRef views: the PyTorch state_dict name, the shape, a pointer
// to the value and a GradRef to the gradient buffer (same size, accumulated by backward).
//
// Gradient buffers are allocated by the first backward, not by the constructor (as PyTorch's
// .grad is None until then): a model used only for inference never holds gradient memory.
// A GradRef reads the buffer when asked, so views taken before the first backward (an
// optimiser built right after the model) see the buffer once it exists; until then
// p.grad is nullptr, and optimisers, zero_grad and clip_grad_norm_ skip the parameter.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>

#include "xenc/core/tensor.hpp"

namespace xenc {

/// A view of a gradient buffer that may not be allocated yet. Converts to float*: the data,
/// or nullptr while the buffer is empty (before the first backward).
class GradRef {
 public:
  GradRef() = default;
  template <class T>
  explicit GradRef(T& grad) : tensor_(&grad), data_(&data_of<T>) {}
  float* data() const { return tensor_ ? data_(tensor_) : nullptr; }
  operator float*() const { return data(); }  // NOLINT: reads like the raw pointer it was
  bool allocated() const { return data() != nullptr; }

 private:
  template <class T>
  static float* data_of(void* t) {
    T& g = *static_cast<T*>(t);
    return g.size() == 0 ? nullptr : g.data();
  }
  void* tensor_ = nullptr;
  float* (*data_)(void*) = nullptr;
};

/// Allocates `grad` as zeros shaped like `value` if it is not allocated yet (the first
/// backward). Later calls keep the buffer (and so every GradRef's pointer) where it is.
template <class T>
void ensure_grad(T& grad, const T& value) {
  if (grad.size() != value.size() || grad.shape() != value.shape()) {
    grad = T::from_shape(value.shape());
    std::fill(grad.begin(), grad.end(), 0.0f);
  }
}

struct ParameterRef {
  std::string name;                ///< state_dict name, e.g. "layers.0.self_attn.in_proj_weight"
  std::vector<std::size_t> shape;  ///< e.g. {3 * D, D}
  float* value = nullptr;          ///< size() floats, row-major
  GradRef grad;                    ///< size() floats once backward() ran, else nullptr
  std::size_t size() const;
};

using ParameterList = std::vector<ParameterRef>;

/// A parameter's values, and its gradient once allocated, as flat 1-D tensors of size() floats:
/// views of the module's own buffers (no copies), for optimisers and gradient clipping.
inline auto flat_value(const ParameterRef& p) {
  return xt::adapt(p.value, p.size(), xt::no_ownership(), std::array<std::size_t, 1>{p.size()});
}
/// Only for an allocated gradient (p.grad.allocated()).
inline auto flat_grad(const ParameterRef& p) {
  return xt::adapt(p.grad.data(), p.size(), xt::no_ownership(),
                   std::array<std::size_t, 1>{p.size()});
}

/// Parameter values by name, as torch.nn.Module.state_dict() (copies, not views).
using StateDict = std::map<std::string, xt::xarray<float>>;

/// A ParameterRef for a tensor and its gradient buffer (which must have the same shape).
template <class T>
ParameterRef make_parameter(const std::string& name, T& value, T& grad) {
  ParameterRef p;
  p.name = name;
  p.shape.assign(value.shape().begin(), value.shape().end());
  p.value = value.data();
  p.grad = GradRef(grad);
  return p;
}

/// "prefix.name", or "name" when prefix is empty.
std::string join_name(const std::string& prefix, const std::string& name);

}  // namespace xenc

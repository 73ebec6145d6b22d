// The module base: named parameters, gradients, train/eval, state_dict.
//
// Modules mirror torch.nn: each owns its parameters (with gradient buffers of the same shape),
// runs forward (caching what backward needs unless a NoGradGuard is active) and backward
// (returns the input gradient and *accumulates* parameter gradients, as PyTorch's .grad).
// Parameter names are PyTorch's state_dict names, so weights move between the two by name.
//
// Unlike PyTorch, a module starts in evaluation mode (dropout off), so the same input always
// gives the same output; call train() to switch dropout on.
#pragma once

#include <cstddef>
#include <string>

#include "xenc/core/parameter.hpp"

namespace xenc {

class Module {
 public:
  virtual ~Module() = default;

  /// Every parameter, named as in PyTorch's state_dict.
  ParameterList parameters();
  /// Appends this module's parameters, each name prefixed with `prefix` + ".".
  virtual void collect_parameters(const std::string& prefix, ParameterList& out) = 0;

  /// Total number of scalar parameters.
  std::size_t num_parameters();
  /// Sets every gradient to zero.
  void zero_grad();

  /// Training mode switches dropout on; evaluation mode (the default) is deterministic.
  virtual void train(bool on = true) { training_ = on; }
  void eval() { train(false); }
  bool is_training() const { return training_; }

  /// Copies of every parameter by name (like torch's state_dict()).
  StateDict state_dict();
  /// Copies values in by name. Throws shape_error for a wrongly shaped entry and
  /// std::invalid_argument for a missing key or (when strict) an unexpected one,
  /// naming the key, the expected and the actual shape.
  void load_state_dict(const StateDict& state, bool strict = true);

 protected:
  bool training_ = false;
};

/// Throws std::logic_error("<where>: backward called without a cached forward ...") when a
/// module's cache is empty (no forward yet, or forward ran under NoGradGuard).
void require_cache(bool has_cache, const std::string& where);

}  // namespace xenc

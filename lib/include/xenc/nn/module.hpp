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
  /// Copies values in by name, after check_state_dict (below), whose messages start with
  /// `where`: io_error for a missing key, (when strict) an unexpected one or a non-finite value,
  /// shape_error for a wrongly shaped entry. On error the module is unchanged.
  void load_state_dict(const StateDict& state, bool strict = true,
                       const std::string& where = "load_state_dict");

 protected:
  bool training_ = false;
};

/// The one state_dict check, shared by Module::load_state_dict and the io loaders
/// (load_transformer_encoder, load_checkpoint): every parameter of `params` is present in `state`
/// under `prefix` + its name, with its shape and only finite values; with `strict`, `state` holds
/// no other key (PyTorch's strict=True). Nothing is copied. Messages start with `where` and name
/// the key, with both shapes in the glossary's words where the name tells them:
///   io_error     "<where>: missing key \"layers.1.norm2.bias\" (expected shape [D] = [8])",
///                "<where>: unexpected key \"norm3.weight\" with shape [8] (not a parameter ...)",
///                "<where>: key \"head.bias\" holds nan at index [1] (weights must be finite)"
///   shape_error  "<where>: key \"linear1.weight\" has shape [16, 7], expected [F, D] = [16, 8]"
void check_state_dict(const ParameterList& params, const StateDict& state, const std::string& where,
                      bool strict = true, const std::string& prefix = "");

/// Throws std::logic_error("<where>: backward called without a cached forward ...") when a
/// module's cache is empty (no forward yet, or forward ran under NoGradGuard).
void require_cache(bool has_cache, const std::string& where);

}  // namespace xenc

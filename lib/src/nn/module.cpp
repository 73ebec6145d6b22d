// Module base: parameters by name, gradients, state_dict in and out.
#include "xenc/nn/module.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "xenc/core/error.hpp"

namespace xenc {

ParameterList Module::parameters() {
  ParameterList out;
  collect_parameters("", out);
  return out;
}

std::size_t Module::num_parameters() {
  std::size_t n = 0;
  for (const auto& p : parameters()) n += p.size();
  return n;
}

void Module::zero_grad() {
  // unallocated gradients (no backward yet) are already "zero"
  for (auto& p : parameters())
    if (p.grad.allocated()) flat_grad(p).fill(0.0f);
}

StateDict Module::state_dict() {
  StateDict state;
  for (const auto& p : parameters()) {
    xt::xarray<float> a = xt::xarray<float>::from_shape(p.shape);
    std::copy_n(p.value, p.size(), a.data());
    state.emplace(p.name, std::move(a));
  }
  return state;
}

void Module::load_state_dict(const StateDict& state, bool strict) {
  const ParameterList params = parameters();
  // Check everything first, so that a failed load leaves the module unchanged.
  std::set<std::string> known;
  for (const auto& p : params) {
    known.insert(p.name);
    auto it = state.find(p.name);
    if (it == state.end())
      throw std::invalid_argument("load_state_dict: missing key \"" + p.name +
                                  "\" (expected shape " + shape_str(p.shape) + ")");
    const auto& s = it->second.shape();
    if (!std::equal(s.begin(), s.end(), p.shape.begin(), p.shape.end()))
      throw shape_error("load_state_dict: \"" + p.name + "\" has shape " + shape_str(s) +
                        ", expected " + shape_str(p.shape));
  }
  if (strict) {
    for (const auto& kv : state)
      if (!known.count(kv.first))
        throw std::invalid_argument("load_state_dict: unexpected key \"" + kv.first +
                                    "\" with shape " + shape_str(kv.second.shape()));
  }
  for (const auto& p : params) {
    const auto& a = state.at(p.name);
    std::copy_n(a.data(), p.size(), p.value);
  }
}

void require_cache(bool has_cache, const std::string& where) {
  if (!has_cache)
    throw std::logic_error(where +
                           ": backward called without a cached forward (run forward first, "
                           "with gradients enabled: not inside a NoGradGuard)");
}

}  // namespace xenc

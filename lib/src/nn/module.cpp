// Module base: parameters by name, gradients, state_dict in and out.
#include "xenc/nn/module.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <utility>

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

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The glossary form of a parameter's shape, from its name ("[3D, D]" for in_proj_weight); empty
// when the name does not tell.
std::string symbolic_shape(const std::string& name) {
  const std::pair<const char*, const char*> forms[] = {
      {"in_proj_weight", "[3D, D]"}, {"in_proj_bias", "[3D]"},     {"out_proj.weight", "[D, D]"},
      {"out_proj.bias", "[D]"},      {"linear1.weight", "[F, D]"}, {"linear1.bias", "[F]"},
      {"linear2.weight", "[D, F]"},  {"linear2.bias", "[D]"},      {"norm1.weight", "[D]"},
      {"norm1.bias", "[D]"},         {"norm2.weight", "[D]"},      {"norm2.bias", "[D]"},
      {"norm.weight", "[D]"},        {"norm.bias", "[D]"},         {"embedding.weight", "[V, D]"},
      {"head.weight", "[C, D]"},     {"head.bias", "[C]"}};
  for (const auto& f : forms)
    if (ends_with(name, f.first)) return f.second;
  return "";
}

std::string expected_text(const std::string& name, const std::vector<std::size_t>& shape) {
  const std::string symbolic = symbolic_shape(name);
  return symbolic.empty() ? shape_str(shape) : symbolic + " = " + shape_str(shape);
}

// "[1, 2]" for flat index i of an array of this shape.
std::string index_text(std::size_t i, const std::vector<std::size_t>& shape) {
  std::vector<std::size_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] ? i % shape[d] : 0;
    i = shape[d] ? i / shape[d] : 0;
  }
  return shape_str(index);
}

}  // namespace

void check_state_dict(const ParameterList& params, const StateDict& state, const std::string& where,
                      bool strict, const std::string& prefix) {
  std::set<std::string> known;
  for (const auto& p : params) {
    const std::string key = prefix + p.name;
    known.insert(key);
    // 1. Present.
    auto it = state.find(key);
    if (it == state.end())
      throw io_error(where + ": missing key \"" + key + "\" (expected shape " +
                     expected_text(key, p.shape) + ")");
    // 2. Shaped as the parameter.
    const auto& s = it->second.shape();
    if (!std::equal(s.begin(), s.end(), p.shape.begin(), p.shape.end()))
      throw shape_error(where + ": key \"" + key + "\" has shape " + shape_str(s) + ", expected " +
                        expected_text(key, p.shape));
    // 3. Finite: a NaN weight would make every output NaN (or, hidden by a later step, a
    //    plausible-looking wrong answer).
    const auto& values = it->second.storage();
    const auto bad =
        std::find_if(values.cbegin(), values.cend(), [](float x) { return !std::isfinite(x); });
    if (bad != values.cend())
      throw io_error(where + ": key \"" + key + "\" holds " +
                     (std::isnan(*bad) ? std::string("nan")
                      : *bad > 0       ? "inf"
                                       : "-inf") +
                     " at index " +
                     index_text(static_cast<std::size_t>(bad - values.cbegin()), p.shape) +
                     " (weights must be finite)");
  }
  // 4. No other key (PyTorch's strict=True).
  if (strict)
    for (const auto& kv : state)
      if (!known.count(kv.first))
        throw io_error(where + ": unexpected key \"" + kv.first + "\" with shape " +
                       shape_str(kv.second.shape()) + " (not a parameter of this model)");
}

void Module::load_state_dict(const StateDict& state, bool strict, const std::string& where) {
  const ParameterList params = parameters();
  // Check everything first, so that a failed load leaves the module unchanged.
  check_state_dict(params, state, where, strict);
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

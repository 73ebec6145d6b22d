// Reading the committed reference values (tests/reference/data/*.json, written by
// tests/reference/generate.py with PyTorch / NumPy) into xencoder tensors.
//
// Each array is {"shape": [...], "data": [row-major values]}; masks and ids are integers.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <xtensor/xarray.hpp>

#include "support/build_path.hpp"
#include "xenc/core/parameter.hpp"
#include "xenc/core/tensor.hpp"

namespace xenc::test {

using json = nlohmann::json;

/// Parses XENC_TEST_DATA_DIR/<name>.json (throws with the path if it cannot be read).
inline json load_reference(const std::string& name) {
  const std::string path = std::string(XENC_TEST_DATA_DIR) + "/" + name + ".json";
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot open reference file " + path +
                             " (run /usr/bin/python3 tests/reference/generate.py)");
  return json::parse(in);
}

template <class T>
T from_json(const json& j) {
  const auto shape = j.at("shape").get<std::vector<std::size_t>>();
  const auto& data = j.at("data");
  T t = T::from_shape(shape);
  if (t.size() != data.size())
    throw std::runtime_error("reference array: shape " + shape_str(shape) + " but " +
                             std::to_string(data.size()) + " values");
  using V = typename T::value_type;
  std::size_t i = 0;
  for (const auto& v : data) {
    if constexpr (std::is_same_v<V, bool>)
      t.data()[i++] = v.get<int>() != 0;
    else
      t.data()[i++] = v.get<V>();
  }
  return t;
}

template <std::size_t R>
xt::xtensor<float, R> tensor(const json& j) {
  return from_json<xt::xtensor<float, R>>(j);
}
inline xt::xarray<float> array(const json& j) { return from_json<xt::xarray<float>>(j); }
inline Mask2 mask2(const json& j) { return from_json<Mask2>(j); }
inline Index1 index1(const json& j) { return from_json<Index1>(j); }
inline Index2 index2(const json& j) { return from_json<Index2>(j); }

/// An array that may hold NaN and infinities, written by generate.py's special(): "data" with
/// 0 in their place and "kind" per element (0 finite, 1 NaN, 2 +inf, 3 -inf).
template <std::size_t R>
xt::xtensor<float, R> special_tensor(const json& j) {
  xt::xtensor<float, R> t = tensor<R>(j);
  const auto kind = j.at("kind").get<std::vector<int>>();
  if (kind.size() != t.size()) throw std::runtime_error("reference array: kind has the wrong size");
  const float inf = std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < kind.size(); ++i)
    if (kind[i] != 0)
      t.data()[i] = kind[i] == 1   ? std::numeric_limits<float>::quiet_NaN()
                    : kind[i] == 2 ? inf
                                   : -inf;
  return t;
}

/// A state_dict object {"name": array, ...}.
inline StateDict state_dict(const json& j) {
  StateDict s;
  for (auto it = j.begin(); it != j.end(); ++it) s.emplace(it.key(), array(it.value()));
  return s;
}

}  // namespace xenc::test

// Tensor aliases used across xencoder, and small shape helpers.
//
// Everything is float32 and row-major (C order), in xtensor containers of fixed
// rank. Shape glossary (used in every doc block and comment):
//   B batch   T sequence length   D d_model   H heads   Dh = D / H
//   F dim_feedforward   V vocabulary size
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <xtensor/xio.hpp>
#include <xtensor/xtensor.hpp>

namespace xenc {

using Tensor1 = xt::xtensor<float, 1>;
using Tensor2 = xt::xtensor<float, 2>;
using Tensor3 = xt::xtensor<float, 3>;
using Tensor4 = xt::xtensor<float, 4>;

/// Boolean masks. A key-padding mask is [B, T] with true = padding (PyTorch's convention).
using Mask1 = xt::xtensor<bool, 1>;
using Mask2 = xt::xtensor<bool, 2>;

/// Token ids, int64 as in PyTorch: [B, T].
using Index1 = xt::xtensor<std::int64_t, 1>;
using Index2 = xt::xtensor<std::int64_t, 2>;

/// "[2, 5, 7]" for any shape-like container.
template <class S>
std::string shape_str(const S& shape) {
  std::string s = "[";
  bool first = true;
  for (auto d : shape) {
    if (!first) s += ", ";
    s += std::to_string(d);
    first = false;
  }
  return s + "]";
}

}  // namespace xenc

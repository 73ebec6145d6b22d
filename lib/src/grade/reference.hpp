// The grader's references (internal): the exercises' expected values come from xenc::reference
// (xenc/reference/ops.hpp, the library's one oracle, loop by loop in double), not from a copy of
// its formulas. This header only converts between the checks' flat arrays (a shape and
// row-major doubles, what finite differences perturb) and the oracle's double tensors.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "xenc/core/tensor.hpp"
#include "xenc/reference/ops.hpp"

namespace xenc::grade::ref {

/// Row-major values in double with a shape.
struct Array {
  std::vector<std::size_t> shape;
  std::vector<double> data;
};

template <class E>
Array from(const E& t) {
  Array a;
  a.shape.assign(t.shape().begin(), t.shape().end());
  for (auto v : t) a.data.push_back(double(v));
  return a;
}

/// An Array as the oracle's tensor of rank R (the shape must have R entries).
template <std::size_t R>
xt::xtensor<double, R> tensor(const Array& a) {
  std::array<std::size_t, R> shape{};
  std::copy_n(a.shape.begin(), std::min(R, a.shape.size()), shape.begin());
  xt::xtensor<double, R> t = xt::xtensor<double, R>::from_shape(shape);
  std::copy(a.data.begin(), a.data.end(), t.begin());
  return t;
}
inline reference::Tensor1d tensor1(const std::vector<double>& v) {
  return tensor<1>(Array{{v.size()}, v});
}
inline std::vector<double> values(const reference::Tensor1d& t) { return {t.begin(), t.end()}; }

inline Array sinusoidal_table(std::size_t P, std::size_t D) {
  return from(reference::sinusoidal_encoding(P, D));
}
/// Rows over the last axis; a row of only -inf gives zeros (the oracle's one rule).
inline Array softmax(const Array& x) { return from(reference::softmax_forward(tensor<2>(x))); }
inline Array layer_norm(const Array& x, const std::vector<double>& w, const std::vector<double>& b,
                        double eps) {
  return from(reference::layer_norm_forward(tensor<2>(x), tensor1(w), tensor1(b), eps));
}
struct LayerNormGrads {
  Array input;
  std::vector<double> weight, bias;
};
inline LayerNormGrads layer_norm_backward(const Array& dy, const Array& x,
                                          const std::vector<double>& w, double eps) {
  const reference::LayerNormGrads g =
      reference::layer_norm_backward(tensor<2>(dy), tensor<2>(x), tensor1(w), eps);
  return {from(g.input), values(g.weight), values(g.bias)};
}
struct Attention {
  Array output, weights;
};
/// mask: [B, Tk] as 0/1 (1 = padding), empty for none.
inline Attention attention(const Array& q, const Array& k, const Array& v,
                           const std::vector<int>& mask) {
  Mask2 m;
  if (!mask.empty()) {
    m = Mask2::from_shape({q.shape.at(0), k.shape.at(2)});
    std::copy(mask.begin(), mask.end(), m.begin());
  }
  const reference::AttentionResult a =
      reference::scaled_dot_product_attention_forward(tensor<4>(q), tensor<4>(k), tensor<4>(v), m);
  return {from(a.output), from(a.weights)};
}
inline Array split_heads(const Array& x, std::size_t H) {
  return from(reference::split_heads(tensor<3>(x), H));
}
inline Array merge_heads(const Array& x) { return from(reference::merge_heads(tensor<4>(x))); }
/// y = x Wᵀ + b
inline Array linear(const Array& x, const Array& W, const std::vector<double>& b) {
  return from(reference::linear_forward(tensor<2>(x), tensor<2>(W), tensor1(b)));
}
struct LinearGrads {
  Array input, weight;
  std::vector<double> bias;
};
inline LinearGrads linear_backward(const Array& dy, const Array& x, const Array& W) {
  const reference::LinearGrads g =
      reference::linear_backward(tensor<2>(dy), tensor<2>(x), tensor<2>(W));
  return {from(g.input), from(g.weight), values(g.bias)};
}
/// loss (NaN when every row is ignored, as PyTorch and the library) and its gradient.
struct CrossEntropy {
  double loss;
  Array grad;
};
inline CrossEntropy cross_entropy(const Array& logits, const std::vector<std::int64_t>& targets,
                                  std::int64_t ignore_index) {
  Index1 t = Index1::from_shape({targets.size()});
  std::copy(targets.begin(), targets.end(), t.begin());
  const reference::Tensor2d z = tensor<2>(logits);
  return {reference::cross_entropy_forward(z, t, ignore_index),
          from(reference::cross_entropy_backward(z, t, ignore_index))};
}

/// RoPE of one head, interleaved pairs: x [T, Dh], row t rotated by positions[t] · θ_i.
inline Array rope(const Array& x, const std::vector<double>& positions) {
  return from(reference::rope_forward(tensor<2>(x), positions));
}
/// ALiBi slopes of the paper (power of two, or the interleaving rule for other H).
inline std::vector<double> alibi_slopes(std::size_t H) { return reference::alibi_slopes(H); }

}  // namespace xenc::grade::ref

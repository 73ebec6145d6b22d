// The grader's references (internal): each exercise's formula, loop by loop in double precision,
// independent of the library's float32 kernels. tests/grade shows that the library's own ops
// (tested against PyTorch) and the reference solutions pass every check built on them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "xenc/core/tensor.hpp"

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

Array sinusoidal_table(std::size_t P, std::size_t D);
/// Rows over the last axis; a row of only -inf gives zeros.
Array softmax(const Array& x);
Array layer_norm(const Array& x, const std::vector<double>& w, const std::vector<double>& b, double eps);
struct LayerNormGrads {
  Array input;
  std::vector<double> weight, bias;
};
LayerNormGrads layer_norm_backward(const Array& dy, const Array& x, const std::vector<double>& w,
                                   double eps);
struct Attention {
  Array output, weights;
};
/// mask: [B, Tk] as 0/1 (1 = padding), empty for none.
Attention attention(const Array& q, const Array& k, const Array& v, const std::vector<int>& mask);
Array split_heads(const Array& x, std::size_t H);
Array merge_heads(const Array& x);
/// y = x Wᵀ + b
Array linear(const Array& x, const Array& W, const std::vector<double>& b);
struct LinearGrads {
  Array input, weight;
  std::vector<double> bias;
};
LinearGrads linear_backward(const Array& dy, const Array& x, const Array& W);
/// loss (NaN when every row is ignored) and its gradient.
struct CrossEntropy {
  double loss;
  Array grad;
};
CrossEntropy cross_entropy(const Array& logits, const std::vector<std::int64_t>& targets,
                           std::int64_t ignore_index);

/// RoPE of one head, interleaved pairs: x [T, Dh], row t rotated by positions[t] · θ_i.
Array rope(const Array& x, const std::vector<double>& positions);
/// ALiBi slopes of the paper (power of two, or the interleaving rule for other H).
std::vector<double> alibi_slopes(std::size_t H);

}  // namespace xenc::grade::ref

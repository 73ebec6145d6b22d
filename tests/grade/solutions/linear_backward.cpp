// Reference solution: the three gradients of y = x Wᵀ + b.
#include "exercises.hpp"

namespace assignment {

xenc::LinearGrads<2> linear_backward(const Tensor2& grad_y, const Tensor2& x,
                                     const Tensor2& weight) {
  const std::size_t N = x.shape()[0], in = x.shape()[1], out = weight.shape()[0];
  xenc::LinearGrads<2> g;
  g.input = xt::zeros<float>({N, in});
  g.weight = xt::zeros<float>({out, in});
  g.bias = xt::zeros<float>({out});
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t o = 0; o < out; ++o) {
      for (std::size_t i = 0; i < in; ++i) {
        g.input(n, i) += grad_y(n, o) * weight(o, i);  // dx = dy W
        g.weight(o, i) += grad_y(n, o) * x(n, i);      // dW = dyᵀ x
      }
      g.bias(o) += grad_y(n, o);  // db = Σ_rows dy: the bias is added to every row
    }
  return g;
}

}  // namespace assignment

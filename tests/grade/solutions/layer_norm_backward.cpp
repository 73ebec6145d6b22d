// Reference solution: layer norm backward, mean and rstd recomputed from x.
#include "exercises.hpp"

#include <cmath>
#include <vector>

namespace assignment {

xenc::LayerNormGrads<2> layer_norm_backward(const Tensor2& grad_y, const Tensor2& x,
                                            const Tensor1& weight, float eps) {
  const std::size_t N = x.shape()[0], D = x.shape()[1];
  xenc::LayerNormGrads<2> g;
  g.input = Tensor2::from_shape({N, D});
  g.weight = xt::zeros<float>({D});
  g.bias = xt::zeros<float>({D});
  std::vector<double> xhat(D), gw(D);
  for (std::size_t r = 0; r < N; ++r) {
    // the forward's statistics
    double mean = 0.0, var = 0.0;
    for (std::size_t d = 0; d < D; ++d) mean += x(r, d) / double(D);
    for (std::size_t d = 0; d < D; ++d) var += (x(r, d) - mean) * (x(r, d) - mean) / double(D);
    const double rstd = 1.0 / std::sqrt(var + eps);
    // g = dy · weight, and the two row means dx needs
    double mean_g = 0.0, mean_gx = 0.0;
    for (std::size_t d = 0; d < D; ++d) {
      xhat[d] = (x(r, d) - mean) * rstd;
      gw[d] = grad_y(r, d) * weight(d);
      mean_g += gw[d] / double(D);
      mean_gx += gw[d] * xhat[d] / double(D);
      g.weight(d) += float(grad_y(r, d) * xhat[d]);
      g.bias(d) += grad_y(r, d);
    }
    for (std::size_t d = 0; d < D; ++d)
      g.input(r, d) = float(rstd * (gw[d] - mean_g - xhat[d] * mean_gx));
  }
  return g;
}

}  // namespace assignment

// Reference solution: layer norm per row, biased variance, eps inside the square root.
#include "exercises.hpp"

#include <cmath>

namespace assignment {

Tensor2 layer_norm_forward(const Tensor2& x, const Tensor1& weight, const Tensor1& bias,
                           float eps) {
  const std::size_t N = x.shape()[0], D = x.shape()[1];
  Tensor2 y = Tensor2::from_shape({N, D});
  for (std::size_t r = 0; r < N; ++r) {
    double mean = 0.0, var = 0.0;
    for (std::size_t d = 0; d < D; ++d) mean += x(r, d);
    mean /= double(D);
    for (std::size_t d = 0; d < D; ++d) var += (x(r, d) - mean) * (x(r, d) - mean);
    var /= double(D);  // biased: divide by D, as torch.nn.LayerNorm
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (std::size_t d = 0; d < D; ++d)
      y(r, d) = float((x(r, d) - mean) * rstd * weight(d) + bias(d));
  }
  return y;
}

}  // namespace assignment

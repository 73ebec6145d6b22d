// Reference solution: a test of layer norm forward that catches every exhibit of the museum: a
// row worked by hand (the biased variance) and a row whose variance is below eps (eps inside the
// square root).
#include "exercises.hpp"

#include <cmath>

namespace assignment {

namespace {
bool close(float a, double b) { return std::fabs(a - b) <= 1e-5 + 1e-4 * std::fabs(b); }
}  // namespace

bool test_layer_norm_forward(const LayerNormForwardFn& layer_norm_forward) {
  // x = [1, 2, 3, 4]: mean 2.5, biased variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25, so with
  // eps = 0 y = (x - 2.5) / sqrt(1.25) = [-1.3416408, -0.4472136, 0.4472136, 1.3416408]
  const Tensor1 ones = {1, 1, 1, 1}, zeros = {0, 0, 0, 0};
  const Tensor2 y = layer_norm_forward(Tensor2{{1, 2, 3, 4}}, ones, zeros, 0.0f);
  const double want[4] = {-1.3416407865, -0.4472135955, 0.4472135955, 1.3416407865};
  for (std::size_t d = 0; d < 4; ++d)
    if (!close(y(0, d), want[d])) return false;
  // x = [0, 0.02]: variance 1e-4 = eps, so y = (x - 0.01) / sqrt(2e-4) = [-0.7071068, 0.7071068];
  // eps outside the root gives 0.01 / (0.01 + 1e-4) = 0.990099
  const Tensor2 small =
      layer_norm_forward(Tensor2{{0.0f, 0.02f}}, Tensor1{1, 1}, Tensor1{0, 0}, 1e-4f);
  return close(small(0, 0), -0.7071067812) && close(small(0, 1), 0.7071067812);
}

}  // namespace assignment

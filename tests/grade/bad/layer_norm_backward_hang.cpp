// A layer_norm_backward that never returns (an off-by-one loop bound that never ends).
#include "exercises.hpp"

namespace assignment {

xenc::LayerNormGrads<2> layer_norm_backward(const Tensor2& grad_y, const Tensor2&, const Tensor1&,
                                            float) {
  volatile std::size_t spin = 0;
  for (std::size_t i = 0; i != grad_y.size() + 1; i += 0) spin = spin + 1;
  return {};
}

}  // namespace assignment

// Reference solution: Transformer-XL's relative shift, row i's window of T columns from T-1-i.
#include "exercises.hpp"

#include <string>

namespace assignment {

Tensor2 relative_shift(const Tensor2& z) {
  const std::size_t T = z.shape()[0];
  if (T == 0 || z.shape()[1] != 2 * T - 1)
    throw xenc::shape_error("relative_shift: z has " + std::to_string(z.shape()[1]) +
                            " columns, expected 2T-1 = " + std::to_string(2 * T - 1));
  Tensor2 y = Tensor2::from_shape({T, T});
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < T; ++j) y(i, j) = z(i, T - 1 - i + j);  // distance i - j
  return y;
}

}  // namespace assignment

// Exercise: relative_shift. Replace the throw with your code (see ../exercises.hpp and README.md).
// Transformer-XL's relative shift: z [T, 2T-1] holds one head's position scores, column m for the
// distance T-1-m. Return y [T, T] with y[i, j] = z[i, T-1-i+j] (the score of distance i - j).
// Throw std::invalid_argument unless z is [T, 2T-1].
#include "exercises.hpp"

#include <stdexcept>

namespace assignment {

Tensor2 relative_shift(const Tensor2& z) {
  throw std::logic_error("relative_shift: not implemented");
}

}  // namespace assignment

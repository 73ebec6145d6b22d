// Exercise: relative_shift. Replace the throw with your code
// (see ../exercises.hpp and README.md).
//     column m of z is the distance T-1-m;  y[i, j] = z[i, T-1-i+j] (distance i - j)
#include "exercises.hpp"

#include <stdexcept>

namespace assignment {

Tensor2 relative_shift(const Tensor2& z) {
  // your code here
  throw std::logic_error("relative_shift: not implemented");
}

}  // namespace assignment

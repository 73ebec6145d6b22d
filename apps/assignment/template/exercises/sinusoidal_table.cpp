// Exercise: sinusoidal_table. Replace the throw with your code
// (see ../exercises.hpp and README.md).
//     PE(p, 2i) = sin(p / 10000^(2i/D)),  PE(p, 2i+1) = cos(p / 10000^(2i/D))
#include "exercises.hpp"

#include <stdexcept>

namespace assignment {

Tensor2 sinusoidal_table(std::size_t num_positions, std::size_t d_model) {
  // your code here
  throw std::logic_error("sinusoidal_table: not implemented");
}

}  // namespace assignment

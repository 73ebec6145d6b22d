// A split_heads that calls std::abort (as a failed assert does).
#include "exercises.hpp"

#include <cstdlib>

namespace assignment {

Tensor4 split_heads(const Tensor3& x, std::size_t num_heads) {
  if (x.size() > 0 || num_heads > 0) std::abort();
  return Tensor4::from_shape({0, 0, 0, 0});
}

}  // namespace assignment

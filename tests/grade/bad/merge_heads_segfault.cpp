// A merge_heads that writes through a null pointer: the process dies with SIGSEGV.
#include "exercises.hpp"

namespace assignment {

Tensor3 merge_heads(const Tensor4& x) {
  volatile float* nowhere = nullptr;
  *nowhere = float(x.size());
  return Tensor3::from_shape({1, 1, 1});
}

}  // namespace assignment

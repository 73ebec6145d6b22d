// A softmax that asks for a scratch buffer of N·C·2^28 floats (an index mixed up with a size):
// 32 GiB for the smallest input, zero-filled, so without a limit it would take the machine's
// memory.
#include "exercises.hpp"

#include <vector>

namespace assignment {

Tensor2 softmax(const Tensor2& x) {
  std::vector<float> scratch(x.size() << 28);
  Tensor2 y = x;
  for (std::size_t i = 0; i < y.size(); ++i) y.data()[i] = scratch[i];
  return y;
}

}  // namespace assignment

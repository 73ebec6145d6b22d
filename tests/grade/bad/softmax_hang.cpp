// A softmax stuck in a loop whose condition never changes.
#include "exercises.hpp"

namespace assignment {

Tensor2 softmax(const Tensor2& x) {
  volatile bool done = false;
  while (!done) {
  }
  return x;
}

}  // namespace assignment

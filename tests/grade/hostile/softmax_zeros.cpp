// The honest baseline of the hostile softmax submissions: a softmax that returns zeros and does
// nothing else. Each hostile file below returns the same zeros, so it must score exactly this.
#include "exercises.hpp"

namespace assignment {

Tensor2 softmax(const Tensor2& x) { return xt::zeros<float>(x.shape()); }

}  // namespace assignment

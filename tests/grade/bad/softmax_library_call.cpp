// A softmax that only wraps the library's: forbidden when the settings say "library_calls": false.
#include "exercises.hpp"

#include <xenc/ops/softmax.hpp>

namespace assignment {

Tensor2 softmax(const Tensor2& x) { return xenc::softmax_forward(x); }

}  // namespace assignment

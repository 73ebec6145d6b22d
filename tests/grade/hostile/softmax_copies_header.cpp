// Goes around "library_calls": false with an inline copy of xencoder's header: declares
// softmax_forward as xenc/ops/softmax.hpp does, without including it, and calls it. The object
// then needs xenc::softmax_forward, which the policy's symbol check refuses by name (and
// xencoder::tensors, which grade-softmax is linked against, does not define).
#include "exercises.hpp"

namespace xenc {
template <std::size_t R>
xt::xtensor<float, R> softmax_forward(const xt::xtensor<float, R>& x);
}  // namespace xenc

namespace assignment {

Tensor2 softmax(const Tensor2& x) { return xenc::softmax_forward(x); }

}  // namespace assignment

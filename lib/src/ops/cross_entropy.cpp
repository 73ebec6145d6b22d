// Cross-entropy over logits via a stable log-softmax; the row loops are kernels::cross_entropy_rows
// (lib/src/kernels/rows.cpp), the formula's reference is reference::cross_entropy_forward.
#include "xenc/ops/cross_entropy.hpp"

#include <limits>
#include <string>
#include <vector>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

namespace {

// The number of targets that count (not ignore_index); throws for one outside [0, C).
// targets: any shape, read in row-major order (the rows of the logits' [N, C] view).
template <class I>
std::size_t count_targets(const char* where, std::size_t C, const I& targets,
                          std::int64_t ignore_index) {
  std::size_t count = 0, n = 0;
  for (const std::int64_t t : targets) {
    if (t != ignore_index) {
      if (t < 0 || static_cast<std::size_t>(t) >= C)
        throw index_error(std::string(where) + ": targets[" + std::to_string(n) + "] is " +
                          std::to_string(t) + ", expected 0 <= target < C = " + std::to_string(C));
      ++count;
    }
    ++n;
  }
  return count;
}

// The mean over the counted rows. PyTorch's mean over no targets is 0/0 = NaN, and so is ours:
// a batch with nothing to learn from shows as NaN, it is not silently a loss of 0.
template <class L, class I>
float mean_loss(const L& logits, const I& targets, std::size_t count, std::int64_t ignore_index) {
  if (count == 0) return std::numeric_limits<float>::quiet_NaN();
  const double total = kernels::cross_entropy_rows(kernels::as_matrix(logits),
                                                   kernels::as_vector(targets), ignore_index);
  return static_cast<float>(total / double(count));
}

// dlogits = (softmax - onehot) / count, zero rows where ignored (all zeros when count = 0).
template <class L, class I>
L loss_gradient(const L& logits, const I& targets, std::size_t count, std::int64_t ignore_index) {
  L d = L::from_shape(logits.shape());
  const float inv = count == 0 ? 0.0f : 1.0f / static_cast<float>(count);
  kernels::cross_entropy_rows_backward(kernels::as_matrix(logits), kernels::as_vector(targets),
                                       ignore_index, inv, kernels::as_matrix(d));
  return d;
}

void check_targets(const char* where, const Tensor2& logits, const Index1& targets) {
  const std::size_t N = logits.shape(0);
  check_shape(where, "targets", targets, {long(N)},
              "[N] with N = " + std::to_string(N) + " (logits have shape " +
                  shape_str(logits.shape()) + ")");
}

void check_targets(const char* where, const Tensor3& logits, const Index2& targets) {
  const std::size_t B = logits.shape(0), T = logits.shape(1);
  check_shape(where, "targets", targets, {long(B), long(T)},
              "[B, T] = " + shape_str(std::vector<std::size_t>{B, T}) + " (logits have shape " +
                  shape_str(logits.shape()) + ")");
}

// [B, T, C] logits are the [B·T, C] case: the kernels see every tensor as its rows.
template <class L, class I>
float forward(const L& logits, const I& targets, std::int64_t ignore_index) {
  const char* where = "cross_entropy_forward";
  check_targets(where, logits, targets);
  const std::size_t C = logits.shape(logits.dimension() - 1);
  const std::size_t count = count_targets(where, C, targets, ignore_index);
  return mean_loss(logits, targets, count, ignore_index);
}

template <class L, class I>
L backward(const L& logits, const I& targets, std::int64_t ignore_index) {
  const char* where = "cross_entropy_backward";
  check_targets(where, logits, targets);
  const std::size_t C = logits.shape(logits.dimension() - 1);
  const std::size_t count = count_targets(where, C, targets, ignore_index);
  return loss_gradient(logits, targets, count, ignore_index);
}

}  // namespace

float cross_entropy_forward(const Tensor2& logits, const Index1& targets,
                            std::int64_t ignore_index) {
  return forward(logits, targets, ignore_index);
}

Tensor2 cross_entropy_backward(const Tensor2& logits, const Index1& targets,
                               std::int64_t ignore_index) {
  return backward(logits, targets, ignore_index);
}

float cross_entropy_forward(const Tensor3& logits, const Index2& targets,
                            std::int64_t ignore_index) {
  return forward(logits, targets, ignore_index);
}

Tensor3 cross_entropy_backward(const Tensor3& logits, const Index2& targets,
                               std::int64_t ignore_index) {
  return backward(logits, targets, ignore_index);
}

}  // namespace xenc

// Cross-entropy over logits via a stable log-softmax.
#include "xenc/ops/cross_entropy.hpp"

#include <algorithm>
#include <cmath>
#include <vector>
#include <stdexcept>
#include <string>

#include "xenc/core/error.hpp"
#include "xenc/ops/softmax.hpp"

namespace xenc {

namespace {
std::size_t count_targets(const char* where, const Tensor2& logits, const Index1& targets,
                          std::int64_t ignore_index) {
  const std::size_t N = logits.shape(0), C = logits.shape(1);
  check_shape(where, "targets", targets, {long(N)},
              "[N] with N = " + std::to_string(N) + " (logits have shape " +
                  shape_str(logits.shape()) + ")");
  std::size_t count = 0;
  for (std::size_t n = 0; n < N; ++n) {
    const std::int64_t t = targets(n);
    if (t == ignore_index) continue;
    if (t < 0 || static_cast<std::size_t>(t) >= C)
      throw index_error(std::string(where) + ": targets[" + std::to_string(n) + "] is " +
                              std::to_string(t) + ", expected 0 <= target < C = " +
                              std::to_string(C));
    ++count;
  }
  return count;
}
}  // namespace

float cross_entropy_forward(const Tensor2& logits, const Index1& targets,
                            std::int64_t ignore_index) {
  const std::size_t count = count_targets("cross_entropy_forward", logits, targets, ignore_index);
  const std::size_t N = logits.shape(0), C = logits.shape(1);
  double total = 0.0;
  for (std::size_t n = 0; n < N; ++n) {
    if (targets(n) == ignore_index) continue;
    // -log softmax(z)[t] = logsumexp(z) - z_t, with the max subtracted for stability
    const float* z = logits.data() + n * C;
    double m = z[0];
    for (std::size_t c = 1; c < C; ++c) m = std::fmax(m, double(z[c]));
    double s = 0.0;
    for (std::size_t c = 0; c < C; ++c) s += std::exp(double(z[c]) - m);
    total += m + std::log(s) - double(z[targets(n)]);
  }
  // PyTorch's mean over no targets is 0/0 = NaN; ours is 0 (nothing to learn from).
  return count == 0 ? 0.0f : static_cast<float>(total / double(count));
}

Tensor2 cross_entropy_backward(const Tensor2& logits, const Index1& targets,
                               std::int64_t ignore_index) {
  const std::size_t count = count_targets("cross_entropy_backward", logits, targets, ignore_index);
  const std::size_t N = logits.shape(0), C = logits.shape(1);
  Tensor2 d = softmax_forward(logits);
  const float inv = count == 0 ? 0.0f : 1.0f / static_cast<float>(count);
  for (std::size_t n = 0; n < N; ++n) {
    float* row = d.data() + n * C;
    if (targets(n) == ignore_index) {
      for (std::size_t c = 0; c < C; ++c) row[c] = 0.0f;
      continue;
    }
    // (softmax - onehot) / N'
    row[targets(n)] -= 1.0f;
    for (std::size_t c = 0; c < C; ++c) row[c] *= inv;
  }
  return d;
}

namespace {
// [B, T, C] and [B, T] -> [B·T, C] and [B·T] (copies: the rows are already contiguous)
void flatten(const char* where, const Tensor3& logits, const Index2& targets, Tensor2& l2,
             Index1& t1) {
  const std::size_t B = logits.shape(0), T = logits.shape(1), C = logits.shape(2);
  check_shape(where, "targets", targets, {long(B), long(T)},
              "[B, T] = " + shape_str(std::vector<std::size_t>{B, T}) + " (logits have shape " +
                  shape_str(logits.shape()) + ")");
  l2 = Tensor2::from_shape({B * T, C});
  std::copy_n(logits.data(), logits.size(), l2.data());
  t1 = Index1::from_shape({B * T});
  std::copy_n(targets.data(), targets.size(), t1.data());
}
}  // namespace

float cross_entropy_forward(const Tensor3& logits, const Index2& targets,
                            std::int64_t ignore_index) {
  Tensor2 l2;
  Index1 t1;
  flatten("cross_entropy_forward", logits, targets, l2, t1);
  return cross_entropy_forward(l2, t1, ignore_index);
}

Tensor3 cross_entropy_backward(const Tensor3& logits, const Index2& targets,
                               std::int64_t ignore_index) {
  Tensor2 l2;
  Index1 t1;
  flatten("cross_entropy_backward", logits, targets, l2, t1);
  const Tensor2 d2 = cross_entropy_backward(l2, t1, ignore_index);
  Tensor3 d = Tensor3::from_shape(logits.shape());
  std::copy_n(d2.data(), d2.size(), d.data());
  return d;
}

}  // namespace xenc

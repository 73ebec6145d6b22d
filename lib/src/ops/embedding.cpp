// Embedding lookup and its scatter-add backward.
#include "xenc/ops/embedding.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "xenc/core/error.hpp"

namespace xenc {

namespace {
void check_id(const char* where, std::int64_t id, std::size_t V, std::size_t b, std::size_t t) {
  if (id < 0 || static_cast<std::size_t>(id) >= V)
    throw index_error(std::string(where) + ": ids[" + std::to_string(b) + ", " +
                            std::to_string(t) + "] is " + std::to_string(id) +
                            ", expected 0 <= id < V = " + std::to_string(V));
}
}  // namespace

Tensor3 embedding_forward(const Index2& ids, const Tensor2& weight) {
  const std::size_t B = ids.shape(0), T = ids.shape(1), V = weight.shape(0), D = weight.shape(1);
  Tensor3 y = Tensor3::from_shape({B, T, D});
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t t = 0; t < T; ++t) {
      const std::int64_t id = ids(b, t);
      check_id("embedding_forward", id, V, b, t);
      // copy row `id` of the table
      std::copy_n(weight.data() + id * D, D, y.data() + (b * T + t) * D);
    }
  }
  return y;
}

Tensor2 embedding_backward(const Tensor3& grad_y, const Index2& ids, std::size_t num_embeddings,
                           std::int64_t padding_idx) {
  const std::size_t B = ids.shape(0), T = ids.shape(1), D = grad_y.shape(2);
  check_shape("embedding_backward", "grad_y", grad_y, {long(B), long(T), any_dim},
              "[B, T, D] with B = " + std::to_string(B) + ", T = " + std::to_string(T));
  Tensor2 dw = xt::zeros<float>({num_embeddings, D});
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t t = 0; t < T; ++t) {
      const std::int64_t id = ids(b, t);
      check_id("embedding_backward", id, num_embeddings, b, t);
      if (id == padding_idx) continue;  // the padding row is never trained
      // several positions may share a token: their gradients add up
      const float* g = grad_y.data() + (b * T + t) * D;
      float* row = dw.data() + id * D;
      for (std::size_t d = 0; d < D; ++d) row[d] += g[d];
    }
  }
  return dw;
}

}  // namespace xenc

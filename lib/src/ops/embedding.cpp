// Embedding lookup and its scatter-add backward; the row copies are kernels::gather_rows and
// kernels::scatter_add_rows (lib/src/kernels/rows.cpp).
#include "xenc/ops/embedding.hpp"

#include <string>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

namespace {
// Every id in [0, V), checked before any row is read.
void check_ids(const char* where, const Index2& ids, std::size_t V) {
  for (std::size_t b = 0; b < ids.shape(0); ++b)
    for (std::size_t t = 0; t < ids.shape(1); ++t) {
      const std::int64_t id = ids(b, t);
      if (id < 0 || static_cast<std::size_t>(id) >= V)
        throw index_error(std::string(where) + ": ids[" + std::to_string(b) + ", " +
                          std::to_string(t) + "] is " + std::to_string(id) +
                          ", expected 0 <= id < V = " + std::to_string(V));
    }
}
}  // namespace

Tensor3 embedding_forward(const Index2& ids, const Tensor2& weight) {
  const std::size_t B = ids.shape(0), T = ids.shape(1), V = weight.shape(0), D = weight.shape(1);
  check_ids("embedding_forward", ids, V);
  // row b·T + t of y [B·T, D] is row ids[b, t] of the table
  Tensor3 y = Tensor3::from_shape({B, T, D});
  kernels::gather_rows(kernels::as_matrix(weight), kernels::as_vector(ids), kernels::as_matrix(y));
  return y;
}

Tensor2 embedding_backward(const Tensor3& grad_y, const Index2& ids, std::size_t num_embeddings,
                           std::int64_t padding_idx) {
  const std::size_t B = ids.shape(0), T = ids.shape(1), D = grad_y.shape(2);
  check_shape("embedding_backward", "grad_y", grad_y, {long(B), long(T), any_dim},
              "[B, T, D] with B = " + std::to_string(B) + ", T = " + std::to_string(T));
  check_ids("embedding_backward", ids, num_embeddings);
  // dweight row v = Σ of the gradient rows whose id is v; the padding row receives none
  Tensor2 dw = xt::zeros<float>({num_embeddings, D});
  kernels::scatter_add_rows(kernels::as_matrix(grad_y), kernels::as_vector(ids), padding_idx,
                            kernels::as_matrix(dw));
  return dw;
}

}  // namespace xenc

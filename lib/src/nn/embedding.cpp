// Embedding module: a table of V vectors, N(0, 1) initialised, padding row zero.
#include "xenc/nn/embedding.hpp"

#include <algorithm>
#include <memory>
#include <string>

#include <xtensor/xnoalias.hpp>
#include <xtensor/xview.hpp>

#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/ops/embedding.hpp"

namespace xenc {

Embedding::Embedding(std::size_t num_embeddings, std::size_t embedding_dim, Rng& rng,
                     std::int64_t padding_idx)
    : padding_idx(padding_idx) {
  check_config(num_embeddings > 0 && embedding_dim > 0, "Embedding",
               "num_embeddings (" + std::to_string(num_embeddings) + ") and embedding_dim (" +
                   std::to_string(embedding_dim) + ") must be > 0");
  check_config(padding_idx < static_cast<std::int64_t>(num_embeddings), "Embedding",
               "padding_idx is " + std::to_string(padding_idx) +
                   ", expected < num_embeddings = " + std::to_string(num_embeddings));
  weight = Tensor2::from_shape({num_embeddings, embedding_dim});
  fill_normal(weight, rng);
  // the padding row starts at zero, as in PyTorch
  if (padding_idx >= 0) xt::row(weight, padding_idx) = xt::zeros<float>({embedding_dim});
}

Embedding::Embedding(std::size_t num_embeddings, std::size_t embedding_dim,
                     std::int64_t padding_idx, std::uint32_t seed)
    : Embedding(num_embeddings, embedding_dim, as_lvalue(Rng(seed)), padding_idx) {}

Tensor3 Embedding::forward(const Index2& ids) {
  has_cache_ = GradMode::is_enabled();  // a no-grad forward must not leave an old cache behind
  if (has_cache_) cache_ids_ = ids;
  return embedding_forward(ids, weight);
}

void Embedding::backward(const Tensor3& grad_y) {
  require_cache(has_cache_, "Embedding.backward");
  ensure_grad(weight_grad, weight);  // allocated by the first backward
  xt::noalias(weight_grad) += embedding_backward(grad_y, cache_ids_, num_embeddings(), padding_idx);
}

void Embedding::collect_parameters(const std::string& prefix, ParameterList& out) {
  out.push_back(make_parameter(join_name(prefix, "weight"), weight, weight_grad));
}

}  // namespace xenc

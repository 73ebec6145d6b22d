// Token embedding: a learned table of V vectors of size D.
//
//     y[b, t, :] = weight[ids[b, t], :]
//
// Args:    num_embeddings V, embedding_dim D, padding_idx (-1 = none; that row starts at 0
//          and gets no gradient)
// Params:  weight [V, D], initialised N(0, 1) as PyTorch does.
// Shapes:  ids: [B, T] int64   y: [B, T, D]
// PyTorch: torch.nn.Embedding(V, D, padding_idx)
// Throws:  xenc::index_error for an id outside [0, V).
#pragma once

#include <cstddef>
#include <cstdint>

#include "xenc/core/error.hpp"
#include "xenc/core/random.hpp"
#include "xenc/core/tensor.hpp"
#include "xenc/nn/module.hpp"

namespace xenc {

class Embedding : public Module {
 public:
  Embedding(std::size_t num_embeddings, std::size_t embedding_dim, Rng& rng,
            std::int64_t padding_idx = -1);
  Embedding(std::size_t num_embeddings, std::size_t embedding_dim, std::int64_t padding_idx = -1,
            std::uint32_t seed = 0);

  Tensor3 forward(const Index2& ids);
  /// Accumulates the weight gradient; ids are discrete, so there is no input gradient.
  void backward(const Tensor3& grad_y);

  void collect_parameters(const std::string& prefix, ParameterList& out) override;

  std::size_t num_embeddings() const { return weight.shape(0); }
  std::size_t embedding_dim() const { return weight.shape(1); }

  Tensor2 weight, weight_grad;  ///< [V, D]
  std::int64_t padding_idx = -1;

 private:
  Index2 cache_ids_;
  bool has_cache_ = false;
};

}  // namespace xenc

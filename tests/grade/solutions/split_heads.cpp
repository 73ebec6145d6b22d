// Reference solution: [B, T, D] -> [B, H, T, Dh].
#include "exercises.hpp"

#include <string>

namespace assignment {

Tensor4 split_heads(const Tensor3& x, std::size_t num_heads) {
  const std::size_t B = x.shape()[0], T = x.shape()[1], D = x.shape()[2];
  if (num_heads == 0 || D % num_heads != 0)
    throw xenc::config_error("split_heads: D (" + std::to_string(D) +
                             ") must be divisible by num_heads (" + std::to_string(num_heads) +
                             ")");
  const std::size_t Dh = D / num_heads;
  Tensor4 out = Tensor4::from_shape({B, num_heads, T, Dh});
  // head h takes columns h·Dh .. h·Dh + Dh - 1 of every token
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < num_heads; ++h)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t e = 0; e < Dh; ++e) out(b, h, t, e) = x(b, t, h * Dh + e);
  return out;
}

}  // namespace assignment

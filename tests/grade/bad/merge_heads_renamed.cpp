// A correct merge_heads under another name (merge_head): it compiles, but grade-merge_heads does
// not link, and the report names the missing function, not the linker's "ld returned 1".
#include "exercises.hpp"

namespace assignment {

Tensor3 merge_head(const Tensor4& x) {
  const std::size_t B = x.shape()[0], H = x.shape()[1], T = x.shape()[2], Dh = x.shape()[3];
  Tensor3 out = Tensor3::from_shape({B, T, H * Dh});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t e = 0; e < Dh; ++e) out(b, t, h * Dh + e) = x(b, h, t, e);
  return out;
}

}  // namespace assignment

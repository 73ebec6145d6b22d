// Reference solution: scaled dot-product attention, loop by loop, mask before the softmax.
#include "exercises.hpp"

#include <cmath>
#include <limits>
#include <vector>

namespace assignment {

xenc::AttentionResult attention(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                const Mask2& key_padding_mask) {
  const std::size_t B = q.shape()[0], H = q.shape()[1], Tq = q.shape()[2], Dh = q.shape()[3];
  const std::size_t Tk = k.shape()[2];
  const float scale = 1.0f / std::sqrt(float(Dh));
  const float inf = std::numeric_limits<float>::infinity();
  xenc::AttentionResult r;
  r.output = xt::zeros<float>({B, H, Tq, Dh});
  r.weights = xt::zeros<float>({B, H, Tq, Tk});
  std::vector<float> s(Tk);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < Tq; ++i) {
        // scores of query i against every key; padding keys get -inf
        float m = -inf;
        for (std::size_t j = 0; j < Tk; ++j) {
          float dot = 0.0f;
          for (std::size_t e = 0; e < Dh; ++e) dot += q(b, h, i, e) * k(b, h, j, e);
          s[j] = key_padding_mask(b, j) ? -inf : dot * scale;
          m = std::max(m, s[j]);
        }
        if (m == -inf) continue;  // every key is padding: P = 0, O = 0
        // softmax over the keys, then the weighted sum of the values
        float sum = 0.0f;
        for (std::size_t j = 0; j < Tk; ++j) sum += (s[j] = std::exp(s[j] - m));
        for (std::size_t j = 0; j < Tk; ++j) {
          r.weights(b, h, i, j) = s[j] / sum;
          for (std::size_t e = 0; e < Dh; ++e)
            r.output(b, h, i, e) += r.weights(b, h, i, j) * v(b, h, j, e);
        }
      }
  return r;
}

}  // namespace assignment

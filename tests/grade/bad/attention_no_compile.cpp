// An attention that does not compile (an undeclared name).
#include "exercises.hpp"

namespace assignment {

xenc::AttentionResult attention(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                const Mask2& key_padding_mask) {
  return undeclared_attention_helper(q, k, v, key_padding_mask);
}

}  // namespace assignment

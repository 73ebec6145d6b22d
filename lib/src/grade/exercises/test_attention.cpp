// Exercise test_attention: the student writes the test. The student's check of scaled dot-product
// attention with a key-padding mask runs against the correct one (it must accept it) and against
// each of the museum's attention exhibits (it should reject them); the score is the share it
// rejects (test_support.hpp). This file lists the candidates; the grader computes each, the
// student's process only calls them.
//
// @exercise test_attention
// @order 22
// @points 1
// @function bool test_attention(const xenc::grade::AttentionFn& attention)
// @doc Your test of attention (the function of the exercise attention: q, k, v and a key-padding
// @doc mask in, output and weights out): return true when `attention` is right, false (or throw)
// @doc when it is wrong. The grader runs it on a correct attention, which it must accept, and on
// @doc each published mistake of the museum (xenc-pe-pitfalls), which it should reject. Your
// @doc points are the share of mistakes it catches; the report names the ones it missed. A test
// @doc that rejects the correct attention scores 0; a run that crashes or hangs gives no verdict
// @doc (it neither accepts nor catches). The function under test takes q: [B, H, Tq, Dh],
// @doc k, v: [B, H, Tk, Dh], key_padding_mask: [B, Tk] (true = padding), every size >= 1, at most
// @doc 1048576 values per tensor and B·H·Tq·Tk·Dh <= 16777216 (others throw, whichever function
// @doc it is).
// @using xenc::grade::AttentionFn
// @stub     return true when attention(q, k, v, key_padding_mask) is right on inputs of your
// @stub     choice, false when it is not
// @notebook ### Exercise: a test that catches a wrong attention
// @notebook
// @notebook Here you write the test, not the function: `test_attention(attention)` receives an attention `(q, k, v, key_padding_mask)` and returns `true` when it is right, `false` (or throws) when it is wrong. The check runs your test on a correct attention, which it must accept, and on each published attention mistake of the museum (`xenc-pe-pitfalls`), which it should reject; your score is the share of mistakes it catches, and the report names the ones it missed, never their code. Call it on inputs of your choice and compare with values you worked out by hand, with a tolerance (float32 rounds). The next cell grades a weak test the same way: see what its report says, then write a stronger one.
// @notebook_stub return true when attention(q, k, v, key_padding_mask) is right on inputs of your
// @notebook_stub choice, false when it is not
// @notebook_weak // a weak test: one query, two keys, Dh = 4, no padding: scores [4, 0] / sqrt(4),
// @notebook_weak // so the first weight is e² / (e² + 1) = 0.880797
// @notebook_weak xenc::Tensor4 q = xt::ones<float>({1, 1, 1, 4}), k = xt::zeros<float>({1, 1, 2, 4});
// @notebook_weak for (std::size_t e = 0; e < 4; ++e) k(0, 0, 0, e) = 1;
// @notebook_weak const xenc::AttentionResult a = attention(q, k, k, xt::zeros<bool>({1, 2}));
// @notebook_weak return std::fabs(a.weights(0, 0, 0, 0) - 0.880797078f) < 1e-5f;
#include "../test_support.hpp"

namespace xenc::grade {

using namespace support;
using testing::Candidate;

namespace {
using Attention = AttentionResult (*)(const Tensor4&, const Tensor4&, const Tensor4&, const Mask2&);

std::string shape_text(const std::vector<std::size_t>& s) {
  std::string t = "[";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

// The function under test, whichever candidate: the inputs checked first, the same for all.
AttentionFn guarded(Attention f) {
  return [f](const Tensor4& q, const Tensor4& k, const Tensor4& v, const Mask2& mask) {
    testing::check_sizes("attention", "q", q);
    testing::check_sizes("attention", "k", k);
    testing::check_sizes("attention", "v", v);
    testing::check_sizes("attention", "key_padding_mask", mask);
    const std::size_t B = q.shape()[0], H = q.shape()[1], Tq = q.shape()[2], Dh = q.shape()[3];
    const std::size_t Tk = k.shape()[2];
    const std::vector<std::size_t> kv = {B, H, Tk, Dh}, m = {B, Tk};
    auto expect = [](const char* name, const auto& t, const std::vector<std::size_t>& want) {
      const std::vector<std::size_t> got(t.shape().begin(), t.shape().end());
      if (got != want)
        throw std::invalid_argument("attention: " + std::string(name) + " has the shape " +
                                    shape_text(got) + ", expected " + shape_text(want));
    };
    expect("k", k, kv);
    expect("v", v, kv);
    expect("key_padding_mask", mask, m);
    if (double(B) * double(H) * double(Tq) * double(Tk) * double(Dh) > double(1 << 24))
      throw std::length_error("attention: B·H·Tq·Tk·Dh is more than the grader computes (" +
                              std::to_string(1 << 24) + ")");
    return f(q, k, v, mask);
  };
}

AttentionResult correct(const Tensor4& q, const Tensor4& k, const Tensor4& v, const Mask2& mask) {
  const ref::Attention a = ref::attention(ref::from(q), ref::from(k), ref::from(v),
                                          std::vector<int>(mask.begin(), mask.end()));
  return {testing::to_float<4>(a.output), testing::to_float<4>(a.weights)};
}

std::vector<Candidate<signature::attention>> candidates() {
  return {{std::nullopt, guarded(correct)},
          {Pitfall::attention_without_scale, guarded(pitfalls::attention_without_scale)},
          {Pitfall::attention_scale_by_dh, guarded(pitfalls::attention_scale_by_dh)},
          {Pitfall::mask_inverted, guarded(pitfalls::attention_inverted_mask)},
          {Pitfall::mask_after_softmax, guarded(pitfalls::attention_mask_after_softmax)}};
}

const RegisterExercise registered{testing::tester(spec::test_attention(), "attention", candidates)};
}  // namespace

ExerciseResult check_test_attention(const TestAttentionFn& student) {
  return testing::check_here<signature::attention>("test_attention", "attention", candidates(),
                                                   student);
}

}  // namespace xenc::grade

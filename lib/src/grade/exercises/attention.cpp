// Exercise attention: scaled dot-product attention with a key-padding mask. This file is the whole
// exercise and the one place it is written: the `// @` lines are its specification, then come its
// registration and its checks, named cases (hand example, reference values, invariant, edge case,
// hidden), each with the museum exhibits that could explain its failure. Hand examples carry their
// arithmetic in a comment.
//
// @exercise attention
// @order 4
// @points 1
// @function xenc::AttentionResult attention(const Tensor4& q, const Tensor4& k, const Tensor4& v,
// @function                                 const Mask2& key_padding_mask)
// @doc Scaled dot-product attention with a key-padding mask:
// @doc     S = Q Kᵀ / sqrt(Dh);  S[.., i, j] = -inf where key_padding_mask[b, j] (true = padding)
// @doc     P = softmax(S) over keys (a row with every key masked: P = 0, O = 0);  O = P V
// @doc Shapes:  q: [B, H, Tq, Dh]   k, v: [B, H, Tk, Dh]   key_padding_mask: [B, Tk]
// @doc          returns output O [B, H, Tq, Dh] and weights P [B, H, Tq, Tk]
// @stub     S = Q Kᵀ / sqrt(Dh), S[.., i, j] = -inf where key_padding_mask[b, j];  P = softmax(S);  O = P
// @stub     V
// @notebook ### Exercise: attention with a key-padding mask
// @notebook
// @notebook $S = QK^\top/\sqrt{D_h}$; where `key_padding_mask[b, j]` is `true`, key $j$ gets score $-\infty$ *before* the softmax; $P = \operatorname{softmax}(S)$ over the keys (a query whose keys are all masked gets $P = 0$ and $O = 0$); $O = PV$. Return `xenc::AttentionResult` (fields `output` and `weights`).
// @notebook_stub q: [B, H, Tq, Dh]   k, v: [B, H, Tk, Dh]   key_padding_mask: [B, Tk] (true = padding)
// @notebook_stub returns .output [B, H, Tq, Dh] and .weights [B, H, Tq, Tk]
#include "../exercise_support.hpp"

namespace xenc::grade {

using namespace support;

namespace {
const RegisterExercise registered{remote(spec::attention(), check_attention)};
}  // namespace

// ---- attention --------------------------------------------------------------------------------

namespace {
std::vector<int> mask_ints(const Mask2& m) { return std::vector<int>(m.begin(), m.end()); }

Mask2 padding_mask(const std::vector<std::size_t>& lengths, std::size_t T) {
  Mask2 m = Mask2::from_shape({lengths.size(), T});
  for (std::size_t b = 0; b < lengths.size(); ++b)
    for (std::size_t t = 0; t < T; ++t) m(b, t) = t >= lengths[b];  // true = padding
  return m;
}
}  // namespace

// Long because: it is the exercise's list of checks, one after another in the order the
// report prints them (hand example, reference values, invariants, edge cases, hidden), each
// with its inputs and hint; split up, the list would no longer read as one list.
ExerciseResult check_attention(const AttentionFn& student) {
  ExerciseResult r = start("attention");
  auto as_output = [](const AttentionResult& a) {
    return Output{field("output", a.output), field("weights", a.weights)};
  };
  struct In {
    Tensor4 q, k, v;
    Mask2 mask;
  };
  auto call = [student, as_output](const In& in) {
    return [=] { return as_output(student(in.q, in.k, in.v, in.mask)); };
  };
  auto reference = [](const In& in) {
    const ref::Attention a =
        ref::attention(ref::from(in.q), ref::from(in.k), ref::from(in.v), mask_ints(in.mask));
    return Output{from_ref("output", a.output), from_ref("weights", a.weights)};
  };
  auto exhibits = [as_output](const In& in) {
    using F = AttentionResult (*)(const Tensor4&, const Tensor4&, const Tensor4&, const Mask2&);
    auto ex = [&](Pitfall p, F f) {
      return Exhibit{p, [=] { return as_output(f(in.q, in.k, in.v, in.mask)); }};
    };
    return std::vector<Exhibit>{
        ex(Pitfall::attention_without_scale, pitfalls::attention_without_scale),
        ex(Pitfall::attention_scale_by_dh, pitfalls::attention_scale_by_dh),
        ex(Pitfall::mask_after_softmax, pitfalls::attention_mask_after_softmax),
        ex(Pitfall::mask_inverted, pitfalls::attention_inverted_mask)};
  };
  auto inputs = [](const In& in) {
    return show("q", in.q) + "; " + show("k", in.k) + "; " + show("v", in.v) +
           "; key_padding_mask " + shape_str(in.mask.shape()) + " = " +
           detail::list(std::vector<double>(in.mask.begin(), in.mask.end()));
  };
  auto random_in = [](std::size_t B, std::size_t H, std::size_t T, std::size_t Dh,
                      std::vector<std::size_t> lengths, std::uint32_t seed, float scale) {
    const std::array<std::size_t, 4> s = {B, H, T, Dh};
    return In{randn<Tensor4>(s, seed, scale), randn<Tensor4>(s, seed + 1, scale),
              randn<Tensor4>(s, seed + 2), padding_mask(lengths, T)};
  };
  const std::string formula_hint =
      "S = Q Kᵀ / sqrt(Dh); S[.., i, j] = -inf where key_padding_mask[b, j] is true; P = "
      "softmax(S) over j; O = P V.";

  // Hand example: B = 2 copies of one head with Dh = 4; q0 = [2, 0, 0, 0], q1 = 0, k0 = [1, 0, 0,
  // 0], k1 = 0, v0 = [1, 0, 0, 0], v1 = [0, 1, 0, 0]; sentence 1's key 1 is padding. Sentence 0: S
  // = [[2/sqrt(4), 0], [0, 0]] = [[1, 0], [0, 0]], so P = [[e/(e+1), 1/(e+1)], [0.5, 0.5]]
  //   = [[0.731059, 0.268941], [0.5, 0.5]] and O = P's rows padded with zeros (v0, v1 are unit
  //   vectors).
  // Sentence 1: key 1 is masked, so P = [[1, 0], [1, 0]] and O = [[1, 0, 0, 0], [1, 0, 0, 0]].
  In hin;
  hin.q = xt::zeros<float>({2, 1, 2, 4});
  hin.k = xt::zeros<float>({2, 1, 2, 4});
  hin.v = xt::zeros<float>({2, 1, 2, 4});
  for (std::size_t b = 0; b < 2; ++b) {
    hin.q(b, 0, 0, 0) = 2;
    hin.k(b, 0, 0, 0) = 1;
    hin.v(b, 0, 0, 0) = 1;
    hin.v(b, 0, 1, 1) = 1;
  }
  hin.mask = padding_mask({2, 1}, 2);
  const double a = 0.7310585786, c = 0.2689414214;
  add(r,
      {"hand example: B = 2, T = 2, Dh = 4, sentence 1 has one padding key",
       inputs(hin),
       call(hin),
       {Field{"output", {2, 1, 2, 4}, {a, c, 0, 0, 0.5, 0.5, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}},
        Field{"weights", {2, 1, 2, 2}, {a, c, 0.5, 0.5, 1, 0, 1, 0}}}},
      exhibits(hin), formula_hint);

  const In rin = random_in(2, 2, 4, 4, {4, 2}, 41, 1.0f);
  add(r,
      {"reference values: B = 2, H = 2, T = 4, Dh = 4, lengths 4 and 2 (the formula in double)",
       inputs(rin), call(rin), reference(rin)},
      exhibits(rin), formula_hint);

  // Invariant: weights on padding keys are exactly 0 (compared with tolerance 0).
  auto padding_weights = [mask = rin.mask](const Output& o) {
    const Field& w = o.at(1);
    Field z{"weights on padding keys", {}, {}};
    const std::size_t B = w.shape.at(0), H = w.shape.at(1), Tq = w.shape.at(2), Tk = w.shape.at(3);
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t i = 0; i < Tq; ++i)
          for (std::size_t j = 0; j < Tk; ++j)
            if (mask(b, j)) z.data.push_back(w.data[((b * H + h) * Tq + i) * Tk + j]);
    z.shape = {z.data.size()};
    return Output{z};
  };
  ValueCheck zero{"invariant: weights on padding keys are exactly 0", inputs(rin), call(rin),
                  padding_weights(reference(rin))};
  zero.measure = padding_weights;
  zero.tol = detail::Tolerance{0.0, 0.0};
  add(r, zero, exhibits(rin),
      "set the scores of padding keys to -inf before the softmax: exp(-inf) is exactly 0.");

  ValueCheck sums{"invariant: each row of weights sums to 1",
                  inputs(rin),
                  call(rin),
                  {Field{"row sums of weights", {16}, std::vector<double>(16, 1.0)}}};
  sums.measure = [](const Output& o) { return row_sums(o, "row sums of weights", 1); };
  add(r, sums, exhibits(rin),
      "P must be a softmax over the keys that are not masked: mask the scores first, then "
      "normalise.");

  const In full = random_in(2, 1, 3, 4, {3, 0}, 44, 1.0f);
  add(r,
      {"edge case: a fully masked sentence (every key is padding) gives zeros, not NaN",
       inputs(full), call(full), reference(full)},
      exhibits(full),
      "when every key of a row is masked the row's max score is -inf: return P = 0 and O = 0 for "
      "it "
      "(xencoder's convention; PyTorch gives NaN) instead of computing exp(-inf - (-inf)).");

  const In odd = random_in(1, 2, 3, 3, {3}, 47, 1.0f);
  add(r, {"edge case: odd Dh = 3", inputs(odd), call(odd), reference(odd)}, exhibits(odd),
      formula_hint + " Dh is q's last dimension, whatever its parity.");

  const In one = random_in(2, 2, 1, 4, {1, 1}, 50, 1.0f);
  add(r, {"edge case: T = 1 (the only key gets weight 1)", inputs(one), call(one), reference(one)},
      exhibits(one), "with one key, P = [[1]] and O = V.");

  const In big = random_in(1, 1, 4, 4, {4}, 53, 10.0f);
  add(r, {"edge case: large scores (stability)", inputs(big), call(big), reference(big)},
      exhibits(big),
      "subtract each row's max score before exp (scores here reach the hundreds; exp(89) overflows "
      "float32).");
  if (std::optional<Rng> rng = hidden_rng("attention")) {
    const std::size_t B = hidden_size(*rng, 1, 3), H = hidden_size(*rng, 1, 3),
                      T = hidden_size(*rng, 2, 6);
    const std::size_t Dh = hidden_size(*rng, 2, 6);
    std::vector<std::size_t> lengths;
    for (std::size_t b = 0; b < B; ++b) lengths.push_back(hidden_size(*rng, 1, T));
    const In in = random_in(B, H, T, Dh, lengths, rng->next_u32(), 1.0f);
    add_hidden(r, {"hidden: reference values on the teacher's inputs", "", call(in), reference(in)},
               exhibits(in), formula_hint);
  }
  return r;
}

}  // namespace xenc::grade

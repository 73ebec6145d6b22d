// Exercise merge_heads: merging heads. This file is the whole exercise and the one place it is
// written: the `// @` lines are its specification, then come its registration and its checks, named
// cases (hand example, reference values, invariant, edge case, hidden), each with the museum
// exhibits that could explain its failure. Hand examples carry their arithmetic in a comment.
//
// @exercise merge_heads
// @order 6
// @points 1
// @function Tensor3 merge_heads(const Tensor4& x)
// @doc Merging heads, the inverse:  [B, H, T, Dh] -> [B, T, H·Dh],  out[b, t, h·Dh + e] = x[b, h, t, e]
// @doc (PyTorch: x.transpose(1, 2).reshape(B, T, H * Dh)).
// @stub     [B, H, T, Dh] -> [B, T, H·Dh],  out[b, t, h·Dh + e] = x[b, h, t, e]
// @notebook ### Exercise: merging heads
// @notebook
// @notebook The inverse, after attention: `out[b, t, h·Dh + e] = x[b, h, t, e]` (PyTorch: `x.transpose(1, 2).reshape(B, T, H * Dh)`).
// @notebook_stub x: [B, H, T, Dh] -> [B, T, H·Dh]
#include "../exercise_support.hpp"

namespace xenc::grade {

using namespace support;

namespace {
const RegisterExercise registered{remote(spec::merge_heads(), check_merge_heads)};
}  // namespace

// ---- merge heads ------------------------------------------------------------------------------

ExerciseResult check_merge_heads(const MergeHeadsFn& student) {
  ExerciseResult r = start("merge_heads");
  auto call = [student](const Tensor4& x) {
    return [=] { return Output{field("merged", student(x))}; };
  };
  auto reference = [](const Tensor4& x) {
    return Output{from_ref("merged", ref::merge_heads(ref::from(x)))};
  };
  auto no_transpose = [](const Tensor4& x) {
    return Exhibit{Pitfall::merge_heads_without_transpose, [=] {
                     return Output{field("merged", pitfalls::merge_heads_without_transpose(x))};
                   }};
  };
  const std::string formula_hint =
      "out[b, t, h·Dh + e] = x[b, h, t, e]: token t's row is its heads side by side.";

  // Hand example, the inverse of split_heads': heads [[[0, 1], [4, 5]], [[2, 3], [6, 7]]]
  // (head 0, head 1; rows are tokens) merge to [[0, 1, 2, 3], [4, 5, 6, 7]].
  const Tensor4 hx = {{{{0, 1}, {4, 5}}, {{2, 3}, {6, 7}}}};
  add(r,
      {"hand example: 2 heads of [2 tokens, Dh = 2]",
       show("x", hx),
       call(hx),
       {Field{"merged", {1, 2, 4}, {0, 1, 2, 3, 4, 5, 6, 7}}}},
      {no_transpose(hx)}, formula_hint);

  const Tensor4 rx = randn<Tensor4>(std::array<std::size_t, 4>{2, 4, 3, 2}, 71);
  add(r, {"reference values: x [2, 4, 3, 2] (B, H, T, Dh)", show("x", rx), call(rx), reference(rx)},
      {no_transpose(rx)}, formula_hint);

  const Tensor3 tx = randn<Tensor3>(std::array<std::size_t, 3>{2, 3, 6}, 72);
  const ref::Array split = ref::split_heads(ref::from(tx), 3);
  Tensor4 heads = Tensor4::from_shape({2, 3, 3, 2});
  std::copy(split.data.begin(), split.data.end(), heads.begin());
  add(r,
      {"invariant: merging split heads gives x back",
       show("x", tx) + " split into 3 heads: " + show("heads", heads),
       call(heads),
       {field("merged", tx)}},
      {no_transpose(heads)}, formula_hint);

  const Tensor4 ox = randn<Tensor4>(std::array<std::size_t, 4>{1, 2, 3, 3}, 73);
  add(r, {"edge case: odd Dh = 3", show("x", ox), call(ox), reference(ox)}, {no_transpose(ox)},
      formula_hint);

  const Tensor4 one = randn<Tensor4>(std::array<std::size_t, 4>{2, 2, 1, 4}, 74);
  add(r, {"edge case: T = 1", show("x", one), call(one), reference(one)}, {}, formula_hint);
  if (std::optional<Rng> rng = hidden_rng("merge_heads")) {
    const std::array<std::size_t, 4> shape{hidden_size(*rng, 1, 3), hidden_size(*rng, 2, 4),
                                           hidden_size(*rng, 1, 5), hidden_size(*rng, 1, 4)};
    const Tensor4 x = hidden_randn<Tensor4>(*rng, shape);
    add_hidden(r, {"hidden: reference values on the teacher's inputs", "", call(x), reference(x)},
               {no_transpose(x)}, formula_hint);
  }
  return r;
}

}  // namespace xenc::grade

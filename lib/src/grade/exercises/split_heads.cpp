// Exercise split_heads: splitting heads. This file is the whole exercise and the one place it is
// written: the `// @` lines are its specification, then come its registration and its checks, named
// cases (hand example, reference values, invariant, edge case, hidden), each with the museum
// exhibits that could explain its failure. Hand examples carry their arithmetic in a comment.
//
// @exercise split_heads
// @order 5
// @points 1
// @function Tensor4 split_heads(const Tensor3& x, std::size_t num_heads)
// @doc Splitting heads:  [B, T, D] -> [B, H, T, Dh],  out[b, h, t, e] = x[b, t, h·Dh + e],  Dh = D/H
// @doc (PyTorch: x.view(B, T, H, Dh).transpose(1, 2)).
// @doc Throws:  std::invalid_argument if D is not divisible by num_heads.
// @stub     [B, T, D] -> [B, H, T, Dh],  out[b, h, t, e] = x[b, t, h·Dh + e]
// @notebook ### Exercise: splitting heads
// @notebook
// @notebook Multi-head attention cuts the width $D$ into $H$ heads of $D_h = D/H$: `out[b, h, t, e] = x[b, t, h·Dh + e]` (PyTorch: `x.view(B, T, H, Dh).transpose(1, 2)`). Throw `std::invalid_argument` when $D$ is not divisible by $H$.
// @notebook_stub x: [B, T, D] -> [B, H, T, Dh], Dh = D / H
#include "../exercise_support.hpp"

namespace xenc::grade {

using namespace support;

namespace {
const RegisterExercise registered{remote(spec::split_heads(), check_split_heads)};
}  // namespace

// ---- heads ------------------------------------------------------------------------------------

ExerciseResult check_split_heads(const SplitHeadsFn& student) {
  ExerciseResult r = start("split_heads");
  auto call = [student](const Tensor3& x, std::size_t H) {
    return [=] { return Output{field("heads", student(x, H))}; };
  };
  auto reference = [](const Tensor3& x, std::size_t H) {
    return Output{from_ref("heads", ref::split_heads(ref::from(x), H))};
  };
  auto no_transpose = [](const Tensor3& x, std::size_t H) {
    return Exhibit{Pitfall::split_heads_without_transpose, [=] {
                     return Output{field("heads", pitfalls::split_heads_without_transpose(x, H))};
                   }};
  };
  const std::string formula_hint =
      "out[b, h, t, e] = x[b, t, h·Dh + e]: head h takes columns h·Dh .. h·Dh + Dh - 1 of every "
      "token.";

  // Hand example: x [1, 2, 4] = [[0, 1, 2, 3], [4, 5, 6, 7]], H = 2, Dh = 2: head 0 takes columns
  // 0..1 of both tokens ([[0, 1], [4, 5]]), head 1 columns 2..3 ([[2, 3], [6, 7]]).
  const Tensor3 hx = {{{0, 1, 2, 3}, {4, 5, 6, 7}}};
  add(r,
      {"hand example: x [1, 2, 4] = 0..7, H = 2",
       show("x", hx) + ", num_heads = 2",
       call(hx, 2),
       {Field{"heads", {1, 2, 2, 2}, {0, 1, 4, 5, 2, 3, 6, 7}}}},
      {no_transpose(hx, 2)}, formula_hint);

  const Tensor3 rx = randn<Tensor3>(std::array<std::size_t, 3>{2, 3, 8}, 61);
  add(r,
      {"reference values: x [2, 3, 8], H = 4", show("x", rx) + ", num_heads = 4", call(rx, 4),
       reference(rx, 4)},
      {no_transpose(rx, 4)}, formula_hint);

  const Tensor3 tx = randn<Tensor3>(std::array<std::size_t, 3>{2, 3, 6}, 62);
  ValueCheck trip{"invariant: merging the heads back gives x",
                  show("x", tx) + ", num_heads = 3",
                  call(tx, 3),
                  {field("merged", tx)}};
  trip.measure = [](const Output& o) {
    const Field& h = o.at(0);
    if (h.shape.size() != 4)
      throw std::invalid_argument("heads has shape " + shape_str(h.shape) +
                                  ", expected [B, H, T, Dh]");
    return Output{from_ref("merged", ref::merge_heads(ref::Array{h.shape, h.data}))};
  };
  add(r, trip, {no_transpose(tx, 3)}, formula_hint);

  const Tensor3 ox = randn<Tensor3>(std::array<std::size_t, 3>{2, 2, 6}, 63);
  add(r,
      {"edge case: odd Dh = 3 (D = 6, H = 2)", show("x", ox) + ", num_heads = 2", call(ox, 2),
       reference(ox, 2)},
      {no_transpose(ox, 2)}, formula_hint);

  const Tensor3 one = randn<Tensor3>(std::array<std::size_t, 3>{2, 1, 8}, 64);
  add(r, {"edge case: T = 1", show("x", one) + ", num_heads = 2", call(one, 2), reference(one, 2)},
      {}, formula_hint);

  const Tensor3 h1 = randn<Tensor3>(std::array<std::size_t, 3>{1, 3, 4}, 65);
  add(r,
      {"edge case: H = 1 (one head holds all of x)", show("x", h1) + ", num_heads = 1", call(h1, 1),
       reference(h1, 1)},
      {}, formula_hint);

  ThrowCheck indivisible{
      "edge case: D = 6 is not divisible by H = 4",
      "x [1, 2, 6], num_heads = 4",
      [student] { student(xt::zeros<float>({1, 2, 6}), 4); },
      "throws std::invalid_argument (e.g. xenc::config_error): D must be divisible by num_heads",
      "check D % num_heads == 0 first and throw std::invalid_argument (xenc::config_error is one).",
      {}};
  r.checks.push_back(run(indivisible));
  if (std::optional<Rng> rng = hidden_rng("split_heads")) {
    const std::size_t H = hidden_size(*rng, 1, 4);
    const std::array<std::size_t, 3> shape{hidden_size(*rng, 1, 3), hidden_size(*rng, 1, 5),
                                           H * hidden_size(*rng, 1, 4)};
    const Tensor3 x = hidden_randn<Tensor3>(*rng, shape);
    add_hidden(
        r, {"hidden: reference values on the teacher's inputs", "", call(x, H), reference(x, H)},
        {no_transpose(x, H)}, formula_hint);
  }
  return r;
}

}  // namespace xenc::grade

// Exercise relative_shift: Transformer-XL's relative shift. This file is the whole exercise and the
// one place it is written: the `// @` lines are its specification, then come its registration and
// its checks, named cases (hand example, reference values, invariant, edge case, hidden), each with
// the museum exhibits that could explain its failure. Hand examples carry their arithmetic in a
// comment.
//
// @exercise relative_shift
// @order 12
// @points 1
// @function Tensor2 relative_shift(const Tensor2& z)
// @doc Transformer-XL's relative shift (Dai et al., 2019, appendix B; ops/relative_attention.hpp).
// @doc z [T, 2T−1] holds one head's position scores (q_i + v)·r_δ, column m for the distance
// @doc δ = T − 1 − m (from T − 1 down to −(T − 1)). The shift gives each query i its window:
// @doc     y[i, j] = z[i, T − 1 − i + j]        (the score of distance i − j)
// @doc so row i of z moves left by T − 1 − i, and the diagonal y[i, i] is column T − 1 (δ = 0).
// @doc Shapes:  z: [T, 2T−1]   y: [T, T]
// @doc Throws:  std::invalid_argument (e.g. xenc::shape_error) unless z is [T, 2T−1].
// @doc Library: xenc::relative_shift (xenc/ops/relative_attention.hpp).
// @stub     column m of z is the distance T-1-m;  y[i, j] = z[i, T-1-i+j] (distance i - j)
// @notebook ### Exercise: the relative shift (Transformer-XL)
// @notebook
// @notebook Transformer-XL (Dai et al., 2019) adds to each score a position term $(q_i + v)\cdot r_{i-j}$ that depends on the distance $i - j$. Computing it for every pair would need a $[T, T, D_h]$ table of $r_{i-j}$; instead one product $z = (q + v)\,r^\top$ gives a $[T, 2T-1]$ matrix whose column $m$ holds the distance $T-1-m$ (from $T-1$ down to $-(T-1)$), and the *relative shift* moves row $i$ left by $T-1-i$: $\;y[i, j] = z[i, T-1-i+j]$, the term of distance $i - j$. Write it; throw `std::invalid_argument` unless `z` is $[T, 2T-1]$. When your output is a known mistake (the shift the wrong way, or no shift), the check says which.
// @notebook_stub z: [T, 2T-1], column m for distance T-1-m   returns y: [T, T], y[i, j] = z[i, T-1-i+j]
#include "../exercise_support.hpp"

namespace xenc::grade {

using namespace support;

namespace {
const RegisterExercise registered{remote(spec::relative_shift(), check_relative_shift)};
}  // namespace

// ---- the relative shift -------------------------------------------------------------------------

ExerciseResult check_relative_shift(const RelativeShiftFn& student) {
  ExerciseResult r = start("relative_shift");
  auto call = [student](const Tensor2& z) {
    return [=] { return Output{field("y", student(z))}; };
  };
  auto reference = [](const Tensor2& z) {
    return Output{
        from_ref("y", ref::from(reference::relative_shift(ref::tensor<2>(ref::from(z)))))};
  };
  auto exhibits = [](const Tensor2& z) {
    return std::vector<Exhibit>{
        {Pitfall::relative_shift_mirrored,
         [=] { return Output{field("y", pitfalls::relative_shift_mirrored(z))}; }},
        {Pitfall::relative_shift_not_shifted,
         [=] { return Output{field("y", pitfalls::relative_shift_not_shifted(z))}; }}};
  };
  const std::string hint =
      "column m of z holds distance T-1-m; row i keeps the T columns from T-1-i: "
      "y[i, j] = z[i, T-1-i+j] (so y[i, j] is the term of distance i - j, and the diagonal is "
      "column T-1).";
  auto against_reference = [&](const std::string& name, const Tensor2& z) {
    add(r, {name, show("z", z), call(z), reference(z)}, exhibits(z), hint);
  };

  // Hand example, T = 3 (columns m = 0..4 hold distances 2, 1, 0, -1, -2): row 0 keeps columns
  // 2..4 -> (2, 3, 4); row 1 keeps 1..3 -> (11, 12, 13); row 2 keeps 0..2 -> (20, 21, 22).
  const Tensor2 z3 = {{0, 1, 2, 3, 4}, {10, 11, 12, 13, 14}, {20, 21, 22, 23, 24}};
  add(r,
      {"hand example: T = 3",
       show("z", z3),
       call(z3),
       {Field{"y", {3, 3}, {2, 3, 4, 11, 12, 13, 20, 21, 22}}}},
      exhibits(z3), hint);
  against_reference("reference values: T = 6, random z",
                    randn<Tensor2>(std::array<std::size_t, 2>{6, 11}, 301));

  // Invariant: when z[i, m] is the distance of column m (T − 1 − m), y[i, j] is i − j.
  const std::size_t T = 5;
  Tensor2 dist = Tensor2::from_shape({T, 2 * T - 1});
  Field diffs{"y", {T, T}, {}};
  for (std::size_t i = 0; i < T; ++i) {
    for (std::size_t m = 0; m < 2 * T - 1; ++m) dist(i, m) = float(T - 1) - float(m);
    for (std::size_t j = 0; j < T; ++j) diffs.data.push_back(double(i) - double(j));
  }
  add(r,
      {"invariant: z[i, m] = T-1-m (each column's distance) gives y[i, j] = i - j",
       show("z", dist),
       call(dist),
       {diffs}},
      exhibits(dist), hint);

  against_reference("edge case: T = 1 (one column, distance 0)", Tensor2{{7}});
  r.checks.push_back(run(
      ThrowCheck{"edge case: z of shape [3, 4] is refused",
                 "z [3, 4]",
                 [student] { student(Tensor2::from_shape({3, 4})); },
                 "throws std::invalid_argument (e.g. xenc::shape_error): z must be [T, 2T-1]",
                 "check z.shape()[1] == 2 * z.shape()[0] - 1 first and throw std::invalid_argument "
                 "(xenc::shape_error is one).",
                 {}}));
  if (std::optional<Rng> rng = hidden_rng("relative_shift")) {
    const std::size_t H = hidden_size(*rng, 2, 12);
    const Tensor2 z = hidden_randn<Tensor2>(*rng, std::array<std::size_t, 2>{H, 2 * H - 1});
    add_hidden(r, {"hidden: reference values on the teacher's z", "", call(z), reference(z)},
               exhibits(z), hint);
  }
  return r;
}

}  // namespace xenc::grade

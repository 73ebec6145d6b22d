// Exercise softmax: a stable row softmax. This file is the whole exercise and the one place it is
// written: the `// @` lines are its specification, then come its registration and its checks, named
// cases (hand example, reference values, invariant, edge case, hidden), each with the museum
// exhibits that could explain its failure. Hand examples carry their arithmetic in a comment.
//
// @exercise softmax
// @order 1
// @points 1
// @function Tensor2 softmax(const Tensor2& x)
// @doc Row softmax, numerically stable:  y[r, c] = exp(x[r, c] - m_r) / Σ_c' exp(x[r, c'] - m_r),
// @doc m_r = max_c x[r, c]. Entries of -inf get probability exactly 0; a row of only -inf (a fully
// @doc masked row) gives a row of zeros (PyTorch gives NaN there; xencoder's convention is zeros).
// @doc Shapes:  x, y: [N, C]
// @stub     y[r, c] = exp(x[r, c] - max_r) / Σ_c' exp(x[r, c'] - max_r)
// @notebook ### Exercise: a stable row softmax
// @notebook
// @notebook $y[r, c] = e^{x[r, c] - m_r} / \sum_{c'} e^{x[r, c'] - m_r}$ with $m_r = \max_c x[r, c]$. Subtracting the maximum changes nothing mathematically and keeps $e^{x}$ from overflowing for large scores. An entry of $-\infty$ (a masked key) gets probability exactly 0; a row of only $-\infty$ gives a row of zeros, as the library does.
// @notebook_stub x, y: [N, C]
#include "../exercise_support.hpp"

namespace xenc::grade {

using namespace support;

namespace {
const RegisterExercise registered{remote(spec::softmax(), check_softmax)};
}  // namespace

// ---- softmax ----------------------------------------------------------------------------------

ExerciseResult check_softmax(const SoftmaxFn& student) {
  ExerciseResult r = start("softmax");
  auto call = [student](const Tensor2& x) {
    return [student, x] { return Output{field("y", student(x))}; };
  };
  auto without_max = [](const Tensor2& x) {
    return Exhibit{Pitfall::softmax_without_max,
                   [x] { return Output{field("y", pitfalls::softmax_without_max(x))}; }};
  };
  auto wrong_axis = [](const Tensor2& x) {
    return Exhibit{Pitfall::softmax_wrong_axis,
                   [x] { return Output{field("y", pitfalls::softmax_wrong_axis(x))}; }};
  };
  auto reference = [](const Tensor2& x) {
    return Output{from_ref("y", ref::softmax(ref::from(x)))};
  };
  const std::string formula_hint =
      "y[r, c] = exp(x[r, c] - max_r) / Σ_c' exp(x[r, c'] - max_r), one row at a time.";

  // Hand example: exp(1), exp(2), exp(3) = 2.718282, 7.389056, 20.085537, sum 30.192875, so
  // [0.0900306, 0.2447285, 0.6652410]; a row of equal values gives 1/3 each.
  const Tensor2 hx = {{1, 2, 3}, {0, 0, 0}};
  add(r,
      {"hand example: [[1, 2, 3], [0, 0, 0]]",
       show("x", hx),
       call(hx),
       {Field{"y", {2, 3}, {0.0900305732, 0.2447284711, 0.6652409558, 1.0 / 3, 1.0 / 3, 1.0 / 3}}}},
      {wrong_axis(hx)}, formula_hint);

  const Tensor2 rx = randn<Tensor2>(std::array<std::size_t, 2>{5, 7}, 11, 3.0f);
  add(r,
      {"reference values: x [5, 7], N(0, 3²) (the formula in double)", show("x", rx), call(rx),
       reference(rx)},
      {without_max(rx), wrong_axis(rx)}, formula_hint);

  const Tensor2 sx = randn<Tensor2>(std::array<std::size_t, 2>{4, 6}, 12, 2.0f);
  ValueCheck sums{"invariant: every row sums to 1",
                  show("x", sx),
                  call(sx),
                  {Field{"row sums", {4}, {1, 1, 1, 1}}}};
  sums.measure = [](const Output& o) { return row_sums(o, "row sums"); };
  add(r, sums, {wrong_axis(sx)},
      "divide each exponential by the sum over its own row (the last axis), not over a column or "
      "the whole tensor.");

  ValueCheck shift{"invariant: adding 10 to every entry changes nothing",
                   show("x", sx) + ", then x + 10",
                   call(sx + 10.0f),
                   {}};
  shift.expected_from = [student, sx](const Output&) { return Output{field("y", student(sx))}; };
  shift.expected_text = "your softmax of x (without the + 10)";
  add(r, shift, {},
      "softmax(x + c) = softmax(x): the constant cancels between numerator and denominator.");

  const Tensor2 big = {{1000, 1001, 1002}, {-1000, -1001, -1002}};
  add(r, {"edge case: large logits (stability)", show("x", big), call(big), reference(big)},
      {without_max(big), wrong_axis(big)},
      "subtract the row maximum before exp, so that no exponential overflows or underflows to "
      "0/0.");

  const Tensor2 masked = {{0, -kInf, 0, -kInf}, {-kInf, 2, -kInf, 2}};
  add(r,
      {"edge case: -inf entries (masked) get exactly 0", show("x", masked), call(masked),
       reference(masked)},
      {without_max(masked)},
      "exp(-inf - max) is exactly 0; take the max over the row's entries, which here is finite.");

  const Tensor2 all_masked = {{-kInf, -kInf, -kInf}, {1, 2, 3}};
  add(r,
      {"edge case: a fully masked row (every entry -inf) gives zeros", show("x", all_masked),
       call(all_masked), reference(all_masked)},
      {},
      "a row whose every entry is -inf has nothing to attend to: return a row of zeros for it "
      "(xencoder's convention; PyTorch gives NaN). Computed blindly it is NaN: x - max is "
      "-inf - (-inf), and without the max the row is 0 / 0.");

  const Tensor2 col = {{5}, {-3}};
  add(r,
      {"edge case: one column (C = 1) gives 1",
       show("x", col),
       call(col),
       {Field{"y", {2, 1}, {1, 1}}}},
      {}, "a row with one entry has softmax exp(0) / exp(0) = 1.");
  if (std::optional<Rng> rng = hidden_rng("softmax")) {
    const std::size_t N = hidden_size(*rng, 2, 6), C = hidden_size(*rng, 2, 9);
    const Tensor2 x = hidden_randn<Tensor2>(*rng, std::array<std::size_t, 2>{N, C}, 4.0f);
    add_hidden(r, {"hidden: reference values on the teacher's inputs", "", call(x), reference(x)},
               {without_max(x), wrong_axis(x)}, formula_hint);
  }
  return r;
}

}  // namespace xenc::grade

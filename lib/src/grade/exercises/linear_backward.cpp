// Exercise linear_backward: linear backward. This file is the whole exercise and the one place it
// is written: the `// @` lines are its specification, then come its registration and its checks,
// named cases (hand example, reference values, invariant, edge case, hidden), each with the museum
// exhibits that could explain its failure. Hand examples carry their arithmetic in a comment.
//
// @exercise linear_backward
// @order 7
// @points 1
// @function xenc::LinearGrads<2> linear_backward(const Tensor2& grad_y, const Tensor2& x,
// @function                                      const Tensor2& weight)
// @doc Linear backward for y = x Wᵀ + b:   dx = dy W   dW = dyᵀ x   db = Σ_rows dy
// @doc Shapes:  grad_y: [N, out]   x: [N, in]   weight: [out, in]
// @doc          returns input [N, in], weight [out, in], bias [out]
// @stub     y = x Wᵀ + b:   dx = dy W   dW = dyᵀ x   db = Σ_rows dy
// @notebook ### Exercise: linear backward
// @notebook
// @notebook For $y = x W^\top + b$ and the upstream gradient $dy = \partial L/\partial y$: $\;dx = dy\,W$, $\;dW = dy^\top x$, $\;db = \sum_{\text{rows}} dy$. Return them in `xenc::LinearGrads<2>` (fields `input`, `weight`, `bias`). The check includes a finite-difference gradient check.
// @notebook_stub grad_y: [N, out]   x: [N, in]   weight: [out, in]
// @notebook_stub returns .input [N, in], .weight [out, in], .bias [out]
#include "../exercise_support.hpp"

namespace xenc::grade {

using namespace support;

namespace {
const RegisterExercise registered{remote(spec::linear_backward(), check_linear_backward)};
}  // namespace

// ---- linear backward --------------------------------------------------------------------------

// Long because: it is the exercise's list of checks, one after another in the order the
// report prints them (hand example, reference values, invariants, edge cases, hidden), each
// with its inputs and hint; split up, the list would no longer read as one list.
ExerciseResult check_linear_backward(const LinearBackwardFn& student) {
  ExerciseResult r = start("linear_backward");
  auto as_output = [](const LinearGrads<2>& g) {
    return Output{field("dx", g.input), field("dW", g.weight), field("db", g.bias)};
  };
  auto call = [student, as_output](const Tensor2& dy, const Tensor2& x, const Tensor2& W) {
    return [=] { return as_output(student(dy, x, W)); };
  };
  auto reference = [](const Tensor2& dy, const Tensor2& x, const Tensor2& W) {
    const ref::LinearGrads g = ref::linear_backward(ref::from(dy), ref::from(x), ref::from(W));
    return Output{from_ref("dx", g.input), from_ref("dW", g.weight), from_vec("db", g.bias)};
  };
  auto bias_mean = [as_output](const Tensor2& dy, const Tensor2& x, const Tensor2& W) {
    return Exhibit{Pitfall::linear_backward_bias_mean,
                   [=] { return as_output(pitfalls::linear_backward_bias_mean(dy, x, W)); }};
  };
  auto inputs = [](const Tensor2& dy, const Tensor2& x, const Tensor2& W) {
    return show("grad_y", dy) + "; " + show("x", x) + "; " + show("weight", W);
  };
  const std::string formula_hint =
      "for y = x Wᵀ + b: dx = dy W ([N, in]), dW = dyᵀ x ([out, in], the shape of W), db = Σ_rows "
      "dy ([out]).";

  // Hand example: x = [[1, 2], [3, 4]], W = [[1, 0], [0, 1], [1, 1]], dy = [[1, 2, 3], [1, 0, 0]]:
  // dx = dy W = [[1 + 3, 2 + 3], [1, 0]] = [[4, 5], [1, 0]]
  // dW = dyᵀ x: row o = Σ_n dy[n, o] x[n] = [[1 + 3, 2 + 4], [2, 4], [3, 6]] = [[4, 6], [2, 4], [3,
  // 6]] db = [1 + 1, 2 + 0, 3 + 0] = [2, 2, 3]
  const Tensor2 hx = {{1, 2}, {3, 4}}, hW = {{1, 0}, {0, 1}, {1, 1}}, hdy = {{1, 2, 3}, {1, 0, 0}};
  add(r,
      {"hand example: N = 2, in = 2, out = 3",
       inputs(hdy, hx, hW),
       call(hdy, hx, hW),
       {Field{"dx", {2, 2}, {4, 5, 1, 0}}, Field{"dW", {3, 2}, {4, 6, 2, 4, 3, 6}},
        Field{"db", {3}, {2, 2, 3}}}},
      {bias_mean(hdy, hx, hW)}, formula_hint);

  const Tensor2 rx = randn<Tensor2>(std::array<std::size_t, 2>{4, 5}, 81),
                rW = randn<Tensor2>(std::array<std::size_t, 2>{3, 5}, 82);
  const Tensor2 rdy = randn<Tensor2>(std::array<std::size_t, 2>{4, 3}, 83);
  add(r,
      {"reference values: N = 4, in = 5, out = 3 (the formula in double)", inputs(rdy, rx, rW),
       call(rdy, rx, rW), reference(rdy, rx, rW)},
      {bias_mean(rdy, rx, rW)}, formula_hint);

  // Invariant: a bias is a weight on a constant input 1. With x's last column all ones, db must
  // equal dW's last column.
  Tensor2 cx = rx;
  for (std::size_t n = 0; n < 4; ++n) cx(n, 4) = 1.0f;
  ValueCheck inv{
      "invariant: the bias is a weight on a constant input (x's last column is 1, so db = dW[:, "
      "4])",
      inputs(rdy, cx, rW),
      call(rdy, cx, rW),
      {}};
  inv.measure = [](const Output& o) { return Output{Field{"db", o.at(2).shape, o.at(2).data}}; };
  inv.expected_from = [](const Output& o) {
    const Field& dW = o.at(1);
    if (dW.shape.size() != 2 || dW.shape[1] != 5)
      throw std::invalid_argument("dW has shape " + shape_str(dW.shape) + ", expected [3, 5]");
    Field col{"db", {dW.shape[0]}, {}};
    for (std::size_t i = 0; i < dW.shape[0]; ++i) col.data.push_back(dW.data[i * 5 + 4]);
    return Output{col};
  };
  inv.expected_text = "your dW[:, 4] (the weights on the constant input)";
  add(r, inv, {bias_mean(rdy, cx, rW)},
      "db collects dy from every row, exactly as dW[:, 4] = Σ_n dy[n, :] · 1 does: a sum, not a "
      "mean.");

  // Finite differences of L = Σ dy ⊙ (x Wᵀ + b) (reference forward in double).
  const std::vector<double> dyv(rdy.begin(), rdy.end()), xv(rx.begin(), rx.end()),
      Wv(rW.begin(), rW.end());
  const std::vector<double> bv = {0.1, -0.2, 0.3};
  auto loss_of = [dyv](const ref::Array& y) {
    double s = 0;
    for (std::size_t i = 0; i < y.data.size(); ++i) s += dyv[i] * y.data[i];
    return s;
  };
  const std::string fd_input = inputs(rdy, rx, rW) + "; L = Σ grad_y ⊙ (x Wᵀ + b)";
  r.checks.push_back(run(GradCheck{"finite differences: dx",
                                   fd_input,
                                   "dx",
                                   {4, 5},
                                   call(rdy, rx, rW),
                                   [=](const std::vector<double>& p) {
                                     return loss_of(ref::linear({{4, 5}, p}, {{3, 5}, Wv}, bv));
                                   },
                                   xv,
                                   {bias_mean(rdy, rx, rW)},
                                   "dx = dy W: [N, out] times [out, in]."}));
  r.checks.push_back(
      run(GradCheck{"finite differences: dW",
                    fd_input,
                    "dW",
                    {3, 5},
                    call(rdy, rx, rW),
                    [=](const std::vector<double>& p) {
                      return loss_of(ref::linear({{4, 5}, xv}, {{3, 5}, p}, bv));
                    },
                    Wv,
                    {bias_mean(rdy, rx, rW)},
                    "dW = dyᵀ x has W's shape [out, in]: dW[o, i] = Σ_n dy[n, o] x[n, i]."}));
  r.checks.push_back(run(GradCheck{"finite differences: db",
                                   fd_input,
                                   "db",
                                   {3},
                                   call(rdy, rx, rW),
                                   [=](const std::vector<double>& p) {
                                     return loss_of(ref::linear({{4, 5}, xv}, {{3, 5}, Wv}, p));
                                   },
                                   bv,
                                   {bias_mean(rdy, rx, rW)},
                                   "db[o] = Σ_n dy[n, o]."}));

  const Tensor2 ex = {{2}}, eW = {{3}, {-1}}, edy = {{1, 2}};
  add(r,
      {"edge case: one row (N = 1), in = 1", inputs(edy, ex, eW), call(edy, ex, eW),
       reference(edy, ex, eW)},
      {}, formula_hint);
  if (std::optional<Rng> rng = hidden_rng("linear_backward")) {
    const std::size_t N = hidden_size(*rng, 1, 5), in = hidden_size(*rng, 1, 6),
                      out = hidden_size(*rng, 1, 5);
    const Tensor2 x = hidden_randn<Tensor2>(*rng, std::array<std::size_t, 2>{N, in});
    const Tensor2 W = hidden_randn<Tensor2>(*rng, std::array<std::size_t, 2>{out, in});
    const Tensor2 dy = hidden_randn<Tensor2>(*rng, std::array<std::size_t, 2>{N, out});
    add_hidden(r,
               {"hidden: reference values on the teacher's inputs", "", call(dy, x, W),
                reference(dy, x, W)},
               {bias_mean(dy, x, W)}, formula_hint);
  }
  return r;
}

}  // namespace xenc::grade

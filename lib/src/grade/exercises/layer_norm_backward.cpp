// Exercise layer_norm_backward: layer norm backward. This file is the whole exercise and the one
// place it is written: the `// @` lines are its specification, then come its registration and its
// checks, named cases (hand example, reference values, invariant, edge case, hidden), each with the
// museum exhibits that could explain its failure. Hand examples carry their arithmetic in a
// comment.
//
// @exercise layer_norm_backward
// @order 3
// @points 1
// @function xenc::LayerNormGrads<2> layer_norm_backward(const Tensor2& grad_y, const Tensor2& x,
// @function                                             const Tensor1& weight, float eps)
// @doc Layer norm backward, given dy = dL/dy of the forward above:
// @doc     x̂ = (x - mean) · rstd,  rstd = 1 / sqrt(var + eps),  g = dy · weight
// @doc     dx = rstd · (g - mean(g) - x̂ · mean(g · x̂))   dweight = Σ_rows dy · x̂   dbias = Σ_rows dy
// @doc Shapes:  grad_y, x: [N, D]   weight: [D]   returns input [N, D], weight [D], bias [D]
// @stub     x̂ = (x - mean) · rstd,  g = dy · weight
// @stub     dx = rstd · (g - mean(g) - x̂ · mean(g · x̂))   dweight = Σ_rows dy · x̂   dbias = Σ_rows dy
// @notebook ### Exercise: layer norm backward
// @notebook
// @notebook With $\hat x = (x - \mu)\cdot r$, $r = 1/\sqrt{\sigma^2 + \varepsilon}$ and $g = dy\cdot\gamma$ per row: $dx = r\,\big(g - \operatorname{mean}(g) - \hat x\,\operatorname{mean}(g\,\hat x)\big)$, $\;d\gamma = \sum_{\text{rows}} dy\,\hat x$, $\;d\beta = \sum_{\text{rows}} dy$. Return `xenc::LayerNormGrads<2>` (fields `input`, `weight`, `bias`). The check compares with finite differences.
// @notebook_stub grad_y, x: [N, D]   weight: [D]
// @notebook_stub returns .input [N, D], .weight [D], .bias [D]
#include "../exercise_support.hpp"

namespace xenc::grade {

using namespace support;

namespace {
const RegisterExercise registered{remote(spec::layer_norm_backward(), check_layer_norm_backward)};
}  // namespace

// ---- layer norm backward ----------------------------------------------------------------------

// Long because: it is the exercise's list of checks, one after another in the order the
// report prints them (hand example, reference values, invariants, edge cases, hidden), each
// with its inputs and hint; split up, the list would no longer read as one list.
ExerciseResult check_layer_norm_backward(const LayerNormBackwardFn& student) {
  ExerciseResult r = start("layer_norm_backward");
  auto grads_output = [](const LayerNormGrads<2>& g) {
    return Output{field("dx", g.input), field("dweight", g.weight), field("dbias", g.bias)};
  };
  auto call = [student, grads_output](const Tensor2& dy, const Tensor2& x, const Tensor1& w,
                                      float eps) {
    return [=] { return grads_output(student(dy, x, w, eps)); };
  };
  auto reference = [](const Tensor2& dy, const Tensor2& x, const Tensor1& w, float eps) {
    const ref::LayerNormGrads g =
        ref::layer_norm_backward(ref::from(dy), ref::from(x), to_vec(w), eps);
    return Output{from_ref("dx", g.input), from_vec("dweight", g.weight),
                  from_vec("dbias", g.bias)};
  };
  auto no_mean = [grads_output](const Tensor2& dy, const Tensor2& x, const Tensor1& w, float eps) {
    return Exhibit{
        Pitfall::layer_norm_backward_no_mean_terms,
        [=] { return grads_output(pitfalls::layer_norm_backward_no_mean_terms(dy, x, w, eps)); }};
  };
  auto inputs = [](const Tensor2& dy, const Tensor2& x, const Tensor1& w) {
    return show("grad_y", dy) + "; " + show("x", x) + "; " + show("weight", w) + "; eps = 1e-05";
  };
  const std::string formula_hint =
      "with x̂ = (x - mean) · rstd, rstd = 1 / sqrt(var + eps) and g = dy · weight: dx = rstd · (g "
      "- mean(g) - "
      "x̂ · mean(g · x̂)) per row; dweight = Σ_rows dy · x̂; dbias = Σ_rows dy.";

  // Hand example: x = [1, 2, 3, 4], weight 1, dy = [1, 0, 0, 0]. x̂ = [-1.341635, -0.447212,
  // 0.447212, 1.341635], rstd = 0.894424, mean(g) = 0.25, mean(g · x̂) = -0.335409, so
  // dx = 0.894424 · ([1, 0, 0, 0] - 0.25 + 0.335409 · x̂) = [0.268330, -0.357768, -0.089443,
  // 0.178882] (NumPy gives the same); dweight = dy · x̂ = [-1.341635, 0, 0, 0]; dbias = dy = [1, 0,
  // 0, 0].
  const Tensor2 hx = {{1, 2, 3, 4}}, hdy = {{1, 0, 0, 0}};
  const Tensor1 ones4 = xt::ones<float>({4});
  add(r,
      {"hand example: x = [1, 2, 3, 4], dy = [1, 0, 0, 0], weight 1",
       inputs(hdy, hx, ones4),
       call(hdy, hx, ones4, 1e-5f),
       {Field{"dx", {1, 4}, {0.2683303, -0.35776837, -0.08944343, 0.1788815}},
        Field{"dweight", {4}, {-1.34163542, 0, 0, 0}}, Field{"dbias", {4}, {1, 0, 0, 0}}}},
      {no_mean(hdy, hx, ones4, 1e-5f)}, formula_hint);

  const Tensor2 rx = randn<Tensor2>(std::array<std::size_t, 2>{3, 6}, 31, 2.0f, 0.5f);
  const Tensor2 rdy = randn<Tensor2>(std::array<std::size_t, 2>{3, 6}, 32);
  const Tensor1 rw = randn<Tensor1>(std::array<std::size_t, 1>{6}, 33, 0.5f, 1.0f);
  add(r,
      {"reference values: x [3, 6], random weight (the formula in double)", inputs(rdy, rx, rw),
       call(rdy, rx, rw, 1e-5f), reference(rdy, rx, rw, 1e-5f)},
      {no_mean(rdy, rx, rw, 1e-5f)}, formula_hint);

  ValueCheck inv{
      "invariant: each row of dx sums to 0 (adding a constant to a row of x does not change y)",
      inputs(rdy, rx, rw),
      call(rdy, rx, rw, 1e-5f),
      {Field{"row sums of dx", {3}, {0, 0, 0}}}};
  inv.measure = [](const Output& o) { return row_sums(o, "row sums of dx"); };
  add(r, inv, {no_mean(rdy, rx, rw, 1e-5f)},
      "the mean and the variance depend on every x of the row, so dx has the two mean terms: " +
          formula_hint);

  // Finite differences of L = Σ dy ⊙ layer_norm(x) (reference forward in double).
  const std::vector<double> dyv(rdy.begin(), rdy.end()), wv = to_vec(rw), xv(rx.begin(), rx.end());
  const std::vector<double> bv(6, 0.1);
  auto loss_of = [dyv](const ref::Array& y) {
    double s = 0;
    for (std::size_t i = 0; i < y.data.size(); ++i) s += dyv[i] * y.data[i];
    return s;
  };
  const std::vector<std::size_t> xs = {3, 6};
  GradCheck fdx{"finite differences: dx",
                inputs(rdy, rx, rw) + "; L = Σ grad_y ⊙ layer_norm(x)",
                "dx",
                xs,
                call(rdy, rx, rw, 1e-5f),
                [=](const std::vector<double>& p) {
                  return loss_of(ref::layer_norm(ref::Array{xs, p}, wv, bv, 1e-5));
                },
                xv,
                {no_mean(rdy, rx, rw, 1e-5f)},
                formula_hint};
  r.checks.push_back(run(fdx));
  GradCheck fdw{
      "finite differences: dweight",
      fdx.input,
      "dweight",
      {6},
      call(rdy, rx, rw, 1e-5f),
      [=](const std::vector<double>& p) {
        return loss_of(ref::layer_norm(ref::Array{xs, xv}, p, bv, 1e-5));
      },
      wv,
      {},
      "dweight[d] = Σ_rows dy[r, d] · x̂[r, d]: sum over the rows, with the normalised x̂."};
  r.checks.push_back(run(fdw));
  GradCheck fdb{"finite differences: dbias",
                fdx.input,
                "dbias",
                {6},
                call(rdy, rx, rw, 1e-5f),
                [=](const std::vector<double>& p) {
                  return loss_of(ref::layer_norm(ref::Array{xs, xv}, wv, p, 1e-5));
                },
                bv,
                {},
                "dbias[d] = Σ_rows dy[r, d]: the bias is added to every row."};
  r.checks.push_back(run(fdb));

  const Tensor2 ox = randn<Tensor2>(std::array<std::size_t, 2>{1, 5}, 34),
                ody = randn<Tensor2>(std::array<std::size_t, 2>{1, 5}, 35);
  const Tensor1 ow = randn<Tensor1>(std::array<std::size_t, 1>{5}, 36, 0.5f, 1.0f);
  add(r,
      {"edge case: odd D = 5, one row (T = 1)", inputs(ody, ox, ow), call(ody, ox, ow, 1e-5f),
       reference(ody, ox, ow, 1e-5f)},
      {no_mean(ody, ox, ow, 1e-5f)}, formula_hint);
  if (std::optional<Rng> rng = hidden_rng("layer_norm_backward")) {
    const std::size_t N = hidden_size(*rng, 1, 4), D = hidden_size(*rng, 2, 8);
    const float mean = float(hidden_size(*rng, 0, 20)) - 10.0f;
    const Tensor2 x = hidden_randn<Tensor2>(*rng, std::array<std::size_t, 2>{N, D}, 2.0f, mean);
    const Tensor2 dy = hidden_randn<Tensor2>(*rng, std::array<std::size_t, 2>{N, D});
    const Tensor1 w = hidden_randn<Tensor1>(*rng, std::array<std::size_t, 1>{D}, 0.5f, 1.0f);
    add_hidden(r,
               {"hidden: reference values on the teacher's inputs", "", call(dy, x, w, 1e-5f),
                reference(dy, x, w, 1e-5f)},
               {no_mean(dy, x, w, 1e-5f)}, formula_hint);
  }
  return r;
}

}  // namespace xenc::grade

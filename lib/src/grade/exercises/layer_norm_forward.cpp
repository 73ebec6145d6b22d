// Exercise layer_norm_forward: layer norm forward. This file is the whole exercise and the one
// place it is written: the `// @` lines are its specification, then come its registration and its
// checks, named cases (hand example, reference values, invariant, edge case, hidden), each with the
// museum exhibits that could explain its failure. Hand examples carry their arithmetic in a
// comment.
//
// @exercise layer_norm_forward
// @order 2
// @points 1
// @function Tensor2 layer_norm_forward(const Tensor2& x, const Tensor1& weight, const Tensor1& bias,
// @function                            float eps)
// @doc Layer norm over the last axis:  y = (x - mean) / sqrt(var + eps) · weight + bias,
// @doc var = Σ (x - mean)² / D (biased, as torch.nn.LayerNorm).
// @doc Shapes:  x, y: [N, D]   weight, bias: [D]
// @stub     y = (x - mean) / sqrt(var + eps) · weight + bias,   var = Σ (x - mean)² / D
// @notebook ### Exercise: layer norm forward
// @notebook
// @notebook Per row: $y = (x - \mu)/\sqrt{\sigma^2 + \varepsilon}\cdot\gamma + \beta$ with the *biased* variance $\sigma^2 = \frac1D\sum (x - \mu)^2$ and $\varepsilon$ inside the square root, as `torch.nn.LayerNorm`.
// @notebook_stub x, y: [N, D]   weight, bias: [D]
#include "../exercise_support.hpp"

namespace xenc::grade {

using namespace support;

namespace {
const RegisterExercise registered{remote(spec::layer_norm_forward(), check_layer_norm_forward)};
}  // namespace

// ---- layer norm forward -----------------------------------------------------------------------

namespace {
std::vector<Exhibit> layer_norm_exhibits(const Tensor2& x, const Tensor1& w, const Tensor1& b,
                                         float eps, bool combined_first) {
  auto ex = [&](Pitfall p, Tensor2 (*f)(const Tensor2&, const Tensor1&, const Tensor1&, float)) {
    return Exhibit{p, [=] { return Output{field("y", f(x, w, b, eps))}; }};
  };
  std::vector<Exhibit> v = {
      ex(Pitfall::layer_norm_unbiased_variance, pitfalls::layer_norm_unbiased_variance),
      ex(Pitfall::layer_norm_eps_outside_sqrt, pitfalls::layer_norm_eps_outside_sqrt)};
  const Exhibit both = ex(Pitfall::layer_norm_unbiased_std_eps_outside,
                          pitfalls::layer_norm_unbiased_std_eps_outside);
  if (combined_first)
    v.insert(v.begin(), both);
  else
    v.push_back(both);
  return v;
}
}  // namespace

ExerciseResult check_layer_norm_forward(const LayerNormForwardFn& student) {
  ExerciseResult r = start("layer_norm_forward");
  auto call = [student](const Tensor2& x, const Tensor1& w, const Tensor1& b, float eps) {
    return [=] { return Output{field("y", student(x, w, b, eps))}; };
  };
  auto reference = [](const Tensor2& x, const Tensor1& w, const Tensor1& b, float eps) {
    return Output{from_ref("y", ref::layer_norm(ref::from(x), to_vec(w), to_vec(b), eps))};
  };
  auto inputs = [](const Tensor2& x, const Tensor1& w, const Tensor1& b, float eps) {
    return show("x", x) + "; " + show("weight", w) + "; " + show("bias", b) +
           "; eps = " + detail::list({eps}).substr(1, detail::list({eps}).size() - 2);
  };
  const std::string formula_hint =
      "y = (x - mean) / sqrt(var + eps) · weight + bias per row, var = Σ (x - mean)² / D (biased).";

  // Hand example: [1, 2, 3, 4] has mean 2.5 and variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25,
  // so y = (x - 2.5) / sqrt(1.25001) = [-1.341635, -0.447212, 0.447212, 1.341635].
  const Tensor2 hx = {{1, 2, 3, 4}};
  const Tensor1 ones4 = xt::ones<float>({4}), zeros4 = xt::zeros<float>({4});
  add(r,
      {"hand example: [1, 2, 3, 4], weight 1, bias 0",
       inputs(hx, ones4, zeros4, 1e-5f),
       call(hx, ones4, zeros4, 1e-5f),
       {Field{"y", {1, 4}, {-1.3416354199, -0.4472118066, 0.4472118066, 1.3416354199}}}},
      layer_norm_exhibits(hx, ones4, zeros4, 1e-5f, false), formula_hint);

  const Tensor2 rx = randn<Tensor2>(std::array<std::size_t, 2>{4, 8}, 21, 2.0f, 1.0f);
  const Tensor1 rw = randn<Tensor1>(std::array<std::size_t, 1>{8}, 22, 0.5f, 1.0f);
  const Tensor1 rb = randn<Tensor1>(std::array<std::size_t, 1>{8}, 23, 0.5f);
  add(r,
      {"reference values: x [4, 8], random weight and bias (the formula in double)",
       inputs(rx, rw, rb, 1e-5f), call(rx, rw, rb, 1e-5f), reference(rx, rw, rb, 1e-5f)},
      layer_norm_exhibits(rx, rw, rb, 1e-5f, false),
      formula_hint +
          " Apply weight and bias per column d: y[r, d] = x̂[r, d] · weight[d] + bias[d].");

  // Invariant: with weight 1 and bias 0 every row has mean 0 and biased variance var / (var + eps).
  const Tensor2 ix = randn<Tensor2>(std::array<std::size_t, 2>{3, 6}, 24, 3.0f, -2.0f);
  const Tensor1 ones6 = xt::ones<float>({6}), zeros6 = xt::zeros<float>({6});
  auto moments = [](const Output& o) {
    const Field& y = o.at(0);
    const std::size_t D = y.shape.at(1), N = y.shape.at(0);
    Field mean{"row means", {N}, {}}, var{"row variances (÷ D)", {N}, {}};
    for (std::size_t r = 0; r < N; ++r) {
      double m = 0, v = 0;
      for (std::size_t d = 0; d < D; ++d) m += y.data[r * D + d] / double(D);
      for (std::size_t d = 0; d < D; ++d)
        v += (y.data[r * D + d] - m) * (y.data[r * D + d] - m) / double(D);
      mean.data.push_back(m), var.data.push_back(v);
    }
    return Output{mean, var};
  };
  ValueCheck inv{"invariant: with weight 1, bias 0 each row has mean 0 and variance 1 (÷ D)",
                 inputs(ix, ones6, zeros6, 1e-5f), call(ix, ones6, zeros6, 1e-5f),
                 moments(reference(ix, ones6, zeros6, 1e-5f))};
  inv.measure = moments;
  add(r, inv, layer_norm_exhibits(ix, ones6, zeros6, 1e-5f, false), formula_hint);

  // The row [0, 0, 0, 0.001] has variance 1.875e-7 < eps: eps inside or outside the root matters.
  const Tensor2 tiny = {{0, 0, 0, 1e-3f}};
  add(r,
      {"edge case: a row with variance below eps", inputs(tiny, ones4, zeros4, 1e-5f),
       call(tiny, ones4, zeros4, 1e-5f), reference(tiny, ones4, zeros4, 1e-5f)},
      layer_norm_exhibits(tiny, ones4, zeros4, 1e-5f, true), formula_hint);

  const Tensor2 flat = {{2, 2, 2}};
  const Tensor1 ones3 = xt::ones<float>({3}), b3 = {0.5f, -1.0f, 0.0f};
  add(r,
      {"edge case: a constant row (variance 0) gives y = bias",
       inputs(flat, ones3, b3, 1e-5f),
       call(flat, ones3, b3, 1e-5f),
       {Field{"y", {1, 3}, {0.5, -1, 0}}}},
      {},
      "x - mean is 0 for every entry; with eps inside the root the division is 0 / sqrt(eps) = 0, "
      "not 0 / 0.");

  const Tensor2 ox = randn<Tensor2>(std::array<std::size_t, 2>{3, 5}, 25);
  const Tensor1 ow = randn<Tensor1>(std::array<std::size_t, 1>{5}, 26, 0.5f, 1.0f);
  const Tensor1 ob = randn<Tensor1>(std::array<std::size_t, 1>{5}, 27, 0.5f);
  add(r,
      {"edge case: odd D = 5", inputs(ox, ow, ob, 1e-5f), call(ox, ow, ob, 1e-5f),
       reference(ox, ow, ob, 1e-5f)},
      layer_norm_exhibits(ox, ow, ob, 1e-5f, false),
      formula_hint + " Loop over all D entries of the row (nothing here is paired).");

  // Rows with mean 1000 and standard deviation 1: var = E[x²] - E[x]² in float cancels
  // 10⁶ - 10⁶ (float's spacing near 10⁶ is 0.0625), so a one-pass float variance is off by tens
  // of percent; subtracting the mean first, var = E[(x - mean)²], keeps the digits. The tolerance
  // is float32's own error here: the spacing of floats near 1000 is 6.1e-5, so a correct float
  // mean can be off by ~1e-4 and y (standard deviation 1) by as much; 1e-3 accepts that and
  // refuses the one-pass variance.
  const Tensor2 mx = randn<Tensor2>(std::array<std::size_t, 2>{3, 8}, 28, 1.0f, 1000.0f);
  const Tensor1 ones8 = xt::ones<float>({8}), zeros8 = xt::zeros<float>({8});
  ValueCheck large{"edge case: a large mean (rows around 1000, standard deviation 1; within 1e-3)",
                   inputs(mx, ones8, zeros8, 1e-5f), call(mx, ones8, zeros8, 1e-5f),
                   reference(mx, ones8, zeros8, 1e-5f)};
  large.tol = detail::Tolerance{1e-3, 0.0};
  add(r, large, layer_norm_exhibits(mx, ones8, zeros8, 1e-5f, false),
      "compute the mean first, then var = Σ (x - mean)² / D: E[x²] - E[x]² in float loses the "
      "digits "
      "when the mean is large against the spread.");

  if (std::optional<Rng> rng = hidden_rng("layer_norm_forward")) {
    const std::size_t N = hidden_size(*rng, 2, 5), D = hidden_size(*rng, 3, 12);
    const Tensor2 x = hidden_randn<Tensor2>(*rng, std::array<std::size_t, 2>{N, D}, 2.0f, 0.5f);
    const Tensor1 w = hidden_randn<Tensor1>(*rng, std::array<std::size_t, 1>{D}, 0.5f, 1.0f);
    const Tensor1 b = hidden_randn<Tensor1>(*rng, std::array<std::size_t, 1>{D}, 0.5f);
    add_hidden(r,
               {"hidden: reference values on the teacher's inputs", "", call(x, w, b, 1e-5f),
                reference(x, w, b, 1e-5f)},
               layer_norm_exhibits(x, w, b, 1e-5f, false), formula_hint);
  }
  return r;
}

}  // namespace xenc::grade

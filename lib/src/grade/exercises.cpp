// The exercises: for each, the inputs of every check, its reference and the museum exhibits that
// could explain a failure. Hand examples carry their arithmetic in a comment; every other expected
// value comes from the double-precision formulas in reference.cpp.
#include "xenc/grade/exercises.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "engine.hpp"
#include "reference.hpp"
#include "xenc/core/random.hpp"
#include "xenc/grade/pitfalls.hpp"

namespace xenc::grade {

using detail::Exhibit;
using detail::Field;
using detail::GradCheck;
using detail::Output;
using detail::ThrowCheck;
using detail::ValueCheck;
using detail::field;
using pitfalls::Pitfall;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

template <class T, class S>
T randn(const S& shape, std::uint32_t seed, float scale = 1.0f, float mean = 0.0f) {
  Rng rng(seed);
  T t = T::from_shape(shape);
  fill_normal(t, rng, mean, scale);
  return t;
}

Field from_ref(const std::string& name, const ref::Array& a) { return Field{name, a.shape, a.data}; }
Field from_vec(const std::string& name, const std::vector<double>& v) { return Field{name, {v.size()}, v}; }

std::vector<double> to_vec(const Tensor1& t) { return std::vector<double>(t.begin(), t.end()); }

// "x [2, 3] = [1, 2, 3, 0, 0, 0]" for the report's input line.
template <class E>
std::string show(const std::string& name, const E& t) {
  return detail::format({field(name, t)}, 8);
}

// Row sums of the first field, as a field named `name`.
Output row_sums(const Output& o, const std::string& name, std::size_t f = 0) {
  const Field& x = o.at(f);
  const std::size_t C = x.shape.empty() ? 1 : x.shape.back();
  const std::size_t N = C == 0 ? 0 : x.data.size() / C;
  Field s{name, {N}, std::vector<double>(N, 0.0)};
  for (std::size_t r = 0; r < N; ++r)
    for (std::size_t c = 0; c < C; ++c) s.data[r] += x.data[r * C + c];
  return {s};
}

// Runs a value check with the exhibits that could explain its failure and its own hint, and adds
// the result to r.
void add(ExerciseResult& r, ValueCheck c, std::vector<Exhibit> exhibits, std::string hint) {
  c.exhibits = std::move(exhibits);
  c.hint = std::move(hint);
  r.checks.push_back(run(c));
}

ExerciseResult start(const std::string& name) {
  ExerciseResult r;
  r.exercise = name;
  for (const ExerciseInfo& e : exercises())
    if (e.name == name) r.signature = e.signature;
  return r;
}

}  // namespace

const std::vector<ExerciseInfo>& exercises() {
  static const std::vector<ExerciseInfo> all = {
      {"sinusoidal_table", "Tensor2 sinusoidal_table(std::size_t num_positions, std::size_t d_model)"},
      {"softmax", "Tensor2 softmax_rows(const Tensor2& x)"},
      {"layer_norm_forward",
       "Tensor2 layer_norm_forward(const Tensor2& x, const Tensor1& weight, const Tensor1& bias, float eps)"},
      {"layer_norm_backward",
       "LayerNormGrads<2> layer_norm_backward(const Tensor2& grad_y, const Tensor2& x, const Tensor1& weight, "
       "float eps)"},
      {"attention",
       "AttentionResult attention(const Tensor4& q, const Tensor4& k, const Tensor4& v, const Mask2& "
       "key_padding_mask)"},
      {"split_heads", "Tensor4 split_heads(const Tensor3& x, std::size_t num_heads)"},
      {"merge_heads", "Tensor3 merge_heads(const Tensor4& x)"},
      {"linear_backward",
       "LinearGrads<2> linear_backward(const Tensor2& grad_y, const Tensor2& x, const Tensor2& weight)"},
      {"cross_entropy",
       "CrossEntropyOutput cross_entropy(const Tensor2& logits, const Index1& targets, std::int64_t "
       "ignore_index)"},
      {"rope", "Tensor2 rope_rotate(const Tensor2& x, const std::vector<std::size_t>& positions)"},
      {"alibi_slopes", "std::vector<double> alibi_slopes(std::size_t num_heads)"},
  };
  return all;
}

// ---- sinusoidal table -------------------------------------------------------------------------

ExerciseResult check_sinusoidal_table(const SinusoidalTableFn& student) {
  ExerciseResult r = start("sinusoidal_table");
  auto call = [](const SinusoidalTableFn& f, std::size_t P, std::size_t D) {
    return [f, P, D] { return Output{field("PE", f(P, D))}; };
  };
  auto doubled = [](std::size_t P, std::size_t D) {
    return Exhibit{Pitfall::pe_doubled_exponent, [P, D] { return Output{field("PE", pitfalls::pe_doubled_exponent(P, D))}; }};
  };
  const std::string formula_hint =
      "compare with the formula PE(p, 2i) = sin(p / 10000^(2i/D)), PE(p, 2i+1) = cos(p / 10000^(2i/D)): "
      "even columns sin, odd columns cos, pair i shares one angle; compute the angle in double.";

  // Hand example, P = 2, D = 4: the frequencies are 10000^(-0/4) = 1 and 10000^(-2/4) = 0.01.
  // PE(0) = [sin 0, cos 0, sin 0, cos 0] = [0, 1, 0, 1]
  // PE(1) = [sin 1, cos 1, sin 0.01, cos 0.01] = [0.841471, 0.540302, 0.00999983, 0.99995]
  add(r, {"hand example: P = 2, D = 4", "num_positions = 2, d_model = 4", call(student, 2, 4),
          {Field{"PE", {2, 4}, {0, 1, 0, 1, 0.8414709848, 0.5403023059, 0.0099998333, 0.9999500004}}}},
      {doubled(2, 4)}, formula_hint);

  add(r, {"reference values: P = 50, D = 16 (the formula in double)",
          "num_positions = 50, d_model = 16", call(student, 50, 16),
          {from_ref("PE", ref::sinusoidal_table(50, 16))}},
      {doubled(50, 16)}, formula_hint);

  // Invariant: each pair (sin, cos) of one angle lies on the unit circle.
  ValueCheck circle{"invariant: PE(p, 2i)² + PE(p, 2i+1)² = 1 for every p and pair i",
                    "num_positions = 20, d_model = 8", call(student, 20, 8),
                    {Field{"sin² + cos²", {20, 4}, std::vector<double>(80, 1.0)}}};
  circle.measure = [](const Output& o) {
    const Field& pe = o.at(0);
    if (pe.shape.size() != 2 || pe.shape[1] % 2) throw std::invalid_argument("PE has shape " + shape_str(pe.shape) + ", expected [20, 8]");
    Field s{"sin² + cos²", {pe.shape[0], pe.shape[1] / 2}, {}};
    for (std::size_t i = 0; i + 1 < pe.data.size(); i += 2) s.data.push_back(pe.data[i] * pe.data[i] + pe.data[i + 1] * pe.data[i + 1]);
    return Output{s};
  };
  add(r, circle, {}, "column 2i must be the sin and column 2i+1 the cos of the same angle p / 10000^(2i/D).");

  // Invariant: PE(p) · PE(p + 3) = Σ_i cos(3 ω_i) does not depend on p (relative positions).
  ValueCheck relative{"invariant: PE(p) · PE(p + 3) is the same for p = 0 .. 9",
                      "num_positions = 13, d_model = 8", call(student, 13, 8), {}};
  relative.measure = [](const Output& o) {
    const Field& pe = o.at(0);
    if (pe.shape.size() != 2 || pe.shape[0] < 13) throw std::invalid_argument("PE has shape " + shape_str(pe.shape) + ", expected [13, 8]");
    const std::size_t D = pe.shape[1];
    Field dots{"PE(p) · PE(p + 3)", {10}, {}};
    for (std::size_t p = 0; p < 10; ++p) {
      double s = 0;
      for (std::size_t j = 0; j < D; ++j) s += pe.data[p * D + j] * pe.data[(p + 3) * D + j];
      dots.data.push_back(s);
    }
    return Output{dots};
  };
  relative.expected_from = [m = relative.measure](const Output& o) {
    Output dots = m(o);
    for (double& v : dots[0].data) v = dots[0].data[0];  // every p like p = 0
    return dots;
  };
  relative.expected_text = "your PE(0) · PE(3), for every p";
  add(r, relative, {}, "the angle of pair i must be p · ω_i with ω_i = 10000^(-2i/D), the same ω_i for every position p.");

  add(r, {"edge case: T = 1 (a single position)", "num_positions = 1, d_model = 6",
          call(student, 1, 6), {Field{"PE", {1, 6}, {0, 1, 0, 1, 0, 1}}}},
      {}, "position 0 has every angle 0: sin 0 = 0 in even columns, cos 0 = 1 in odd columns.");

  add(r, {"edge case: D = 2 (one pair: sin p, cos p)", "num_positions = 5, d_model = 2",
          call(student, 5, 2), {from_ref("PE", ref::sinusoidal_table(5, 2))}},
      {}, formula_hint);

  ThrowCheck odd{"edge case: odd D = 5 is refused", "num_positions = 3, d_model = 5",
                 [student] { student(3, 5); },
                 "throws std::invalid_argument (e.g. xenc::config_error): the pairs (2i, 2i+1) need an even D",
                 "check that d_model is even (and not 0) first and throw std::invalid_argument "
                 "(xenc::config_error is one); for odd D a loop over pairs writes column D, past the row's end.",
                 {{Pitfall::pe_odd_d_overflow, [] { pitfalls::pe_odd_d_unchecked(3, 5); }}}};
  r.checks.push_back(run(odd));
  return r;
}

// ---- softmax ----------------------------------------------------------------------------------

ExerciseResult check_softmax(const SoftmaxFn& student) {
  ExerciseResult r = start("softmax");
  auto call = [student](const Tensor2& x) { return [student, x] { return Output{field("y", student(x))}; }; };
  auto without_max = [](const Tensor2& x) {
    return Exhibit{Pitfall::softmax_without_max, [x] { return Output{field("y", pitfalls::softmax_without_max(x))}; }};
  };
  auto reference = [](const Tensor2& x) { return Output{from_ref("y", ref::softmax(ref::from(x)))}; };
  const std::string formula_hint = "y[r, c] = exp(x[r, c] - max_r) / Σ_c' exp(x[r, c'] - max_r), one row at a time.";

  // Hand example: exp(1), exp(2), exp(3) = 2.718282, 7.389056, 20.085537, sum 30.192875, so
  // [0.0900306, 0.2447285, 0.6652410]; a row of equal values gives 1/3 each.
  const Tensor2 hx = {{1, 2, 3}, {0, 0, 0}};
  add(r, {"hand example: [[1, 2, 3], [0, 0, 0]]", show("x", hx), call(hx),
          {Field{"y", {2, 3}, {0.0900305732, 0.2447284711, 0.6652409558, 1.0 / 3, 1.0 / 3, 1.0 / 3}}}},
      {}, formula_hint);

  const Tensor2 rx = randn<Tensor2>(std::array<std::size_t, 2>{5, 7}, 11, 3.0f);
  add(r, {"reference values: x [5, 7], N(0, 3²) (the formula in double)", show("x", rx), call(rx), reference(rx)},
      {without_max(rx)}, formula_hint);

  const Tensor2 sx = randn<Tensor2>(std::array<std::size_t, 2>{4, 6}, 12, 2.0f);
  ValueCheck sums{"invariant: every row sums to 1", show("x", sx), call(sx), {Field{"row sums", {4}, {1, 1, 1, 1}}}};
  sums.measure = [](const Output& o) { return row_sums(o, "row sums"); };
  add(r, sums, {}, "divide each exponential by the sum over its own row (the last axis), not over a column or the whole tensor.");

  ValueCheck shift{"invariant: adding 10 to every entry changes nothing", show("x", sx) + ", then x + 10",
                   call(sx + 10.0f), {}};
  shift.expected_from = [student, sx](const Output&) { return Output{field("y", student(sx))}; };
  shift.expected_text = "your softmax of x (without the + 10)";
  add(r, shift, {}, "softmax(x + c) = softmax(x): the constant cancels between numerator and denominator.");

  const Tensor2 big = {{1000, 1001, 1002}, {-1000, -1001, -1002}};
  add(r, {"edge case: large logits (stability)", show("x", big), call(big), reference(big)},
      {without_max(big)}, "subtract the row maximum before exp, so that no exponential overflows or underflows to 0/0.");

  const Tensor2 masked = {{0, -kInf, 0, -kInf}, {-kInf, 2, -kInf, 2}};
  add(r, {"edge case: -inf entries (masked) get exactly 0", show("x", masked), call(masked), reference(masked)},
      {without_max(masked)}, "exp(-inf - max) is exactly 0; take the max over the row's entries, which here is finite.");

  const Tensor2 all_masked = {{-kInf, -kInf, -kInf}, {1, 2, 3}};
  add(r, {"edge case: a fully masked row (every entry -inf) gives zeros", show("x", all_masked),
          call(all_masked), reference(all_masked)},
      {}, "a row whose every entry is -inf has nothing to attend to: return a row of zeros for it "
      "(xencoder's convention; PyTorch gives NaN). Computed blindly it is NaN: x - max is "
      "-inf - (-inf), and without the max the row is 0 / 0.");

  const Tensor2 col = {{5}, {-3}};
  add(r, {"edge case: one column (C = 1) gives 1", show("x", col), call(col), {Field{"y", {2, 1}, {1, 1}}}},
      {}, "a row with one entry has softmax exp(0) / exp(0) = 1.");
  return r;
}

// ---- layer norm forward -----------------------------------------------------------------------

namespace {
std::vector<Exhibit> layer_norm_exhibits(const Tensor2& x, const Tensor1& w, const Tensor1& b, float eps,
                                         bool combined_first) {
  auto ex = [&](Pitfall p, Tensor2 (*f)(const Tensor2&, const Tensor1&, const Tensor1&, float)) {
    return Exhibit{p, [=] { return Output{field("y", f(x, w, b, eps))}; }};
  };
  std::vector<Exhibit> v = {ex(Pitfall::layer_norm_unbiased_variance, pitfalls::layer_norm_unbiased_variance),
                            ex(Pitfall::layer_norm_eps_outside_sqrt, pitfalls::layer_norm_eps_outside_sqrt)};
  const Exhibit both = ex(Pitfall::layer_norm_unbiased_std_eps_outside, pitfalls::layer_norm_unbiased_std_eps_outside);
  if (combined_first)
    v.insert(v.begin(), both);
  else
    v.push_back(both);
  return v;
}
}  // namespace

ExerciseResult check_layer_norm_forward(const LayerNormFn& student) {
  ExerciseResult r = start("layer_norm_forward");
  auto call = [student](const Tensor2& x, const Tensor1& w, const Tensor1& b, float eps) {
    return [=] { return Output{field("y", student(x, w, b, eps))}; };
  };
  auto reference = [](const Tensor2& x, const Tensor1& w, const Tensor1& b, float eps) {
    return Output{from_ref("y", ref::layer_norm(ref::from(x), to_vec(w), to_vec(b), eps))};
  };
  auto inputs = [](const Tensor2& x, const Tensor1& w, const Tensor1& b, float eps) {
    return show("x", x) + "; " + show("weight", w) + "; " + show("bias", b) + "; eps = " + detail::list({eps}).substr(1, detail::list({eps}).size() - 2);
  };
  const std::string formula_hint =
      "y = (x - mean) / sqrt(var + eps) · weight + bias per row, var = Σ (x - mean)² / D (biased).";

  // Hand example: [1, 2, 3, 4] has mean 2.5 and variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25,
  // so y = (x - 2.5) / sqrt(1.25001) = [-1.341635, -0.447212, 0.447212, 1.341635].
  const Tensor2 hx = {{1, 2, 3, 4}};
  const Tensor1 ones4 = xt::ones<float>({4}), zeros4 = xt::zeros<float>({4});
  add(r, {"hand example: [1, 2, 3, 4], weight 1, bias 0", inputs(hx, ones4, zeros4, 1e-5f),
          call(hx, ones4, zeros4, 1e-5f),
          {Field{"y", {1, 4}, {-1.3416354199, -0.4472118066, 0.4472118066, 1.3416354199}}}},
      layer_norm_exhibits(hx, ones4, zeros4, 1e-5f, false), formula_hint);

  const Tensor2 rx = randn<Tensor2>(std::array<std::size_t, 2>{4, 8}, 21, 2.0f, 1.0f);
  const Tensor1 rw = randn<Tensor1>(std::array<std::size_t, 1>{8}, 22, 0.5f, 1.0f);
  const Tensor1 rb = randn<Tensor1>(std::array<std::size_t, 1>{8}, 23, 0.5f);
  add(r, {"reference values: x [4, 8], random weight and bias (the formula in double)",
          inputs(rx, rw, rb, 1e-5f), call(rx, rw, rb, 1e-5f), reference(rx, rw, rb, 1e-5f)},
      layer_norm_exhibits(rx, rw, rb, 1e-5f, false),
      formula_hint + " Apply weight and bias per column d: y[r, d] = x̂[r, d] · weight[d] + bias[d].");

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
      for (std::size_t d = 0; d < D; ++d) v += (y.data[r * D + d] - m) * (y.data[r * D + d] - m) / double(D);
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
  add(r, {"edge case: a row with variance below eps", inputs(tiny, ones4, zeros4, 1e-5f),
          call(tiny, ones4, zeros4, 1e-5f), reference(tiny, ones4, zeros4, 1e-5f)},
      layer_norm_exhibits(tiny, ones4, zeros4, 1e-5f, true), formula_hint);

  const Tensor2 flat = {{2, 2, 2}};
  const Tensor1 ones3 = xt::ones<float>({3}), b3 = {0.5f, -1.0f, 0.0f};
  add(r, {"edge case: a constant row (variance 0) gives y = bias", inputs(flat, ones3, b3, 1e-5f),
          call(flat, ones3, b3, 1e-5f), {Field{"y", {1, 3}, {0.5, -1, 0}}}},
      {}, "x - mean is 0 for every entry; with eps inside the root the division is 0 / sqrt(eps) = 0, "
      "not 0 / 0.");

  const Tensor2 ox = randn<Tensor2>(std::array<std::size_t, 2>{3, 5}, 25);
  const Tensor1 ow = randn<Tensor1>(std::array<std::size_t, 1>{5}, 26, 0.5f, 1.0f);
  const Tensor1 ob = randn<Tensor1>(std::array<std::size_t, 1>{5}, 27, 0.5f);
  add(r, {"edge case: odd D = 5", inputs(ox, ow, ob, 1e-5f), call(ox, ow, ob, 1e-5f), reference(ox, ow, ob, 1e-5f)},
      layer_norm_exhibits(ox, ow, ob, 1e-5f, false), formula_hint + " Loop over all D entries of the row (nothing here is paired).");
  return r;
}

// ---- layer norm backward ----------------------------------------------------------------------

ExerciseResult check_layer_norm_backward(const LayerNormBackwardFn& student) {
  ExerciseResult r = start("layer_norm_backward");
  auto grads_output = [](const LayerNormGrads<2>& g) {
    return Output{field("dx", g.input), field("dweight", g.weight), field("dbias", g.bias)};
  };
  auto call = [student, grads_output](const Tensor2& dy, const Tensor2& x, const Tensor1& w, float eps) {
    return [=] { return grads_output(student(dy, x, w, eps)); };
  };
  auto reference = [](const Tensor2& dy, const Tensor2& x, const Tensor1& w, float eps) {
    const ref::LayerNormGrads g = ref::layer_norm_backward(ref::from(dy), ref::from(x), to_vec(w), eps);
    return Output{from_ref("dx", g.input), from_vec("dweight", g.weight), from_vec("dbias", g.bias)};
  };
  auto no_mean = [grads_output](const Tensor2& dy, const Tensor2& x, const Tensor1& w, float eps) {
    return Exhibit{Pitfall::layer_norm_backward_no_mean_terms,
                   [=] { return grads_output(pitfalls::layer_norm_backward_no_mean_terms(dy, x, w, eps)); }};
  };
  auto inputs = [](const Tensor2& dy, const Tensor2& x, const Tensor1& w) {
    return show("grad_y", dy) + "; " + show("x", x) + "; " + show("weight", w) + "; eps = 1e-05";
  };
  const std::string formula_hint =
      "with x̂ = (x - mean) · rstd, rstd = 1 / sqrt(var + eps) and g = dy · weight: dx = rstd · (g - mean(g) - "
      "x̂ · mean(g · x̂)) per row; dweight = Σ_rows dy · x̂; dbias = Σ_rows dy.";

  // Hand example: x = [1, 2, 3, 4], weight 1, dy = [1, 0, 0, 0]. x̂ = [-1.341635, -0.447212,
  // 0.447212, 1.341635], rstd = 0.894424, mean(g) = 0.25, mean(g · x̂) = -0.335409, so
  // dx = 0.894424 · ([1, 0, 0, 0] - 0.25 + 0.335409 · x̂) = [0.268330, -0.357768, -0.089443, 0.178882]
  // (NumPy gives the same); dweight = dy · x̂ = [-1.341635, 0, 0, 0]; dbias = dy = [1, 0, 0, 0].
  const Tensor2 hx = {{1, 2, 3, 4}}, hdy = {{1, 0, 0, 0}};
  const Tensor1 ones4 = xt::ones<float>({4});
  add(r, {"hand example: x = [1, 2, 3, 4], dy = [1, 0, 0, 0], weight 1", inputs(hdy, hx, ones4),
          call(hdy, hx, ones4, 1e-5f),
          {Field{"dx", {1, 4}, {0.2683303, -0.35776837, -0.08944343, 0.1788815}},
           Field{"dweight", {4}, {-1.34163542, 0, 0, 0}}, Field{"dbias", {4}, {1, 0, 0, 0}}}},
      {no_mean(hdy, hx, ones4, 1e-5f)}, formula_hint);

  const Tensor2 rx = randn<Tensor2>(std::array<std::size_t, 2>{3, 6}, 31, 2.0f, 0.5f);
  const Tensor2 rdy = randn<Tensor2>(std::array<std::size_t, 2>{3, 6}, 32);
  const Tensor1 rw = randn<Tensor1>(std::array<std::size_t, 1>{6}, 33, 0.5f, 1.0f);
  add(r, {"reference values: x [3, 6], random weight (the formula in double)", inputs(rdy, rx, rw),
          call(rdy, rx, rw, 1e-5f), reference(rdy, rx, rw, 1e-5f)},
      {no_mean(rdy, rx, rw, 1e-5f)}, formula_hint);

  ValueCheck inv{"invariant: each row of dx sums to 0 (adding a constant to a row of x does not change y)",
                 inputs(rdy, rx, rw), call(rdy, rx, rw, 1e-5f), {Field{"row sums of dx", {3}, {0, 0, 0}}}};
  inv.measure = [](const Output& o) { return row_sums(o, "row sums of dx"); };
  add(r, inv, {no_mean(rdy, rx, rw, 1e-5f)},
      "the mean and the variance depend on every x of the row, so dx has the two mean terms: " + formula_hint);

  // Finite differences of L = Σ dy ⊙ layer_norm(x) (reference forward in double).
  const std::vector<double> dyv(rdy.begin(), rdy.end()), wv = to_vec(rw), xv(rx.begin(), rx.end());
  const std::vector<double> bv(6, 0.1);
  auto loss_of = [dyv](const ref::Array& y) {
    double s = 0;
    for (std::size_t i = 0; i < y.data.size(); ++i) s += dyv[i] * y.data[i];
    return s;
  };
  const std::vector<std::size_t> xs = {3, 6};
  GradCheck fdx{"finite differences: dx", inputs(rdy, rx, rw) + "; L = Σ grad_y ⊙ layer_norm(x)", "dx", xs,
                call(rdy, rx, rw, 1e-5f),
                [=](const std::vector<double>& p) { return loss_of(ref::layer_norm(ref::Array{xs, p}, wv, bv, 1e-5)); },
                xv, {no_mean(rdy, rx, rw, 1e-5f)}, formula_hint};
  r.checks.push_back(run(fdx));
  GradCheck fdw{"finite differences: dweight", fdx.input, "dweight", {6}, call(rdy, rx, rw, 1e-5f),
                [=](const std::vector<double>& p) { return loss_of(ref::layer_norm(ref::Array{xs, xv}, p, bv, 1e-5)); },
                wv, {}, "dweight[d] = Σ_rows dy[r, d] · x̂[r, d]: sum over the rows, with the normalised x̂."};
  r.checks.push_back(run(fdw));
  GradCheck fdb{"finite differences: dbias", fdx.input, "dbias", {6}, call(rdy, rx, rw, 1e-5f),
                [=](const std::vector<double>& p) { return loss_of(ref::layer_norm(ref::Array{xs, xv}, wv, p, 1e-5)); },
                bv, {}, "dbias[d] = Σ_rows dy[r, d]: the bias is added to every row."};
  r.checks.push_back(run(fdb));

  const Tensor2 ox = randn<Tensor2>(std::array<std::size_t, 2>{1, 5}, 34), ody = randn<Tensor2>(std::array<std::size_t, 2>{1, 5}, 35);
  const Tensor1 ow = randn<Tensor1>(std::array<std::size_t, 1>{5}, 36, 0.5f, 1.0f);
  add(r, {"edge case: odd D = 5, one row (T = 1)", inputs(ody, ox, ow), call(ody, ox, ow, 1e-5f),
          reference(ody, ox, ow, 1e-5f)},
      {no_mean(ody, ox, ow, 1e-5f)}, formula_hint);
  return r;
}

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

ExerciseResult check_attention(const AttentionFn& student) {
  ExerciseResult r = start("attention");
  auto as_output = [](const AttentionResult& a) { return Output{field("output", a.output), field("weights", a.weights)}; };
  struct In {
    Tensor4 q, k, v;
    Mask2 mask;
  };
  auto call = [student, as_output](const In& in) { return [=] { return as_output(student(in.q, in.k, in.v, in.mask)); }; };
  auto reference = [](const In& in) {
    const ref::Attention a = ref::attention(ref::from(in.q), ref::from(in.k), ref::from(in.v), mask_ints(in.mask));
    return Output{from_ref("output", a.output), from_ref("weights", a.weights)};
  };
  auto exhibits = [as_output](const In& in) {
    using F = AttentionResult (*)(const Tensor4&, const Tensor4&, const Tensor4&, const Mask2&);
    auto ex = [&](Pitfall p, F f) { return Exhibit{p, [=] { return as_output(f(in.q, in.k, in.v, in.mask)); }}; };
    return std::vector<Exhibit>{ex(Pitfall::attention_without_scale, pitfalls::attention_without_scale),
                                ex(Pitfall::mask_after_softmax, pitfalls::attention_mask_after_softmax),
                                ex(Pitfall::mask_inverted, pitfalls::attention_inverted_mask)};
  };
  auto inputs = [](const In& in) {
    return show("q", in.q) + "; " + show("k", in.k) + "; " + show("v", in.v) + "; key_padding_mask " +
           shape_str(in.mask.shape()) + " = " + detail::list(std::vector<double>(in.mask.begin(), in.mask.end()));
  };
  auto random_in = [](std::size_t B, std::size_t H, std::size_t T, std::size_t Dh, std::vector<std::size_t> lengths,
                      std::uint32_t seed, float scale) {
    const std::array<std::size_t, 4> s = {B, H, T, Dh};
    return In{randn<Tensor4>(s, seed, scale), randn<Tensor4>(s, seed + 1, scale), randn<Tensor4>(s, seed + 2),
              padding_mask(lengths, T)};
  };
  const std::string formula_hint =
      "S = Q Kᵀ / sqrt(Dh); S[.., i, j] = -inf where key_padding_mask[b, j] is true; P = softmax(S) over j; O = P V.";

  // Hand example: B = 2 copies of one head with Dh = 4; q0 = [2, 0, 0, 0], q1 = 0, k0 = [1, 0, 0, 0],
  // k1 = 0, v0 = [1, 0, 0, 0], v1 = [0, 1, 0, 0]; sentence 1's key 1 is padding.
  // Sentence 0: S = [[2/sqrt(4), 0], [0, 0]] = [[1, 0], [0, 0]], so P = [[e/(e+1), 1/(e+1)], [0.5, 0.5]]
  //   = [[0.731059, 0.268941], [0.5, 0.5]] and O = P's rows padded with zeros (v0, v1 are unit vectors).
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
  add(r, {"hand example: B = 2, T = 2, Dh = 4, sentence 1 has one padding key", inputs(hin), call(hin),
          {Field{"output", {2, 1, 2, 4}, {a, c, 0, 0, 0.5, 0.5, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}},
           Field{"weights", {2, 1, 2, 2}, {a, c, 0.5, 0.5, 1, 0, 1, 0}}}},
      exhibits(hin), formula_hint);

  const In rin = random_in(2, 2, 4, 4, {4, 2}, 41, 1.0f);
  add(r, {"reference values: B = 2, H = 2, T = 4, Dh = 4, lengths 4 and 2 (the formula in double)",
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
  add(r, zero, exhibits(rin), "set the scores of padding keys to -inf before the softmax: exp(-inf) is exactly 0.");

  ValueCheck sums{"invariant: each row of weights sums to 1", inputs(rin), call(rin),
                  {Field{"row sums of weights", {16}, std::vector<double>(16, 1.0)}}};
  sums.measure = [](const Output& o) { return row_sums(o, "row sums of weights", 1); };
  add(r, sums, exhibits(rin), "P must be a softmax over the keys that are not masked: mask the scores first, then normalise.");

  const In full = random_in(2, 1, 3, 4, {3, 0}, 44, 1.0f);
  add(r, {"edge case: a fully masked sentence (every key is padding) gives zeros, not NaN", inputs(full),
          call(full), reference(full)},
      exhibits(full), "when every key of a row is masked the row's max score is -inf: return P = 0 and O = 0 for it "
      "(xencoder's convention; PyTorch gives NaN) instead of computing exp(-inf - (-inf)).");

  const In odd = random_in(1, 2, 3, 3, {3}, 47, 1.0f);
  add(r, {"edge case: odd Dh = 3", inputs(odd), call(odd), reference(odd)},
      exhibits(odd), formula_hint + " Dh is q's last dimension, whatever its parity.");

  const In one = random_in(2, 2, 1, 4, {1, 1}, 50, 1.0f);
  add(r, {"edge case: T = 1 (the only key gets weight 1)", inputs(one), call(one), reference(one)},
      exhibits(one), "with one key, P = [[1]] and O = V.");

  const In big = random_in(1, 1, 4, 4, {4}, 53, 10.0f);
  add(r, {"edge case: large scores (stability)", inputs(big), call(big), reference(big)},
      exhibits(big), "subtract each row's max score before exp (scores here reach the hundreds; exp(89) overflows float32).");
  return r;
}

// ---- heads ------------------------------------------------------------------------------------

ExerciseResult check_split_heads(const SplitHeadsFn& student) {
  ExerciseResult r = start("split_heads");
  auto call = [student](const Tensor3& x, std::size_t H) { return [=] { return Output{field("heads", student(x, H))}; }; };
  auto reference = [](const Tensor3& x, std::size_t H) { return Output{from_ref("heads", ref::split_heads(ref::from(x), H))}; };
  auto no_transpose = [](const Tensor3& x, std::size_t H) {
    return Exhibit{Pitfall::split_heads_without_transpose,
                   [=] { return Output{field("heads", pitfalls::split_heads_without_transpose(x, H))}; }};
  };
  const std::string formula_hint = "out[b, h, t, e] = x[b, t, h·Dh + e]: head h takes columns h·Dh .. h·Dh + Dh - 1 of every token.";

  // Hand example: x [1, 2, 4] = [[0, 1, 2, 3], [4, 5, 6, 7]], H = 2, Dh = 2: head 0 takes columns
  // 0..1 of both tokens ([[0, 1], [4, 5]]), head 1 columns 2..3 ([[2, 3], [6, 7]]).
  const Tensor3 hx = {{{0, 1, 2, 3}, {4, 5, 6, 7}}};
  add(r, {"hand example: x [1, 2, 4] = 0..7, H = 2", show("x", hx) + ", num_heads = 2", call(hx, 2),
          {Field{"heads", {1, 2, 2, 2}, {0, 1, 4, 5, 2, 3, 6, 7}}}},
      {no_transpose(hx, 2)}, formula_hint);

  const Tensor3 rx = randn<Tensor3>(std::array<std::size_t, 3>{2, 3, 8}, 61);
  add(r, {"reference values: x [2, 3, 8], H = 4", show("x", rx) + ", num_heads = 4", call(rx, 4), reference(rx, 4)},
      {no_transpose(rx, 4)}, formula_hint);

  const Tensor3 tx = randn<Tensor3>(std::array<std::size_t, 3>{2, 3, 6}, 62);
  ValueCheck trip{"invariant: merging the heads back gives x", show("x", tx) + ", num_heads = 3", call(tx, 3),
                  {field("merged", tx)}};
  trip.measure = [](const Output& o) {
    const Field& h = o.at(0);
    if (h.shape.size() != 4) throw std::invalid_argument("heads has shape " + shape_str(h.shape) + ", expected [B, H, T, Dh]");
    return Output{from_ref("merged", ref::merge_heads(ref::Array{h.shape, h.data}))};
  };
  add(r, trip, {no_transpose(tx, 3)}, formula_hint);

  const Tensor3 ox = randn<Tensor3>(std::array<std::size_t, 3>{2, 2, 6}, 63);
  add(r, {"edge case: odd Dh = 3 (D = 6, H = 2)", show("x", ox) + ", num_heads = 2", call(ox, 2), reference(ox, 2)},
      {no_transpose(ox, 2)}, formula_hint);

  const Tensor3 one = randn<Tensor3>(std::array<std::size_t, 3>{2, 1, 8}, 64);
  add(r, {"edge case: T = 1", show("x", one) + ", num_heads = 2", call(one, 2), reference(one, 2)},
      {}, formula_hint);

  const Tensor3 h1 = randn<Tensor3>(std::array<std::size_t, 3>{1, 3, 4}, 65);
  add(r, {"edge case: H = 1 (one head holds all of x)", show("x", h1) + ", num_heads = 1", call(h1, 1),
          reference(h1, 1)},
      {}, formula_hint);

  ThrowCheck indivisible{"edge case: D = 6 is not divisible by H = 4", "x [1, 2, 6], num_heads = 4",
                         [student] { student(xt::zeros<float>({1, 2, 6}), 4); },
                         "throws std::invalid_argument (e.g. xenc::config_error): D must be divisible by num_heads",
                         "check D % num_heads == 0 first and throw std::invalid_argument (xenc::config_error is one).",
                         {}};
  r.checks.push_back(run(indivisible));
  return r;
}

ExerciseResult check_merge_heads(const MergeHeadsFn& student) {
  ExerciseResult r = start("merge_heads");
  auto call = [student](const Tensor4& x) { return [=] { return Output{field("merged", student(x))}; }; };
  auto reference = [](const Tensor4& x) { return Output{from_ref("merged", ref::merge_heads(ref::from(x)))}; };
  auto no_transpose = [](const Tensor4& x) {
    return Exhibit{Pitfall::merge_heads_without_transpose,
                   [=] { return Output{field("merged", pitfalls::merge_heads_without_transpose(x))}; }};
  };
  const std::string formula_hint = "out[b, t, h·Dh + e] = x[b, h, t, e]: token t's row is its heads side by side.";

  // Hand example, the inverse of split_heads': heads [[[0, 1], [4, 5]], [[2, 3], [6, 7]]]
  // (head 0, head 1; rows are tokens) merge to [[0, 1, 2, 3], [4, 5, 6, 7]].
  const Tensor4 hx = {{{{0, 1}, {4, 5}}, {{2, 3}, {6, 7}}}};
  add(r, {"hand example: 2 heads of [2 tokens, Dh = 2]", show("x", hx), call(hx),
          {Field{"merged", {1, 2, 4}, {0, 1, 2, 3, 4, 5, 6, 7}}}},
      {no_transpose(hx)}, formula_hint);

  const Tensor4 rx = randn<Tensor4>(std::array<std::size_t, 4>{2, 4, 3, 2}, 71);
  add(r, {"reference values: x [2, 4, 3, 2] (B, H, T, Dh)", show("x", rx), call(rx), reference(rx)},
      {no_transpose(rx)}, formula_hint);

  const Tensor3 tx = randn<Tensor3>(std::array<std::size_t, 3>{2, 3, 6}, 72);
  const ref::Array split = ref::split_heads(ref::from(tx), 3);
  Tensor4 heads = Tensor4::from_shape({2, 3, 3, 2});
  std::copy(split.data.begin(), split.data.end(), heads.begin());
  add(r, {"invariant: merging split heads gives x back", show("x", tx) + " split into 3 heads: " + show("heads", heads),
          call(heads), {field("merged", tx)}},
      {no_transpose(heads)}, formula_hint);

  const Tensor4 ox = randn<Tensor4>(std::array<std::size_t, 4>{1, 2, 3, 3}, 73);
  add(r, {"edge case: odd Dh = 3", show("x", ox), call(ox), reference(ox)},
      {no_transpose(ox)}, formula_hint);

  const Tensor4 one = randn<Tensor4>(std::array<std::size_t, 4>{2, 2, 1, 4}, 74);
  add(r, {"edge case: T = 1", show("x", one), call(one), reference(one)},
      {}, formula_hint);
  return r;
}

// ---- linear backward --------------------------------------------------------------------------

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
    return Exhibit{Pitfall::linear_backward_bias_mean, [=] { return as_output(pitfalls::linear_backward_bias_mean(dy, x, W)); }};
  };
  auto inputs = [](const Tensor2& dy, const Tensor2& x, const Tensor2& W) {
    return show("grad_y", dy) + "; " + show("x", x) + "; " + show("weight", W);
  };
  const std::string formula_hint =
      "for y = x Wᵀ + b: dx = dy W ([N, in]), dW = dyᵀ x ([out, in], the shape of W), db = Σ_rows dy ([out]).";

  // Hand example: x = [[1, 2], [3, 4]], W = [[1, 0], [0, 1], [1, 1]], dy = [[1, 2, 3], [1, 0, 0]]:
  // dx = dy W = [[1 + 3, 2 + 3], [1, 0]] = [[4, 5], [1, 0]]
  // dW = dyᵀ x: row o = Σ_n dy[n, o] x[n] = [[1 + 3, 2 + 4], [2, 4], [3, 6]] = [[4, 6], [2, 4], [3, 6]]
  // db = [1 + 1, 2 + 0, 3 + 0] = [2, 2, 3]
  const Tensor2 hx = {{1, 2}, {3, 4}}, hW = {{1, 0}, {0, 1}, {1, 1}}, hdy = {{1, 2, 3}, {1, 0, 0}};
  add(r, {"hand example: N = 2, in = 2, out = 3", inputs(hdy, hx, hW), call(hdy, hx, hW),
          {Field{"dx", {2, 2}, {4, 5, 1, 0}}, Field{"dW", {3, 2}, {4, 6, 2, 4, 3, 6}}, Field{"db", {3}, {2, 2, 3}}}},
      {bias_mean(hdy, hx, hW)}, formula_hint);

  const Tensor2 rx = randn<Tensor2>(std::array<std::size_t, 2>{4, 5}, 81), rW = randn<Tensor2>(std::array<std::size_t, 2>{3, 5}, 82);
  const Tensor2 rdy = randn<Tensor2>(std::array<std::size_t, 2>{4, 3}, 83);
  add(r, {"reference values: N = 4, in = 5, out = 3 (the formula in double)", inputs(rdy, rx, rW),
          call(rdy, rx, rW), reference(rdy, rx, rW)},
      {bias_mean(rdy, rx, rW)}, formula_hint);

  // Invariant: a bias is a weight on a constant input 1. With x's last column all ones, db must
  // equal dW's last column.
  Tensor2 cx = rx;
  for (std::size_t n = 0; n < 4; ++n) cx(n, 4) = 1.0f;
  ValueCheck inv{"invariant: the bias is a weight on a constant input (x's last column is 1, so db = dW[:, 4])",
                 inputs(rdy, cx, rW), call(rdy, cx, rW), {}};
  inv.measure = [](const Output& o) { return Output{Field{"db", o.at(2).shape, o.at(2).data}}; };
  inv.expected_from = [](const Output& o) {
    const Field& dW = o.at(1);
    if (dW.shape.size() != 2 || dW.shape[1] != 5) throw std::invalid_argument("dW has shape " + shape_str(dW.shape) + ", expected [3, 5]");
    Field col{"db", {dW.shape[0]}, {}};
    for (std::size_t i = 0; i < dW.shape[0]; ++i) col.data.push_back(dW.data[i * 5 + 4]);
    return Output{col};
  };
  inv.expected_text = "your dW[:, 4] (the weights on the constant input)";
  add(r, inv, {bias_mean(rdy, cx, rW)}, "db collects dy from every row, exactly as dW[:, 4] = Σ_n dy[n, :] · 1 does: a sum, not a mean.");

  // Finite differences of L = Σ dy ⊙ (x Wᵀ + b) (reference forward in double).
  const std::vector<double> dyv(rdy.begin(), rdy.end()), xv(rx.begin(), rx.end()), Wv(rW.begin(), rW.end());
  const std::vector<double> bv = {0.1, -0.2, 0.3};
  auto loss_of = [dyv](const ref::Array& y) {
    double s = 0;
    for (std::size_t i = 0; i < y.data.size(); ++i) s += dyv[i] * y.data[i];
    return s;
  };
  const std::string fd_input = inputs(rdy, rx, rW) + "; L = Σ grad_y ⊙ (x Wᵀ + b)";
  r.checks.push_back(run(GradCheck{"finite differences: dx", fd_input, "dx", {4, 5}, call(rdy, rx, rW),
                                   [=](const std::vector<double>& p) { return loss_of(ref::linear({{4, 5}, p}, {{3, 5}, Wv}, bv)); },
                                   xv, {bias_mean(rdy, rx, rW)}, "dx = dy W: [N, out] times [out, in]."}));
  r.checks.push_back(run(GradCheck{"finite differences: dW", fd_input, "dW", {3, 5}, call(rdy, rx, rW),
                                   [=](const std::vector<double>& p) { return loss_of(ref::linear({{4, 5}, xv}, {{3, 5}, p}, bv)); },
                                   Wv, {bias_mean(rdy, rx, rW)}, "dW = dyᵀ x has W's shape [out, in]: dW[o, i] = Σ_n dy[n, o] x[n, i]."}));
  r.checks.push_back(run(GradCheck{"finite differences: db", fd_input, "db", {3}, call(rdy, rx, rW),
                                   [=](const std::vector<double>& p) { return loss_of(ref::linear({{4, 5}, xv}, {{3, 5}, Wv}, p)); },
                                   bv, {bias_mean(rdy, rx, rW)}, "db[o] = Σ_n dy[n, o]."}));

  const Tensor2 ex = {{2}}, eW = {{3}, {-1}}, edy = {{1, 2}};
  add(r, {"edge case: one row (N = 1), in = 1", inputs(edy, ex, eW), call(edy, ex, eW), reference(edy, ex, eW)},
      {}, formula_hint);
  return r;
}

// ---- cross-entropy ----------------------------------------------------------------------------

ExerciseResult check_cross_entropy(const CrossEntropyFn& student) {
  ExerciseResult r = start("cross_entropy");
  auto as_output = [](const CrossEntropyOutput& o) {
    return Output{detail::scalar("loss", o.loss), field("grad_logits", o.grad_logits)};
  };
  struct In {
    Tensor2 logits;
    Index1 targets;
    std::int64_t ignore;
  };
  auto call = [student, as_output](const In& in) { return [=] { return as_output(student(in.logits, in.targets, in.ignore)); }; };
  auto reference = [](const In& in) {
    const ref::CrossEntropy ce = ref::cross_entropy(ref::from(in.logits), std::vector<std::int64_t>(in.targets.begin(), in.targets.end()), in.ignore);
    return Output{detail::scalar("loss", ce.loss), from_ref("grad_logits", ce.grad)};
  };
  auto counts_ignored = [as_output](const In& in) {
    return Exhibit{Pitfall::cross_entropy_counts_ignored, [=] {
                     return as_output({pitfalls::cross_entropy_counts_ignored(in.logits, in.targets, in.ignore),
                                       pitfalls::cross_entropy_counts_ignored_backward(in.logits, in.targets, in.ignore)});
                   }};
  };
  auto inputs = [](const In& in) {
    return show("logits", in.logits) + "; " + show("targets", in.targets) + "; ignore_index = " + std::to_string(in.ignore);
  };
  const std::string formula_hint =
      "loss = 1/N' Σ over rows with target != ignore_index of (logsumexp(z_n) - z_n[t_n]); grad_logits[n] = "
      "(softmax(z_n) - onehot(t_n)) / N' for those rows and 0 for ignored rows; N' = number of rows not ignored.";

  // Hand example: logits [[1, 2, 3], [1, 0, -1]], targets [2, -100]: row 1 is ignored, N' = 1.
  // loss = log(e + e² + e³) - 3 = 3.407606 - 3 = 0.407606 (PyTorch: 0.4076059644);
  // grad row 0 = softmax([1, 2, 3]) - [0, 0, 1] = [0.090031, 0.244728, -0.334759]; row 1 = 0.
  const In hin{{{1, 2, 3}, {1, 0, -1}}, {2, -100}, -100};
  add(r, {"hand example: two rows, the second ignored", inputs(hin), call(hin),
          {detail::scalar("loss", 0.4076059644),
          Field{"grad_logits", {2, 3}, {0.0900305732, 0.2447284711, -0.3347590442, 0, 0, 0}}}},
      {counts_ignored(hin)}, formula_hint);

  In rin{randn<Tensor2>(std::array<std::size_t, 2>{6, 5}, 91, 2.0f), {3, -100, 0, 4, -100, 1}, -100};
  add(r, {"reference values: N = 6, C = 5, two rows ignored (the formula in double)", inputs(rin), call(rin), reference(rin)},
      {counts_ignored(rin)}, formula_hint);

  ValueCheck sums{"invariant: each row of grad_logits sums to 0", inputs(rin), call(rin),
                  {Field{"row sums of grad_logits", {6}, std::vector<double>(6, 0.0)}}};
  sums.measure = [](const Output& o) { return row_sums(o, "row sums of grad_logits", 1); };
  add(r, sums, {}, "softmax sums to 1 and the one-hot to 1, so each kept row of softmax - onehot sums to 0; ignored rows are 0.");

  In shifted = rin;
  for (std::size_t c = 0; c < 5; ++c) shifted.logits(2, c) += 7.0f;
  ValueCheck shift{"invariant: adding 7 to one row's logits leaves the loss unchanged", inputs(rin) + ", then row 2 + 7",
                   call(shifted), {}};
  shift.measure = [](const Output& o) { return Output{o.at(0)}; };
  shift.expected_from = [call, rin](const Output&) { return Output{call(rin)().at(0)}; };
  shift.expected_text = "your loss without the shift";
  add(r, shift, {}, "log softmax is unchanged when a constant is added to a row: compute it as z_t - logsumexp(z).");

  const std::vector<double> lv(rin.logits.begin(), rin.logits.end());
  const std::vector<std::int64_t> tv(rin.targets.begin(), rin.targets.end());
  r.checks.push_back(run(GradCheck{"finite differences: grad_logits", inputs(rin), "grad_logits", {6, 5}, call(rin),
                                   [tv](const std::vector<double>& p) { return ref::cross_entropy({{6, 5}, p}, tv, -100).loss; },
                                   lv, {counts_ignored(rin)}, formula_hint}));

  const In all{randn<Tensor2>(std::array<std::size_t, 2>{3, 4}, 92), {-100, -100, -100}, -100};
  ValueCheck none{"edge case: every row ignored (loss NaN as PyTorch, gradient 0)", inputs(all), call(all), reference(all)};
  none.expected_text = "loss = nan (0/0: no row counts, as torch.nn.functional.cross_entropy); grad_logits all 0";
  add(r, none, {}, "with N' = 0 the mean is 0/0 = NaN (PyTorch's answer) and no row contributes to the gradient, which is 0.");

  const In big{{{1000, 1001, 1002}, {-1000, 0, 1000}}, {0, 1}, -100};
  add(r, {"edge case: large logits (stability)", inputs(big), call(big), reference(big)},
      {counts_ignored(big)}, "compute logsumexp(z) = m + log Σ exp(z - m) with m = max(z): exp(1000) overflows.");

  const In zero{randn<Tensor2>(std::array<std::size_t, 2>{4, 3}, 93), {0, 2, 1, 0}, 0};
  add(r, {"edge case: ignore_index = 0 (a real class id is ignored)", inputs(zero), call(zero), reference(zero)},
      {counts_ignored(zero)}, "compare each target with the ignore_index argument, whatever its value, before using it as a class.");

  const In one{randn<Tensor2>(std::array<std::size_t, 2>{1, 4}, 94), {3}, -100};
  add(r, {"edge case: one row (T = 1)", inputs(one), call(one), reference(one)},
      {}, formula_hint);
  return r;
}

// ---- RoPE ---------------------------------------------------------------------------------------

namespace {
using Positions = std::vector<std::size_t>;

std::vector<double> to_doubles(const Positions& p) { return std::vector<double>(p.begin(), p.end()); }

// The scores S[m, n] = y_q[m] · y_k[n] of two rotated [T, Dh] matrices, in double.
Field scores(const Tensor2& yq, const Tensor2& yk) {
  if (yk.shape() != yq.shape())
    throw std::invalid_argument("rotated q has shape " + shape_str(yq.shape()) + " and k " + shape_str(yk.shape()) +
                                ", expected [T, Dh] both");
  const std::size_t T = yq.shape()[0], Dh = yq.shape()[1];
  Field s{"scores q_m · k_n", {T, T}, std::vector<double>(T * T, 0.0)};
  for (std::size_t m = 0; m < T; ++m)
    for (std::size_t n = 0; n < T; ++n)
      for (std::size_t e = 0; e < Dh; ++e) s.data[m * T + n] += double(yq(m, e)) * double(yk(n, e));
  return s;
}

// Row norms |x[t]| of a [T, Dh] field, in double.
Output row_norms(const Output& o) {
  const Field& y = o.at(0);
  if (y.shape.size() != 2) throw std::invalid_argument("y has shape " + shape_str(y.shape) + ", expected [T, Dh]");
  const std::size_t T = y.shape[0], Dh = y.shape[1];
  Field n{"row norms |y[t]|", {T}, std::vector<double>(T, 0.0)};
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t e = 0; e < Dh; ++e) n.data[t] += y.data[t * Dh + e] * y.data[t * Dh + e];
    n.data[t] = std::sqrt(n.data[t]);
  }
  return {n};
}
}  // namespace

ExerciseResult check_rope(const RopeFn& student) {
  ExerciseResult r = start("rope");
  auto call = [student](const Tensor2& x, const Positions& p) { return [=] { return Output{field("y", student(x, p))}; }; };
  auto reference = [](const Tensor2& x, const Positions& p) {
    return Output{from_ref("y", ref::rope(ref::from(x), to_doubles(p)))};
  };
  auto exhibits = [](const Tensor2& x, const Positions& p) {
    using F = Tensor2 (*)(const Tensor2&, const Positions&);
    auto ex = [&](Pitfall pf, F f) { return Exhibit{pf, [=] { return Output{field("y", f(x, p))}; }}; };
    return std::vector<Exhibit>{ex(Pitfall::rope_rotate_half, pitfalls::rope_rotate_half),
                                ex(Pitfall::rope_exponent_without_2, pitfalls::rope_exponent_without_2),
                                ex(Pitfall::rope_clockwise, pitfalls::rope_clockwise),
                                ex(Pitfall::rope_positions_from_one, pitfalls::rope_positions_from_one)};
  };
  auto inputs = [](const Tensor2& x, const Positions& p) { return show("x", x) + "; positions = " + detail::list(to_doubles(p)); };
  // a reference check: the student's rotation against the formula, every exhibit as a suspect
  auto against_formula = [&](const std::string& name, const Tensor2& x, const Positions& p, const std::string& hint) {
    add(r, {name, inputs(x, p), call(x, p), reference(x, p)}, exhibits(x, p), hint);
  };
  const std::string formula_hint =
      "θ_i = 10000^(-2i/Dh) and a = positions[t] · θ_i; rotate each pair (x[t, 2i], x[t, 2i+1]) counter-clockwise: "
      "y[t, 2i] = x[t, 2i] cos a - x[t, 2i+1] sin a, y[t, 2i+1] = x[t, 2i] sin a + x[t, 2i+1] cos a.";

  // Hand example, Dh = 4: θ_0 = 1, θ_1 = 10000^(-2/4) = 0.01. Row 0 at position 0 is not rotated.
  // Row 1 = [1, 0, 1, 0] at position 1: each pair (1, 0) turns into (cos a, sin a), a = 1 and 0.01:
  // [cos 1, sin 1, cos 0.01, sin 0.01] = [0.540302, 0.841471, 0.99995, 0.00999983].
  const Tensor2 hx = {{1, 2, 3, 4}, {1, 0, 1, 0}};
  add(r, {"hand example: Dh = 4, rows [1, 2, 3, 4] at position 0 and [1, 0, 1, 0] at position 1", inputs(hx, {0, 1}),
          call(hx, {0, 1}), {Field{"y", {2, 4}, {1, 2, 3, 4, 0.5403023059, 0.8414709848, 0.9999500004, 0.0099998333}}}},
      exhibits(hx, {0, 1}), formula_hint);

  const Tensor2 rx = randn<Tensor2>(std::array<std::size_t, 2>{6, 8}, 101);
  against_formula("reference values: x [6, 8], positions 0, 1, 2, 5, 17, 100 (the formula in double)", rx,
                  {0, 1, 2, 5, 17, 100}, formula_hint + " Row t is at positions[t], not at t.");

  // Invariant: a rotation keeps lengths.
  const Tensor2 nx = randn<Tensor2>(std::array<std::size_t, 2>{4, 6}, 102);
  const Positions np = {0, 3, 9, 40};
  ValueCheck norms{"invariant: every row keeps its length, |y[t]| = |x[t]|", inputs(nx, np), call(nx, np),
                   row_norms({field("x", nx)})};
  norms.measure = row_norms;
  add(r, norms, exhibits(nx, np),
      "a rotation keeps lengths: multiply each pair by [[cos a, -sin a], [sin a, cos a]] with one angle a for both "
      "entries (RoPE rotates q and k; it adds nothing to them).");

  // Invariant: (R(m + s) q) · (R(n + s) k) = (R(m) q) · (R(n) k): shift every position by s = 6.
  const Tensor2 q = randn<Tensor2>(std::array<std::size_t, 2>{5, 8}, 103, 0.5f);
  const Tensor2 k = randn<Tensor2>(std::array<std::size_t, 2>{5, 8}, 104, 0.5f);
  const Positions p0 = {0, 1, 2, 3, 4}, p6 = {6, 7, 8, 9, 10};
  ValueCheck rel{"invariant: the scores q_m · k_n depend only on m - n (every position + 6: the same scores)",
                 show("q", q) + "; " + show("k", k) + "; positions 0 .. 4, then 6 .. 10",
                 [=] { return Output{scores(student(q, p6), student(k, p6))}; }, {}};
  rel.expected_from = [=](const Output&) { return Output{scores(student(q, p0), student(k, p0))}; };
  rel.expected_text = "your scores at positions 0 .. 4 (within 1e-5)";
  rel.tol = detail::Tolerance{1e-5, 0.0};
  add(r, rel, {},
      "the angle must be the position times a frequency that does not depend on the position, a = p · θ_i, and q and k "
      "must be rotated the same way: then R(m)ᵀ R(n) = R(n - m).");

  // Invariant: position 0 has every angle 0, cos 0 = 1, sin 0 = 0.
  const Tensor2 zx = randn<Tensor2>(std::array<std::size_t, 2>{3, 6}, 105);
  add(r, {"invariant: position 0 is the identity (y = x)", inputs(zx, {0, 0, 0}), call(zx, {0, 0, 0}), {field("y", zx)}},
      exhibits(zx, {0, 0, 0}), "at position 0 every angle is 0: y = x. Count positions from 0.");

  against_formula("edge case: T = 1 (one row, at position 5)", randn<Tensor2>(std::array<std::size_t, 2>{1, 6}, 106), {5},
                  formula_hint);
  against_formula("edge case: Dh = 2 (one pair, θ_0 = 1: the angle is the position itself)",
                  randn<Tensor2>(std::array<std::size_t, 2>{4, 2}, 107), {0, 1, 2, 3}, formula_hint);
  // Dh = 6: θ_1 = 10000^(-1/3) = 0.0464159 is no round number, so a float32 angle rounds.
  against_formula("edge case: large positions (1000 and 100000), Dh = 6",
                  randn<Tensor2>(std::array<std::size_t, 2>{2, 6}, 108), {1000, 100000},
                  "compute θ_i and the angle p · θ_i in double: at p = 100000 the angle of pair 1 is 4642 rad, where "
                  "neighbouring float32 values are 0.0005 apart, so a float angle can be off by 2.5e-4 rad. " +
                      formula_hint);

  r.checks.push_back(run(ThrowCheck{"edge case: odd Dh = 5 is refused", "x [2, 5]; positions = [0, 1]",
                                    [student] { student(xt::zeros<float>({2, 5}), {0, 1}); },
                                    "throws std::invalid_argument (e.g. xenc::config_error): the pairs (2i, 2i+1) need an "
                                    "even Dh",
                                    "check that Dh (x's number of columns) is even and not 0 first, and throw "
                                    "std::invalid_argument (xenc::config_error is one): an odd last column has no partner.",
                                    {}}));
  return r;
}

// ---- ALiBi slopes -------------------------------------------------------------------------------

ExerciseResult check_alibi_slopes(const AlibiSlopesFn& student) {
  ExerciseResult r = start("alibi_slopes");
  auto call = [student](std::size_t H) { return [=] { return Output{from_vec("slopes", student(H))}; }; };
  auto exhibits = [](std::size_t H) {
    return std::vector<Exhibit>{
        {Pitfall::alibi_start_2_pow_minus_8, [=] { return Output{from_vec("slopes", pitfalls::alibi_slopes_start_2_pow_minus_8(H))}; }},
        {Pitfall::alibi_plain_formula, [=] { return Output{from_vec("slopes", pitfalls::alibi_slopes_plain_formula(H))}; }}};
  };
  auto heads = [](std::size_t H) { return "num_heads = " + std::to_string(H); };
  auto against_formula = [&](const std::string& name, std::size_t H, const std::string& hint) {
    add(r, {name, heads(H), call(H), {from_vec("slopes", ref::alibi_slopes(H))}}, exhibits(H), hint);
  };
  const std::string power_hint =
      "for H a power of two: the geometric sequence that starts at 2^(-8/H) with that same ratio, m_h = 2^(-8(h+1)/H), "
      "h = 0 .. H-1.";
  const std::string other_hint =
      "for H not a power of two: n = the largest power of two below H; first the n slopes 2^(-8(h+1)/n), then "
      "2^(-8·1/(2n)), 2^(-8·3/(2n)), 2^(-8·5/(2n)), ... (every other slope of 2n heads) until there are H.";

  // Hand example, the paper's values for H = 8: start and ratio 2^(-8/8) = 1/2, so
  // 1/2, 1/4, 1/8, 1/16, 1/32, 1/64, 1/128, 1/256.
  add(r, {"hand example: H = 8 (the paper: 1/2, 1/4, ..., 1/256)", heads(8), call(8),
          {Field{"slopes", {8}, {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625}}}},
      exhibits(8), power_hint);
  // Hand example, H = 6: n = 4 gives 2^-2, 2^-4, 2^-6, 2^-8; the 8-head sequence is 2^-1, 2^-2, ..., 2^-8,
  // and every other one from the first is 2^-1, 2^-3, ...: the first 6 - 4 = 2 of them close the list.
  add(r, {"hand example: H = 6 (not a power of two: 1/4, 1/16, 1/64, 1/256, then 1/2, 1/8)", heads(6), call(6),
          {Field{"slopes", {6}, {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125}}}},
      exhibits(6), other_hint);
  against_formula("reference values: H = 32 (the formula in double)", 32, power_hint);
  against_formula("reference values: H = 12 (not a power of two)", 12, other_hint);

  // Invariant: for H a power of two, each slope is the previous one times m_0.
  ValueCheck ratio{"invariant: for H = 16 the slopes are geometric, m_{h+1} / m_h = m_0", heads(16), call(16), {}};
  ratio.measure = [](const Output& o) {
    const Field& m = o.at(0);
    Field q{"m_{h+1} / m_h", {m.data.empty() ? 0 : m.data.size() - 1}, {}};
    for (std::size_t h = 0; h + 1 < m.data.size(); ++h) q.data.push_back(m.data[h + 1] / m.data[h]);
    return Output{q};
  };
  ratio.expected_from = [](const Output& o) {
    const Field& m = o.at(0);
    if (m.data.size() != 16) throw std::invalid_argument("slopes has " + std::to_string(m.data.size()) + " values, expected 16");
    return Output{Field{"m_{h+1} / m_h", {15}, std::vector<double>(15, m.data[0])}};
  };
  ratio.expected_text = "your m_0 for every h";
  add(r, ratio, exhibits(16), "the ratio of the sequence is its start, 2^(-8/H): m_h = m_0^(h+1). " + power_hint);

  // Invariant: the last slope of a power of two is 2^(-8) = 1/256, whatever H.
  auto last_slopes = [](const AlibiSlopesFn& f) {
    return [f] {
      Field l{"last slope", {7}, {}};
      for (std::size_t H = 1; H <= 64; H *= 2) {
        const std::vector<double> m = f(H);
        if (m.size() != H) throw std::invalid_argument("for H = " + std::to_string(H) + " got " + std::to_string(m.size()) + " slopes");
        l.data.push_back(m.back());
      }
      return Output{l};
    };
  };
  ValueCheck last{"invariant: for H = 1, 2, 4, ..., 64 the last slope is 2^(-8) = 1/256", "num_heads = 1, 2, 4, 8, 16, 32, 64",
                  last_slopes(student), {Field{"last slope", {7}, std::vector<double>(7, 1.0 / 256)}}};
  add(r, last,
      {{Pitfall::alibi_start_2_pow_minus_8, last_slopes(pitfalls::alibi_slopes_start_2_pow_minus_8)}},
      "m_{H-1} = 2^(-8H/H) = 2^(-8): the sequence runs from 2^(-8/H) down to 1/256. " + power_hint);

  // Invariant: for H not a power of two, the slopes of the power of two below come first.
  ValueCheck keeps{"invariant: for H = 12 the first 8 slopes are your slopes for H = 8", heads(12), call(12), {}};
  keeps.measure = [](const Output& o) {
    const Field& m = o.at(0);
    if (m.data.size() < 8) throw std::invalid_argument("slopes has " + std::to_string(m.data.size()) + " values, expected 12");
    return Output{Field{"first 8 slopes", {8}, std::vector<double>(m.data.begin(), m.data.begin() + 8)}};
  };
  keeps.expected_from = [student](const Output&) { return Output{from_vec("first 8 slopes", student(8))}; };
  keeps.expected_text = "your slopes for H = 8";
  add(r, keeps, exhibits(12), other_hint);

  against_formula("edge case: H = 1 (one head: 2^(-8))", 1, power_hint);
  against_formula("edge case: H = 3", 3, other_hint);
  r.checks.push_back(run(ThrowCheck{"edge case: H = 0 is refused", "num_heads = 0", [student] { student(0); },
                                    "throws std::invalid_argument (e.g. xenc::config_error): there is no head to give a slope",
                                    "check num_heads > 0 first and throw std::invalid_argument (xenc::config_error is one).",
                                    {}}));
  return r;
}

}  // namespace xenc::grade

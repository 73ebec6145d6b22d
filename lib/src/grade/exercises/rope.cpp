// Exercise rope: RoPE of one head. This file is the whole exercise and the one place it is written:
// the `// @` lines are its specification, then come its registration and its checks, named cases
// (hand example, reference values, invariant, edge case, hidden), each with the museum exhibits
// that could explain its failure. Hand examples carry their arithmetic in a comment.
//
// @exercise rope
// @order 9
// @points 1
// @function Tensor2 rope(const Tensor2& x, const std::vector<std::size_t>& positions)
// @doc Rotary position embedding (RoPE; Su et al., 2021, "RoFormer", eq. 13-15) of one head's
// @doc queries or keys: row t of x is rotated, pair by pair, by its position positions[t] times the
// @doc pair's frequency. The pairs are interleaved, (2i, 2i+1), as in RoFormer and the sinusoidal
// @doc table (not the "rotate half" pairs (i, i + Dh/2) of GPT-NeoX and Hugging Face LLaMA):
// @doc     θ_i = 10000^(−2i/Dh),  i = 0 .. Dh/2 − 1,     a = positions[t] · θ_i
// @doc     y[t, 2i]   = x[t, 2i] · cos a − x[t, 2i+1] · sin a
// @doc     y[t, 2i+1] = x[t, 2i] · sin a + x[t, 2i+1] · cos a      (counter-clockwise)
// @doc Positions count from 0: position 0 leaves a row as it is. Then |y[t]| = |x[t]|, and the score
// @doc of a query at position m and a key at position n depends on m − n only.
// @doc Shapes:  x, y: [T, Dh]   positions: T entries (any order, any size)
// @doc Throws:  std::invalid_argument (e.g. xenc::config_error) if Dh is odd or 0 (no pairs).
// @doc Library: xenc::rope_forward (xenc/ops/position_in_attention.hpp), for [B, T, H·Dh].
// @stub     θ_i = 10000^(-2i/Dh),  a = positions[t] · θ_i
// @stub     y[t, 2i] = x[t, 2i] cos a - x[t, 2i+1] sin a,   y[t, 2i+1] = x[t, 2i] sin a + x[t, 2i+1] cos
// @stub     a
// @notebook ### Exercise: the RoPE rotation
// @notebook
// @notebook Rotate the queries or keys of one head, `x` `[T, Dh]`: row $t$ sits at position `positions[t]`, and its pair $i$ (the columns $2i, 2i+1$, interleaved as in section 1) turns by $a = \text{positions}[t]\cdot\theta_i$ with $\theta_i = 10000^{-2i/D_h}$: $\;y_{2i} = x_{2i}\cos a - x_{2i+1}\sin a$, $\;y_{2i+1} = x_{2i}\sin a + x_{2i+1}\cos a$. Throw `std::invalid_argument` (`xenc::config_error` is one) when $D_h$ is odd or 0. The check includes the two facts of section 2: norms are kept, and a score depends only on $m - n$.
// @notebook_stub x, y: [T, Dh]   positions: T entries (row t is at position positions[t])
#include "../exercise_support.hpp"

namespace xenc::grade {

using namespace support;

namespace {
const RegisterExercise registered{remote(spec::rope(), check_rope)};
}  // namespace

// ---- RoPE ---------------------------------------------------------------------------------------

namespace {
using Positions = std::vector<std::size_t>;

std::vector<double> to_doubles(const Positions& p) {
  return std::vector<double>(p.begin(), p.end());
}

// The scores S[m, n] = y_q[m] · y_k[n] of two rotated [T, Dh] matrices, in double.
Field scores(const Tensor2& yq, const Tensor2& yk) {
  if (yk.shape() != yq.shape())
    throw std::invalid_argument("rotated q has shape " + shape_str(yq.shape()) + " and k " +
                                shape_str(yk.shape()) + ", expected [T, Dh] both");
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
  if (y.shape.size() != 2)
    throw std::invalid_argument("y has shape " + shape_str(y.shape) + ", expected [T, Dh]");
  const std::size_t T = y.shape[0], Dh = y.shape[1];
  Field n{"row norms |y[t]|", {T}, std::vector<double>(T, 0.0)};
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t e = 0; e < Dh; ++e) n.data[t] += y.data[t * Dh + e] * y.data[t * Dh + e];
    n.data[t] = std::sqrt(n.data[t]);  // scalar
  }
  return {n};
}
}  // namespace

// Long because: it is the exercise's list of checks, one after another in the order the
// report prints them (hand example, reference values, invariants, edge cases, hidden), each
// with its inputs and hint; split up, the list would no longer read as one list.
ExerciseResult check_rope(const RopeFn& student) {
  ExerciseResult r = start("rope");
  auto call = [student](const Tensor2& x, const Positions& p) {
    return [=] { return Output{field("y", student(x, p))}; };
  };
  auto reference = [](const Tensor2& x, const Positions& p) {
    return Output{from_ref("y", ref::rope(ref::from(x), to_doubles(p)))};
  };
  auto exhibits = [](const Tensor2& x, const Positions& p) {
    using F = Tensor2 (*)(const Tensor2&, const Positions&);
    auto ex = [&](Pitfall pf, F f) {
      return Exhibit{pf, [=] { return Output{field("y", f(x, p))}; }};
    };
    return std::vector<Exhibit>{
        ex(Pitfall::rope_rotate_half, pitfalls::rope_rotate_half),
        ex(Pitfall::rope_exponent_without_2, pitfalls::rope_exponent_without_2),
        ex(Pitfall::rope_doubled_exponent, pitfalls::rope_doubled_exponent),
        ex(Pitfall::rope_clockwise, pitfalls::rope_clockwise),
        ex(Pitfall::rope_positions_from_one, pitfalls::rope_positions_from_one)};
  };
  auto inputs = [](const Tensor2& x, const Positions& p) {
    return show("x", x) + "; positions = " + detail::list(to_doubles(p));
  };
  // a reference check: the student's rotation against the formula, every exhibit as a suspect
  // a reference check: the student's rotation against the formula, every exhibit as a suspect.
  // The tolerance is float32's own error at the check's largest angle: an angle a = p · θ_i
  // computed in float (θ_i rounded, then the product) is off by up to ~a · 2^-23, which moves y by
  // that times |x|. Four times that bound is accepted, so a float32 RoPE computed as PyTorch
  // computes it passes at large positions. Pair 0 is left out of the bound: θ_0 = 1 and p < 2^24
  // are exact in float.
  auto against_formula = [&](const std::string& name, const Tensor2& x, const Positions& p,
                             const std::string& hint, bool hidden = false) {
    const std::size_t Dh = x.shape()[1];
    // θ_i falls with i, so the largest angle outside pair 0 is max |p| · θ_1
    double max_p = 0, max_x = 0;
    for (std::size_t v : p) max_p = std::max(max_p, double(v));
    const double max_angle = Dh >= 4 ? max_p * xenc::reference::pair_frequency(1, Dh) : 0.0;
    for (float v : x) max_x = std::max(max_x, double(std::fabs(v)));
    ValueCheck c{name, inputs(x, p), call(x, p), reference(x, p)};
    c.tol.atol = 1e-5 + 4.0 * max_angle * std::ldexp(1.0, -23) * max_x;
    if (hidden)
      add_hidden(r, c, exhibits(x, p), hint);
    else
      add(r, c, exhibits(x, p), hint);
  };
  const std::string formula_hint =
      "θ_i = 10000^(-2i/Dh) and a = positions[t] · θ_i; rotate each pair (x[t, 2i], x[t, 2i+1]) "
      "counter-clockwise: "
      "y[t, 2i] = x[t, 2i] cos a - x[t, 2i+1] sin a, y[t, 2i+1] = x[t, 2i] sin a + x[t, 2i+1] cos "
      "a.";

  // Hand example, Dh = 4: θ_0 = 1, θ_1 = 10000^(-2/4) = 0.01. Row 0 at position 0 is not rotated.
  // Row 1 = [1, 0, 1, 0] at position 1: each pair (1, 0) turns into (cos a, sin a), a = 1 and 0.01:
  // [cos 1, sin 1, cos 0.01, sin 0.01] = [0.540302, 0.841471, 0.99995, 0.00999983].
  const Tensor2 hx = {{1, 2, 3, 4}, {1, 0, 1, 0}};
  add(r,
      {"hand example: Dh = 4, rows [1, 2, 3, 4] at position 0 and [1, 0, 1, 0] at position 1",
       inputs(hx, {0, 1}),
       call(hx, {0, 1}),
       {Field{"y", {2, 4}, {1, 2, 3, 4, 0.5403023059, 0.8414709848, 0.9999500004, 0.0099998333}}}},
      exhibits(hx, {0, 1}), formula_hint);

  const Tensor2 rx = randn<Tensor2>(std::array<std::size_t, 2>{6, 8}, 101);
  against_formula(
      "reference values: x [6, 8], positions 0, 1, 2, 5, 17, 100 (the formula in double)", rx,
      {0, 1, 2, 5, 17, 100}, formula_hint + " Row t is at positions[t], not at t.");

  // Invariant: a rotation keeps lengths.
  const Tensor2 nx = randn<Tensor2>(std::array<std::size_t, 2>{4, 6}, 102);
  const Positions np = {0, 3, 9, 40};
  ValueCheck norms{"invariant: every row keeps its length, |y[t]| = |x[t]|", inputs(nx, np),
                   call(nx, np), row_norms({field("x", nx)})};
  norms.measure = row_norms;
  add(r, norms, exhibits(nx, np),
      "a rotation keeps lengths: multiply each pair by [[cos a, -sin a], [sin a, cos a]] with one "
      "angle a for both "
      "entries (RoPE rotates q and k; it adds nothing to them).");

  // Invariant: (R(m + s) q) · (R(n + s) k) = (R(m) q) · (R(n) k): shift every position by s = 6.
  const Tensor2 q = randn<Tensor2>(std::array<std::size_t, 2>{5, 8}, 103, 0.5f);
  const Tensor2 k = randn<Tensor2>(std::array<std::size_t, 2>{5, 8}, 104, 0.5f);
  const Positions p0 = {0, 1, 2, 3, 4}, p6 = {6, 7, 8, 9, 10};
  ValueCheck rel{
      "invariant: the scores q_m · k_n depend only on m - n (every position + 6: the same scores)",
      show("q", q) + "; " + show("k", k) + "; positions 0 .. 4, then 6 .. 10",
      [=] { return Output{scores(student(q, p6), student(k, p6))}; },
      {}};
  rel.expected_from = [=](const Output&) { return Output{scores(student(q, p0), student(k, p0))}; };
  rel.expected_text = "your scores at positions 0 .. 4 (within 1e-5)";
  rel.tol = detail::Tolerance{1e-5, 0.0};
  add(r, rel, {},
      "the angle must be the position times a frequency that does not depend on the position, a = "
      "p · θ_i, and q and k "
      "must be rotated the same way: then R(m)ᵀ R(n) = R(n - m).");

  // Invariant: position 0 has every angle 0, cos 0 = 1, sin 0 = 0.
  const Tensor2 zx = randn<Tensor2>(std::array<std::size_t, 2>{3, 6}, 105);
  add(r,
      {"invariant: position 0 is the identity (y = x)",
       inputs(zx, {0, 0, 0}),
       call(zx, {0, 0, 0}),
       {field("y", zx)}},
      exhibits(zx, {0, 0, 0}), "at position 0 every angle is 0: y = x. Count positions from 0.");

  against_formula("edge case: T = 1 (one row, at position 5)",
                  randn<Tensor2>(std::array<std::size_t, 2>{1, 6}, 106), {5}, formula_hint);
  against_formula("edge case: Dh = 2 (one pair, θ_0 = 1: the angle is the position itself)",
                  randn<Tensor2>(std::array<std::size_t, 2>{4, 2}, 107), {0, 1, 2, 3},
                  formula_hint);
  // Dh = 6: θ_1 = 10000^(-1/3) = 0.0464159 is no round number, so a float32 angle rounds.
  against_formula("edge case: large positions (1000 and 100000), Dh = 6",
                  randn<Tensor2>(std::array<std::size_t, 2>{2, 6}, 108), {1000, 100000},
                  "the angle of pair i is p · θ_i with θ_i = 10000^(-2i/Dh): at p = 100000 pair 1 "
                  "turns by 4642 rad. "
                  "Float32 angles are accepted here within their own rounding (about 4 · angle · "
                  "2^-23 · |x|); a "
                  "larger difference is a wrong angle. " +
                      formula_hint);

  r.checks.push_back(run(ThrowCheck{
      "edge case: odd Dh = 5 is refused",
      "x [2, 5]; positions = [0, 1]",
      [student] { student(xt::zeros<float>({2, 5}), {0, 1}); },
      "throws std::invalid_argument (e.g. xenc::config_error): the pairs (2i, 2i+1) need an "
      "even Dh",
      "check that Dh (x's number of columns) is even and not 0 first, and throw "
      "std::invalid_argument (xenc::config_error is one): an odd last column has no partner.",
      {}}));
  if (std::optional<Rng> rng = hidden_rng("rope")) {
    const std::size_t T = hidden_size(*rng, 1, 5), Dh = 2 * hidden_size(*rng, 1, 4);
    Positions p;
    for (std::size_t t = 0; t < T; ++t) p.push_back(hidden_size(*rng, 0, 200));
    against_formula("hidden: reference values on the teacher's inputs",
                    hidden_randn<Tensor2>(*rng, std::array<std::size_t, 2>{T, Dh}), p, formula_hint,
                    true);
  }
  return r;
}

}  // namespace xenc::grade

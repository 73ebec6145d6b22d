// Exercise sinusoidal_table: the sinusoidal positional-encoding table. This file is the whole
// exercise and the one place it is written: the `// @` lines are its specification, then come its
// registration and its checks, named cases (hand example, reference values, invariant, edge case,
// hidden), each with the museum exhibits that could explain its failure. Hand examples carry their
// arithmetic in a comment.
//
// @exercise sinusoidal_table
// @order 0
// @points 1
// @function Tensor2 sinusoidal_table(std::size_t num_positions, std::size_t d_model)
// @doc Sinusoidal positional encoding table (Vaswani et al., 2017, 3.5):
// @doc     PE(p, 2i) = sin(p / 10000^(2i/D)),  PE(p, 2i+1) = cos(p / 10000^(2i/D))
// @doc Shapes:  returns [num_positions, d_model], row p = position p (from 0)
// @doc Throws:  std::invalid_argument (e.g. xenc::config_error) if d_model is odd or 0.
// @stub     PE(p, 2i) = sin(p / 10000^(2i/D)),  PE(p, 2i+1) = cos(p / 10000^(2i/D))
// @notebook ### Exercise: the sinusoidal table
// @notebook
// @notebook Write the table of section 1 yourself: $PE(p, 2i) = \sin(p / 10000^{2i/D})$, $PE(p, 2i+1) = \cos(p / 10000^{2i/D})$ for positions $p = 0, \dots, P-1$. Throw `std::invalid_argument` (`xenc::config_error` is one) when $D$ is odd or 0. Compare with the pitfall of section 5: the grader recognises it.
// @notebook_stub returns [num_positions, d_model]; row p is position p
#include "../exercise_support.hpp"

namespace xenc::grade {

using namespace support;

namespace {
const RegisterExercise registered{remote(spec::sinusoidal_table(), check_sinusoidal_table)};
}  // namespace

// ---- sinusoidal table -------------------------------------------------------------------------

ExerciseResult check_sinusoidal_table(const SinusoidalTableFn& student) {
  ExerciseResult r = start("sinusoidal_table");
  auto call = [](const SinusoidalTableFn& f, std::size_t P, std::size_t D) {
    return [f, P, D] { return Output{field("PE", f(P, D))}; };
  };
  auto swapped = [](std::size_t P, std::size_t D) {
    return Exhibit{Pitfall::pe_sin_cos_swapped,
                   [P, D] { return Output{field("PE", pitfalls::pe_sin_cos_swapped(P, D))}; }};
  };
  auto doubled = [](std::size_t P, std::size_t D) {
    return Exhibit{Pitfall::pe_doubled_exponent,
                   [P, D] { return Output{field("PE", pitfalls::pe_doubled_exponent(P, D))}; }};
  };
  const std::string formula_hint =
      "compare with the formula PE(p, 2i) = sin(p / 10000^(2i/D)), PE(p, 2i+1) = cos(p / "
      "10000^(2i/D)): "
      "even columns sin, odd columns cos, pair i shares one angle; compute the angle in double.";

  // Hand example, P = 2, D = 4: the frequencies are 10000^(-0/4) = 1 and 10000^(-2/4) = 0.01.
  // PE(0) = [sin 0, cos 0, sin 0, cos 0] = [0, 1, 0, 1]
  // PE(1) = [sin 1, cos 1, sin 0.01, cos 0.01] = [0.841471, 0.540302, 0.00999983, 0.99995]
  add(r,
      {"hand example: P = 2, D = 4",
       "num_positions = 2, d_model = 4",
       call(student, 2, 4),
       {Field{"PE", {2, 4}, {0, 1, 0, 1, 0.8414709848, 0.5403023059, 0.0099998333, 0.9999500004}}}},
      {doubled(2, 4), swapped(2, 4)}, formula_hint);

  add(r,
      {"reference values: P = 50, D = 16 (the formula in double)",
       "num_positions = 50, d_model = 16",
       call(student, 50, 16),
       {from_ref("PE", ref::sinusoidal_table(50, 16))}},
      {doubled(50, 16), swapped(50, 16)}, formula_hint);

  // Invariant: each pair (sin, cos) of one angle lies on the unit circle.
  ValueCheck circle{"invariant: PE(p, 2i)² + PE(p, 2i+1)² = 1 for every p and pair i",
                    "num_positions = 20, d_model = 8",
                    call(student, 20, 8),
                    {Field{"sin² + cos²", {20, 4}, std::vector<double>(80, 1.0)}}};
  circle.measure = [](const Output& o) {
    const Field& pe = o.at(0);
    if (pe.shape.size() != 2 || pe.shape[1] % 2)
      throw std::invalid_argument("PE has shape " + shape_str(pe.shape) + ", expected [20, 8]");
    Field s{"sin² + cos²", {pe.shape[0], pe.shape[1] / 2}, {}};
    for (std::size_t i = 0; i + 1 < pe.data.size(); i += 2)
      s.data.push_back(pe.data[i] * pe.data[i] + pe.data[i + 1] * pe.data[i + 1]);
    return Output{s};
  };
  add(r, circle, {},
      "column 2i must be the sin and column 2i+1 the cos of the same angle p / 10000^(2i/D).");

  // Invariant: PE(p) · PE(p + 3) = Σ_i cos(3 ω_i) does not depend on p (relative positions).
  ValueCheck relative{"invariant: PE(p) · PE(p + 3) is the same for p = 0 .. 9",
                      "num_positions = 13, d_model = 8",
                      call(student, 13, 8),
                      {}};
  relative.measure = [](const Output& o) {
    const Field& pe = o.at(0);
    if (pe.shape.size() != 2 || pe.shape[0] < 13)
      throw std::invalid_argument("PE has shape " + shape_str(pe.shape) + ", expected [13, 8]");
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
  add(r, relative, {},
      "the angle of pair i must be p · ω_i with ω_i = 10000^(-2i/D), the same ω_i for every "
      "position p.");

  add(r,
      {"edge case: T = 1 (a single position)",
       "num_positions = 1, d_model = 6",
       call(student, 1, 6),
       {Field{"PE", {1, 6}, {0, 1, 0, 1, 0, 1}}}},
      {swapped(1, 6)},
      "position 0 has every angle 0: sin 0 = 0 in even columns, cos 0 = 1 in odd columns.");

  add(r,
      {"edge case: D = 2 (one pair: sin p, cos p)",
       "num_positions = 5, d_model = 2",
       call(student, 5, 2),
       {from_ref("PE", ref::sinusoidal_table(5, 2))}},
      {}, formula_hint);

  ThrowCheck odd{
      "edge case: odd D = 5 is refused",
      "num_positions = 3, d_model = 5",
      [student] { student(3, 5); },
      "throws std::invalid_argument (e.g. xenc::config_error): the pairs (2i, 2i+1) need an even D",
      "check that d_model is even (and not 0) first and throw std::invalid_argument "
      "(xenc::config_error is one); for odd D a loop over pairs writes column D, past the row's "
      "end.",
      {{Pitfall::pe_odd_d_overflow, [] { pitfalls::pe_odd_d_unchecked(3, 5); }}}};
  r.checks.push_back(run(odd));
  if (std::optional<Rng> rng = hidden_rng("sinusoidal_table")) {
    const std::size_t P = hidden_size(*rng, 3, 40), D = 2 * hidden_size(*rng, 1, 12);
    add_hidden(r,
               {"hidden: reference values on the teacher's sizes",
                "",
                call(student, P, D),
                {from_ref("PE", ref::sinusoidal_table(P, D))}},
               {doubled(P, D), swapped(P, D)}, formula_hint);
  }
  return r;
}

}  // namespace xenc::grade

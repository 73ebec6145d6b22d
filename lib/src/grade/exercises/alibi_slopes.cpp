// Exercise alibi_slopes: the ALiBi slopes. This file is the whole exercise and the one place it is
// written: the `// @` lines are its specification, then come its registration and its checks, named
// cases (hand example, reference values, invariant, edge case, hidden), each with the museum
// exhibits that could explain its failure. Hand examples carry their arithmetic in a comment.
//
// @exercise alibi_slopes
// @order 10
// @points 1
// @function std::vector<double> alibi_slopes(std::size_t num_heads)
// @doc ALiBi slopes (Press et al., 2022, "Train Short, Test Long", section 3): head h adds
// @doc −m_h · |i − j| to its attention scores. For H a power of two the slopes are the geometric
// @doc sequence that starts at 2^(−8/H) and has that same ratio:
// @doc     m_h = 2^(−8(h+1)/H),  h = 0 .. H − 1          (H = 8: 1/2, 1/4, ..., 1/256)
// @doc For any other H (the rule of the paper's code), with n the largest power of two below H: the
// @doc n slopes for n heads, then the first H − n of every other slope of the 2n sequence
// @doc (2^(−8·1/(2n)), 2^(−8·3/(2n)), 2^(−8·5/(2n)), ...).  H = 6: 1/4, 1/16, 1/64, 1/256, 1/2, 1/8.
// @doc Returns: H slopes, head 0 first.
// @doc Throws:  std::invalid_argument (e.g. xenc::config_error) if num_heads is 0.
// @doc Library: xenc::alibi_slopes (xenc/ops/position_in_attention.hpp).
// @stub     H a power of two: m_h = 2^(-8(h+1)/H);  otherwise the paper's rule in exercises.hpp
// @notebook ### Exercise: the ALiBi slopes
// @notebook
// @notebook Return the $H$ slopes $m_0, \dots, m_{H-1}$ of section 3: for $H$ a power of two, $m_h = 2^{-8(h+1)/H}$; otherwise, with $n$ the largest power of two below $H$, the $n$ slopes for $n$ heads, then every other slope of the sequence for $2n$ heads (the first, the third, ...), $H - n$ of them. Throw `std::invalid_argument` when $H = 0$.
// @notebook_stub returns H slopes, head 0 first
#include "../exercise_support.hpp"

namespace xenc::grade {

using namespace support;

namespace {
const RegisterExercise registered{remote(spec::alibi_slopes(), check_alibi_slopes)};
}  // namespace

// ---- ALiBi slopes -------------------------------------------------------------------------------

// Long because: it is the exercise's list of checks, one after another in the order the
// report prints them (hand example, reference values, invariants, edge cases, hidden), each
// with its inputs and hint; split up, the list would no longer read as one list.
ExerciseResult check_alibi_slopes(const AlibiSlopesFn& student) {
  ExerciseResult r = start("alibi_slopes");
  auto call = [student](std::size_t H) {
    return [=] { return Output{from_vec("slopes", student(H))}; };
  };
  auto exhibits = [](std::size_t H) {
    return std::vector<Exhibit>{
        {Pitfall::alibi_start_2_pow_minus_8,
         [=] { return Output{from_vec("slopes", pitfalls::alibi_slopes_start_2_pow_minus_8(H))}; }},
        {Pitfall::alibi_plain_formula,
         [=] { return Output{from_vec("slopes", pitfalls::alibi_slopes_plain_formula(H))}; }}};
  };
  auto heads = [](std::size_t H) { return "num_heads = " + std::to_string(H); };
  auto against_formula = [&](const std::string& name, std::size_t H, const std::string& hint) {
    add(r, {name, heads(H), call(H), {from_vec("slopes", ref::alibi_slopes(H))}}, exhibits(H),
        hint);
  };
  const std::string power_hint =
      "for H a power of two: the geometric sequence that starts at 2^(-8/H) with that same ratio, "
      "m_h = 2^(-8(h+1)/H), "
      "h = 0 .. H-1.";
  const std::string other_hint =
      "for H not a power of two: n = the largest power of two below H; first the n slopes "
      "2^(-8(h+1)/n), then "
      "2^(-8·1/(2n)), 2^(-8·3/(2n)), 2^(-8·5/(2n)), ... (every other slope of 2n heads) until "
      "there are H.";

  // Hand example, the paper's values for H = 8: start and ratio 2^(-8/8) = 1/2, so
  // 1/2, 1/4, 1/8, 1/16, 1/32, 1/64, 1/128, 1/256.
  add(r,
      {"hand example: H = 8 (the paper: 1/2, 1/4, ..., 1/256)",
       heads(8),
       call(8),
       {Field{
           "slopes", {8}, {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625}}}},
      exhibits(8), power_hint);
  // Hand example, H = 6: n = 4 gives 2^-2, 2^-4, 2^-6, 2^-8; the 8-head sequence is 2^-1, 2^-2,
  // ..., 2^-8, and every other one from the first is 2^-1, 2^-3, ...: the first 6 - 4 = 2 of them
  // close the list.
  add(r,
      {"hand example: H = 6 (not a power of two: 1/4, 1/16, 1/64, 1/256, then 1/2, 1/8)",
       heads(6),
       call(6),
       {Field{"slopes", {6}, {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125}}}},
      exhibits(6), other_hint);
  against_formula("reference values: H = 32 (the formula in double)", 32, power_hint);
  against_formula("reference values: H = 12 (not a power of two)", 12, other_hint);

  // Invariant: for H a power of two, each slope is the previous one times m_0.
  ValueCheck ratio{"invariant: for H = 16 the slopes are geometric, m_{h+1} / m_h = m_0",
                   heads(16),
                   call(16),
                   {}};
  ratio.measure = [](const Output& o) {
    const Field& m = o.at(0);
    Field q{"m_{h+1} / m_h", {m.data.empty() ? 0 : m.data.size() - 1}, {}};
    for (std::size_t h = 0; h + 1 < m.data.size(); ++h) q.data.push_back(m.data[h + 1] / m.data[h]);
    return Output{q};
  };
  ratio.expected_from = [](const Output& o) {
    const Field& m = o.at(0);
    if (m.data.size() != 16)
      throw std::invalid_argument("slopes has " + std::to_string(m.data.size()) +
                                  " values, expected 16");
    return Output{Field{"m_{h+1} / m_h", {15}, std::vector<double>(15, m.data[0])}};
  };
  ratio.expected_text = "your m_0 for every h";
  add(r, ratio, exhibits(16),
      "the ratio of the sequence is its start, 2^(-8/H): m_h = m_0^(h+1). " + power_hint);

  // Invariant: the last slope of a power of two is 2^(-8) = 1/256, whatever H.
  auto last_slopes = [](const AlibiSlopesFn& f) {
    return [f] {
      Field l{"last slope", {7}, {}};
      for (std::size_t H = 1; H <= 64; H *= 2) {
        const std::vector<double> m = f(H);
        if (m.size() != H)
          throw std::invalid_argument("for H = " + std::to_string(H) + " got " +
                                      std::to_string(m.size()) + " slopes");
        l.data.push_back(m.back());
      }
      return Output{l};
    };
  };
  ValueCheck last{"invariant: for H = 1, 2, 4, ..., 64 the last slope is 2^(-8) = 1/256",
                  "num_heads = 1, 2, 4, 8, 16, 32, 64",
                  last_slopes(student),
                  {Field{"last slope", {7}, std::vector<double>(7, 1.0 / 256)}}};
  add(r, last,
      {{Pitfall::alibi_start_2_pow_minus_8,
        last_slopes(pitfalls::alibi_slopes_start_2_pow_minus_8)}},
      "m_{H-1} = 2^(-8H/H) = 2^(-8): the sequence runs from 2^(-8/H) down to 1/256. " + power_hint);

  // Invariant: for H not a power of two, the slopes of the power of two below come first.
  ValueCheck keeps{"invariant: for H = 12 the first 8 slopes are your slopes for H = 8",
                   heads(12),
                   call(12),
                   {}};
  keeps.measure = [](const Output& o) {
    const Field& m = o.at(0);
    if (m.data.size() < 8)
      throw std::invalid_argument("slopes has " + std::to_string(m.data.size()) +
                                  " values, expected 12");
    return Output{
        Field{"first 8 slopes", {8}, std::vector<double>(m.data.begin(), m.data.begin() + 8)}};
  };
  keeps.expected_from = [student](const Output&) {
    return Output{from_vec("first 8 slopes", student(8))};
  };
  keeps.expected_text = "your slopes for H = 8";
  add(r, keeps, exhibits(12), other_hint);

  against_formula("edge case: H = 1 (one head: 2^(-8))", 1, power_hint);
  against_formula("edge case: H = 3", 3, other_hint);
  r.checks.push_back(run(ThrowCheck{
      "edge case: H = 0 is refused",
      "num_heads = 0",
      [student] { student(0); },
      "throws std::invalid_argument (e.g. xenc::config_error): there is no head to give a slope",
      "check num_heads > 0 first and throw std::invalid_argument (xenc::config_error is one).",
      {}}));
  if (std::optional<Rng> rng = hidden_rng("alibi_slopes")) {
    const std::size_t H = hidden_size(*rng, 2, 64);
    add_hidden(r,
               {"hidden: reference values on the teacher's number of heads",
                "",
                call(H),
                {from_vec("slopes", ref::alibi_slopes(H))}},
               exhibits(H), (H & (H - 1)) == 0 ? power_hint : other_hint);
  }
  return r;
}

}  // namespace xenc::grade

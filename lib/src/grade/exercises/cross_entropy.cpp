// Exercise cross_entropy: cross-entropy with an ignore index. This file is the whole exercise and
// the one place it is written: the `// @` lines are its specification, then come its registration
// and its checks, named cases (hand example, reference values, invariant, edge case, hidden), each
// with the museum exhibits that could explain its failure. Hand examples carry their arithmetic in
// a comment.
//
// @exercise cross_entropy
// @order 8
// @points 1
// @function xenc::grade::CrossEntropyOutput cross_entropy(const Tensor2& logits, const Index1& targets,
// @function                                               std::int64_t ignore_index)
// @doc Cross-entropy with an ignore index, as torch.nn.functional.cross_entropy (reduction 'mean'):
// @doc     loss = 1/N' Σ_{n: t_n != ignore} (logsumexp(z_n) - z_n[t_n]),  N' = rows not ignored
// @doc     grad_logits[n] = (softmax(z_n) - onehot(t_n)) / N' for kept rows, 0 for ignored rows
// @doc When every row is ignored, N' = 0: loss = 0/0 = NaN (as PyTorch) and the gradient is 0.
// @doc Shapes:  logits: [N, C]   targets: [N] (class in [0, C) or ignore_index)
// @type struct CrossEntropyOutput {
// @type   float loss = 0.0f;
// @type   Tensor2 grad_logits;  ///< dloss/dlogits: [N, C]
// @type };
// @stub     loss = 1/N' Σ_{n: t_n != ignore} (logsumexp(z_n) - z_n[t_n]),   N' = rows not ignored
// @stub     grad_logits[n] = (softmax(z_n) - onehot(t_n)) / N'   (0 for ignored rows)
// @notebook ### Exercise: cross-entropy with an ignore index
// @notebook
// @notebook A classifier on top of a linear layer turns logits $z_n$ `[C]` into a loss, as `torch.nn.functional.cross_entropy`: $\text{loss} = \frac{1}{N'}\sum_{n:\,t_n \ne \text{ignore}} \big(\operatorname{logsumexp}(z_n) - z_n[t_n]\big)$ over the $N'$ rows whose target is not `ignore_index` (padding), and the gradient $(\operatorname{softmax}(z_n) - \text{onehot}(t_n))/N'$ for kept rows, 0 for ignored rows. Keep it stable for large logits (subtract the row maximum). When every row is ignored, the loss is NaN (0/0, as PyTorch) and the gradient 0.
// @notebook_stub logits: [N, C]   targets: [N], each a class in [0, C) or ignore_index
// @notebook_stub returns .loss and .grad_logits [N, C]
#include "../exercise_support.hpp"

namespace xenc::grade {

using namespace support;

namespace {
const RegisterExercise registered{remote(spec::cross_entropy(), check_cross_entropy)};
}  // namespace

// ---- cross-entropy ----------------------------------------------------------------------------

// Long because: it is the exercise's list of checks, one after another in the order the
// report prints them (hand example, reference values, invariants, edge cases, hidden), each
// with its inputs and hint; split up, the list would no longer read as one list.
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
  auto call = [student, as_output](const In& in) {
    return [=] { return as_output(student(in.logits, in.targets, in.ignore)); };
  };
  auto reference = [](const In& in) {
    const ref::CrossEntropy ce = ref::cross_entropy(
        ref::from(in.logits), std::vector<std::int64_t>(in.targets.begin(), in.targets.end()),
        in.ignore);
    return Output{detail::scalar("loss", ce.loss), from_ref("grad_logits", ce.grad)};
  };
  auto counts_ignored = [as_output](const In& in) {
    return Exhibit{
        Pitfall::cross_entropy_counts_ignored, [=] {
          return as_output(
              {pitfalls::cross_entropy_counts_ignored(in.logits, in.targets, in.ignore),
               pitfalls::cross_entropy_counts_ignored_backward(in.logits, in.targets, in.ignore)});
        }};
  };
  auto inputs = [](const In& in) {
    return show("logits", in.logits) + "; " + show("targets", in.targets) +
           "; ignore_index = " + std::to_string(in.ignore);
  };
  const std::string formula_hint =
      "loss = 1/N' Σ over rows with target != ignore_index of (logsumexp(z_n) - z_n[t_n]); "
      "grad_logits[n] = "
      "(softmax(z_n) - onehot(t_n)) / N' for those rows and 0 for ignored rows; N' = number of "
      "rows not ignored.";

  // Hand example: logits [[1, 2, 3], [1, 0, -1]], targets [2, -100]: row 1 is ignored, N' = 1.
  // loss = log(e + e² + e³) - 3 = 3.407606 - 3 = 0.407606 (PyTorch: 0.4076059644);
  // grad row 0 = softmax([1, 2, 3]) - [0, 0, 1] = [0.090031, 0.244728, -0.334759]; row 1 = 0.
  const In hin{{{1, 2, 3}, {1, 0, -1}}, {2, -100}, -100};
  add(r,
      {"hand example: two rows, the second ignored",
       inputs(hin),
       call(hin),
       {detail::scalar("loss", 0.4076059644),
        Field{"grad_logits", {2, 3}, {0.0900305732, 0.2447284711, -0.3347590442, 0, 0, 0}}}},
      {counts_ignored(hin)}, formula_hint);

  In rin{
      randn<Tensor2>(std::array<std::size_t, 2>{6, 5}, 91, 2.0f), {3, -100, 0, 4, -100, 1}, -100};
  add(r,
      {"reference values: N = 6, C = 5, two rows ignored (the formula in double)", inputs(rin),
       call(rin), reference(rin)},
      {counts_ignored(rin)}, formula_hint);

  ValueCheck sums{"invariant: each row of grad_logits sums to 0",
                  inputs(rin),
                  call(rin),
                  {Field{"row sums of grad_logits", {6}, std::vector<double>(6, 0.0)}}};
  sums.measure = [](const Output& o) { return row_sums(o, "row sums of grad_logits", 1); };
  add(r, sums, {},
      "softmax sums to 1 and the one-hot to 1, so each kept row of softmax - onehot sums to 0; "
      "ignored rows are 0.");

  In shifted = rin;
  for (std::size_t c = 0; c < 5; ++c) shifted.logits(2, c) += 7.0f;
  ValueCheck shift{"invariant: adding 7 to one row's logits leaves the loss unchanged",
                   inputs(rin) + ", then row 2 + 7",
                   call(shifted),
                   {}};
  shift.measure = [](const Output& o) { return Output{o.at(0)}; };
  shift.expected_from = [call, rin](const Output&) { return Output{call(rin)().at(0)}; };
  shift.expected_text = "your loss without the shift";
  add(r, shift, {},
      "log softmax is unchanged when a constant is added to a row: compute it as z_t - "
      "logsumexp(z).");

  const std::vector<double> lv(rin.logits.begin(), rin.logits.end());
  const std::vector<std::int64_t> tv(rin.targets.begin(), rin.targets.end());
  r.checks.push_back(run(GradCheck{
      "finite differences: grad_logits",
      inputs(rin),
      "grad_logits",
      {6, 5},
      call(rin),
      [tv](const std::vector<double>& p) { return ref::cross_entropy({{6, 5}, p}, tv, -100).loss; },
      lv,
      {counts_ignored(rin)},
      formula_hint}));

  const In all{randn<Tensor2>(std::array<std::size_t, 2>{3, 4}, 92), {-100, -100, -100}, -100};
  ValueCheck none{"edge case: every row ignored (loss NaN as PyTorch, gradient 0)", inputs(all),
                  call(all), reference(all)};
  none.expected_text =
      "loss = nan (0/0: no row counts, as torch.nn.functional.cross_entropy); grad_logits all 0";
  add(r, none, {},
      "with N' = 0 the mean is 0/0 = NaN (PyTorch's answer) and no row contributes to the "
      "gradient, which is 0.");

  const In big{{{1000, 1001, 1002}, {-1000, 0, 1000}}, {0, 1}, -100};
  add(r, {"edge case: large logits (stability)", inputs(big), call(big), reference(big)},
      {counts_ignored(big)},
      "compute logsumexp(z) = m + log Σ exp(z - m) with m = max(z): exp(1000) overflows.");

  const In zero{randn<Tensor2>(std::array<std::size_t, 2>{4, 3}, 93), {0, 2, 1, 0}, 0};
  add(r,
      {"edge case: ignore_index = 0 (a real class id is ignored)", inputs(zero), call(zero),
       reference(zero)},
      {counts_ignored(zero)},
      "compare each target with the ignore_index argument, whatever its value, before using it as "
      "a class.");

  const In one{randn<Tensor2>(std::array<std::size_t, 2>{1, 4}, 94), {3}, -100};
  add(r, {"edge case: one row (T = 1)", inputs(one), call(one), reference(one)}, {}, formula_hint);
  if (std::optional<Rng> rng = hidden_rng("cross_entropy")) {
    const std::size_t N = hidden_size(*rng, 2, 6), C = hidden_size(*rng, 2, 6);
    In in{hidden_randn<Tensor2>(*rng, std::array<std::size_t, 2>{N, C}, 2.0f),
          Index1::from_shape({N}), -100};
    // every row a class or, one time in four, ignored; row 0 always counts
    for (std::size_t n = 0; n < N; ++n)
      in.targets(n) = n > 0 && rng->next_u32() % 4 == 0 ? -100 : std::int64_t(rng->next_u32() % C);
    add_hidden(r, {"hidden: reference values on the teacher's inputs", "", call(in), reference(in)},
               {counts_ignored(in)}, formula_hint);
  }
  return r;
}

}  // namespace xenc::grade

// Exercise online_softmax_tile: the online softmax's update for one tile of keys (attention in
// tiles, notebook 09). This file is the whole exercise and the one place it is written: the `// @`
// lines are its specification, then come its registration and its checks, named cases (hand
// example, reference values, invariant, edge case, hidden), each with the museum exhibits that
// could explain its failure. Hand examples carry their arithmetic in a comment.
//
// @exercise online_softmax_tile
// @order 11
// @points 1
// @function xenc::grade::OnlineSoftmaxState online_softmax_tile(const xenc::grade::OnlineSoftmaxState& state,
// @function                                                     const Tensor2& scores, const Tensor2& values)
// @doc The online softmax's update for one tile of keys (attention in tiles, FlashAttention-2;
// @doc notebook 09). Per query row r, the state after the tiles seen so far is the running maximum
// @doc m[r], the running sum l[r] = Σ_j exp(s_j − m[r]) and the unnormalised output
// @doc acc[r] = Σ_j exp(s_j − m[r]) v_j; nothing seen yet is m = −inf, l = 0, acc = 0. A new tile of
// @doc scores s [Tq, Tk] and values v [Tk, Dv] updates it:
// @doc     m'[r] = max(m[r], max_j s[r, j]),   c = exp(m[r] − m'[r])
// @doc     l'[r] = c · l[r] + Σ_j exp(s[r, j] − m'[r]),   acc'[r] = c · acc[r] + Σ_j exp(s[r, j] −
// @doc     m'[r]) · v[j]
// @doc A row whose scores so far are all −inf (masked keys) stays m = −inf, l = 0, acc = 0 (no NaN).
// @doc After the last tile, acc / l = softmax(s) V over every key.
// @doc Shapes:  m, l: [Tq]   acc: [Tq, Dv]   scores: [Tq, Tk]   values: [Tk, Dv]
// @doc Library: the tiled attention kernel (multi_head_attention_forward_tiled) runs this per tile.
// @type struct OnlineSoftmaxState {
// @type   Tensor1 m;    ///< running maximum per query      [Tq]
// @type   Tensor1 l;    ///< running sum of exponentials    [Tq]
// @type   Tensor2 acc;  ///< unnormalised output            [Tq, Dv]
// @type };
// @using xenc::grade::OnlineSoftmaxState
// @stub     m' = max(m, max_j s_j)   c = exp(m - m')
// @stub     l' = c·l + Σ_j exp(s_j - m')   acc' = c·acc + Σ_j exp(s_j - m')·v_j   (per query row)
// @notebook ### Exercise: the online-softmax update for one tile
// @notebook
// @notebook Write the update of section 2 for a block of queries at once. The state of query row $r$ after the tiles seen so far is `state.m[r]` $= m$ (the running maximum), `state.l[r]` $= \ell$ (the running sum) and the row `state.acc[r]` $= o$ (the unnormalised output); before any tile $m = -\infty$, $\ell = 0$, $o = 0$. A tile of `scores` `[Tq, Tk]` and `values` `[Tk, Dv]` updates each row: $m' = \max(m, \max_j s_j)$, $c = e^{m - m'}$, $\ell' = c\,\ell + \sum_j e^{s_j - m'}$, $o' = c\,o + \sum_j e^{s_j - m'} v_j$. A row whose scores are all $-\infty$ so far (masked keys) stays as it is: $e^{-\infty - (-\infty)}$ would be NaN. The check feeds your function three tiles in a row and compares $o/\ell$ with the plain softmax; when your output is a known mistake (the output not rescaled, the sum rescaled the wrong way, the new maximum used before it is computed), it says which.
// @notebook_stub state.m, state.l: [Tq]   state.acc: [Tq, Dv]   scores: [Tq, Tk]   values: [Tk, Dv]
// @notebook_stub returns the state after this tile
#include "../exercise_support.hpp"

#include <xtensor/xview.hpp>

namespace xenc::grade {

using namespace support;

namespace {
const RegisterExercise registered{remote(spec::online_softmax_tile(), check_online_softmax_tile)};

// The state before any tile: m = -inf, l = 0, acc = 0.   m, l: [Tq]   acc: [Tq, Dv]
OnlineSoftmaxState empty_state(std::size_t Tq, std::size_t Dv) {
  OnlineSoftmaxState s;
  s.m = Tensor1::from_shape({Tq});
  s.m.fill(-kInf);
  s.l = xt::zeros<float>({Tq});
  s.acc = xt::zeros<float>({Tq, Dv});
  return s;
}

// The oracle's update (reference::online_softmax_tile, in double) of a float state.
reference::OnlineSoftmaxState oracle(const OnlineSoftmaxState& st, const Tensor2& s,
                                     const Tensor2& v) {
  reference::OnlineSoftmaxState d;
  d.m = st.m;
  d.l = st.l;
  d.acc = st.acc;
  return reference::online_softmax_tile(d, s, v);
}

// A state in float from the oracle's (the state after a first tile, for the next one).
OnlineSoftmaxState to_float(const reference::OnlineSoftmaxState& d) {
  OnlineSoftmaxState s;
  s.m = d.m;  // converted to float on assignment
  s.l = d.l;
  s.acc = d.acc;
  return s;
}

template <class S>
Output state_output(const S& st) {
  return Output{field("m", st.m), field("l", st.l), field("acc", st.acc)};
}

// One update: the state and the tile it is given.
struct In {
  OnlineSoftmaxState state;
  Tensor2 scores, values;
};

std::string inputs(const In& in) {
  return show("m", in.state.m) + "; " + show("l", in.state.l) + "; " + show("acc", in.state.acc) +
         "; " + show("scores", in.scores) + "; " + show("values", in.values);
}

// A random state (the oracle's after a first tile of scale `scale`) and a second tile whose scores
// are shifted up by `shift`, so that some rows' maxima move.
In random_in(std::size_t Tq, std::size_t Tk, std::size_t Dv, std::uint32_t seed, float scale,
             float shift) {
  const Tensor2 s0 = randn<Tensor2>(std::array<std::size_t, 2>{Tq, Tk}, seed, scale);
  const Tensor2 v0 = randn<Tensor2>(std::array<std::size_t, 2>{Tk, Dv}, seed + 1);
  return In{to_float(oracle(empty_state(Tq, Dv), s0, v0)),
            randn<Tensor2>(std::array<std::size_t, 2>{Tq, Tk}, seed + 2, scale, shift),
            randn<Tensor2>(std::array<std::size_t, 2>{Tk, Dv}, seed + 3)};
}
}  // namespace

// ---- online softmax, one tile -------------------------------------------------------------------

// Long because: it is the exercise's list of checks, one after another in the order the
// report prints them (hand example, reference values, invariants, edge cases, hidden), each
// with its inputs and hint; split up, the list would no longer read as one list.
ExerciseResult check_online_softmax_tile(const OnlineSoftmaxTileFn& student) {
  ExerciseResult r = start("online_softmax_tile");
  auto call = [student](const In& in) {
    return [=] { return state_output(student(in.state, in.scores, in.values)); };
  };
  auto reference = [](const In& in) {
    return state_output(oracle(in.state, in.scores, in.values));
  };
  auto exhibits_with = [](auto make_run) {
    using F = OnlineSoftmaxState (*)(const OnlineSoftmaxState&, const Tensor2&, const Tensor2&);
    return std::vector<Exhibit>{
        {Pitfall::online_softmax_acc_not_rescaled,
         make_run(F(pitfalls::online_softmax_acc_not_rescaled))},
        {Pitfall::online_softmax_sum_wrong_factor,
         make_run(F(pitfalls::online_softmax_sum_wrong_factor))},
        {Pitfall::online_softmax_old_max, make_run(F(pitfalls::online_softmax_old_max))}};
  };
  auto exhibits = [&](const In& in) {
    return exhibits_with([in](auto f) {
      return std::function<Output()>(
          [=] { return state_output(f(in.state, in.scores, in.values)); });
    });
  };
  const std::string formula_hint =
      "per row: m' = max(m, max_j s_j); c = exp(m - m'); l' = c·l + Σ_j exp(s_j - m'); acc' = "
      "c·acc + "
      "Σ_j exp(s_j - m')·v_j (a row still at m' = -inf stays as it is).";

  // Hand example: one query that has seen one key (score 0, value [1, 0]): m = 0, l = e^0 = 1,
  // acc = [1, 0]. The tile has scores [2, 1] and values [0, 1], [1, 1]. m' = 2, c = e^-2 =
  // 0.135335; the tile's terms are e^0 = 1 and e^-1 = 0.367879, so l' = 0.135335 + 1 + 0.367879
  // = 1.503215 and acc' = 0.135335·[1, 0] + 1·[0, 1] + 0.367879·[1, 1] = [0.503215, 1.367879]
  // (NumPy gives the same; acc' / l' = [0.334759, 0.909969] = softmax([0, 2, 1]) · [[1, 0], [0, 1],
  // [1, 1]]).
  In hand;
  hand.state.m = Tensor1{0.0f};
  hand.state.l = Tensor1{1.0f};
  hand.state.acc = Tensor2{{1.0f, 0.0f}};
  hand.scores = Tensor2{{2.0f, 1.0f}};
  hand.values = Tensor2{{0.0f, 1.0f}, {1.0f, 1.0f}};
  add(r,
      {"hand example: m = 0, l = 1, acc = [1, 0]; scores [2, 1]",
       inputs(hand),
       call(hand),
       {Field{"m", {1}, {2.0}}, Field{"l", {1}, {1.5032147244}},
        Field{"acc", {1, 2}, {0.5032147244, 1.3678794412}}}},
      exhibits(hand), formula_hint);

  const In rin = random_in(4, 5, 3, 91, 2.0f, 1.0f);
  add(r,
      {"reference values: Tq = 4, Tk = 5, Dv = 3, the state after a first tile (the formula in "
       "double)",
       inputs(rin), call(rin), reference(rin)},
      exhibits(rin), formula_hint);

  // Invariant: three tiles one after another from the empty state give acc / l = softmax(S) V over
  // all twelve keys (the plain formula of reference/, the whole row at once).
  const std::size_t Tq = 3, Tk = 4, Dv = 2, tiles = 3;
  const Tensor2 S = randn<Tensor2>(std::array<std::size_t, 2>{Tq, Tk * tiles}, 94, 3.0f);
  const Tensor2 V = randn<Tensor2>(std::array<std::size_t, 2>{Tk * tiles, Dv}, 95);
  auto in_tiles = [S, V](const OnlineSoftmaxTileFn& f) {
    OnlineSoftmaxState st = empty_state(Tq, Dv);
    for (std::size_t t = 0; t < tiles; ++t) {
      const Tensor2 s = xt::view(S, xt::all(), xt::range(t * Tk, (t + 1) * Tk));
      const Tensor2 v = xt::view(V, xt::range(t * Tk, (t + 1) * Tk), xt::all());
      st = f(st, s, v);
    }
    return state_output(st);
  };
  const reference::Tensor2d plain = reference::matmul(reference::softmax_forward(S), V);
  ValueCheck whole{"invariant: three tiles of 4 keys, then acc / l = softmax(S) V over all 12 keys",
                   show("S", S) + "; " + show("V", V) + "; from m = -inf, l = 0, acc = 0",
                   [in_tiles, student] { return in_tiles(student); },
                   {field("acc / l", plain)}};
  whole.measure = [](const Output& o) {
    const Field& l = o.at(1);
    Field y = o.at(2);
    y.name = "acc / l";
    const std::size_t C = y.shape.size() == 2 ? y.shape[1] : 0;
    for (std::size_t i = 0; i < y.data.size() && C; ++i) y.data[i] /= l.data.at(i / C);
    return Output{y};
  };
  whole.exhibits = exhibits_with(
      [in_tiles](auto f) { return std::function<Output()>([=] { return in_tiles(f); }); });
  add(r, whole, whole.exhibits,
      "the tiles must add up to the plain softmax: every old term rescaled to the newest maximum, "
      "in l and in acc alike.");

  const In first{empty_state(3, 2), randn<Tensor2>(std::array<std::size_t, 2>{3, 4}, 96, 2.0f),
                 randn<Tensor2>(std::array<std::size_t, 2>{4, 2}, 97)};
  add(r,
      {"edge case: the first tile (m = -inf, l = 0, acc = 0)", inputs(first), call(first),
       reference(first)},
      exhibits(first),
      "on the first tile m' is the tile's own row maximum; the old terms are zero (c = exp(-inf) = "
      "0).");

  // Masked keys: row 0 has seen nothing and gets a tile of -inf; row 1 has a state and gets -inf.
  In masked;
  masked.state = empty_state(2, 2);
  masked.state.m(1) = 1.0f;
  masked.state.l(1) = 2.0f;
  masked.state.acc(1, 0) = 1.0f;
  masked.state.acc(1, 1) = -1.0f;
  masked.scores = Tensor2{{-kInf, -kInf, -kInf}, {-kInf, -kInf, -kInf}};
  masked.values = randn<Tensor2>(std::array<std::size_t, 2>{3, 2}, 98);
  add(r,
      {"edge case: a tile of masked keys (-inf) changes nothing, not even a row that saw nothing "
       "yet",
       inputs(masked), call(masked), reference(masked)},
      exhibits(masked),
      "a row whose scores are all -inf so far has m' = -inf, and exp(-inf - (-inf)) is NaN: leave "
      "such "
      "a row as it is (m = -inf, l = 0, acc = 0); a masked key adds exp(-inf) = 0.");

  In big;
  big.state.m = Tensor1{1000.0f, 1000.0f};
  big.state.l = Tensor1{1.5f, 1.0f};
  big.state.acc = Tensor2{{2.0f, -1.0f}, {0.5f, 0.5f}};
  big.scores = Tensor2{{1100.0f, 1090.0f, 1000.5f}, {999.0f, 1000.0f, 998.0f}};
  big.values = Tensor2{{1.0f, 0.0f}, {0.0f, 1.0f}, {1.0f, 1.0f}};
  add(r,
      {"edge case: large scores (stability): m = 1000, a tile that raises it to 1100", inputs(big),
       call(big), reference(big)},
      exhibits(big),
      "exponentiate only differences from the new maximum, s - m' <= 0 and m - m' <= 0: exp(1100) "
      "overflows, exp(1100 - 1100) does not.");

  const In one = random_in(2, 1, 1, 99, 1.0f, 2.0f);
  add(r, {"edge case: one key per tile (Tk = 1), Dv = 1", inputs(one), call(one), reference(one)},
      exhibits(one), formula_hint);
  if (std::optional<Rng> rng = hidden_rng("online_softmax_tile")) {
    const std::size_t hq = hidden_size(*rng, 1, 4), hk = hidden_size(*rng, 1, 6),
                      hv = hidden_size(*rng, 1, 4);
    const In in = random_in(hq, hk, hv, rng->next_u32(), 2.0f, 1.0f);
    add_hidden(r, {"hidden: reference values on the teacher's inputs", "", call(in), reference(in)},
               exhibits(in), formula_hint);
  }
  return r;
}

}  // namespace xenc::grade

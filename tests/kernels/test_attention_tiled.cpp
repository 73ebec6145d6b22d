// The tiled attention kernels (lib/src/kernels/attention_tiled.cpp) against the plain kernel
// (attention.cpp, itself checked against loops and finite differences in test_kernels.cpp) and
// against loops in double written here: random strided heads with a key-padding mask, an
// attention mask, a score bias, ALiBi's distance term and dropout factors, at tile sizes that
// do not divide T (partial last tiles) and at one tile covering everything; the lse it saves;
// a fully masked query (zeros, no gradient), a NaN (it propagates to its row, not beyond); a
// finite-difference check of the tiled backward; and against the oracle in double
// (reference::scaled_dot_product_attention_forward/backward, lib/src/reference/ops.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/kernels.hpp"
#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/random.hpp"
#include "xenc/reference/ops.hpp"

using namespace xenc;
using namespace xenc::test;
namespace k = xenc::kernels;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
using Shape2 = std::array<std::size_t, 2>;

// ‖a − e‖ / ‖e‖ over all elements (a scale-free error; NaN if either holds a NaN).
double relative_error(const Tensor2& a, const Tensor2& e) {
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (double(a.data()[i]) - e.data()[i]) * (double(a.data()[i]) - e.data()[i]);
    norm += double(e.data()[i]) * e.data()[i];
  }
  return std::sqrt(diff) / std::sqrt(norm);
}

::testing::AssertionResult RelativelyClose(const Tensor2& a, const Tensor2& e, double tol) {
  const double err = relative_error(a, e);
  if (err <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "‖a − e‖ / ‖e‖ = " << err << " > " << tol;
}

// One head's problem: q [Tq, Dh], k, v [Tk, Dh] as column blocks (offset 1) of wider rows, as a
// head is a column slice of a [B·T, D] projection; the score terms the kernel adds.
struct Problem {
  std::size_t Tq, Tk, Dh, ld;
  Tensor2 q, k, v, mask, bias, drop, dout;
  std::vector<char> padding;  // char, not bool: a vector<bool> has no bool* data
  k::HeadInputs inputs() const {
    return {k::as_matrix(q).block(0, 1, Tq, Dh), k::as_matrix(k).block(0, 1, Tk, Dh),
            k::as_matrix(v).block(0, 1, Tk, Dh)};
  }
};

Problem make_problem(std::size_t Tq, std::size_t Tk, std::size_t Dh, unsigned seed) {
  Rng rng(seed);
  Problem p{Tq, Tk, Dh, Dh + 3};
  p.q = random_tensor<Tensor2>(Shape2{Tq, p.ld}, rng);
  p.k = random_tensor<Tensor2>(Shape2{Tk, p.ld}, rng);
  p.v = random_tensor<Tensor2>(Shape2{Tk, p.ld}, rng);
  p.mask = random_tensor<Tensor2>(Shape2{Tq, Tk}, rng);
  p.bias = random_tensor<Tensor2>(Shape2{Tq, Tk}, rng);
  p.dout = random_tensor<Tensor2>(Shape2{Tq, Dh}, rng);
  p.drop = Tensor2::from_shape({Tq, Tk});
  for (auto& z : p.drop) z = rng.uniform() < 0.25 ? 0.0f : 1.0f / 0.75f;
  p.padding.assign(Tk, 0);
  for (std::size_t j = 0; j < Tk; j += 7) p.padding[j] = 1;  // every 7th key is padding
  return p;
}

// Which terms a case adds to the scores.
struct Terms {
  const char* name;
  bool padding, mask, bias, alibi, dropout;
};
const Terms kCases[] = {
    {"no terms", false, false, false, false, false},
    {"key padding", true, false, false, false, false},
    {"attn_mask and bias", false, true, true, false, false},
    {"ALiBi and padding", true, false, false, true, false},
    {"everything with dropout", true, true, true, true, true},
};

k::ScoreTerms score_terms(const Problem& p, const Terms& t) {
  return {1.0f / std::sqrt(float(p.Dh)),
          t.padding ? reinterpret_cast<const bool*>(p.padding.data()) : nullptr,
          t.mask ? k::as_matrix(p.mask) : k::ConstMatView{},
          t.bias ? k::as_matrix(p.bias) : k::ConstMatView{}, t.alibi ? 0.3f : 0.0f};
}

struct Result {
  Tensor2 out, dq, dk, dv;
  std::vector<float> lse;
};

Result run_plain(const Problem& p, const k::ScoreTerms& terms, k::ConstMatView drop) {
  Result r;
  Tensor2 probs = Tensor2::from_shape({p.Tq, p.Tk}), scratch = Tensor2::from_shape({p.Tq, p.Tk});
  r.out = Tensor2::from_shape({p.Tq, p.Dh});
  k::attention_head_forward(p.inputs(), terms, k::as_matrix(probs), drop, k::as_matrix(scratch),
                            k::as_matrix(r.out));
  r.dq = Tensor2::from_shape({p.Tq, p.Dh});
  r.dk = Tensor2::from_shape({p.Tk, p.Dh});
  r.dv = Tensor2::from_shape({p.Tk, p.Dh});
  k::attention_head_backward(p.inputs(), terms.scale, k::as_matrix(probs), drop,
                             k::as_matrix(p.dout), k::as_matrix(scratch),
                             {k::as_matrix(r.dq), k::as_matrix(r.dk), k::as_matrix(r.dv)});
  return r;
}

Result run_tiled(const Problem& p, const k::ScoreTerms& terms, k::ConstMatView drop,
                 k::TileSizes tiles) {
  Result r;
  r.out = xt::full_like(Tensor2::from_shape({p.Tq, p.Dh}), 7.0f);  // garbage to overwrite
  r.lse.assign(p.Tq, 0.0f);
  k::attention_head_forward_tiled(p.inputs(), terms, drop, k::as_matrix(r.out), r.lse.data(),
                                  tiles);
  r.dq = xt::full_like(Tensor2::from_shape({p.Tq, p.Dh}), 7.0f);
  r.dk = xt::full_like(Tensor2::from_shape({p.Tk, p.Dh}), 7.0f);
  r.dv = xt::full_like(Tensor2::from_shape({p.Tk, p.Dh}), 7.0f);
  k::attention_head_backward_tiled(
      p.inputs(), terms, {k::as_matrix(r.out), r.lse.data(), drop}, k::as_matrix(p.dout),
      {k::as_matrix(r.dq), k::as_matrix(r.dk), k::as_matrix(r.dv)}, tiles);
  return r;
}

// log Σ_j exp(S[i, j]) from loops in double, with the same terms as score_terms.
double lse_by_loops(const Problem& p, const Terms& t, std::size_t i) {
  const double scale = 1.0 / std::sqrt(double(p.Dh));
  std::vector<double> s;
  double m = -1e300;
  for (std::size_t j = 0; j < p.Tk; ++j) {
    if (t.padding && p.padding[j]) continue;
    double dot = 0.0;
    for (std::size_t e = 0; e < p.Dh; ++e) dot += double(p.q(i, 1 + e)) * p.k(j, 1 + e);
    double sij = dot * scale + (t.mask ? p.mask(i, j) : 0.0) + (t.bias ? p.bias(i, j) : 0.0) -
                 (t.alibi ? 0.3 * std::fabs(double(i) - double(j)) : 0.0);
    s.push_back(sij);
    m = std::max(m, sij);
  }
  double sum = 0.0;
  for (double x : s) sum += std::exp(x - m);
  return m + std::log(sum);
}

}  // namespace

// Tiled = plain, forward and backward, for every combination of terms, at tile sizes that
// leave partial tiles at both edges (Tq = 37, Tk = 53 against 8 x 16 and 5 x 7), at 1 x 1
// tiles (one score per tile: every step of the online softmax is a rescale), and at one tile
// bigger than the whole matrix (no rescale at all). The saved lse matches loops in double.
TEST(KernelsAttentionTiled, MatchesThePlainKernelWithEveryScoreTerm) {
  const Problem p = make_problem(37, 53, 8, 2101);
  for (const Terms& t : kCases)
    for (const k::TileSizes tiles :
         {k::TileSizes{8, 16}, k::TileSizes{5, 7}, k::TileSizes{1, 1}, k::TileSizes{64, 256}}) {
      SCOPED_TRACE(::testing::Message()
                   << t.name << ", tiles " << tiles.queries << " x " << tiles.keys);
      const k::ScoreTerms terms = score_terms(p, t);
      const k::ConstMatView drop = t.dropout ? k::as_matrix(p.drop) : k::ConstMatView{};
      const Result plain = run_plain(p, terms, drop);
      const Result tiled = run_tiled(p, terms, drop, tiles);
      EXPECT_TRUE(RelativelyClose(tiled.out, plain.out, kTiledForwardRel));
      EXPECT_TRUE(AllClose(tiled.out, plain.out, kOpAtol, kOpRtol));
      EXPECT_TRUE(RelativelyClose(tiled.dq, plain.dq, kTiledGradRel)) << "dq";
      EXPECT_TRUE(RelativelyClose(tiled.dk, plain.dk, kTiledGradRel)) << "dk";
      EXPECT_TRUE(RelativelyClose(tiled.dv, plain.dv, kTiledGradRel)) << "dv";
      for (std::size_t i = 0; i < p.Tq; ++i)
        EXPECT_NEAR(tiled.lse[i], lse_by_loops(p, t, i), kOpRtol * (1.0 + std::fabs(tiled.lse[i])))
            << "lse of query " << i;
    }
}

// A query whose every key is masked (its attn_mask row is −inf): output zeros and lse = −inf,
// as the plain softmax's rule; it sends no gradient to q, and the other queries are unaffected
// (they equal the plain kernel's).
TEST(KernelsAttentionTiled, FullyMaskedQueryGivesZerosAndNoGradient) {
  Problem p = make_problem(20, 30, 4, 2102);
  const std::size_t masked = 9;
  for (std::size_t j = 0; j < p.Tk; ++j) p.mask(masked, j) = -kInf;
  const k::ScoreTerms terms = score_terms(p, {"mask", false, true, false, false, false});
  const Result plain = run_plain(p, terms, {});
  const Result tiled = run_tiled(p, terms, {}, {4, 8});
  for (std::size_t e = 0; e < p.Dh; ++e) {
    EXPECT_EQ(tiled.out(masked, e), 0.0f);
    EXPECT_EQ(tiled.dq(masked, e), 0.0f);
  }
  EXPECT_EQ(tiled.lse[masked], -kInf);
  EXPECT_TRUE(AllClose(tiled.out, plain.out, kOpAtol, kOpRtol));
  EXPECT_TRUE(RelativelyClose(tiled.dk, plain.dk, kTiledGradRel));
}

// A NaN in one query's input makes that query's output NaN (every element), not zeros and not
// a finite number; every other query's output stays finite and equal to the plain kernel's.
// The same for a NaN in one attn_mask entry, in a key tile that is not the first.
TEST(KernelsAttentionTiled, NanPropagatesToItsRowOnly) {
  for (const bool in_mask : {false, true}) {
    SCOPED_TRACE(in_mask ? "NaN in attn_mask(5, 17)" : "NaN in q(5, 0)");
    Problem p = make_problem(12, 24, 4, 2103);
    const std::size_t row = 5;
    if (in_mask)
      p.mask(row, 17) = std::numeric_limits<float>::quiet_NaN();
    else
      p.q(row, 1) = std::numeric_limits<float>::quiet_NaN();
    const k::ScoreTerms terms = score_terms(p, {"mask", false, true, false, false, false});
    Result tiled;
    tiled.out = Tensor2::from_shape({p.Tq, p.Dh});
    tiled.lse.assign(p.Tq, 0.0f);
    k::attention_head_forward_tiled(p.inputs(), terms, {}, k::as_matrix(tiled.out),
                                    tiled.lse.data(), {4, 8});
    Problem clean = make_problem(12, 24, 4, 2103);  // the same numbers without the NaN
    const Result plain =
        run_plain(clean, score_terms(clean, {"", false, true, false, false, false}), {});
    for (std::size_t i = 0; i < p.Tq; ++i)
      for (std::size_t e = 0; e < p.Dh; ++e) {
        if (i == row)
          EXPECT_TRUE(std::isnan(tiled.out(i, e))) << "out(" << i << ", " << e << ")";
        else
          EXPECT_NEAR(tiled.out(i, e), plain.out(i, e),
                      kOpAtol + kOpRtol * std::fabs(plain.out(i, e)));
      }
    EXPECT_TRUE(std::isnan(tiled.lse[row]));
  }
}

// The tiled backward against finite differences of the tiled forward (2 x 3 tiles on a 5 x 7
// problem with every term), independently of the plain kernel: with dropout factors given as a
// tensor, and drawn per tile from a key (the backward must draw the forward's factors again).
TEST(KernelsAttentionTiled, BackwardMatchesFiniteDifferences) {
  for (const bool drawn : {false, true}) {
    SCOPED_TRACE(drawn ? "dropout drawn from a key" : "dropout factors given");
    Problem p = make_problem(5, 7, 3, 2104);
    const Terms all{"everything", true, true, true, true, true};
    const k::TileSizes tiles{2, 3};
    const k::HeadDropout dropout =
        drawn ? k::HeadDropout(k::DropoutKey{0.25f, 5, 1}) : k::HeadDropout(k::as_matrix(p.drop));
    Result r;
    r.out = Tensor2::from_shape({p.Tq, p.Dh});
    r.lse.assign(p.Tq, 0.0f);
    k::attention_head_forward_tiled(p.inputs(), score_terms(p, all), dropout, k::as_matrix(r.out),
                                    r.lse.data(), tiles);
    r.dq = Tensor2::from_shape({p.Tq, p.Dh});
    r.dk = Tensor2::from_shape({p.Tk, p.Dh});
    r.dv = Tensor2::from_shape({p.Tk, p.Dh});
    k::attention_head_backward_tiled(
        p.inputs(), score_terms(p, all), {k::as_matrix(r.out), r.lse.data(), dropout},
        k::as_matrix(p.dout), {k::as_matrix(r.dq), k::as_matrix(r.dk), k::as_matrix(r.dv)}, tiles);
    auto loss = [&] {
      Tensor2 out = Tensor2::from_shape({p.Tq, p.Dh});
      std::vector<float> lse(p.Tq);
      k::attention_head_forward_tiled(p.inputs(), score_terms(p, all), dropout, k::as_matrix(out),
                                      lse.data(), tiles);
      return dot_loss(out, p.dout);
    };
    // the gradients are [T, Dh]; the inputs are [T, ld] with the head at columns 1 .. Dh
    Tensor2 dq = xt::zeros<float>({p.Tq, p.ld}), dk = xt::zeros<float>({p.Tk, p.ld}),
            dv = xt::zeros<float>({p.Tk, p.ld});
    for (std::size_t i = 0; i < p.Tq; ++i)
      for (std::size_t e = 0; e < p.Dh; ++e) dq(i, 1 + e) = r.dq(i, e);
    for (std::size_t j = 0; j < p.Tk; ++j)
      for (std::size_t e = 0; e < p.Dh; ++e) {
        dk(j, 1 + e) = r.dk(j, e);
        dv(j, 1 + e) = r.dv(j, e);
      }
    EXPECT_TRUE(GradientsMatch(
        loss, {input_target("q", p.q, dq), input_target("k", p.k, dk), input_target("v", p.v, dv)},
        kGradOp));
  }
}

// The tiled kernel against the library's oracle in double (reference::
// scaled_dot_product_attention_forward/backward, lib/src/reference/ops.cpp): one head with key
// padding, an attention mask and ALiBi (the kernel computes −slope·|i − j| per tile; the
// reference adds reference::alibi_bias to the mask), a fully padded query row included by
// masking it in attn_mask; forward within 1e-5, gradients within 1e-4 (relative, ‖·‖₂).
TEST(KernelsAttentionTiled, MatchesTheReferenceInDouble) {
  const std::size_t Tq = 45, Tk = 70, Dh = 8;
  Problem p = make_problem(Tq, Tk, Dh, 2105);
  for (std::size_t j = 0; j < Tk; ++j) p.mask(3, j) = -kInf;  // query 3 sees no key
  const double slope = 0.3;                                   // score_terms' ALiBi slope
  const k::ScoreTerms terms =
      score_terms(p, {"padding, mask, ALiBi", true, true, false, true, false});
  const Result tiled = run_tiled(p, terms, {}, {16, 32});
  // the same head as [1, 1, T, Dh] tensors of double, the mask with ALiBi's bias added
  auto head4 = [](const Tensor2& m, std::size_t T, std::size_t Dh) {
    reference::Tensor4d t = reference::Tensor4d::from_shape({1, 1, T, Dh});
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t e = 0; e < Dh; ++e) t(0, 0, i, e) = m(i, 1 + e);
    return t;
  };
  reference::Tensor2d mask = p.mask + reference::alibi_bias(slope, Tq, Tk);
  Mask2 padding = Mask2::from_shape({1, Tk});
  for (std::size_t j = 0; j < Tk; ++j) padding(0, j) = p.padding[j] != 0;
  const reference::Tensor4d q = head4(p.q, Tq, Dh), kk = head4(p.k, Tk, Dh), v = head4(p.v, Tk, Dh);
  const auto ref = reference::scaled_dot_product_attention_forward(q, kk, v, padding, mask);
  reference::Tensor4d dout = reference::Tensor4d::from_shape({1, 1, Tq, Dh});
  for (std::size_t i = 0; i < Tq; ++i)
    for (std::size_t e = 0; e < Dh; ++e) dout(0, 0, i, e) = p.dout(i, e);
  const auto g = reference::scaled_dot_product_attention_backward(dout, q, kk, v, ref.weights);
  auto as2 = [](const reference::Tensor4d& t) {
    Tensor2 m = Tensor2::from_shape({t.shape(2), t.shape(3)});
    std::copy(t.begin(), t.end(), m.begin());
    return m;
  };
  EXPECT_TRUE(RelativelyClose(tiled.out, as2(ref.output), kTiledForwardRel));
  EXPECT_TRUE(RelativelyClose(tiled.dq, as2(g.query), kTiledGradRel)) << "dq";
  EXPECT_TRUE(RelativelyClose(tiled.dk, as2(g.key), kTiledGradRel)) << "dk";
  EXPECT_TRUE(RelativelyClose(tiled.dv, as2(g.value), kTiledGradRel)) << "dv";
  for (std::size_t e = 0; e < Dh; ++e) EXPECT_EQ(tiled.out(3, e), 0.0f);
}

// Attention dropout drawn per tile from a key (kernels::dropout_factors, a counter-based
// generator): a block drawn at (i0, j0) equals the same block of the whole [Tq, Tk] matrix, so
// a score's factor does not depend on the tile it falls in; every factor is exactly 0 or
// 1/(1 − p); over 512 x 512 scores the fraction dropped is p within 5 standard deviations, and
// so is the fraction of neighbours (down a column, along a row) dropped together, p² (no
// correlation between rows or columns); another stream or seed gives other factors.
TEST(KernelsAttentionTiled, DropoutFactorsDependOnlyOnTheirPosition) {
  const std::size_t n = 512;
  const float p = 0.1f;
  const k::DropoutKey key{p, 12345, 6};
  Tensor2 whole = Tensor2::from_shape({n, n});
  k::dropout_factors(key, 0, 0, k::as_matrix(whole));
  Tensor2 block = Tensor2::from_shape({37, 53});
  k::dropout_factors(key, 100, 201, k::as_matrix(block));
  for (std::size_t i = 0; i < 37; ++i)
    for (std::size_t j = 0; j < 53; ++j) ASSERT_EQ(block(i, j), whole(100 + i, 201 + j));
  const float keep = 1.0f / (1.0f - p);
  double dropped = 0, down = 0, along = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      ASSERT_TRUE(whole(i, j) == 0.0f || whole(i, j) == keep) << whole(i, j);
      const bool d = whole(i, j) == 0.0f;
      dropped += d;
      if (i + 1 < n) down += d && whole(i + 1, j) == 0.0f;
      if (j + 1 < n) along += d && whole(i, j + 1) == 0.0f;
    }
  const auto within_5_sd = [](double count, double trials, double prob) {
    return std::fabs(count - trials * prob) <= 5.0 * std::sqrt(trials * prob * (1.0 - prob));
  };
  EXPECT_TRUE(within_5_sd(dropped, double(n * n), p)) << dropped << " of " << n * n;
  EXPECT_TRUE(within_5_sd(down, double((n - 1) * n), p * p)) << down;
  EXPECT_TRUE(within_5_sd(along, double(n * (n - 1)), p * p)) << along;
  for (const k::DropoutKey other : {k::DropoutKey{p, 12345, 7}, k::DropoutKey{p, 12346, 6}}) {
    Tensor2 z = Tensor2::from_shape({n, n});
    k::dropout_factors(other, 0, 0, k::as_matrix(z));
    double same_drop = 0;
    for (std::size_t i = 0; i < n * n; ++i)
      same_drop += z.data()[i] == 0.0f && whole.data()[i] == 0.0f;
    EXPECT_TRUE(within_5_sd(same_drop, double(n * n), p * p)) << same_drop;
  }
}

// Tiled with dropout drawn per tile = the plain kernel given the same factors written out
// (dropout_factors over the whole [Tq, Tk]), forward and backward, with every score term, at
// tile sizes that leave partial tiles and at 1 x 1 tiles; no factor tensor reaches the tiled
// kernel, only the key.
TEST(KernelsAttentionTiled, DrawnDropoutEqualsThePlainKernelWithTheSameFactors) {
  const Problem p = make_problem(37, 53, 8, 2106);
  const k::DropoutKey key{0.3f, 99, 2};
  Tensor2 factors = Tensor2::from_shape({p.Tq, p.Tk});
  k::dropout_factors(key, 0, 0, k::as_matrix(factors));
  const k::ScoreTerms terms = score_terms(p, kCases[4]);
  const Result plain = run_plain(p, terms, k::as_matrix(factors));
  for (const k::TileSizes tiles : {k::TileSizes{8, 16}, k::TileSizes{5, 7}, k::TileSizes{1, 1}}) {
    SCOPED_TRACE(::testing::Message() << "tiles " << tiles.queries << " x " << tiles.keys);
    Result tiled;
    tiled.out = Tensor2::from_shape({p.Tq, p.Dh});
    tiled.lse.assign(p.Tq, 0.0f);
    k::attention_head_forward_tiled(p.inputs(), terms, key, k::as_matrix(tiled.out),
                                    tiled.lse.data(), tiles);
    tiled.dq = Tensor2::from_shape({p.Tq, p.Dh});
    tiled.dk = Tensor2::from_shape({p.Tk, p.Dh});
    tiled.dv = Tensor2::from_shape({p.Tk, p.Dh});
    k::attention_head_backward_tiled(
        p.inputs(), terms, {k::as_matrix(tiled.out), tiled.lse.data(), key}, k::as_matrix(p.dout),
        {k::as_matrix(tiled.dq), k::as_matrix(tiled.dk), k::as_matrix(tiled.dv)}, tiles);
    EXPECT_TRUE(RelativelyClose(tiled.out, plain.out, kTiledForwardRel));
    EXPECT_TRUE(RelativelyClose(tiled.dq, plain.dq, kTiledGradRel)) << "dq";
    EXPECT_TRUE(RelativelyClose(tiled.dk, plain.dk, kTiledGradRel)) << "dk";
    EXPECT_TRUE(RelativelyClose(tiled.dv, plain.dv, kTiledGradRel)) << "dv";
  }
}

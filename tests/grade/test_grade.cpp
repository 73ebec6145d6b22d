// The grader (xenc/grade/exercises.hpp) on three kinds of student code:
//   1. the reference solutions (tests/grade/solutions/, the files a teacher substitutes into the
//      assignment template) and the library's own ops pass every check;
//   2. the stubs (throwing "not implemented", or returning zeros) fail every exercise;
//   3. each exhibit of the pitfall museum (xenc/grade/pitfalls.hpp), handed in as the student's
//      function, fails, and the failed check's hint names that exhibit's mistake and fix.
// Plus the report's text and the grader's robustness (wrong shapes, foreign exceptions).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "exercises.hpp"  // apps/assignment/template/exercises.hpp: the student's signatures
#include "support/tolerances.hpp"
#include "xenc/grade/exercises.hpp"
#include "xenc/grade/pitfalls.hpp"
#include "xenc/grade/result.hpp"
#include "xenc/xenc.hpp"

namespace {

namespace grade = xenc::grade;
namespace pitfalls = xenc::pitfalls;
using pitfalls::Pitfall;
using xenc::Tensor1;
using xenc::Tensor2;
using xenc::Tensor3;
using xenc::Tensor4;

::testing::AssertionResult AllPass(const grade::ExerciseResult& r) {
  if (r.passed()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << grade::report(r);
}

// Fails unless r failed, its check named `check` failed, and that check's hint names pitfall p.
::testing::AssertionResult FailsWithHint(const grade::ExerciseResult& r, const std::string& check,
                                         Pitfall p) {
  if (r.passed())
    return ::testing::AssertionFailure() << "every check passed:\n" << grade::report(r);
  const pitfalls::PitfallInfo& info = pitfalls::describe(p);
  for (const grade::CheckResult& c : r.checks) {
    if (c.name.find(check) != 0) continue;
    if (c.passed)
      return ::testing::AssertionFailure() << "'" << c.name << "' passed:\n" << grade::report(r);
    if (c.known_mistake != info.title || c.hint.find(info.fix) == std::string::npos)
      return ::testing::AssertionFailure() << "'" << c.name << "' has the hint '" << c.hint
                                           << "', expected the fix of '" << info.title << "':\n"
                                           << grade::report(r);
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no check named '" << check << "...':\n"
                                       << grade::report(r);
}

// The online-softmax tile with its accumulator not rescaled, graded under the hidden seed 11:
// its last check is the hidden one, and it fails naming that known mistake.
grade::ExerciseResult graded_with_a_failed_hidden_check() {
  grade::set_hidden_seed(11);
  grade::ExerciseResult r =
      grade::check_online_softmax_tile(pitfalls::online_softmax_acc_not_rescaled);
  grade::set_hidden_seed(std::nullopt);
  return r;
}

// The check named `check` passed.
bool Passed(const grade::ExerciseResult& r, const std::string& check) {
  for (const grade::CheckResult& c : r.checks)
    if (c.name.find(check) == 0) return c.passed;
  ADD_FAILURE() << "no check named '" << check << "...'";
  return false;
}

// The library's RoPE on one head: row t of x [T, Dh] as a batch [1, 1, Dh] at offset positions[t].
Tensor2 library_rope(const Tensor2& x, const std::vector<std::size_t>& positions,
                     xenc::RopePairing pairing) {
  const std::size_t T = x.shape()[0], Dh = x.shape()[1];
  Tensor2 y = Tensor2::from_shape({T, Dh});
  for (std::size_t t = 0; t < T; ++t) {
    Tensor3 row = Tensor3::from_shape({1, 1, Dh});
    for (std::size_t e = 0; e < Dh; ++e) row(0, 0, e) = x(t, e);
    xenc::rope_forward(row, 1, pairing, double(positions.at(t)));
    for (std::size_t e = 0; e < Dh; ++e) y(t, e) = row(0, 0, e);
  }
  return y;
}

// ---- 1. the reference solutions and the library pass ------------------------------------------

TEST(GradeSolutions, EveryExercisePassesEveryCheck) {
  EXPECT_TRUE(AllPass(grade::check_sinusoidal_table(assignment::sinusoidal_table)));
  EXPECT_TRUE(AllPass(grade::check_softmax(assignment::softmax)));
  EXPECT_TRUE(AllPass(grade::check_layer_norm_forward(assignment::layer_norm_forward)));
  EXPECT_TRUE(AllPass(grade::check_layer_norm_backward(assignment::layer_norm_backward)));
  EXPECT_TRUE(AllPass(grade::check_attention(assignment::attention)));
  EXPECT_TRUE(AllPass(grade::check_split_heads(assignment::split_heads)));
  EXPECT_TRUE(AllPass(grade::check_merge_heads(assignment::merge_heads)));
  EXPECT_TRUE(AllPass(grade::check_linear_backward(assignment::linear_backward)));
  EXPECT_TRUE(AllPass(grade::check_cross_entropy(assignment::cross_entropy)));
  EXPECT_TRUE(AllPass(grade::check_rope(assignment::rope)));
  EXPECT_TRUE(AllPass(grade::check_alibi_slopes(assignment::alibi_slopes)));
  EXPECT_TRUE(AllPass(grade::check_online_softmax_tile(assignment::online_softmax_tile)));
  EXPECT_TRUE(AllPass(grade::check_test_softmax(assignment::test_softmax)));
  EXPECT_TRUE(AllPass(grade::check_test_layer_norm_forward(assignment::test_layer_norm_forward)));
  EXPECT_TRUE(AllPass(grade::check_test_attention(assignment::test_attention)));
}

// The library's ops are tested against PyTorch (tests/ops); they pass the grader's checks too, so
// the grader's references and the library agree.
TEST(GradeSolutions, TheLibraryOpsPass) {
  EXPECT_TRUE(AllPass(grade::check_sinusoidal_table(
      [](std::size_t P, std::size_t D) { return xenc::sinusoidal_encoding(P, D); })));
  EXPECT_TRUE(
      AllPass(grade::check_softmax([](const Tensor2& x) { return xenc::softmax_forward<2>(x); })));
  EXPECT_TRUE(AllPass(grade::check_layer_norm_forward(
      [](const Tensor2& x, const Tensor1& w, const Tensor1& b, float eps) {
        return xenc::layer_norm_forward<2>(x, w, b, eps);
      })));
  EXPECT_TRUE(AllPass(grade::check_layer_norm_backward(
      [](const Tensor2& dy, const Tensor2& x, const Tensor1& w, float eps) {
        xenc::LayerNormCache cache;
        const Tensor1 b = xt::zeros<float>({w.size()});
        xenc::layer_norm_forward<2>(x, w, b, eps, cache);
        return xenc::layer_norm_backward<2>(dy, x, w, cache);
      })));
  EXPECT_TRUE(AllPass(grade::check_attention(
      [](const Tensor4& q, const Tensor4& k, const Tensor4& v, const xenc::Mask2& m) {
        return xenc::scaled_dot_product_attention_forward(q, k, v, m);
      })));
  EXPECT_TRUE(AllPass(
      grade::check_linear_backward([](const Tensor2& dy, const Tensor2& x, const Tensor2& W) {
        xenc::LinearGrads<2> g;
        g.weight = xt::zeros<float>(W.shape());
        g.bias = xt::zeros<float>({W.shape()[0]});
        g.input = xenc::linear_backward<2>(dy, x, W, g.weight, g.bias);
        return g;
      })));
  // the library's cross-entropy: the same convention as the grader, NaN when every target is
  // ignored
  EXPECT_TRUE(AllPass(
      grade::check_cross_entropy([](const Tensor2& z, const xenc::Index1& t, std::int64_t ignore) {
        return grade::CrossEntropyOutput{xenc::cross_entropy_forward(z, t, ignore),
                                         xenc::cross_entropy_backward(z, t, ignore)};
      })));
  EXPECT_TRUE(AllPass(grade::check_rope([](const Tensor2& x, const std::vector<std::size_t>& p) {
    return library_rope(x, p, xenc::RopePairing::interleaved);
  })));
  EXPECT_TRUE(
      AllPass(grade::check_alibi_slopes([](std::size_t H) { return xenc::alibi_slopes(H); })));
}

// The library's rotate-half pairing is the museum's exhibit (two codes, one mistake): the grader
// names it when the library runs with RopePairing::half.
TEST(GradeSolutions, LibraryRotateHalfIsTheExhibit) {
  const auto r = grade::check_rope([](const Tensor2& x, const std::vector<std::size_t>& p) {
    return library_rope(x, p, xenc::RopePairing::half);
  });
  EXPECT_TRUE(FailsWithHint(r, "hand example", Pitfall::rope_rotate_half));
}

// ---- 2. stubs fail ----------------------------------------------------------------------------

TEST(GradeStubs, ThrowingStubsFailEveryCheckWithTheStubHint) {
  auto nope = [](auto&&...) -> Tensor2 { throw std::logic_error("softmax: not implemented"); };
  const grade::ExerciseResult r = grade::check_softmax(nope);
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.num_passed(), 0u);
  for (const grade::CheckResult& c : r.checks) {
    EXPECT_EQ(c.computed, "threw an exception: softmax: not implemented") << c.name;
    EXPECT_EQ(c.hint, "the function is still the stub: implement it.") << c.name;
  }
  // every exercise, through the template's own stub files' behaviour
  auto all_fail = [](const grade::ExerciseResult& e) { return !e.passed() && e.num_passed() == 0; };
  const auto thrower = [](auto&&...) -> int { throw std::logic_error("not implemented"); };
  EXPECT_TRUE(all_fail(grade::check_sinusoidal_table([&](std::size_t, std::size_t) -> Tensor2 {
    thrower();
    return {};
  })));
  EXPECT_TRUE(all_fail(grade::check_layer_norm_forward(
      [&](const Tensor2&, const Tensor1&, const Tensor1&, float) -> Tensor2 {
        thrower();
        return {};
      })));
  EXPECT_TRUE(all_fail(grade::check_layer_norm_backward(
      [&](const Tensor2&, const Tensor2&, const Tensor1&, float) -> xenc::LayerNormGrads<2> {
        thrower();
        return {};
      })));
  EXPECT_TRUE(all_fail(grade::check_attention([&](const Tensor4&, const Tensor4&, const Tensor4&,
                                                  const xenc::Mask2&) -> xenc::AttentionResult {
    thrower();
    return {};
  })));
  EXPECT_TRUE(all_fail(grade::check_merge_heads([&](const Tensor4&) -> Tensor3 {
    thrower();
    return {};
  })));
  EXPECT_TRUE(all_fail(grade::check_linear_backward(
      [&](const Tensor2&, const Tensor2&, const Tensor2&) -> xenc::LinearGrads<2> {
        thrower();
        return {};
      })));
  EXPECT_TRUE(all_fail(grade::check_cross_entropy(
      [&](const Tensor2&, const xenc::Index1&, std::int64_t) -> grade::CrossEntropyOutput {
        thrower();
        return {};
      })));
  // split_heads' "D not divisible" check passes for any std::invalid_argument; logic_error is not
  // one
  EXPECT_TRUE(all_fail(grade::check_split_heads([&](const Tensor3&, std::size_t) -> Tensor4 {
    thrower();
    return {};
  })));
}

TEST(GradeStubs, ZeroStubsFail) {
  const grade::ExerciseResult pe = grade::check_sinusoidal_table(
      [](std::size_t P, std::size_t D) -> Tensor2 { return xt::zeros<float>({P, D}); });
  EXPECT_FALSE(pe.passed());
  EXPECT_FALSE(Passed(pe, "hand example"));
  const grade::ExerciseResult sm =
      grade::check_softmax([](const Tensor2& x) -> Tensor2 { return xt::zeros<float>(x.shape()); });
  EXPECT_FALSE(sm.passed());
  EXPECT_FALSE(Passed(sm, "hand example"));
  EXPECT_EQ(sm.checks[0].first_difference, "y[0, 0]: expected 0.0900306, computed 0");
  const grade::ExerciseResult ln =
      grade::check_layer_norm_forward([](const Tensor2& x, const Tensor1&, const Tensor1&,
                                         float) -> Tensor2 { return xt::zeros<float>(x.shape()); });
  EXPECT_FALSE(ln.passed());
  const grade::ExerciseResult lb = grade::check_layer_norm_backward(
      [](const Tensor2& dy, const Tensor2&, const Tensor1& w, float) {
        xenc::LayerNormGrads<2> g;
        g.input = xt::zeros<float>(dy.shape());
        g.weight = xt::zeros<float>({w.size()});
        g.bias = xt::zeros<float>({w.size()});
        return g;
      });
  EXPECT_FALSE(lb.passed());
  EXPECT_FALSE(Passed(lb, "finite differences: dx"));
  const grade::ExerciseResult at = grade::check_attention(
      [](const Tensor4& q, const Tensor4& k, const Tensor4&, const xenc::Mask2&) {
        xenc::AttentionResult a;
        a.output = xt::zeros<float>(q.shape());
        a.weights = xt::zeros<float>({q.shape()[0], q.shape()[1], q.shape()[2], k.shape()[2]});
        return a;
      });
  EXPECT_FALSE(at.passed());
  const grade::ExerciseResult ce =
      grade::check_cross_entropy([](const Tensor2& z, const xenc::Index1&, std::int64_t) {
        return grade::CrossEntropyOutput{0.0f, xt::zeros<float>(z.shape())};
      });
  EXPECT_FALSE(ce.passed());
  EXPECT_FALSE(Passed(ce, "finite differences: grad_logits"));
  // the state handed back unchanged: the masked tile passes (it changes nothing), the rest fail
  const grade::ExerciseResult os = grade::check_online_softmax_tile(
      [](const grade::OnlineSoftmaxState& st, const Tensor2&, const Tensor2&) { return st; });
  EXPECT_FALSE(os.passed());
  EXPECT_FALSE(Passed(os, "hand example"));
  EXPECT_TRUE(Passed(os, "edge case: a tile of masked keys"));
}

// ---- 3. every catalogued bug fails with its hint ----------------------------------------------

// One museum exhibit handed in as the student's function: the checks that must fail with the hint
// of a pitfall (each check named by the start of its name), the checks that must pass (the bug
// hides there), and, where set, how many checks fail in all.
struct ExhibitCase {
  std::string name;
  std::function<grade::ExerciseResult()> grade;
  std::vector<std::pair<std::string, Pitfall>> fails_with;
  std::vector<std::string> passes;
  int num_failed = -1;  // -1: not counted
};

// GoogleTest prints a parameter in the test's listing (and so in ctest's test names): the name,
// not the struct's bytes.
void PrintTo(const ExhibitCase& c, std::ostream* os) { *os << c.name; }

// A cross-entropy "student" made of the exhibit's loss and gradient.
grade::CrossEntropyOutput cross_entropy_counting_ignored(const Tensor2& z, const xenc::Index1& t,
                                                         std::int64_t ignore) {
  return {pitfalls::cross_entropy_counts_ignored(z, t, ignore),
          pitfalls::cross_entropy_counts_ignored_backward(z, t, ignore)};
}

// A sinusoidal table on the common div_term code: for odd D the write past the row's end
// (std::out_of_range here) instead of a clear refusal.
Tensor2 table_on_div_term_code(std::size_t P, std::size_t D) {
  const auto rows = pitfalls::pe_odd_d_unchecked(P, D);
  Tensor2 t = Tensor2::from_shape({P, D});
  for (std::size_t p = 0; p < P; ++p)
    for (std::size_t j = 0; j < D; ++j) t(p, j) = rows[p][j];
  return t;
}

const std::vector<ExhibitCase>& exhibit_cases() {
  using P = Pitfall;
  static const std::vector<ExhibitCase> all = {
      {"DoubledExponentTable",
       [] { return grade::check_sinusoidal_table(pitfalls::pe_doubled_exponent); },
       {{"hand example", P::pe_doubled_exponent}, {"reference values", P::pe_doubled_exponent}},
       // still sin and cos of one angle, still relative: only the frequencies are wrong
       {"invariant: PE(p, 2i)²", "invariant: PE(p) · PE(p + 3)"}},
      {"OddDimensionOverflow",
       [] { return grade::check_sinusoidal_table(table_on_div_term_code); },
       {{"edge case: odd D", P::pe_odd_d_overflow}},
       {},
       1},  // correct for every even D
      // the four exhibits of issue 19, each named for its own bug (FailsWithHint compares the
      // known mistake's title), and passing the checks its bug does not touch
      {"SinCosSwapped",
       [] { return grade::check_sinusoidal_table(pitfalls::pe_sin_cos_swapped); },
       {{"hand example", P::pe_sin_cos_swapped},
        {"reference values", P::pe_sin_cos_swapped},
        {"edge case: T = 1", P::pe_sin_cos_swapped}},
       {"invariant: PE(p, 2i)² + PE(p, 2i+1)² = 1", "invariant: PE(p) · PE(p + 3)"}},
      {"SoftmaxWrongAxis",
       [] { return grade::check_softmax(pitfalls::softmax_wrong_axis); },
       {{"hand example", P::softmax_wrong_axis},
        {"reference values", P::softmax_wrong_axis},
        {"invariant: every row sums to 1", P::softmax_wrong_axis},
        {"edge case: large logits", P::softmax_wrong_axis}},
       {"invariant: adding 10"}},
      {"AttentionScaleByDh",
       [] { return grade::check_attention(pitfalls::attention_scale_by_dh); },
       {{"reference values", P::attention_scale_by_dh}},
       {"invariant: weights on padding keys"}},
      {"RopeDoubledExponent",
       [] { return grade::check_rope(pitfalls::rope_doubled_exponent); },
       {{"hand example", P::rope_doubled_exponent}, {"reference values", P::rope_doubled_exponent}},
       {"invariant: every row keeps its length",
        "invariant: the scores q_m · k_n depend only on m - n", "invariant: position 0",
        "edge case: Dh = 2"}},
      {"SoftmaxWithoutMax",
       [] { return grade::check_softmax(pitfalls::softmax_without_max); },
       {{"edge case: large logits", P::softmax_without_max}},
       {"hand example"}},  // small logits hide the bug
      {"LayerNormUnbiasedVariance",
       [] { return grade::check_layer_norm_forward(pitfalls::layer_norm_unbiased_variance); },
       {{"hand example", P::layer_norm_unbiased_variance},
        {"invariant", P::layer_norm_unbiased_variance}}},
      {"LayerNormEpsOutsideSqrt",
       [] { return grade::check_layer_norm_forward(pitfalls::layer_norm_eps_outside_sqrt); },
       {{"edge case: a row with variance below eps", P::layer_norm_eps_outside_sqrt}},
       {"hand example"}},  // variance 1.25 >> eps: the difference is 4e-6
      {"LayerNormUnbiasedStdEpsOutside",
       [] {
         return grade::check_layer_norm_forward(pitfalls::layer_norm_unbiased_std_eps_outside);
       },
       // where eps does not matter the unbiased variance is the visible part, and its fix is named
       {{"edge case: a row with variance below eps", P::layer_norm_unbiased_std_eps_outside},
        {"hand example", P::layer_norm_unbiased_variance}}},
      {"LayerNormBackwardWithoutMeanTerms",
       [] { return grade::check_layer_norm_backward(pitfalls::layer_norm_backward_no_mean_terms); },
       {{"hand example", P::layer_norm_backward_no_mean_terms},
        {"invariant", P::layer_norm_backward_no_mean_terms},
        {"finite differences: dx", P::layer_norm_backward_no_mean_terms}},
       {"finite differences: dweight", "finite differences: dbias"}},
      {"AttentionWithoutScale",
       [] { return grade::check_attention(pitfalls::attention_without_scale); },
       {{"hand example", P::attention_without_scale},
        {"reference values", P::attention_without_scale}},
       {"invariant: weights on padding keys"}},
      {"MaskAfterSoftmax",
       [] { return grade::check_attention(pitfalls::attention_mask_after_softmax); },
       {{"hand example", P::mask_after_softmax},
        {"invariant: each row of weights sums to 1", P::mask_after_softmax}},
       {"invariant: weights on padding keys"}},  // zeros there, too late
      {"InvertedMask",
       [] { return grade::check_attention(pitfalls::attention_inverted_mask); },
       {{"hand example", P::mask_inverted},
        {"invariant: weights on padding keys", P::mask_inverted}}},
      {"SplitHeadsWithoutTranspose",
       [] { return grade::check_split_heads(pitfalls::split_heads_without_transpose); },
       {{"hand example", P::split_heads_without_transpose},
        {"invariant: merging", P::split_heads_without_transpose}},
       {"edge case: T = 1"}},  // one token: the reshape happens to be right
      {"MergeHeadsWithoutTranspose",
       [] { return grade::check_merge_heads(pitfalls::merge_heads_without_transpose); },
       {{"hand example", P::merge_heads_without_transpose},
        {"invariant: merging split heads", P::merge_heads_without_transpose}}},
      {"LinearBackwardBiasMean",
       [] { return grade::check_linear_backward(pitfalls::linear_backward_bias_mean); },
       {{"hand example", P::linear_backward_bias_mean},
        {"invariant: the bias is a weight", P::linear_backward_bias_mean},
        {"finite differences: db", P::linear_backward_bias_mean}},
       {"finite differences: dx", "finite differences: dW"}},
      {"CrossEntropyCountsIgnoredRows",
       [] { return grade::check_cross_entropy(cross_entropy_counting_ignored); },
       {{"hand example", P::cross_entropy_counts_ignored},
        {"finite differences", P::cross_entropy_counts_ignored}},
       {"edge case: one row"}},  // nothing ignored: N' = N
      // RoPE: each wrong rotation is still a rotation, so lengths and relative scores hide it
      {"RopeRotateHalf",
       [] { return grade::check_rope(pitfalls::rope_rotate_half); },
       {{"hand example", P::rope_rotate_half}, {"reference values", P::rope_rotate_half}},
       // one pair (Dh = 2): the two pairings coincide
       {"invariant: every row keeps its length",
        "invariant: the scores q_m · k_n depend only on m - n", "invariant: position 0",
        "edge case: Dh = 2"}},
      {"RopeExponentWithout2",
       [] { return grade::check_rope(pitfalls::rope_exponent_without_2); },
       {{"hand example", P::rope_exponent_without_2},
        {"reference values", P::rope_exponent_without_2},
        {"edge case: large positions", P::rope_exponent_without_2}},
       {"invariant: the scores q_m · k_n depend only on m - n",
        "edge case: Dh = 2"}},  // θ_0 = 1 either way
      {"RopeClockwise",
       [] { return grade::check_rope(pitfalls::rope_clockwise); },
       {{"hand example", P::rope_clockwise}, {"edge case: Dh = 2", P::rope_clockwise}},
       {"invariant: every row keeps its length",
        "invariant: the scores q_m · k_n depend only on m - n", "invariant: position 0"}},
      {"RopePositionsFromOne",
       [] { return grade::check_rope(pitfalls::rope_positions_from_one); },
       {{"hand example", P::rope_positions_from_one},
        {"invariant: position 0 is the identity", P::rope_positions_from_one},
        {"edge case: T = 1", P::rope_positions_from_one}},
       {"invariant: the scores q_m · k_n depend only on m - n"}},  // the shift by one cancels in
                                                                   // every score
      {"AlibiStartAt2PowMinus8",
       [] { return grade::check_alibi_slopes(pitfalls::alibi_slopes_start_2_pow_minus_8); },
       {{"hand example: H = 8", P::alibi_start_2_pow_minus_8},
        {"invariant: for H = 1, 2, 4", P::alibi_start_2_pow_minus_8}},
       // ratio = start, as it should; one head: 2^(-8) is right
       {"invariant: for H = 16 the slopes are geometric", "edge case: H = 1"}},
      {"AlibiPlainFormulaForEveryH",
       [] { return grade::check_alibi_slopes(pitfalls::alibi_slopes_plain_formula); },
       {{"hand example: H = 6", P::alibi_plain_formula},
        {"reference values: H = 12", P::alibi_plain_formula},
        {"invariant: for H = 12 the first 8", P::alibi_plain_formula},
        {"edge case: H = 3", P::alibi_plain_formula}},
       // every power of two is right
       {"hand example: H = 8", "reference values: H = 32", "invariant: for H = 1, 2, 4"}},
      // the online softmax (issue 21's exercise): each wrong update named for its own bug
      {"OnlineSoftmaxAccNotRescaled",
       [] { return grade::check_online_softmax_tile(pitfalls::online_softmax_acc_not_rescaled); },
       {{"hand example", P::online_softmax_acc_not_rescaled},
        {"reference values", P::online_softmax_acc_not_rescaled},
        {"invariant: three tiles", P::online_softmax_acc_not_rescaled}},
       // nothing to rescale on the first tile (acc = 0), nor when the tile is masked
       {"edge case: the first tile", "edge case: a tile of masked keys"}},
      {"OnlineSoftmaxSumWrongFactor",
       [] { return grade::check_online_softmax_tile(pitfalls::online_softmax_sum_wrong_factor); },
       {{"hand example", P::online_softmax_sum_wrong_factor},
        {"reference values", P::online_softmax_sum_wrong_factor},
        {"invariant: three tiles", P::online_softmax_sum_wrong_factor}},
       {"edge case: the first tile", "edge case: a tile of masked keys"}},
      {"OnlineSoftmaxOldMax",
       [] { return grade::check_online_softmax_tile(pitfalls::online_softmax_old_max); },
       {{"hand example", P::online_softmax_old_max},
        {"edge case: the first tile", P::online_softmax_old_max},
        {"edge case: large scores", P::online_softmax_old_max}},
       {"edge case: a tile of masked keys"}},
      // the relative shift (issue 30's exercise): T = 1 has one column, right for any shift
      {"RelativeShiftMirrored",
       [] { return grade::check_relative_shift(pitfalls::relative_shift_mirrored); },
       {{"hand example", P::relative_shift_mirrored},
        {"reference values", P::relative_shift_mirrored},
        {"invariant", P::relative_shift_mirrored}},
       {"edge case: T = 1", "edge case: z of shape"}},
      {"RelativeShiftNotShifted",
       [] { return grade::check_relative_shift(pitfalls::relative_shift_not_shifted); },
       {{"hand example", P::relative_shift_not_shifted},
        {"reference values", P::relative_shift_not_shifted},
        {"invariant", P::relative_shift_not_shifted}},
       {"edge case: T = 1", "edge case: z of shape"}},
  };
  return all;
}

class GradeExhibits : public ::testing::TestWithParam<ExhibitCase> {};

TEST_P(GradeExhibits, FailsWithItsHint) {
  const ExhibitCase& c = GetParam();
  const grade::ExerciseResult r = c.grade();
  for (const auto& [check, pitfall] : c.fails_with) EXPECT_TRUE(FailsWithHint(r, check, pitfall));
  for (const std::string& check : c.passes)
    EXPECT_TRUE(Passed(r, check)) << check << "\n" << grade::report(r);
  if (c.num_failed >= 0)
    EXPECT_EQ(r.checks.size() - r.num_passed(), std::size_t(c.num_failed)) << grade::report(r);
}

INSTANTIATE_TEST_SUITE_P(Museum, GradeExhibits, ::testing::ValuesIn(exhibit_cases()),
                         [](const ::testing::TestParamInfo<ExhibitCase>& info) {
                           return info.param.name;
                         });

// Every exhibit with the signature of an exercise is handed in above; the one left,
// pe_batch_axis (a position scheme), is tested in tests/apps/test_pitfalls.cpp.
TEST(GradePitfalls, EveryExhibitIsHandedIn) {
  std::set<Pitfall> named;
  for (const ExhibitCase& c : exhibit_cases())
    for (const auto& fail : c.fails_with) named.insert(fail.second);
  for (Pitfall p : pitfalls::all_pitfalls())
    EXPECT_EQ(named.count(p), p == Pitfall::pe_batch_axis ? 0u : 1u) << pitfalls::describe(p).title;
}

// The exhibits compute what their doc says, checked by hand arithmetic (not by the grader).
TEST(GradePitfalls, ExhibitsComputeWhatTheySay) {
  // softmax without the max: exp(1000) = inf in float32, inf / inf = NaN
  EXPECT_TRUE(std::isnan(pitfalls::softmax_without_max(Tensor2{{1000, 1001}})(0, 0)));
  // [1, 2, 3, 4]: Σ (x - mean)² = 5; unbiased var 5/3 -> 1.5 / sqrt(5/3 + 1e-5) = 1.161892
  const Tensor2 x = {{1, 2, 3, 4}, {0, 0, 0, 1e-3f}};
  const Tensor1 w = xt::ones<float>({4}), b = xt::zeros<float>({4});
  EXPECT_NEAR(pitfalls::layer_norm_unbiased_variance(x, w, b, 1e-5f)(0, 3),
              1.5 / std::sqrt(5.0 / 3 + 1e-5), xenc::test::kOpAtol);
  // [0, 0, 0, 1e-3]: mean 2.5e-4, var 1.875e-7 -> 7.5e-4 / (sqrt(1.875e-7) + 1e-5) = 1.692954
  // (NumPy)
  EXPECT_NEAR(pitfalls::layer_norm_eps_outside_sqrt(x, w, b, 1e-5f)(1, 3), 1.69295372,
              xenc::test::kHandValue);
  // attention hand example of the grader, sentence 0, query 0: scores [2, 0] without the scale
  // -> e² / (e² + 1) = 0.880797; mask after the softmax on sentence 1 -> [0.731059, 0]
  Tensor4 q = xt::zeros<float>({2, 1, 2, 4}), k = q, v = q;
  for (std::size_t s = 0; s < 2; ++s)
    q(s, 0, 0, 0) = 2, k(s, 0, 0, 0) = 1, v(s, 0, 0, 0) = 1, v(s, 0, 1, 1) = 1;
  const xenc::Mask2 mask = {{false, false}, {false, true}};
  EXPECT_NEAR(pitfalls::attention_without_scale(q, k, v, mask).weights(0, 0, 0, 0), 0.88079708,
              xenc::test::kOpAtol);
  const auto after = pitfalls::attention_mask_after_softmax(q, k, v, mask);
  EXPECT_NEAR(after.weights(1, 0, 0, 0), 0.73105858, xenc::test::kOpAtol);
  EXPECT_EQ(after.weights(1, 0, 0, 1), 0.0f);
  // inverted: sentence 0 has no padding, so every key is masked -> zeros
  EXPECT_EQ(pitfalls::attention_inverted_mask(q, k, v, mask).weights(0, 0, 0, 0), 0.0f);
  // heads: [[0..3], [4..7]] viewed as [1, 2, 2, 2] keeps memory order: head 0 = [[0, 1], [2, 3]]
  const Tensor3 hx = {{{0, 1, 2, 3}, {4, 5, 6, 7}}};
  EXPECT_EQ(pitfalls::split_heads_without_transpose(hx, 2)(0, 0, 1, 0), 2.0f);
  EXPECT_EQ(pitfalls::merge_heads_without_transpose(Tensor4{{{{0, 1}, {4, 5}}, {{2, 3}, {6, 7}}}})(
                0, 0, 2),
            4.0f);
  // bias gradient as a mean: dy = [[1, 2, 3], [1, 0, 0]] -> [1, 1, 1.5]
  const auto lg = pitfalls::linear_backward_bias_mean(
      Tensor2{{1, 2, 3}, {1, 0, 0}}, Tensor2{{1, 2}, {3, 4}}, Tensor2{{1, 0}, {0, 1}, {1, 1}});
  EXPECT_EQ(lg.bias(2), 1.5f);
  // cross-entropy over N = 2 rows, one ignored: 0.4076059644 / 2 (PyTorch's loss for the kept row)
  EXPECT_NEAR(pitfalls::cross_entropy_counts_ignored(Tensor2{{1, 2, 3}, {1, 0, -1}},
                                                     xenc::Index1{2, -100}, -100),
              0.4076059644 / 2, xenc::test::kOpAtol);
  // layer norm backward without the mean terms: dx = rstd · dy · w = [1 / sqrt(1.25001), 0, 0, 0]
  EXPECT_NEAR(pitfalls::layer_norm_backward_no_mean_terms(Tensor2{{1, 0, 0, 0}},
                                                          Tensor2{{1, 2, 3, 4}}, w, 1e-5f)
                  .input(0, 0),
              1.0 / std::sqrt(1.25001), xenc::test::kOpAtol);
  // RoPE, Dh = 4, position 1 (θ = 1, 0.01): rotate-half pairs column 0 with column 2, so
  // [1, 0, 0, 0] -> [cos 1, 0, sin 1, 0]
  const Tensor2 e0 = {{1, 0, 0, 0}}, e2 = {{0, 0, 1, 0}};
  EXPECT_NEAR(pitfalls::rope_rotate_half(e0, {1})(0, 2), std::sin(1.0), xenc::test::kOpAtol);
  EXPECT_EQ(pitfalls::rope_rotate_half(e0, {1})(0, 1), 0.0f);
  // θ_1 = 10000^(-1/4) = 0.1 instead of 0.01: [0, 0, 1, 0] -> [0, 0, cos 0.1, sin 0.1]
  EXPECT_NEAR(pitfalls::rope_exponent_without_2(e2, {1})(0, 3), std::sin(0.1), xenc::test::kOpAtol);
  // clockwise: (1, 0) at position 1 -> (cos 1, -sin 1); from one: (1, 0) at position 0 -> (cos 1,
  // sin 1)
  EXPECT_NEAR(pitfalls::rope_clockwise(Tensor2{{1, 0}}, {1})(0, 1), -std::sin(1.0),
              xenc::test::kOpAtol);
  EXPECT_NEAR(pitfalls::rope_positions_from_one(Tensor2{{1, 0}}, {0})(0, 1), std::sin(1.0),
              xenc::test::kOpAtol);
  // ALiBi from 2^-8, H = 2: 2^-8, 2^-16; the plain formula for H = 3: 2^(-8/3), 2^(-16/3), 2^-8
  EXPECT_EQ(pitfalls::alibi_slopes_start_2_pow_minus_8(2),
            (std::vector<double>{1.0 / 256, 1.0 / 65536}));
  const std::vector<double> plain = pitfalls::alibi_slopes_plain_formula(3);
  ASSERT_EQ(plain.size(), 3u);
  EXPECT_NEAR(plain[0], 0.1574901312, 1e-10);  // 2^(-8/3), NumPy
  EXPECT_NEAR(plain[2], 1.0 / 256, 1e-15);
  // relative shift, T = 2, z = [[0, 1, 2], [3, 4, 5]]: mirrored row 0 reads z[0, 1 + 0 - j] ->
  // (1, 0), row 1 z[1, 2 - j] -> (5, 4); not shifted: the first two columns (0, 1), (3, 4)
  const Tensor2 z = {{0, 1, 2}, {3, 4, 5}};
  EXPECT_EQ(pitfalls::relative_shift_mirrored(z), (Tensor2{{1, 0}, {5, 4}}));
  EXPECT_EQ(pitfalls::relative_shift_not_shifted(z), (Tensor2{{0, 1}, {3, 4}}));
}

// Every exhibit that has the signature of an exercise is tested above; the catalogue lists them.
TEST(GradePitfalls, EveryExhibitHasATitleMistakeAndFix) {
  for (Pitfall p : pitfalls::all_pitfalls()) {
    const auto& info = pitfalls::describe(p);
    EXPECT_FALSE(info.title.empty());
    EXPECT_FALSE(info.mistake.empty());
    EXPECT_FALSE(info.fix.empty());
  }
  EXPECT_EQ(pitfalls::all_pitfalls().size(), 30u);
}

// The museum is one table (xenc/grade/pitfall_table.hpp): each row's id is the name of its enum
// value, and it names the exhibit function(s) that compute the mistake; no two rows share an id or
// a title (a hint names the mistake by its title).
TEST(GradePitfalls, OneTableRowPerExhibit) {
  EXPECT_EQ(pitfalls::describe(Pitfall::softmax_wrong_axis).id, "softmax_wrong_axis");
  EXPECT_EQ(pitfalls::describe(Pitfall::pe_batch_axis).exhibit,
            "BatchAxisPosition, add_positions_along_batch");
  EXPECT_EQ(pitfalls::describe(Pitfall::online_softmax_old_max).title,
            "online softmax: the new maximum used before it is computed");
  std::set<std::string> ids, titles;
  for (Pitfall p : pitfalls::all_pitfalls()) {
    const auto& info = pitfalls::describe(p);
    EXPECT_FALSE(info.exhibit.empty()) << info.id;
    EXPECT_TRUE(ids.insert(info.id).second) << info.id;
    EXPECT_TRUE(titles.insert(info.title).second) << info.title;
  }
}

// ---- the report and robustness ----------------------------------------------------------------

TEST(GradeReport, FailedChecksShowValuesFirstDifferenceAndHint) {
  const std::string text = grade::report(grade::check_softmax(pitfalls::softmax_without_max));
  EXPECT_NE(text.find("✘ softmax: 6 of 8 checks passed\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  Tensor2 softmax(const Tensor2& x)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  ✔ hand example: [[1, 2, 3], [0, 0, 0]]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  ✘ edge case: large logits (stability)\n"
                      "      input:    x [2, 3] = [1000, 1001, 1002, -1000, -1001, -1002]\n"
                      "      expected: y [2, 3] = [0.0900306, 0.244728, 0.665241, 0.665241, "
                      "0.244728, 0.0900306]\n"
                      "      computed: y [2, 3] = [nan, nan, nan, nan, nan, nan]\n"
                      "      first difference: y[0, 0]: expected 0.0900306, computed nan\n"
                      "  ✔ edge case: -inf entries (masked) get exactly 0\n"
                      "  ✘ edge case: a fully masked row (every entry -inf) gives zeros\n"
                      "      input:    x [2, 3] = [-inf, -inf, -inf, 1, 2, 3]\n"
                      "      expected: y [2, 3] = [0, 0, 0, 0.0900306, 0.244728, 0.665241]\n"
                      "      computed: y [2, 3] = [nan, nan, nan, 0.0900306, 0.244728, 0.665241]\n"
                      "      first difference: y[0, 0]: expected 0, computed nan\n"),
            std::string::npos)
      << text;
  // the hints come after the list of checks; two different ones, each naming its check
  EXPECT_NE(text.find("  ✔ edge case: one column (C = 1) gives 1\n"
                      "  hint for \"edge case: large logits (stability)\": this is a known "
                      "mistake, softmax without the max subtraction: "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Fix: subtract the row maximum first"), std::string::npos) << text;
  // a fully masked row is 0 / 0 without the max: not the overflow, so the check's own hint
  EXPECT_NE(text.find("\n  hint for \"edge case: a fully masked row (every entry -inf) gives "
                      "zeros\": a row whose every entry is -inf has nothing to attend to: return a "
                      "row of zeros"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("      hint"), std::string::npos) << text;  // none under a check
}

// The stub fails every check with one hint: the report says it once, after the list (not once
// per check, which buried the values: 8 times for softmax).
TEST(GradeReport, OneHintForManyChecksIsPrintedOnceAfterTheList) {
  auto nope = [](auto&&...) -> Tensor2 { throw std::logic_error("softmax: not implemented"); };
  const grade::ExerciseResult r = grade::check_softmax(nope);
  ASSERT_EQ(r.num_passed(), 0u);
  ASSERT_GT(r.checks.size(), 2u);
  const std::string text = grade::report(r);
  const std::string hint = "  hint: the function is still the stub: implement it.\n";
  const std::size_t at = text.find(hint);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_EQ(text.find("hint"), at + 2) << text;      // once: no hint before it
  EXPECT_EQ(at + hint.size(), text.size()) << text;  // the last line
  std::size_t failed_lines = 0;
  for (std::size_t p = text.find("  ✘ "); p != std::string::npos; p = text.find("  ✘ ", p + 1))
    ++failed_lines;
  EXPECT_EQ(failed_lines, r.checks.size()) << text;  // every check listed above it
  EXPECT_EQ(grade::report(r, grade::HintLevel::off).find("hint"), std::string::npos);
}

// The report at the teacher's hint level (grading.json's "hints", which the notebooks' check
// cells pass too): the same checks, values and first differences at every level; full shows the
// whole hint (a known mistake's explanation and fix, or the formula), brief the mistake's title
// or the hint's first sentence, off no hint at all.
TEST(GradeReport, HintLevelsFullBriefOff) {
  const grade::ExerciseResult r = grade::check_softmax(pitfalls::softmax_without_max);
  const std::string full = grade::report(r, grade::HintLevel::full);
  const std::string brief = grade::report(r, grade::HintLevel::brief);
  const std::string off = grade::report(r, grade::HintLevel::off);
  EXPECT_EQ(full, grade::report(r));  // full is the default
  std::ostringstream two_args;
  grade::print_report(two_args, r);
  EXPECT_EQ(two_args.str(), full);
  const std::string title = pitfalls::describe(Pitfall::softmax_without_max).title;
  const std::string masked_first =
      "zeros\": a row whose every entry is -inf has nothing to attend to: return a row of zeros "
      "for it (xencoder's convention; PyTorch gives NaN).";
  // full: the known mistake with its fix; the formula hint whole (its second sentence too)
  EXPECT_NE(full.find("\": this is a known mistake, " + title), std::string::npos) << full;
  EXPECT_NE(full.find("Fix: subtract the row maximum first"), std::string::npos) << full;
  EXPECT_NE(full.find(masked_first + " Computed blindly it is NaN"), std::string::npos) << full;
  // brief: the mistake's title only, and the first sentence of the formula hint
  EXPECT_NE(brief.find("  hint for \"edge case: large logits (stability)\": a known mistake: " +
                       title + ".\n"),
            std::string::npos)
      << brief;
  EXPECT_EQ(brief.find("Fix:"), std::string::npos) << brief;
  EXPECT_NE(brief.find(masked_first + "\n"), std::string::npos) << brief;
  EXPECT_EQ(brief.find("Computed blindly"), std::string::npos) << brief;
  // off: no hint line, nothing of either hint
  EXPECT_EQ(off.find("hint:"), std::string::npos) << off;
  EXPECT_EQ(off.find(title), std::string::npos) << off;
  EXPECT_EQ(off.find("nothing to attend to"), std::string::npos) << off;
  // every level keeps the values: only the hint lines differ
  for (const std::string* text : {&full, &brief, &off}) {
    EXPECT_EQ(text->rfind("✘ softmax: 6 of 8 checks passed\n", 0), 0u) << *text;
    EXPECT_NE(text->find("      first difference: y[0, 0]: expected 0.0900306, computed nan\n"),
              std::string::npos)
        << *text;
  }
  auto without_hints = [](const std::string& text) {
    std::istringstream in(text);
    std::string out;
    for (std::string line; std::getline(in, line);)
      if (line.find("  hint") != 0) out += line + "\n";
    return out;
  };
  EXPECT_EQ(without_hints(full), off);
  EXPECT_EQ(without_hints(brief), off);
  // a passing exercise reads the same at every level
  const auto passed = grade::check_merge_heads(assignment::merge_heads);
  EXPECT_EQ(grade::report(passed, grade::HintLevel::off), grade::report(passed));
}

// A hidden check that names a known mistake keeps that name at full and brief, and drops it at
// off; its values stay hidden at every level.
TEST(GradeReport, HintLevelsOfAFailedHiddenCheck) {
  const grade::ExerciseResult r = graded_with_a_failed_hidden_check();
  ASSERT_TRUE(r.checks.back().hidden);
  const std::string title = pitfalls::describe(Pitfall::online_softmax_acc_not_rescaled).title;
  const std::string hidden_line =
      "a hidden check (inputs drawn from the teacher's seed; not shown)\n";
  for (grade::HintLevel level :
       {grade::HintLevel::full, grade::HintLevel::brief, grade::HintLevel::off}) {
    const std::string text = grade::report(r, level);
    SCOPED_TRACE(grade::hint_level_name(level));
    const std::string block = text.substr(text.find(hidden_line));
    EXPECT_EQ(block.find("computed:"), std::string::npos) << block;
    EXPECT_EQ(block.find(title) != std::string::npos, level != grade::HintLevel::off) << block;
  }
  // its hint, after the list, is the known mistake's title (for the hidden check among others)
  const std::string brief = grade::report(r, grade::HintLevel::brief);
  const std::size_t hint = brief.find("\n  hint", brief.find(hidden_line));
  ASSERT_NE(hint, std::string::npos) << brief;
  const std::string line = brief.substr(hint + 1, brief.find('\n', hint + 1) - hint);
  EXPECT_NE(line.find("a known mistake: " + title + ".\n"), std::string::npos) << brief;
  if (line.rfind("  hint for ", 0) == 0)
    EXPECT_NE(line.find("\"" + r.checks.back().name + "\""), std::string::npos) << brief;
}

// A bad level is refused with a message, before anything is printed; names round-trip.
TEST(GradeReport, HintLevelErrors) {
  const grade::ExerciseResult r = grade::check_softmax(pitfalls::softmax_without_max);
  std::ostringstream os;
  const auto bad = static_cast<grade::HintLevel>(7);
  try {
    grade::print_report(os, r, bad);
    FAIL() << "print_report accepted hint level 7";
  } catch (const xenc::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("hint level 7 is not one of HintLevel::full (0), brief "
                                         "(1) or off (2)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(os.str().empty()) << os.str();
  EXPECT_THROW(grade::report(r, bad), xenc::config_error);
  EXPECT_THROW(grade::hint_text(r.checks.back(), bad), std::invalid_argument);
  for (const char* name : {"full", "brief", "off"})
    EXPECT_EQ(grade::hint_level_name(grade::parse_hint_level(name)), name);
  try {
    grade::parse_hint_level("Full");
    FAIL() << "parse_hint_level accepted \"Full\"";
  } catch (const xenc::config_error& e) {
    EXPECT_STREQ(e.what(),
                 "parse_hint_level: \"Full\" is not a hint level, expected \"full\", \"brief\" or "
                 "\"off\"");
  }
}

TEST(GradeReport, PassingExerciseAndSummary) {
  const auto r = grade::check_merge_heads(assignment::merge_heads);
  EXPECT_EQ(grade::report(r).rfind("✔ merge_heads: 5 of 5 checks passed\n", 0), 0u)
      << grade::report(r);
  std::ostringstream os;
  grade::print_summary(os, {r, grade::check_softmax(pitfalls::softmax_without_max)});
  EXPECT_EQ(os.str(),
            "✔ merge_heads  5 of 5 checks passed\n✘ softmax  6 of 8 checks passed\n"
            "1 of 2 exercises passed (11 of 13 checks)\n");
}

TEST(GradeRobustness, WrongShapeIsReportedNotACrash) {
  const auto r = grade::check_softmax([](const Tensor2& x) -> Tensor2 { return xt::transpose(x); });
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.checks[0].first_difference, "y: shape [3, 2], expected [2, 3]");
  // the invariant that measures the output also survives a wrong shape
  const auto pe = grade::check_sinusoidal_table(
      [](std::size_t, std::size_t) -> Tensor2 { return xt::zeros<float>({2, 3}); });
  EXPECT_EQ(pe.num_passed(), 0u);
}

TEST(GradeRobustness, ForeignExceptionsAreCaught) {
  const auto r = grade::check_softmax([](const Tensor2&) -> Tensor2 { throw 42; });
  EXPECT_EQ(r.num_passed(), 0u);
  EXPECT_EQ(r.checks[0].computed, "threw an exception that is not a std::exception");
  EXPECT_EQ(r.checks[0].hint,
            "your function threw on this input: fix the error above (a wrong index or shape?).");
}

TEST(GradeExercises, TheListMatchesTheChecks) {
  // each exercise's result carries its name and the signature from the list
  const auto& list = grade::exercises();
  ASSERT_EQ(list.size(), 16u);
  EXPECT_EQ(grade::check_attention(assignment::attention).signature, list[4].signature);
  EXPECT_EQ(grade::check_cross_entropy(assignment::cross_entropy).exercise, "cross_entropy");
}

// ---- test-writing exercises: the student's test against the correct function and the exhibits --

// The titles of the exhibits a test-writing exercise's result says were missed (its failed
// "catches: " checks), and the number caught.
std::vector<std::string> missed(const grade::ExerciseResult& r) {
  std::vector<std::string> titles;
  for (const grade::CheckResult& c : r.checks)
    if (c.name.rfind("catches: ", 0) == 0 && !c.passed) titles.push_back(c.name.substr(9));
  return titles;
}
std::string title(Pitfall p) { return pitfalls::describe(p).title; }

// A strong test (the reference solutions) catches every exhibit and accepts the correct function:
// the first check is the correct function's and does not count; one check per exhibit.
TEST(GradeTestExercises, AStrongTestCatchesEveryExhibit) {
  const grade::ExerciseResult sm = grade::check_test_softmax(assignment::test_softmax);
  ASSERT_EQ(sm.checks.size(), 3u);
  EXPECT_EQ(sm.checks[0].name, "the correct softmax passes your check");
  EXPECT_FALSE(sm.checks[0].scored);
  EXPECT_EQ(sm.checks[1].name, "catches: " + title(Pitfall::softmax_without_max));
  EXPECT_EQ(sm.checks[2].name, "catches: " + title(Pitfall::softmax_wrong_axis));
  EXPECT_EQ(sm.num_scored(), 2u);
  EXPECT_EQ(sm.num_scored_passed(), 2u);
  EXPECT_EQ(grade::test_score(sm),
            "score: 2 of 2 mistakes caught (100% of the points), none missed");
  EXPECT_NE(grade::report(sm).find("\n  score: 2 of 2 mistakes caught"), std::string::npos);
  // an exercise where the student writes the function has no such line
  EXPECT_EQ(grade::test_score(grade::check_softmax(assignment::softmax)), "");
  const grade::ExerciseResult ln =
      grade::check_test_layer_norm_forward(assignment::test_layer_norm_forward);
  EXPECT_EQ(ln.num_scored(), 3u);
  EXPECT_TRUE(AllPass(ln));
  const grade::ExerciseResult at = grade::check_test_attention(assignment::test_attention);
  EXPECT_EQ(at.num_scored(), 4u);
  EXPECT_TRUE(AllPass(at));
}

// A weak test catches some: only row sums (the wrong axis's columns sum to 1, not its rows) misses
// the overflow; layer norm on one row with eps = 0 misses eps outside the root; attention without
// a mask misses the mask's mistakes. The missed exhibits are named by title, not shown.
TEST(GradeTestExercises, AWeakTestCatchesSomeAndNamesTheMissed) {
  const grade::ExerciseResult sm = grade::check_test_softmax([](const grade::SoftmaxFn& f) {
    const Tensor2 y = f(Tensor2{{1, 2, 3}, {0, 5, 1}});
    for (std::size_t r = 0; r < 2; ++r)
      if (std::fabs(y(r, 0) + y(r, 1) + y(r, 2) - 1.0f) > 1e-5f) return false;
    return true;
  });
  EXPECT_TRUE(sm.checks[0].passed);
  EXPECT_EQ(sm.num_scored_passed(), 1u);
  EXPECT_EQ(missed(sm), std::vector<std::string>{title(Pitfall::softmax_without_max)});
  EXPECT_EQ(grade::test_score(sm), "score: 1 of 2 mistakes caught (50% of the points), missed: " +
                                       title(Pitfall::softmax_without_max));
  const grade::CheckResult& miss = sm.checks[1];
  EXPECT_EQ(miss.computed, "your check returned true: it missed this mistake");
  EXPECT_EQ(miss.hint, "the mistake: " + pitfalls::describe(Pitfall::softmax_without_max).mistake +
                           ". An input on which it differs from the correct softmax catches it.");
  EXPECT_TRUE(miss.known_mistake.empty()) << "the student did not make this mistake";
  // no exhibit's code in the report
  EXPECT_EQ(grade::report(sm).find("softmax_without_max"), std::string::npos);

  const grade::ExerciseResult ln =
      grade::check_test_layer_norm_forward([](const grade::LayerNormForwardFn& f) {
        // x = [1, 3]: mean 2, biased variance 1, so y = [-1, 1] with eps = 0
        const Tensor2 y = f(Tensor2{{1, 3}}, Tensor1{1, 1}, Tensor1{0, 0}, 0.0f);
        return std::fabs(y(0, 0) + 1) < 1e-5f && std::fabs(y(0, 1) - 1) < 1e-5f;
      });
  EXPECT_EQ(ln.num_scored_passed(), 2u);
  EXPECT_EQ(missed(ln), std::vector<std::string>{title(Pitfall::layer_norm_eps_outside_sqrt)});

  const grade::ExerciseResult at = grade::check_test_attention([](const grade::AttentionFn& f) {
    // one query, two keys, Dh = 4, no padding: scores [2, 0] / ..., P0 = e² / (e² + 1)
    Tensor4 q = xt::ones<float>({1, 1, 1, 4}), k = xt::zeros<float>({1, 1, 2, 4});
    for (std::size_t e = 0; e < 4; ++e) k(0, 0, 0, e) = 1;
    const xenc::AttentionResult a = f(q, k, k, xt::zeros<bool>({1, 2}));
    return std::fabs(a.weights(0, 0, 0, 0) - 0.880797078f) < 1e-5f;
  });
  EXPECT_EQ(at.num_scored_passed(), 3u);
  EXPECT_EQ(missed(at), std::vector<std::string>{title(Pitfall::mask_after_softmax)});
  EXPECT_EQ(grade::test_score(at), "score: 3 of 4 mistakes caught (75% of the points), missed: " +
                                       title(Pitfall::mask_after_softmax));
}

// An empty test (accepts everything) catches nothing; a test that rejects everything, the correct
// function included, scores 0 and says so; the stub is reported as the stub.
TEST(GradeTestExercises, AnEmptyTestCatchesNoneAndARejectingTestScoresZero) {
  const grade::ExerciseResult empty =
      grade::check_test_attention([](const grade::AttentionFn&) { return true; });
  EXPECT_TRUE(empty.checks[0].passed);
  EXPECT_EQ(empty.num_scored_passed(), 0u);
  EXPECT_EQ(missed(empty).size(), 4u);

  const grade::ExerciseResult no = grade::check_test_softmax([](const grade::SoftmaxFn& f) {
    f(Tensor2{{1, 2}});
    return false;
  });
  EXPECT_FALSE(no.checks[0].passed);
  EXPECT_EQ(no.checks[0].computed, "your check returned false");
  EXPECT_EQ(no.num_scored_passed(), 0u);
  EXPECT_EQ(no.checks[1].computed,
            "not counted: your check does not accept the correct softmax (your check returned "
            "false)");
  EXPECT_NE(no.checks[0].hint.find("catches nothing"), std::string::npos) << no.checks[0].hint;
  EXPECT_EQ(grade::test_score(no),
            "score: 0 of 2 mistakes caught (none counts until your check "
            "accepts the correct function)");

  const grade::ExerciseResult stub =
      grade::check_test_layer_norm_forward([](const grade::LayerNormForwardFn&) -> bool {
        throw std::logic_error("test_layer_norm_forward: not implemented");
      });
  EXPECT_TRUE(stub.still_stub());
  EXPECT_EQ(stub.checks[0].computed,
            "your check threw an exception: test_layer_norm_forward: not implemented");
}

// The function under test refuses inputs it cannot compute, the same way whichever candidate it
// is: a test that only sends such inputs sees the same exception every time and catches nothing.
TEST(GradeTestExercises, BadInputsThrowTheSameForEveryCandidate) {
  // the check records what it saw, so it runs in this process (isolation off), not in a child
  grade::set_check_isolation({false, 10.0, 2048});
  struct Restore {
    ~Restore() { grade::set_check_isolation(grade::CheckIsolation{}); }
  } restore;
  std::vector<std::string> seen;
  const grade::ExerciseResult r = grade::check_test_attention([&](const grade::AttentionFn& f) {
    try {
      f(xt::ones<float>({1, 1, 1, 4}), xt::ones<float>({1, 1, 2, 4}), xt::ones<float>({1, 1, 3, 4}),
        xt::zeros<bool>({1, 2}));
    } catch (const std::invalid_argument& e) {
      seen.push_back(e.what());
    }
    return true;
  });
  ASSERT_EQ(seen.size(), 5u);
  for (const std::string& s : seen)
    EXPECT_EQ(s, "attention: v has the shape [1, 1, 3, 4], expected [1, 1, 2, 4]");
  EXPECT_EQ(r.num_scored_passed(), 0u);
  std::string big;
  grade::check_test_softmax([&big](const grade::SoftmaxFn& f) {
    try {
      f(xt::zeros<float>({2048, 1024}));
    } catch (const std::length_error& e) {
      big = e.what();
    }
    return true;
  });
  EXPECT_EQ(big, "softmax: x has 2097152 values, more than the grader computes (1048576)");
}

// ---- conventions: one answer per question -------------------------------------------------------

// RoPE in float32 as PyTorch computes it (θ_i = 1 / 10000^(2i/Dh) in float, the angle p · θ_i in
// float, then cos and sin in float): correct, and accepted at every position the grader tries.
TEST(GradeConventions, AFloat32RopeAsPyTorchComputesItPasses) {
  const auto r = grade::check_rope([](const Tensor2& x, const std::vector<std::size_t>& positions) {
    const std::size_t T = x.shape()[0], Dh = x.shape()[1];
    if (Dh == 0 || Dh % 2) throw xenc::config_error("rope: odd Dh");
    Tensor2 y = x;
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t i = 0; i < Dh / 2; ++i) {
        const float theta = 1.0f / std::pow(10000.0f, float(2 * i) / float(Dh));
        const float a = float(positions[t]) * theta;
        const float c = std::cos(a), s = std::sin(a);
        y(t, 2 * i) = x(t, 2 * i) * c - x(t, 2 * i + 1) * s;
        y(t, 2 * i + 1) = x(t, 2 * i) * s + x(t, 2 * i + 1) * c;
      }
    return y;
  });
  EXPECT_TRUE(AllPass(r));
}

// A one-pass float variance, var = E[x²] - E[x]², passes on inputs near 0 and is caught by the
// large-mean check (rows around 1000).
TEST(GradeConventions, AOnePassFloatLayerNormFailsTheLargeMeanCheck) {
  const auto r = grade::check_layer_norm_forward(
      [](const Tensor2& x, const Tensor1& w, const Tensor1& b, float eps) {
        const std::size_t N = x.shape()[0], D = x.shape()[1];
        Tensor2 y = x;
        for (std::size_t n = 0; n < N; ++n) {
          float s = 0, s2 = 0;
          for (std::size_t d = 0; d < D; ++d) s += x(n, d), s2 += x(n, d) * x(n, d);
          const float mean = s / float(D), var = s2 / float(D) - mean * mean;
          for (std::size_t d = 0; d < D; ++d)
            y(n, d) = (x(n, d) - mean) / std::sqrt(var + eps) * w(d) + b(d);
        }
        return y;
      });
  EXPECT_TRUE(Passed(r, "hand example"));
  EXPECT_TRUE(Passed(r, "reference values"));
  EXPECT_FALSE(Passed(r, "edge case: a large mean"));
}

// Every target ignored: NaN loss (0/0, as PyTorch) and a zero gradient is the right answer.
TEST(GradeConventions, EveryTargetIgnoredExpectsNaN) {
  const auto r = grade::check_cross_entropy(assignment::cross_entropy);
  EXPECT_TRUE(Passed(r, "edge case: every row ignored"));
  const auto zero =
      grade::check_cross_entropy([](const Tensor2& z, const xenc::Index1& t, std::int64_t ignore) {
        grade::CrossEntropyOutput o = assignment::cross_entropy(z, t, ignore);
        if (std::isnan(o.loss)) o.loss = 0.0f;  // the other convention: 0 when nothing counts
        return o;
      });
  EXPECT_FALSE(Passed(zero, "edge case: every row ignored"));
}

// ---- hidden checks ------------------------------------------------------------------------------

TEST(GradeHidden, ASeedAddsHiddenChecksThatKeepNoInput) {
  grade::set_hidden_seed(std::nullopt);
  const std::size_t visible = grade::check_softmax(assignment::softmax).checks.size();
  grade::set_hidden_seed(7);
  const auto r = grade::check_softmax(assignment::softmax);
  const auto a = grade::check_attention(assignment::attention);
  const auto wrong = grade::check_merge_heads(pitfalls::merge_heads_without_transpose);
  grade::set_hidden_seed(std::nullopt);
  ASSERT_EQ(r.checks.size(), visible + 1);
  EXPECT_TRUE(r.checks.back().hidden);
  EXPECT_TRUE(r.checks.back().input.empty());
  EXPECT_TRUE(AllPass(r));
  EXPECT_TRUE(AllPass(a));
  // the hidden check of a wrong answer fails, and still names the known mistake
  ASSERT_TRUE(wrong.checks.back().hidden);
  EXPECT_FALSE(wrong.checks.back().passed);
  EXPECT_EQ(wrong.checks.back().known_mistake,
            pitfalls::describe(Pitfall::merge_heads_without_transpose).title);
}

// Every registered exercise graded on its reference solution, by name.
const std::vector<std::pair<std::string, std::function<grade::ExerciseResult()>>>&
solutions_by_name() {
  // one entry per exercise, from the list generated out of the exercises' files
#define XENC_SOLUTION(name) {#name, [] { return grade::check_##name(assignment::name); }},
  static const std::vector<std::pair<std::string, std::function<grade::ExerciseResult()>>> all = {
      XENC_GRADE_EXERCISES(XENC_SOLUTION)};
#undef XENC_SOLUTION
  return all;
}

// The brief hint level shows a hint's first sentence: a period ends it only when a space follows,
// outside brackets and code, and not in a range's ".." or after an abbreviation.
TEST(GradeReport, FirstSentenceIsNotCutInsideARangeOrAbbreviation) {
  EXPECT_EQ(grade::first_sentence("Add the bias. Then the softmax."), "Add the bias.");
  EXPECT_EQ(grade::first_sentence("head h takes columns h·Dh .. h·Dh + Dh - 1 of x. Then more."),
            "head h takes columns h·Dh .. h·Dh + Dh - 1 of x.");
  EXPECT_EQ(grade::first_sentence("rows 0 ... T-1 count. Rest."), "rows 0 ... T-1 count.");
  EXPECT_EQ(grade::first_sentence("use the max (e.g. of a row. Or not) here. Rest."),
            "use the max (e.g. of a row. Or not) here.");
  EXPECT_EQ(grade::first_sentence("scale it, e.g. by 2. Rest."), "scale it, e.g. by 2.");
  EXPECT_EQ(grade::first_sentence("write `x. y` there. Rest."), "write `x. y` there.");
  EXPECT_EQ(grade::first_sentence("no period at the end"), "no period at the end");
  EXPECT_EQ(grade::first_sentence("ends with 0.5."), "ends with 0.5.");
}

// Garbage output (NaN where a finite value is expected, on finite inputs) has its own hint, first:
// not the check's formula or masked-row hint; a check whose input holds -inf keeps its own.
TEST(GradeReport, GarbageOutputHasItsOwnHint) {
  const grade::ExerciseResult r = grade::check_softmax([](const Tensor2& x) {
    Tensor2 y = x;
    for (float& v : y) v = std::numeric_limits<float>::quiet_NaN();
    return y;
  });
  const std::string garbage =
      "your output holds nan (in y) where a finite value is expected, and every input here is "
      "finite: a 0/0, an exp that overflows, or an entry never written.";
  std::size_t with_garbage = 0;
  for (const grade::CheckResult& c : r.checks) {
    SCOPED_TRACE(c.name);
    if (c.name.rfind("hand example", 0) == 0 || c.name.rfind("reference values", 0) == 0 ||
        c.name.rfind("edge case: one column", 0) == 0) {
      EXPECT_EQ(c.hint.rfind(garbage + " ", 0), 0u) << c.hint;
      EXPECT_EQ(grade::hint_text(c, grade::HintLevel::brief), garbage);
      ++with_garbage;
    }
    // -inf in the input: a NaN there is the masked row's own mistake
    if (c.name.rfind("edge case: a fully masked row", 0) == 0)
      EXPECT_EQ(c.hint.rfind("a row whose every entry is -inf has nothing to attend to", 0), 0u)
          << c.hint;
  }
  EXPECT_EQ(with_garbage, 3u);
}

// Whether a text is a whole first sentence: a prefix of the hint that ends with a period, its
// brackets and code quotes closed, not inside a range or after an abbreviation.
::testing::AssertionResult WholeSentence(const std::string& hint) {
  const std::string brief = grade::first_sentence(hint);
  if (brief.empty() || hint.compare(0, brief.size(), brief) != 0)
    return ::testing::AssertionFailure() << "'" << brief << "' does not start '" << hint << "'";
  if (brief == hint) return ::testing::AssertionSuccess();
  int round = 0, square = 0, ticks = 0;
  for (char ch : brief)
    round += (ch == '(') - (ch == ')'), square += (ch == '[') - (ch == ']'), ticks += ch == '`';
  const bool range = brief.size() >= 2 && brief[brief.size() - 2] == '.';
  const std::string tail = brief.substr(brief.size() >= 5 ? brief.size() - 5 : 0);
  const bool abbreviation = tail == " e.g." || tail == " i.e." || tail.find(" cf.") == 1;
  if (brief.back() != '.' || round != 0 || square != 0 || ticks % 2 != 0 || range || abbreviation ||
      hint[brief.size()] != ' ')
    return ::testing::AssertionFailure() << "cut: '" << brief << "' of '" << hint << "'";
  return ::testing::AssertionSuccess();
}

// Every hint of every check (graded on the solutions, with the hidden checks) and every exhibit's
// text: the brief level never cuts one mid-sentence.
TEST(GradeReport, NoHintIsCutMidSentence) {
  grade::set_hidden_seed(20261127);
  std::size_t hints = 0;
  for (const auto& [name, check] : solutions_by_name())
    for (const grade::CheckResult& c : check().checks) {
      EXPECT_FALSE(c.hint.empty()) << name << ": " << c.name;
      EXPECT_TRUE(WholeSentence(c.hint)) << name << ": " << c.name;
      ++hints;
    }
  grade::set_hidden_seed(std::nullopt);
  EXPECT_GT(hints, 100u);
  for (Pitfall p : pitfalls::all_pitfalls()) {
    const pitfalls::PitfallInfo& info = pitfalls::describe(p);
    for (const std::string* text : {&info.title, &info.mistake, &info.fix})
      EXPECT_TRUE(WholeSentence(*text)) << info.title;
  }
  // the split-heads hint that ".." cut before: its first sentence keeps the whole range
  std::size_t ranges = 0;
  for (const grade::CheckResult& c : grade::check_split_heads(assignment::split_heads).checks)
    if (c.hint.find("head h takes columns h·Dh .. ") != std::string::npos) {
      ++ranges;
      EXPECT_NE(grade::first_sentence(c.hint).find("h·Dh .. h·Dh + Dh - 1 of every"),
                std::string::npos)
          << grade::first_sentence(c.hint);
    }
  EXPECT_GT(ranges, 0u);
}

// An exercise's file is its one source: the registry's entry, signature::<name> and the template's
// declaration all come from its `// @` lines (the template's exercises.hpp is generated from them).
TEST(GradeExercises, TheRegistryAndSignaturesComeFromTheExerciseFile) {
  static_assert(std::is_same_v<grade::signature::softmax, xenc::Tensor2(const xenc::Tensor2&)>);
  static_assert(std::is_same_v<grade::SoftmaxFn, std::function<grade::signature::softmax>>);
  static_assert(std::is_same_v<decltype(&assignment::softmax), grade::signature::softmax*>);
  static_assert(std::is_same_v<decltype(&assignment::online_softmax_tile),
                               grade::signature::online_softmax_tile*>);
  const grade::ExerciseInfo* e = grade::find_exercise("layer_norm_backward");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->signature,
            "LayerNormGrads<2> layer_norm_backward(const Tensor2& grad_y, const Tensor2& x, const "
            "Tensor1& weight, float eps)");
  EXPECT_EQ(e->order, 3);
  EXPECT_EQ(e->points, 1.0);
  EXPECT_EQ(e->doc.rfind("Layer norm backward, given dy = dL/dy of the forward above:\n", 0), 0u)
      << e->doc;
  // the list of names, in teaching order, is the registry's
  std::vector<std::string> listed, registered;
#define XENC_NAME(name) listed.push_back(#name);
  XENC_GRADE_EXERCISES(XENC_NAME)
#undef XENC_NAME
  for (const grade::ExerciseInfo& x : grade::exercises()) registered.push_back(x.name);
  EXPECT_EQ(listed, registered);
}

// Every check is a named case: its name starts with its kind (finite differences: a gradient
// check of a backward exercise).
TEST(GradeExercises, EveryCheckIsANamedCase) {
  // (a test-writing exercise's checks: its run on the correct function, then one per exhibit)
  const std::vector<std::string> kinds = {"hand example", "reference values",   "invariant",
                                          "edge case",    "finite differences", "hidden",
                                          "the correct ", "catches: "};
  grade::set_hidden_seed(20261127);
  for (const auto& [name, check] : solutions_by_name())
    for (const grade::CheckResult& c : check().checks) {
      bool named = false;
      for (const std::string& k : kinds) named = named || c.name.rfind(k, 0) == 0;
      EXPECT_TRUE(named) << name << ": " << c.name;
    }
  grade::set_hidden_seed(std::nullopt);
}

// The hidden checks of one exercise under a seed (the seed is reset afterwards).
std::vector<grade::CheckResult> hidden_checks(const std::function<grade::ExerciseResult()>& check,
                                              std::optional<std::uint64_t> seed) {
  grade::set_hidden_seed(seed);
  const grade::ExerciseResult r = check();
  grade::set_hidden_seed(std::nullopt);
  std::vector<grade::CheckResult> hidden;
  for (const grade::CheckResult& c : r.checks)
    if (c.hidden) hidden.push_back(c);
  return hidden;
}

// Every exercise of the registry has hidden checks: none without a seed; with one, each passes on
// the solution and keeps no input; the same seed draws the same inputs (so the same expected
// values), another seed other inputs.
TEST(GradeHidden, EveryExerciseHasHiddenChecksDrawnFromTheSeed) {
  std::vector<std::string> names;
  for (const auto& [name, check] : solutions_by_name()) names.push_back(name);
  std::vector<std::string> registered;
  for (const grade::ExerciseInfo& e : grade::exercises()) registered.push_back(e.name);
  EXPECT_EQ(names, registered) << "solutions_by_name() must list every registered exercise";
  for (const auto& [name, check] : solutions_by_name()) {
    SCOPED_TRACE(name);
    // a test-writing exercise has no inputs of its own to hide: the student's test picks them
    if (!grade::find_exercise(name)->tests.empty()) {
      EXPECT_TRUE(hidden_checks(check, 20261124).empty());
      continue;
    }
    EXPECT_TRUE(hidden_checks(check, std::nullopt).empty());
    const auto a = hidden_checks(check, 20261124), again = hidden_checks(check, 20261124),
               other = hidden_checks(check, 7);
    ASSERT_FALSE(a.empty());
    ASSERT_EQ(a.size(), again.size());
    ASSERT_EQ(a.size(), other.size());
    bool differs = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_TRUE(a[i].passed) << a[i].name << ": " << a[i].first_difference;
      EXPECT_TRUE(a[i].input.empty()) << a[i].input;
      EXPECT_EQ(a[i].expected, again[i].expected);
      differs = differs || a[i].expected != other[i].expected;
    }
    EXPECT_TRUE(differs) << "seeds 20261124 and 7 gave the same hidden inputs";
  }
}

// A failed hidden check prints no input and no values in the student's report (print_report, as
// the notebooks and a child started by hand show it), only that it failed and the known mistake.
TEST(GradeHidden, AFailedHiddenCheckPrintsNoValues) {
  const grade::ExerciseResult r = graded_with_a_failed_hidden_check();
  ASSERT_TRUE(r.checks.back().hidden);
  ASSERT_FALSE(r.checks.back().passed);
  const std::string text = grade::report(r);
  const std::size_t at = text.find("✘ hidden: reference values on the teacher's inputs\n");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string block = text.substr(at);
  EXPECT_EQ(block.find("input:"), std::string::npos) << block;
  EXPECT_EQ(block.find("expected:"), std::string::npos) << block;
  EXPECT_EQ(block.find("computed:"), std::string::npos) << block;
  EXPECT_NE(block.find("a hidden check (inputs drawn from the teacher's seed; not shown)"),
            std::string::npos);
  EXPECT_NE(block.find(pitfalls::describe(Pitfall::online_softmax_acc_not_rescaled).title),
            std::string::npos)
      << block;
}

// The oracle's online softmax, by hand: the notebook-09 hand example (NumPy gives the same
// numbers), and tiles that add up to the plain softmax.
TEST(GradeOnlineSoftmax, TheOracleUpdateByHand) {
  namespace ref = xenc::reference;
  ref::OnlineSoftmaxState st{ref::Tensor1d{0.0}, ref::Tensor1d{1.0}, ref::Tensor2d{{1.0, 0.0}}};
  const ref::OnlineSoftmaxState next =
      ref::online_softmax_tile(st, ref::Tensor2d{{2.0, 1.0}}, ref::Tensor2d{{0, 1}, {1, 1}});
  EXPECT_DOUBLE_EQ(next.m(0), 2.0);
  EXPECT_NEAR(next.l(0), 1.503214724408055, 1e-12);
  EXPECT_NEAR(next.acc(0, 0), 0.5032147244080551, 1e-12);
  EXPECT_NEAR(next.acc(0, 1), 1.3678794411714423, 1e-12);
  // a masked tile on a row that saw nothing: still m = -inf, l = 0, acc = 0 (no NaN)
  const double inf = std::numeric_limits<double>::infinity();
  ref::OnlineSoftmaxState empty{ref::Tensor1d{-inf}, ref::Tensor1d{0.0}, ref::Tensor2d{{0.0}}};
  const ref::OnlineSoftmaxState still =
      ref::online_softmax_tile(empty, ref::Tensor2d{{-inf, -inf}}, ref::Tensor2d{{1}, {2}});
  EXPECT_EQ(still.m(0), -inf);
  EXPECT_EQ(still.l(0), 0.0);
  EXPECT_EQ(still.acc(0, 0), 0.0);
  EXPECT_THROW(ref::online_softmax_tile(empty, ref::Tensor2d{{0.0, 1.0}}, ref::Tensor2d{{1}}),
               xenc::shape_error);
}

}  // namespace

// ---- checks run in the caller's process: the student's function in a forked child ----------
// (set_check_isolation, xenc/grade/exercises.hpp; a notebook's check cell works this way): a
// crash, an abort, a division by zero, a hang, an exit() or a memory blow-up in the student's
// function costs only that check, with the sandbox's sentence, and this process lives on.

// Under AddressSanitizer (test.sh --sanitize), an allocation over the address-space limit returns
// null (and new throws std::bad_alloc, as without it) instead of ending the process, and SIGSEGV
// and SIGFPE keep their default action: the checks below read the same in both builds. (Unused in
// a build without it.)
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:handle_segv=0:handle_sigfpe=0";
}

namespace {

// Restores the default isolation when a test ends.
struct IsolationScope {
  explicit IsolationScope(const grade::CheckIsolation& i) { grade::set_check_isolation(i); }
  ~IsolationScope() { grade::set_check_isolation(grade::CheckIsolation{}); }
};

// The correct softmax, except on inputs whose first value is exactly 1 (the hand example's
// first row is [1, 2, 3]): there it does `bad`.
template <class Bad>
grade::ExerciseResult softmax_failing_on_the_hand_example(Bad bad) {
  return grade::check_softmax([bad](const Tensor2& x) -> Tensor2 {
    if (x.size() > 0 && x(0, 0) == 1.0f) bad();
    return assignment::softmax(x);
  });
}

const grade::CheckResult& hand_example(const grade::ExerciseResult& r) {
  for (const grade::CheckResult& c : r.checks)
    if (c.name.find("hand example") != std::string::npos) return c;
  throw std::logic_error("hand_example: no check named 'hand example' in " + r.exercise);
}

// Every other check passes: only the check whose input crashed the child failed.
void expect_only_the_hand_example_failed(const grade::ExerciseResult& r) {
  std::size_t failed = 0;
  for (const grade::CheckResult& c : r.checks) failed += c.passed ? 0 : 1;
  EXPECT_EQ(failed, 1u);
  EXPECT_FALSE(hand_example(r).passed);
  EXPECT_NE(hand_example(r).hint.find("ran in a process of its own"), std::string::npos)
      << hand_example(r).hint;
}

}  // namespace

TEST(CheckIsolation, ASegfaultCostsOnlyItsCheck) {
  // (the signal a wild write gets; raised, so that UBSan's null check does not end it first)
  const auto r = softmax_failing_on_the_hand_example([] { std::raise(SIGSEGV); });
  EXPECT_EQ(hand_example(r).computed,
            "crashed with SIGSEGV (segmentation fault: a read or write outside the memory of a "
            "tensor?)");
  expect_only_the_hand_example_failed(r);
}

// A test-writing exercise's check (check_test_softmax, a notebook's check cell) runs the
// student's check in a forked child too: one that aborts on a candidate gives no verdict there,
// and this process lives on. Here it aborts on the correct softmax only (whose hand-example rows
// sum to 1; the wrong axis's do not), so nothing counts: no verdict is no acceptance.
TEST(CheckIsolation, AStudentsCheckThatAbortsGivesNoVerdict) {
  const grade::ExerciseResult r = grade::check_test_softmax([](const grade::SoftmaxFn& f) {
    const Tensor2 y = f(Tensor2{{1, 2, 3}, {1, 2, 3}});
    if (std::fabs(y(0, 0) + y(0, 1) + y(0, 2) - 1.0f) < 1e-5f) std::abort();
    return false;
  });
  ASSERT_EQ(r.checks.size(), 3u);
  EXPECT_FALSE(r.checks[0].passed);
  EXPECT_EQ(r.checks[0].computed.rfind("no verdict: your program crashed with SIGABRT", 0), 0u)
      << r.checks[0].computed;
  EXPECT_EQ(r.num_scored_passed(), 0u);
}

TEST(CheckIsolation, AnAbortAndASigfpeCostOnlyTheirCheck) {
  const auto a = softmax_failing_on_the_hand_example([] { std::abort(); });
  EXPECT_EQ(hand_example(a).computed,
            "crashed with SIGABRT (abort: an assert, std::terminate or an uncaught exception)");
  expect_only_the_hand_example_failed(a);
  // (the signal an integer division by zero gets; raised, as UBSan would report the division)
  const auto d = softmax_failing_on_the_hand_example([] { std::raise(SIGFPE); });
  EXPECT_EQ(hand_example(d).computed,
            "crashed with SIGFPE (arithmetic exception: an integer division by zero?)");
  expect_only_the_hand_example_failed(d);
}

TEST(CheckIsolation, AHangIsKilledAtTheTimeLimit) {
  const IsolationScope scope({true, 0.5, 2048});
  const auto r = softmax_failing_on_the_hand_example([] {
    for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
  EXPECT_EQ(hand_example(r).computed,
            "exceeded the time limit of 0.5 s (an infinite loop?) and was killed");
  expect_only_the_hand_example_failed(r);
}

TEST(CheckIsolation, ExitAndAMemoryBlowUpAreNamed) {
  const auto e = softmax_failing_on_the_hand_example([] { std::exit(0); });
  // (code 0; under the sanitizers LeakSanitizer's check at exit makes it 1)
  EXPECT_EQ(hand_example(e).computed.rfind("ended with code ", 0), 0u) << hand_example(e).computed;
  EXPECT_NE(hand_example(e).computed.find(
                " before answering every call (did the code call exit() or std::quick_exit?)"),
            std::string::npos)
      << hand_example(e).computed;
  expect_only_the_hand_example_failed(e);
  const IsolationScope scope({true, 10.0, 64});
  const auto m = softmax_failing_on_the_hand_example([] {
    std::vector<std::vector<char>> hog;
    for (;;) hog.emplace_back(std::size_t(16) << 20, 'x');
  });
  // std::bad_alloc thrown in the child comes back as the student's exception (under
  // AddressSanitizer its own allocator runs out of memory first and ends the child: the check
  // still fails alone)
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_FALSE(hand_example(m).computed.empty());
#else
  EXPECT_EQ(hand_example(m).computed, "threw an exception: std::bad_alloc");
#endif
  std::size_t failed = 0;
  for (const grade::CheckResult& c : m.checks) failed += c.passed ? 0 : 1;
  EXPECT_EQ(failed, 1u);
}

TEST(CheckIsolation, ExceptionsComeBackWithTheirKindAndOffRunsHere) {
  // split_heads' "D not divisible" check wants a std::invalid_argument: the kind survives the child
  EXPECT_TRUE(AllPass(grade::check_split_heads(assignment::split_heads)));
  // off: the function runs in this process (its side effect is seen here)
  int calls = 0;
  {
    const IsolationScope scope({false, 10.0, 2048});
    grade::check_softmax([&calls](const Tensor2& x) -> Tensor2 {
      ++calls;
      return assignment::softmax(x);
    });
  }
  EXPECT_GT(calls, 0);
  // on (the default): in a child, so this process's counter is untouched
  int child_calls = 0;
  grade::check_softmax([&child_calls](const Tensor2& x) -> Tensor2 {
    ++child_calls;
    return assignment::softmax(x);
  });
  EXPECT_EQ(child_calls, 0);
}

TEST(CheckIsolation, LimitsOutOfRangeAreRefusedByName) {
  try {
    grade::set_check_isolation({true, 0.0, 2048});
    FAIL() << "a zero time limit was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("set_check_isolation: time_seconds is 0"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(grade::set_check_isolation({true, 1.0, 1}), std::invalid_argument);
  EXPECT_TRUE(grade::check_isolation().on);
  EXPECT_EQ(grade::check_isolation().time_seconds, 10.0);
}

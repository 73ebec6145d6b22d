// kernels::gemm_portable, the GEMM of builds without BLAS (WebAssembly): against the formula in
// double precision and against OpenBLAS's sgemm (kernels::gemm), for every transpose, strided
// views, alpha and beta, sizes that cross the panel edges (128 rows, 256 columns of op(B)), an
// empty inner dimension, and beta = 0 over a C holding NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/kernels.hpp"
#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/random.hpp"

using namespace xenc;
using namespace xenc::test;
namespace k = xenc::kernels;

namespace {
using Shape2 = std::array<std::size_t, 2>;

struct Case {
  std::size_t M, N, K;
};

// C = alpha · op(A) · op(B) + beta · C, summed in double: the formula.
Tensor2 formula(const Tensor2& A, bool ta, const Tensor2& B, bool tb, const Tensor2& C, Case s,
                double alpha, double beta) {
  Tensor2 out = C;
  for (std::size_t i = 0; i < s.M; ++i)
    for (std::size_t j = 0; j < s.N; ++j) {
      double sum = 0.0;
      for (std::size_t q = 0; q < s.K; ++q)
        sum += double(ta ? A(q, i) : A(i, q)) * double(tb ? B(j, q) : B(q, j));
      out(i, j) = float(alpha * sum + (beta == 0.0 ? 0.0 : beta * C(i, j)));
    }
  return out;
}
}  // namespace

class GemmPortable : public ::testing::TestWithParam<Case> {};

TEST_P(GemmPortable, MatchesTheFormulaAndSgemm) {
  const Case s = GetParam();
  Rng rng(11);
  const std::size_t pad = 3;  // every view sits in a wider buffer: stride = width + 3
  for (k::Op op_a : {k::Op::none, k::Op::transpose})
    for (k::Op op_b : {k::Op::none, k::Op::transpose}) {
      const bool ta = op_a == k::Op::transpose, tb = op_b == k::Op::transpose;
      SCOPED_TRACE(::testing::Message() << "M " << s.M << " N " << s.N << " K " << s.K
                                        << ", trans_a " << ta << ", trans_b " << tb);
      const std::size_t ar = ta ? s.K : s.M, ac = ta ? s.M : s.K;
      const std::size_t br = tb ? s.N : s.K, bc = tb ? s.K : s.N;
      auto A = random_tensor<Tensor2>(Shape2{ar, ac + pad}, rng);
      auto B = random_tensor<Tensor2>(Shape2{br, bc + pad}, rng);
      auto C = random_tensor<Tensor2>(Shape2{s.M, s.N + pad}, rng);
      const Tensor2 expected = formula(A, ta, B, tb, C, s, 0.5, 2.0);
      Tensor2 portable = C, blas = C;
      const k::ConstMatView a = k::as_matrix(A).block(0, 0, ar, ac);
      const k::ConstMatView b = k::as_matrix(B).block(0, 0, br, bc);
      k::gemm_portable(a, op_a, b, op_b, k::as_matrix(portable).block(0, 0, s.M, s.N), 0.5f, 2.0f);
      k::gemm(a, op_a, b, op_b, k::as_matrix(blas).block(0, 0, s.M, s.N), 0.5f, 2.0f);
      // the padding columns of C are untouched, the block is the formula
      EXPECT_TRUE(AllClose(portable, expected, kNaiveAtol, kNaiveRtol));
      EXPECT_TRUE(AllClose(portable, blas, kNaiveAtol, kNaiveRtol));
    }
}

INSTANTIATE_TEST_SUITE_P(Sizes, GemmPortable,
                         ::testing::Values(Case{1, 1, 1}, Case{3, 4, 5}, Case{7, 300, 130},
                                           Case{65, 257, 129}, Case{2, 513, 300}));

// beta = 0 overwrites C, NaN included (as BLAS does); K = 0 leaves beta · C.
TEST(GemmPortableEdges, BetaZeroOverwritesNaNAndEmptyInnerDimension) {
  Tensor2 a = {{1, 2}}, b = {{3}, {4}};
  Tensor2 c = {{std::numeric_limits<float>::quiet_NaN()}};
  k::gemm_portable(k::as_matrix(a), k::Op::none, k::as_matrix(b), k::Op::none, k::as_matrix(c));
  EXPECT_EQ(c(0, 0), 11.0f);  // 1·3 + 2·4
  Tensor2 e = Tensor2::from_shape({2, 0}), f = Tensor2::from_shape({0, 3});
  Tensor2 g = {{1, 2, 3}, {4, 5, 6}};
  k::gemm_portable(k::as_matrix(e), k::Op::none, k::as_matrix(f), k::Op::none, k::as_matrix(g),
                   1.0f, 0.5f);
  EXPECT_TRUE(AllClose(g, Tensor2{{0.5, 1, 1.5}, {2, 2.5, 3}}, 0.0, 0.0));
}

TEST(GemmPortableEdges, MismatchedViewsAreALogicError) {
  Tensor2 a = xt::zeros<float>({2, 3}), b = xt::zeros<float>({4, 5}), c = xt::zeros<float>({2, 5});
  EXPECT_THROW(
      k::gemm_portable(k::as_matrix(a), k::Op::none, k::as_matrix(b), k::Op::none, k::as_matrix(c)),
      std::logic_error);
}

// Sinusoidal positional encoding: values, the shift rotation R_k, relative dot products.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <xtensor/xview.hpp>

#include "support/allclose.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/ops/gemm.hpp"
#include "xenc/ops/positional.hpp"

using namespace xenc;
using namespace xenc::test;

namespace {
Tensor1 row(const Tensor2& t, std::size_t i) { return xt::view(t, i, xt::all()); }
// R · v for a [D, D] matrix and a [D] vector, in double
std::vector<double> mat_vec(const Tensor2& r, const Tensor1& v) {
  std::vector<double> out(v.size(), 0.0);
  for (std::size_t i = 0; i < v.size(); ++i)
    for (std::size_t j = 0; j < v.size(); ++j) out[i] += double(r(i, j)) * v(j);
  return out;
}
double dot(const Tensor1& a, const Tensor1& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += double(a(i)) * b(i);
  return s;
}
}  // namespace

// D = 4, p = 1: ω_0 = 10000^0 = 1, ω_1 = 10000^(-2/4) = 0.01.
// PE(1) = [sin 1, cos 1, sin 0.01, cos 0.01] = [0.84147098, 0.54030231, 0.00999983, 0.99995000]
TEST(Positional, HandExample) {
  const Tensor2 pe = sinusoidal_encoding(2, 4);
  EXPECT_TRUE(AllClose(row(pe, 0), Tensor1{0, 1, 0, 1}, 0.0, 0.0));
  EXPECT_TRUE(AllClose(row(pe, 1), Tensor1{0.84147098f, 0.54030231f, 0.00999983f, 0.99995000f},
                       kFloatRound, 0.0));
  EXPECT_NEAR(sinusoidal_value(1.0, 3, 4), 0.99995000, kPrinted8);
  EXPECT_TRUE(AllClose(sinusoidal_frequencies(4), Tensor1{1.0f, 0.01f}, 0.0, kFloatRound));
}

// PE(1, 0..5) for D = 128: sin(1), cos(1), sin(w1), cos(w1), sin(w2), cos(w2) with
// w_i = 10000^(-2i/D), evaluated from the formula independently of our code and of the articles.
TEST(Positional, IssueValuesForD128) {
  const Tensor2 pe = sinusoidal_encoding(2, 128);
  const Tensor1 expected = {0.84147098f, 0.54030231f, 0.76172041f,
                            0.64790587f, 0.68156135f, 0.73176098f};
  EXPECT_TRUE(AllClose(Tensor1(xt::view(pe, 1, xt::range(0, 6))), expected, kFloatRound, 0.0));
}

TEST(Positional, IssueTableForD6) {
  const Tensor2 pe = sinusoidal_encoding(10, 6);
  EXPECT_TRUE(AllClose(row(pe, 1), Tensor1{0.8415f, 0.5403f, 0.0464f, 0.9989f, 0.0022f, 1.0000f},
                       kPrinted4, 0.0));
  EXPECT_TRUE(AllClose(row(pe, 9), Tensor1{0.4121f, -0.9111f, 0.4057f, 0.9140f, 0.0194f, 0.9998f},
                       kPrinted4, 0.0));
  // and the whole 10 × 6 table against NumPy's evaluation of the formula
  EXPECT_TRUE(AllClose(pe, tensor<2>(load_reference("positional")["table_d6"]), kFloatRound, 0.0));
}

TEST(Positional, MatchesNumPyForFarPositionsWithoutAMaximumLength) {
  const json ref = load_reference("positional");
  const Tensor2 expected = tensor<2>(ref["table_d128"]);
  const auto positions = ref["positions_d128"].get<std::vector<std::size_t>>();
  for (std::size_t i = 0; i < positions.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "position " << positions[i]);
    // the table starts at any offset: row 0 of the offset table is PE(offset)
    const Tensor2 pe = sinusoidal_encoding(1, 128, positions[i]);
    EXPECT_TRUE(AllClose(row(pe, 0), row(expected, i), kOpAtol, 0.0));
    EXPECT_NEAR(sinusoidal_value(double(positions[i]), 77, 128), expected(i, 77), kFloatRound);
  }
}

// PE(p + k) = R_k · PE(p) with R_k built from k alone, for D = 128.
TEST(Positional, ShiftIsARotationBuiltFromKAlone) {
  const std::size_t D = 128;
  for (double k : {1.0, 2.0, 7.0, 50.0, 333.0}) {
    const Tensor2 R = sinusoidal_shift_matrix(k, D);
    for (std::size_t p : {0u, 1u, 10u, 100u, 1000u}) {
      SCOPED_TRACE(::testing::Message() << "k " << k << ", p " << p);
      const Tensor1 shifted = row(sinusoidal_encoding(1, D, p + std::size_t(k)), 0);
      const std::vector<double> rotated = mat_vec(R, row(sinusoidal_encoding(1, D, p), 0));
      double err = 0.0;
      for (std::size_t i = 0; i < D; ++i) err = std::fmax(err, std::fabs(rotated[i] - shifted(i)));
      EXPECT_LT(err, kPositional);
    }
    // R_k is block-diagonal (2 × 2 blocks) and orthogonal: R_k R_kᵀ = I
    const Tensor2 RRt = matmul(R, Tensor2(xt::transpose(R)));
    EXPECT_TRUE(AllClose(RRt, Tensor2(xt::eye<float>(D)), kOpAtol, 0.0));
    for (std::size_t i = 0; i < D; ++i)
      for (std::size_t j = 0; j < D; ++j)
        if (i / 2 != j / 2) ASSERT_EQ(R(i, j), 0.0f) << i << ", " << j;
  }
  // composing shifts: R_a R_b = R_(a+b)
  EXPECT_TRUE(AllClose(matmul(sinusoidal_shift_matrix(3, D), sinusoidal_shift_matrix(4, D)),
                       sinusoidal_shift_matrix(7, D), kOpAtol, 0.0));
}

// PE(p) · PE(q) = Σ_i cos((p − q) ω_i): depends only on |p − q|.
TEST(Positional, DotProductDependsOnlyOnDistance) {
  const std::size_t D = 128;
  const Tensor2 pe = sinusoidal_encoding(700, D);
  const Tensor1 w = sinusoidal_frequencies(D);
  for (std::size_t k : {0u, 1u, 2u, 5u, 20u, 100u}) {
    double formula = 0.0;
    for (std::size_t i = 0; i < D / 2; ++i) formula += std::cos(double(k) * w(i));
    for (std::size_t p : {0u, 3u, 17u, 250u, 599u}) {
      SCOPED_TRACE(::testing::Message() << "k " << k << ", p " << p);
      EXPECT_NEAR(dot(row(pe, p), row(pe, p + k)), formula, kPositionalDot);
      EXPECT_NEAR(dot(row(pe, p + k), row(pe, p)), formula, kPositionalDot);
    }
  }
  // and it falls with distance (near positions are more alike than far ones)
  EXPECT_GT(dot(row(pe, 10), row(pe, 11)), dot(row(pe, 10), row(pe, 30)));
}

TEST(Positional, OddOrZeroDimensionIsAClearError) {
  for (std::size_t D : {7u, 0u}) {
    try {
      sinusoidal_encoding(4, D);
      FAIL() << "expected config_error for D = " << D;
    } catch (const config_error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("sinusoidal_encoding"), std::string::npos) << msg;
      EXPECT_NE(msg.find("d_model is " + std::to_string(D)), std::string::npos) << msg;
      EXPECT_NE(msg.find("even"), std::string::npos) << msg;
    }
  }
  EXPECT_THROW(sinusoidal_shift_matrix(1, 5), config_error);
  EXPECT_THROW(sinusoidal_frequencies(3), std::invalid_argument);
  EXPECT_THROW(sinusoidal_value(1, 6, 6), xenc::index_error);
}

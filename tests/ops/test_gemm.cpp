// matmul (BLAS) against the triple loop, reference::matmul.
#include <gtest/gtest.h>

#include <tuple>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/ops/gemm.hpp"
#include "xenc/reference/ops.hpp"

using namespace xenc;
using namespace xenc::test;

// [[1, 2], [3, 4]] · [[5, 6], [7, 8]] = [[1·5 + 2·7, 1·6 + 2·8], [3·5 + 4·7, 3·6 + 4·8]]
//                                    = [[19, 22], [43, 50]]
TEST(Gemm, HandExample) {
  const Tensor2 a = {{1, 2}, {3, 4}}, b = {{5, 6}, {7, 8}};
  const Tensor2 expected = {{19, 22}, {43, 50}};
  EXPECT_TRUE(AllClose(matmul(a, b), expected, 0.0, 0.0));
  EXPECT_TRUE(AllClose(reference::matmul(a, b), expected, 0.0, 0.0));
}

// BLAS against the reference's three loops on several shapes, including a vector-like and an empty
// inner dimension.
class MatmulShapes : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(MatmulShapes, BlasAgreesWithTheReference) {
  const auto [M, K, N] = GetParam();
  Rng rng(11);
  auto a = random_tensor<Tensor2>(std::array<std::size_t, 2>{std::size_t(M), std::size_t(K)}, rng);
  auto b = random_tensor<Tensor2>(std::array<std::size_t, 2>{std::size_t(K), std::size_t(N)}, rng);
  EXPECT_TRUE(AllClose(matmul(a, b), reference::matmul(a, b), kNaiveAtol * (1 + K), kNaiveRtol));
}

INSTANTIATE_TEST_SUITE_P(Shapes, MatmulShapes,
                         ::testing::Values(std::make_tuple(1, 1, 1), std::make_tuple(3, 5, 2),
                                           std::make_tuple(17, 33, 9), std::make_tuple(1, 64, 1),
                                           std::make_tuple(64, 48, 40), std::make_tuple(4, 0, 3)));

// (transposes, row strides, alpha and beta: the kernel, tests/kernels/test_kernels.cpp)

TEST(Gemm, InnerDimensionMismatchNamesBothShapes) {
  const Tensor2 a = xt::zeros<float>({2, 3}), b = xt::zeros<float>({4, 5});
  try {
    matmul(a, b);
    FAIL() << "expected shape_error";
  } catch (const shape_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("matmul"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[4, 5]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
  }
}

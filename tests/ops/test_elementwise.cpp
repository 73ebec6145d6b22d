// Residual sums and saved copies: add_inplace(y, x) is y + x element by element, copy_of(x) and
// copy_as_rows(x) are x's values in a buffer of their own, below and above the size from which
// they run as blocks on the pool.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "support/allclose.hpp"
#include "xenc/core/error.hpp"
#include "xenc/core/random.hpp"
#include "xenc/ops/elementwise.hpp"

using namespace xenc;
using namespace xenc::test;

using Shape3 = std::array<std::size_t, 3>;

TEST(Elementwise, HandExample) {
  Tensor2 y = {{1, 2}, {3, 4}};
  add_inplace(y, Tensor2{{10, 20}, {30, 40}});
  EXPECT_TRUE(AllClose(y, Tensor2{{11, 22}, {33, 44}}, 0.0, 0.0));
  const Tensor2 c = copy_of(y);
  EXPECT_TRUE(AllClose(c, y, 0.0, 0.0));
  EXPECT_NE(c.data(), y.data());
}

// [2, 2051, 512] = 2 100 224 floats: above 2²¹ = 2 097 152 (kernels::kRowPassWork), so on two or
// more threads of the budget the passes run as blocks; and [2, 3, 5], below it, on one thread.
// A float sum is one rounding, so y + x from xtensor's own expression is the exact reference.
TEST(Elementwise, ResidualSumAndCopiesEqualTheExpressionAtEverySize) {
  Rng rng(41);
  for (const auto& shape : {Shape3{2, 3, 5}, Shape3{2, 2051, 512}}) {
    SCOPED_TRACE(shape_str(shape));
    const auto x = random_tensor<Tensor3>(shape, rng);
    const auto y0 = random_tensor<Tensor3>(shape, rng);
    const Tensor3 expected = y0 + x;
    Tensor3 y = y0;
    add_inplace(y, x);
    EXPECT_TRUE(AllClose(y, expected, 0.0, 0.0));
    const Tensor3 c = copy_of(x);
    EXPECT_EQ(c.shape(), x.shape());
    EXPECT_TRUE(AllClose(c, x, 0.0, 0.0));
    const Tensor2 rows = copy_as_rows(x);
    ASSERT_EQ(rows.shape(0), shape[0] * shape[1]);
    ASSERT_EQ(rows.shape(1), shape[2]);
    for (std::size_t b : {std::size_t(0), shape[0] - 1})
      for (std::size_t t : {std::size_t(0), shape[1] - 1})
        for (std::size_t j : {std::size_t(0), shape[2] - 1})
          EXPECT_EQ(rows(b * shape[1] + t, j), x(b, t, j));
  }
}

TEST(Elementwise, EmptyTensorsGiveEmptyResults) {
  Tensor3 y = Tensor3::from_shape({0, 4, 8});
  add_inplace(y, Tensor3::from_shape({0, 4, 8}));
  EXPECT_EQ(y.size(), 0u);
  EXPECT_EQ(copy_of(y).size(), 0u);
  const Tensor2 rows = copy_as_rows(y);
  EXPECT_EQ(rows.shape(0), 0u);
  EXPECT_EQ(rows.shape(1), 8u);
}

TEST(Elementwise, ShapeMismatchNamesBothShapesAndLeavesYAsItWas) {
  Tensor2 y = {{1, 2, 3}, {4, 5, 6}};
  try {
    add_inplace(y, Tensor2{{1, 2}, {3, 4}, {5, 6}});
    FAIL() << "expected shape_error";
  } catch (const shape_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("add_inplace"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[3, 2]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
  }
  EXPECT_TRUE(AllClose(y, Tensor2{{1, 2, 3}, {4, 5, 6}}, 0.0, 0.0));
}

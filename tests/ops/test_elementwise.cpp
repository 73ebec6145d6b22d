// Residual sums and saved copies: add_inplace(y, x) is y + x element by element, copy_into and
// copy_rows_into give dst x's values (and shape), below and above the size from which they run as
// blocks on the pool, in dst's own buffer when it already has x's size.
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
  Tensor2 c;
  copy_into(c, y);
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
    Tensor3 c;
    copy_into(c, x);
    EXPECT_EQ(c.shape(), x.shape());
    EXPECT_TRUE(AllClose(c, x, 0.0, 0.0));
    Tensor2 rows;
    copy_rows_into(rows, x);
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
  Tensor3 c = xt::ones<float>({2, 2, 2});
  copy_into(c, y);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(c.shape(1), 4u);
  Tensor2 rows;
  copy_rows_into(rows, y);
  EXPECT_EQ(rows.shape(0), 0u);
  EXPECT_EQ(rows.shape(1), 8u);
}

// A module's cache from one step to the next: the same size keeps the buffer (no fresh pages),
// another size or shape takes x's.
TEST(Elementwise, CopyIntoKeepsTheBufferOfTheSameSize) {
  Rng rng(7);
  const auto a = random_tensor<Tensor3>(Shape3{2, 3, 4}, rng);
  const auto b = random_tensor<Tensor3>(Shape3{2, 3, 4}, rng);
  Tensor3 dst;
  copy_into(dst, a);
  const float* buffer = dst.data();
  copy_into(dst, b);
  EXPECT_EQ(dst.data(), buffer);
  EXPECT_TRUE(AllClose(dst, b, 0.0, 0.0));
  const auto wide = random_tensor<Tensor3>(Shape3{1, 3, 8}, rng);  // 24 elements, another shape
  copy_into(dst, wide);
  EXPECT_EQ(dst.shape(), wide.shape());
  EXPECT_TRUE(AllClose(dst, wide, 0.0, 0.0));
  const auto longer = random_tensor<Tensor3>(Shape3{2, 5, 4}, rng);
  copy_into(dst, longer);
  EXPECT_EQ(dst.shape(), longer.shape());
  EXPECT_TRUE(AllClose(dst, longer, 0.0, 0.0));
  Tensor2 rows;
  copy_rows_into(rows, a);
  const float* row_buffer = rows.data();
  copy_rows_into(rows, b);
  EXPECT_EQ(rows.data(), row_buffer);
  EXPECT_EQ(rows.shape(0), 6u);
  EXPECT_EQ(rows(5, 3), b(1, 2, 3));
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

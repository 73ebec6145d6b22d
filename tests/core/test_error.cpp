// Shape and configuration checks, shape_str, and the gradient mode switch.
#include <gtest/gtest.h>

#include <string>

#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/core/tensor.hpp"
#include "xenc/nn/embedding.hpp"

#include <type_traits>

using namespace xenc;

TEST(Error, ShapeStrPrintsLikePyTorch) {
  EXPECT_EQ(shape_str(std::vector<std::size_t>{2, 5, 7}), "[2, 5, 7]");
  EXPECT_EQ(shape_str(std::vector<std::size_t>{}), "[]");
  EXPECT_EQ(shape_str(Tensor2(xt::zeros<float>({3, 1})).shape()), "[3, 1]");
}

TEST(Error, CheckShapeNamesWhereWhatAndBothShapes) {
  const Tensor3 x = xt::zeros<float>({2, 5, 7});
  EXPECT_NO_THROW(check_shape("f", "x", x, {2, any_dim, 7}, "[B, T, 7]"));
  try {
    check_shape("MultiheadAttention.forward", "query", x, {any_dim, any_dim, 8},
                "[B, T, D] with D = 8");
    FAIL() << "expected shape_error";
  } catch (const shape_error& e) {
    EXPECT_STREQ(
        e.what(),
        "MultiheadAttention.forward: query has shape [2, 5, 7], expected [B, T, D] with D = 8");
  }
  // the wrong rank is an error too, and shape_error is a std::invalid_argument
  EXPECT_THROW(check_shape("f", "x", x, {2, 5}, "[B, T]"), std::invalid_argument);
}

TEST(Error, CheckConfigStatesTheRule) {
  EXPECT_NO_THROW(check_config(true, "f", "never shown"));
  try {
    check_config(false, "MultiheadAttention", "d_model (10) must be divisible by nhead (4)");
    FAIL() << "expected config_error";
  } catch (const config_error& e) {
    EXPECT_STREQ(e.what(), "MultiheadAttention: d_model (10) must be divisible by nhead (4)");
  }
  EXPECT_THROW(check_config(false, "f", "m"), std::invalid_argument);
}

TEST(GradMode, NoGradGuardDisablesAndRestores) {
  EXPECT_TRUE(GradMode::is_enabled());
  {
    NoGradGuard outer;
    EXPECT_FALSE(GradMode::is_enabled());
    {
      NoGradGuard inner;
      EXPECT_FALSE(GradMode::is_enabled());
    }
    EXPECT_FALSE(GradMode::is_enabled());
  }
  EXPECT_TRUE(GradMode::is_enabled());
}

// Every kind of bad input is a std::invalid_argument, so one catch clause in a notebook or an
// app handles all of them.
TEST(Errors, EveryInputErrorIsAnInvalidArgument) {
  static_assert(std::is_base_of_v<std::invalid_argument, xenc::shape_error>);
  static_assert(std::is_base_of_v<std::invalid_argument, xenc::config_error>);
  static_assert(std::is_base_of_v<std::invalid_argument, xenc::index_error>);
  try {
    xenc::Embedding emb(4, 2);
    emb.forward(xenc::Index2{{7}});
    FAIL() << "expected an exception for id 7 with V = 4";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("is 7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("V = 4"), std::string::npos) << e.what();
  }
}

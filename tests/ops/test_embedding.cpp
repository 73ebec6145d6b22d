// Embedding lookup and its scatter-add backward.
#include <gtest/gtest.h>

#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/reference.hpp"
#include "support/tolerances.hpp"
#include "xenc/ops/embedding.hpp"

using namespace xenc;
using namespace xenc::test;

// weight rows: 0 -> [0, 0], 1 -> [1, 2], 2 -> [3, 4]; ids [[2, 1, 2]] -> [[3, 4], [1, 2], [3, 4]].
// Backward with dy = ones: row 2 is used twice -> [2, 2]; row 1 once -> [1, 1]; row 0 -> [0, 0].
TEST(Embedding, HandExample) {
  const Tensor2 w = {{0, 0}, {1, 2}, {3, 4}};
  const Index2 ids = {{2, 1, 2}};
  const Tensor3 expected = {{{3, 4}, {1, 2}, {3, 4}}};
  EXPECT_TRUE(AllClose(embedding_forward(ids, w), expected, 0.0, 0.0));
  const Tensor3 dy = xt::ones<float>({1, 3, 2});
  EXPECT_TRUE(AllClose(embedding_backward(dy, ids, 3), Tensor2{{0, 0}, {1, 1}, {2, 2}}, 0.0, 0.0));
  // padding_idx = 2: that row gets no gradient even though it is used
  EXPECT_TRUE(
      AllClose(embedding_backward(dy, ids, 3, 2), Tensor2{{0, 0}, {1, 1}, {0, 0}}, 0.0, 0.0));
}

TEST(Embedding, MatchesPyTorchWithPaddingIdx) {
  const json ref = load_reference("embedding");
  const Tensor2 w = tensor<2>(ref["weight"]);
  const Index2 ids = index2(ref["ids"]);
  EXPECT_TRUE(AllClose(embedding_forward(ids, w), tensor<3>(ref["y"]), 0.0, 0.0));
  EXPECT_TRUE(AllClose(
      embedding_backward(tensor<3>(ref["dy"]), ids, w.shape(0), ref["padding_idx"].get<int>()),
      tensor<2>(ref["dweight"]), kOpAtol, kOpRtol));
}

TEST(Embedding, GradientMatchesFiniteDifferences) {
  Rng rng(6);
  auto w = random_tensor<Tensor2>(std::array<std::size_t, 2>{5, 3}, rng);
  const Index2 ids = {{4, 0, 4, 2}, {1, 4, 3, 3}};
  auto G = random_tensor<Tensor3>(std::array<std::size_t, 3>{2, 4, 3}, rng);
  const Tensor2 dw = embedding_backward(G, ids, 5);
  auto loss = [&] { return dot_loss(embedding_forward(ids, w), G); };
  EXPECT_TRUE(GradientsMatch(loss, {input_target("weight", w, dw)}, kGradOp));
}

TEST(Embedding, OutOfRangeIdNamesThePositionAndTheRange) {
  const Tensor2 w = xt::zeros<float>({5, 2});
  for (std::int64_t bad : {std::int64_t(9), std::int64_t(5), std::int64_t(-1)}) {
    const Index2 ids = {{1, bad}};
    try {
      embedding_forward(ids, w);
      FAIL() << "expected xenc::index_error for id " << bad;
    } catch (const xenc::index_error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("embedding_forward"), std::string::npos) << msg;
      EXPECT_NE(msg.find("ids[0, 1] is " + std::to_string(bad)), std::string::npos) << msg;
      EXPECT_NE(msg.find("V = 5"), std::string::npos) << msg;
    }
  }
  EXPECT_THROW(embedding_backward(Tensor3(xt::zeros<float>({1, 2, 2})), Index2{{0, 7}}, 5),
               xenc::index_error);
  EXPECT_THROW(embedding_backward(Tensor3(xt::zeros<float>({1, 3, 2})), Index2{{0, 1}}, 5),
               std::invalid_argument);
}

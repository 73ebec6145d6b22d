// Attention as one op with a plan (ops/multi_head_attention.hpp, issue #28):
//   - plan_attention's decisions as a table: the path, one thread below
//     kThreadedAttentionMinWork and the whole budget from it, at least 4 forward items per
//     thread, the tiled backward by key blocks when whole heads are fewer than 4 per thread;
//   - attention_forward / attention_backward equal the reference (reference::split_heads,
//     scaled_dot_product_attention_forward / _backward) on the plain and the tiled path;
//   - the same numbers on 2 threads as on 1, within float rounding (1e-5), for every split the
//     plan can choose (by heads, by query blocks, by key blocks: a plan made for a budget of 16
//     runs its items on the 2 threads of this machine), with key padding, an attention mask,
//     ALiBi's slope, a bias tensor and both dropout forms;
//   - a backward without a saved state is refused, naming the function.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "support/allclose.hpp"
#include "support/helpers.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/error.hpp"
#include "xenc/ops/multi_head_attention.hpp"
#include "xenc/reference/ops.hpp"

extern "C" int openblas_get_num_threads(void);
extern "C" void openblas_set_num_threads(int);

using namespace xenc;
using namespace xenc::test;

namespace {
using Shape3 = std::array<std::size_t, 3>;
namespace ref = xenc::reference;

// ALiBi's distance bias on even heads (slope 0.5 / (h + 1)), a [Tq, Tk] tensor on odd heads:
// both forms of a score bias at once.
struct MixedBias : AttentionPosition {
  bool has_score_bias() const override { return true; }
  float distance_bias_slope(std::size_t head, std::size_t) const override {
    return head % 2 == 0 ? 0.5f / float(head + 1) : 0.0f;
  }
  Tensor2 score_bias(std::size_t head, std::size_t, std::size_t Tq, std::size_t Tk) const override {
    Tensor2 b = Tensor2::from_shape({Tq, Tk});
    for (std::size_t i = 0; i < Tq; ++i)
      for (std::size_t j = 0; j < Tk; ++j) b(i, j) = 0.01f * float((i * 7 + j * 3 + head) % 11);
    return b;
  }
};

// OpenBLAS's thread count (xencoder's budget) set for a scope, restored after it.
struct Budget {
  int saved = openblas_get_num_threads();
  explicit Budget(int n) { openblas_set_num_threads(n); }
  ~Budget() { openblas_set_num_threads(saved); }
};

struct PlanRun {
  Tensor3 y, dq, dk, dv;
};

}  // namespace

TEST(AttentionPlan, DecisionsAsATable) {
  struct Row {
    AttentionShape shape;
    bool need_weights;
    AttentionPath forced;
    std::size_t budget;
    AttentionPath path;
    std::size_t threads, forward_items;
    bool by_key_blocks;
  };
  using P = AttentionPath;
  // work = B·H·Tq·Tk·Dh; kThreadedAttentionMinWork = 2^23 = 8 388 608
  const Row rows[] = {
      // T = 128, D = 256, H = 8: 4.2M multiply-adds: one thread, one item per head
      {{1, 8, 128, 128, 32}, false, P::automatic, 2, P::plain, 1, 8, false},
      // T = 256, D = 512, H = 8: 33.6M: 2 threads, 8 heads already 4 per thread
      {{1, 8, 256, 256, 64}, false, P::automatic, 2, P::plain, 2, 8, false},
      // the same on 16 threads: 64 items of 64 query rows
      {{1, 8, 256, 256, 64}, false, P::automatic, 16, P::plain, 16, 32, false},
      // T = 512: tiles; 16 threads: 64 query blocks of 64 rows; backward by key blocks
      {{1, 8, 512, 512, 64}, false, P::automatic, 16, P::tiled, 16, 64, true},
      // T = 2048 on 16 threads: 8 blocks of 256 rows per head, backward by 8 key blocks
      {{1, 8, 2048, 2048, 64}, false, P::automatic, 16, P::tiled, 16, 64, true},
      // on 2 threads whole heads are 4 per thread: no key blocks
      {{1, 8, 2048, 2048, 64}, false, P::automatic, 2, P::tiled, 2, 8, false},
      // the weights need the plain path at any size
      {{1, 8, 2048, 2048, 64}, true, P::automatic, 2, P::plain, 2, 8, false},
      // forced tiles on a small size: one thread
      {{2, 2, 40, 40, 8}, false, P::tiled, 4, P::tiled, 1, 4, false},
      // budget 1: one thread at any size
      {{1, 8, 4096, 4096, 64}, false, P::automatic, 1, P::tiled, 1, 8, false},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(::testing::Message() << "B " << r.shape.batch << ", H " << r.shape.heads << ", T "
                                      << r.shape.queries << ", budget " << r.budget);
    const AttentionPlan p = plan_attention(r.shape, r.need_weights, 0.1f, r.forced, r.budget);
    EXPECT_EQ(p.path, r.path);
    EXPECT_EQ(p.threads, r.threads);
    EXPECT_EQ(p.forward_items(), r.forward_items);
    EXPECT_EQ(p.backward_by_key_blocks, r.by_key_blocks);
    EXPECT_EQ(p.saves_probabilities(), r.path == P::plain);
    if (p.backward_by_key_blocks) EXPECT_EQ(p.key_block % 256, 0u);  // whole key tiles
  }
  EXPECT_THROW(plan_attention({1, 1, 4, 4, 4}, false, 1.0f), config_error);
  EXPECT_THROW(plan_attention({1, 0, 4, 4, 4}, false, 0.0f), config_error);
}

TEST(AttentionPlan, ForwardAndBackwardMatchTheReferenceOnBothPaths) {
  Rng rng(3);
  const std::size_t B = 2, T = 70, D = 12, H = 3;
  const Tensor3 q = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const Tensor3 k = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const Tensor3 v = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const Tensor3 G = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  Mask2 kpm = xt::zeros<bool>({B, T});
  kpm(1, 3) = kpm(1, 69) = true;
  const Tensor2 am = random_tensor<Tensor2>(std::array<std::size_t, 2>{T, T}, rng, 0.5f);
  const auto expected = ref::scaled_dot_product_attention_forward(
      ref::split_heads(q, H), ref::split_heads(k, H), ref::split_heads(v, H), kpm, am);
  const auto expected_g = ref::scaled_dot_product_attention_backward(
      ref::split_heads(G, H), ref::split_heads(q, H), ref::split_heads(k, H),
      ref::split_heads(v, H), expected.weights);
  for (AttentionPath path : {AttentionPath::plain, AttentionPath::tiled}) {
    SCOPED_TRACE(path == AttentionPath::plain ? "plain" : "tiled");
    const AttentionPlan plan = plan_attention({B, H, T, T, D / H}, false, 0.0f, path);
    Rng unused(0);
    const AttentionForward f =
        attention_forward(plan, q, k, v, kpm, am, no_attention_position(), unused, true);
    EXPECT_TRUE(AllClose(f.output, ref::merge_heads(expected.output), kNaiveAtol, kNaiveRtol));
    EXPECT_EQ(f.weights.size(), 0u);
    const MultiHeadAttentionGrads g =
        attention_backward(G, q, k, v, f.saved, no_attention_position());
    EXPECT_TRUE(AllClose(g.q, ref::merge_heads(expected_g.query), 1e-4, 1e-4));
    EXPECT_TRUE(AllClose(g.k, ref::merge_heads(expected_g.key), 1e-4, 1e-4));
    EXPECT_TRUE(AllClose(g.v, ref::merge_heads(expected_g.value), 1e-4, 1e-4));
  }
  // need_weights: the plain path, and P is the reference's
  const AttentionPlan weights_plan = plan_attention({B, H, T, T, D / H}, true, 0.0f);
  Rng unused(0);
  const AttentionForward f =
      attention_forward(weights_plan, q, k, v, kpm, am, no_attention_position(), unused, false);
  EXPECT_TRUE(AllClose(f.weights, expected.weights, kNaiveAtol, kNaiveRtol));
  EXPECT_TRUE(f.saved.empty());
  try {
    attention_backward(G, q, k, v, f.saved, no_attention_position());
    ADD_FAILURE() << "no exception";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("attention_backward"), std::string::npos) << e.what();
  }
}

// A plan made for `budget` threads, run with OpenBLAS (the thread budget) at `threads`.
PlanRun run_plan(AttentionPath path, std::size_t budget, int threads, float dropout, std::size_t B,
                 std::size_t H, std::size_t T, std::size_t D, bool* by_key_blocks = nullptr) {
  Rng rng(11);
  const Tensor3 q = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const Tensor3 k = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const Tensor3 v = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  const Tensor3 G = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  Mask2 kpm = xt::zeros<bool>({B, T});
  for (std::size_t j = T - 9; j < T; ++j) kpm(B - 1, j) = true;
  const Tensor2 am = random_tensor<Tensor2>(std::array<std::size_t, 2>{T, T}, rng, 0.5f);
  const MixedBias position;
  const Budget set(threads);
  const AttentionPlan plan = plan_attention({B, H, T, T, D / H}, false, dropout, path, budget);
  if (by_key_blocks) *by_key_blocks = plan.backward_by_key_blocks;
  Rng dropout_rng(5);
  const AttentionForward f = attention_forward(plan, q, k, v, kpm, am, position, dropout_rng, true);
  const MultiHeadAttentionGrads g = attention_backward(G, q, k, v, f.saved, position);
  return {f.output, g.q, g.k, g.v};
}

TEST(AttentionPlan, EverySplitOnTwoThreadsGivesTheNumbersOfOneThread) {
  const std::size_t B = 1, H = 2, T = 600, D = 32;  // 3 key tiles (256, 256, 88)
  for (AttentionPath path : {AttentionPath::plain, AttentionPath::tiled})
    for (float dropout : {0.0f, 0.2f}) {
      SCOPED_TRACE(::testing::Message() << (path == AttentionPath::plain ? "plain" : "tiled")
                                        << ", dropout " << dropout);
      const PlanRun one = run_plan(path, 1, 1, dropout, B, H, T, D);
      for (std::size_t budget : {std::size_t(2), std::size_t(16)}) {
        SCOPED_TRACE(::testing::Message() << "plan for " << budget << " threads");
        bool by_key_blocks = false;
        const PlanRun two = run_plan(path, budget, 2, dropout, B, H, T, D, &by_key_blocks);
        // the tiled backward by key blocks is the split under test for these sizes
        EXPECT_EQ(by_key_blocks, path == AttentionPath::tiled);
        EXPECT_TRUE(AllClose(two.y, one.y, 1e-5, 1e-5));
        EXPECT_TRUE(AllClose(two.dq, one.dq, 1e-5, 1e-5));
        EXPECT_TRUE(AllClose(two.dk, one.dk, 1e-5, 1e-5));
        EXPECT_TRUE(AllClose(two.dv, one.dv, 1e-5, 1e-5));
      }
    }
  // the two paths draw their dropout differently (a mask from the Rng, a seed); without dropout
  // they agree on 2 threads too
  const PlanRun plain = run_plan(AttentionPath::plain, 16, 2, 0.0f, B, H, T, D);
  const PlanRun tiled = run_plan(AttentionPath::tiled, 16, 2, 0.0f, B, H, T, D);
  EXPECT_TRUE(AllClose(tiled.y, plain.y, 1e-5, 1e-5));
  EXPECT_TRUE(AllClose(tiled.dq, plain.dq, 1e-4, 1e-4));
  EXPECT_TRUE(AllClose(tiled.dk, plain.dk, 1e-4, 1e-4));
  EXPECT_TRUE(AllClose(tiled.dv, plain.dv, 1e-4, 1e-4));
}

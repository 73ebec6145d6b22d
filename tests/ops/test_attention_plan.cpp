// Attention as one op with a plan (ops/multi_head_attention.hpp, issue #28):
//   - plan_attention's decisions as a table: the path, one thread below
//     kThreadedAttentionMinWork and the whole budget from it, the work items cut for 16 threads
//     whatever the budget, the tiled backward by key blocks when whole heads are fewer than 4
//     per thread;
//   - 1, 2, 3 and 4 threads give the same bits on both paths; the plain backward in blocks
//     equals the reference and the tiles;
//   - attention_forward / attention_backward equal the reference (reference::split_heads,
//     scaled_dot_product_attention_forward / _backward) on the plain and the tiled path;
//   - the same numbers on 2 threads as on 1, within float rounding (1e-5), for every split the
//     plan can choose (by heads, by query blocks, by key blocks: a plan made for a budget of 16
//     runs its items on the 2 threads of this machine), with key padding, an attention mask,
//     ALiBi's slope, a bias tensor and both dropout forms;
//   - a backward without a saved state is refused, naming the function;
//   - a saved state lent to the next forward (recycle) changes no bit and is left empty.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <xtensor/xview.hpp>

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

// q, k, v [B, T, D] and a gradient G of the output, drawn in that order from rng.
struct Qkvg {
  Tensor3 q, k, v, G;
};
Qkvg random_qkvg(std::size_t B, std::size_t T, std::size_t D, Rng& rng) {
  Qkvg r;
  for (Tensor3* t : {&r.q, &r.k, &r.v, &r.G}) *t = random_tensor<Tensor3>(Shape3{B, T, D}, rng);
  return r;
}

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
    std::size_t key_block;
  };
  using P = AttentionPath;
  // work = B·H·Tq·Tk·Dh; kThreadedAttentionMinWork = 2^23 = 8 388 608
  const Row rows[] = {
      // T = 64, D = 256, H = 8: 1.0M multiply-adds: one thread, one item per head
      {{1, 8, 64, 64, 32}, false, P::automatic, 2, P::plain, 1, 8, false, 64},
      // T = 128, D = 256, H = 8: 4.2M, one step below the threshold: one thread on any budget
      {{1, 8, 128, 128, 32}, false, P::automatic, 2, P::plain, 1, 8, false, 128},
      {{1, 8, 128, 128, 32}, false, P::automatic, 16, P::plain, 1, 8, false, 128},
      // T = 128, D = 512, H = 8: 8.4M, the threshold: 2 threads, 8 heads × 2 blocks of 64
      // query rows (the least); the plain backward's dV items are 2 key blocks of 64 per head
      {{1, 8, 128, 128, 64}, false, P::automatic, 2, P::plain, 2, 16, false, 64},
      // the same work from a batch of 2 at D = 256
      {{2, 8, 128, 128, 32}, false, P::automatic, 2, P::plain, 2, 32, false, 64},
      // T = 256, D = 512, H = 8: 33.6M: 2 threads; the items are cut for 16 threads, whatever
      // the budget: 64 wanted, 8 heads × 4 blocks of 64 query rows (the least) = 32; the
      // plain backward's dV items are 4 key blocks of 64 per head
      {{1, 8, 256, 256, 64}, false, P::automatic, 2, P::plain, 2, 32, false, 64},
      {{1, 8, 256, 256, 64}, false, P::automatic, 16, P::plain, 16, 32, false, 64},
      // T = 512: tiles; 64 query blocks of 64 rows; on 16 threads the backward by key blocks
      // of one key tile (2 per head, 16 items)
      {{1, 8, 512, 512, 64}, false, P::automatic, 16, P::tiled, 16, 64, true, 256},
      // T = 2048 on 16 threads: 8 blocks of 256 rows per head, backward by 8 key blocks
      {{1, 8, 2048, 2048, 64}, false, P::automatic, 16, P::tiled, 16, 64, true, 256},
      // on 2 threads: the same 64 forward items; whole heads are 4 per thread: no key blocks
      {{1, 8, 2048, 2048, 64}, false, P::automatic, 2, P::tiled, 2, 64, false, 2048},
      // the weights need the plain path at any size
      {{1, 8, 2048, 2048, 64}, true, P::automatic, 2, P::plain, 2, 64, false, 256},
      // forced tiles on a small size: one thread
      {{2, 2, 40, 40, 8}, false, P::tiled, 4, P::tiled, 1, 4, false, 40},
      // budget 1: one thread, the same forward items; the tiled backward by whole heads
      {{1, 8, 4096, 4096, 64}, false, P::automatic, 1, P::tiled, 1, 64, false, 4096},
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
    EXPECT_EQ(p.key_block, r.key_block);
  }
  EXPECT_THROW(plan_attention({1, 1, 4, 4, 4}, false, 1.0f), config_error);
  EXPECT_THROW(plan_attention({1, 0, 4, 4, 4}, false, 0.0f), config_error);
}

TEST(AttentionPlan, ForwardAndBackwardMatchTheReferenceOnBothPaths) {
  Rng rng(3);
  const std::size_t B = 2, T = 70, D = 12, H = 3;
  const Qkvg in = random_qkvg(B, T, D, rng);
  const Tensor3 &q = in.q, &k = in.k, &v = in.v, &G = in.G;
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
    EXPECT_NE(std::string(e.what()).find("attention_backward: the saved state is empty (its "
                                         "forward ran with save = false"),
              std::string::npos)
        << e.what();
  }
}

// A plan made for `budget` threads, run with OpenBLAS (the thread budget) at `threads`.
PlanRun run_plan(AttentionPath path, std::size_t budget, int threads, float dropout, std::size_t B,
                 std::size_t H, std::size_t T, std::size_t D, bool* by_key_blocks = nullptr) {
  Rng rng(11);
  const Qkvg in = random_qkvg(B, T, D, rng);
  const Tensor3 &q = in.q, &k = in.k, &v = in.v, &G = in.G;
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
  // both paths draw the dropout from the plan's one seed, where they use it: the two agree on
  // 2 threads, with dropout and without
  for (float dropout : {0.0f, 0.2f}) {
    SCOPED_TRACE(::testing::Message() << "plain against tiled, dropout " << dropout);
    const PlanRun plain = run_plan(AttentionPath::plain, 16, 2, dropout, B, H, T, D);
    const PlanRun tiled = run_plan(AttentionPath::tiled, 16, 2, dropout, B, H, T, D);
    EXPECT_TRUE(AllClose(tiled.y, plain.y, 1e-5, 1e-5));
    EXPECT_TRUE(AllClose(tiled.dq, plain.dq, 1e-4, 1e-4));
    EXPECT_TRUE(AllClose(tiled.dk, plain.dk, 1e-4, 1e-4));
    EXPECT_TRUE(AllClose(tiled.dv, plain.dv, 1e-4, 1e-4));
  }
}

namespace {
// How many elements of a and b differ in their bits (0 means the same tensor, bit for bit).
template <class T>
std::size_t bits_differ(const T& a, const T& b) {
  if (a.shape() != b.shape()) return std::max<std::size_t>(a.size(), 1);
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const float x = a.data()[i], y = b.data()[i];
    if (std::memcmp(&x, &y, sizeof x) != 0) ++n;
  }
  return n;
}
}  // namespace

// The work items are cut from the sizes alone, and every sum runs in the items' order, never
// the threads': 1, 2, 3 and 4 pool threads give the same bits, forward and backward, on both
// paths (the plain backward sums dK's shares of 10 query blocks; the tiled backward runs whole
// heads on 1 thread and two passes, key blocks then query blocks of whole tiles, on 2 to 4),
// with masks, both score biases and dropout; a plan made for 16 threads and run on 1 to 4 gives
// the same bits too.
TEST(AttentionPlan, OneToFourThreadsGiveTheSameBits) {
  const std::size_t B = 2, H = 2, T = 600, D = 32;  // 10 query blocks of 64 rows per head
  for (AttentionPath path : {AttentionPath::plain, AttentionPath::tiled})
    for (float dropout : {0.0f, 0.2f}) {
      SCOPED_TRACE(::testing::Message() << (path == AttentionPath::plain ? "plain" : "tiled")
                                        << ", dropout " << dropout);
      const AttentionPlan one_plan = plan_attention({B, H, T, T, D / H}, false, dropout, path, 1);
      EXPECT_EQ(one_plan.threads, 1u);
      EXPECT_EQ(one_plan.forward_items(), B * H * 10);
      EXPECT_FALSE(one_plan.backward_by_key_blocks);
      const PlanRun one = run_plan(path, 1, 1, dropout, B, H, T, D);
      for (int threads = 2; threads <= 4; ++threads)
        for (std::size_t budget : {std::size_t(threads), std::size_t(16)}) {
          SCOPED_TRACE(::testing::Message()
                       << threads << " threads, plan for " << budget << " threads");
          bool by_key_blocks = false;
          const PlanRun n = run_plan(path, budget, threads, dropout, B, H, T, D, &by_key_blocks);
          EXPECT_EQ(by_key_blocks, path == AttentionPath::tiled);
          EXPECT_EQ(bits_differ(n.y, one.y), 0u);
          EXPECT_EQ(bits_differ(n.dq, one.dq), 0u);
          EXPECT_EQ(bits_differ(n.dk, one.dk), 0u);
          EXPECT_EQ(bits_differ(n.dv, one.dv), 0u);
        }
      // and a plan for 16 threads run on one thread
      const PlanRun sixteen_on_one = run_plan(path, 16, 1, dropout, B, H, T, D);
      EXPECT_EQ(bits_differ(sixteen_on_one.dk, one.dk), 0u);
      EXPECT_EQ(bits_differ(sixteen_on_one.dq, one.dq), 0u);
    }
}

// The plain backward cut in query blocks (dK summed from 10 shares) and key blocks equals the
// loop-by-loop reference, and, with dropout drawn from a seed, the tiled path (an independent
// computation of the same factors).
TEST(AttentionPlan, PlainBackwardInBlocksMatchesTheReferenceAndTheTiles) {
  Rng rng(19);
  const std::size_t B = 1, H = 2, T = 600, D = 32;
  const Qkvg in = random_qkvg(B, T, D, rng);
  const Tensor3 &q = in.q, &k = in.k, &v = in.v, &G = in.G;
  Mask2 kpm = xt::zeros<bool>({B, T});
  kpm(0, 5) = kpm(0, 599) = true;
  const Tensor2 am = random_tensor<Tensor2>(std::array<std::size_t, 2>{T, T}, rng, 0.5f);
  const AttentionPlan plan =
      plan_attention({B, H, T, T, D / H}, false, 0.0f, AttentionPath::plain, 2);
  ASSERT_EQ(plan.query_block, 64u);  // 10 blocks: dK is the sum of 10 shares
  ASSERT_EQ(plan.key_block, 64u);
  const Budget two(2);
  Rng unused(0);
  const AttentionForward f =
      attention_forward(plan, q, k, v, kpm, am, no_attention_position(), unused, true);
  const MultiHeadAttentionGrads g =
      attention_backward(G, q, k, v, f.saved, no_attention_position());
  const auto expected = ref::scaled_dot_product_attention_forward(
      ref::split_heads(q, H), ref::split_heads(k, H), ref::split_heads(v, H), kpm, am);
  const auto expected_g = ref::scaled_dot_product_attention_backward(
      ref::split_heads(G, H), ref::split_heads(q, H), ref::split_heads(k, H),
      ref::split_heads(v, H), expected.weights);
  EXPECT_TRUE(AllClose(f.output, ref::merge_heads(expected.output), 1e-5, 1e-4));
  EXPECT_TRUE(AllClose(g.q, ref::merge_heads(expected_g.query), 1e-4, 1e-4));
  EXPECT_TRUE(AllClose(g.k, ref::merge_heads(expected_g.key), 1e-4, 1e-4));
  EXPECT_TRUE(AllClose(g.v, ref::merge_heads(expected_g.value), 1e-4, 1e-4));

  // dropout from a seed: the plain path draws the factors per block (rows for dQ, columns for
  // dV), the tiles per tile; a mask of the same factors gives the plain path the same numbers
  const AttentionDropout seed{0.3f, 77};
  const Tensor4 none;
  const AttentionInputs drawn{H, kpm, am, none, no_attention_position(), seed};
  const MultiHeadAttentionResult pf = multi_head_attention_forward(q, k, v, drawn, true);
  const MultiHeadAttentionGrads pg = multi_head_attention_backward(G, q, k, v, pf.weights, drawn);
  const TiledAttentionResult tf = multi_head_attention_forward_tiled(q, k, v, drawn);
  const MultiHeadAttentionGrads tg = multi_head_attention_backward_tiled(G, q, k, v, tf, drawn);
  EXPECT_TRUE(AllClose(pf.output, tf.output, 1e-5, 1e-4));
  EXPECT_TRUE(AllClose(pg.q, tg.q, 1e-4, 1e-4));
  EXPECT_TRUE(AllClose(pg.k, tg.k, 1e-4, 1e-4));
  EXPECT_TRUE(AllClose(pg.v, tg.v, 1e-4, 1e-4));
  const Tensor4 mask = attention_dropout_mask(seed, B, H, T, T);
  const AttentionInputs masked{H, kpm, am, mask, no_attention_position()};
  const MultiHeadAttentionGrads mg = multi_head_attention_backward(G, q, k, v, pf.weights, masked);
  EXPECT_EQ(bits_differ(mg.q, pg.q), 0u);
  EXPECT_EQ(bits_differ(mg.k, pg.k), 0u);
  EXPECT_EQ(bits_differ(mg.v, pg.v), 0u);
}

// A module hands its last saved state to the next forward (attention_forward's recycle), so
// that the plain path writes P into pages already mapped. The numbers are the same bits as
// without it; the state lent is left empty, and a backward on it is refused; a state of another
// shape lends nothing, and a forward that refuses its input, or keeps nothing, leaves it as it
// was.
TEST(AttentionPlan, ARecycledSavedStateChangesNoBitAndIsLeftEmpty) {
  const std::size_t B = 2, H = 2, T = 40, D = 16;
  Rng rng(3);
  const Qkvg in = random_qkvg(B, T, D, rng);
  const Tensor3 &q = in.q, &k = in.k, &v = in.v, &G = in.G;
  Mask2 kpm = xt::zeros<bool>({B, T});
  kpm(1, 3) = true;
  const Tensor2 no_mask;
  for (AttentionPath path : {AttentionPath::plain, AttentionPath::tiled}) {
    SCOPED_TRACE(path == AttentionPath::plain ? "plain" : "tiled");
    const AttentionPlan plan = plan_attention({B, H, T, T, D / H}, false, 0.25f, path);
    const auto run = [&](AttentionSaved* recycle) {
      Rng dropout_rng(9);
      AttentionForward f =
          recycle ? attention_forward(plan, q, k, v, kpm, no_mask, no_attention_position(),
                                      dropout_rng, true, *recycle)
                  : attention_forward(plan, q, k, v, kpm, no_mask, no_attention_position(),
                                      dropout_rng, true);
      MultiHeadAttentionGrads g = attention_backward(G, q, k, v, f.saved, no_attention_position());
      return std::make_pair(std::move(f), std::move(g));
    };
    auto run0 = run(nullptr);
    AttentionForward& f0 = run0.first;
    const MultiHeadAttentionGrads& g0 = run0.second;
    auto run1 = run(&f0.saved);  // a state of this shape, its backward run
    AttentionForward& f1 = run1.first;
    const MultiHeadAttentionGrads& g1 = run1.second;
    EXPECT_TRUE(f0.saved.empty());
    EXPECT_EQ(bits_differ(f1.output, f0.output), 0u);
    EXPECT_EQ(bits_differ(g1.q, g0.q), 0u);
    EXPECT_EQ(bits_differ(g1.k, g0.k), 0u);
    EXPECT_EQ(bits_differ(g1.v, g0.v), 0u);
    const std::string msg =
        what_of([&] { attention_backward(G, q, k, v, f0.saved, no_attention_position()); });
    EXPECT_NE(msg.find("attention_backward: the saved state is empty"), std::string::npos) << msg;
    EXPECT_NE(msg.find("a later forward took it as recycle"), std::string::npos) << msg;

    // a state of another shape (T = 24): nothing to lend; the same bits
    const Tensor3 q24 = xt::view(q, xt::all(), xt::range(0, 24), xt::all());
    const AttentionPlan plan24 = plan_attention({B, H, 24, 24, D / H}, false, 0.25f, path);
    Rng dropout_rng(9);
    AttentionForward f24 = attention_forward(plan24, q24, q24, q24, Mask2(), no_mask,
                                             no_attention_position(), dropout_rng, true);
    const auto run2 = run(&f24.saved);
    const AttentionForward& f2 = run2.first;
    const MultiHeadAttentionGrads& g2 = run2.second;
    EXPECT_TRUE(f24.saved.empty());
    EXPECT_EQ(bits_differ(f2.output, f0.output), 0u);
    EXPECT_EQ(bits_differ(g2.k, g0.k), 0u);

    // refused input (k of the wrong length) and save = false: the state lent stays whole
    const Tensor3 k_short = xt::view(k, xt::all(), xt::range(0, 24), xt::all());
    EXPECT_THROW(attention_forward(plan, q, k_short, v, kpm, no_mask, no_attention_position(),
                                   dropout_rng, true, f1.saved),
                 shape_error);
    attention_forward(plan, q, k, v, kpm, no_mask, no_attention_position(), dropout_rng, false,
                      f1.saved);
    ASSERT_FALSE(f1.saved.empty());
    const MultiHeadAttentionGrads again =
        attention_backward(G, q, k, v, f1.saved, no_attention_position());
    EXPECT_EQ(bits_differ(again.q, g0.q), 0u);
  }
}

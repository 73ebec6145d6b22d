// The kernels layer (lib/src/kernels/kernels.hpp) on strided matrix views: GEMM with
// transposes, strides, alpha and beta; the row softmax and layer norm (in place, strided rows,
// fully masked rows); linear_rows and its backward (weight blocks, accumulation, bias sums);
// and the per-head attention kernel (strided heads, masks, a score bias, dropout), each against
// loops written here, plus a finite-difference check of the attention kernel's backward; the
// relative shift as a strided view (Transformer-XL's attention, relative.cpp); and the
// thread pool (parallel_for): every item once, worker indices in range, errors rethrown,
// nested regions, OpenBLAS's setting restored.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/kernels.hpp"
#include "support/allclose.hpp"
#include "support/gradcheck.hpp"
#include "support/tolerances.hpp"
#include "xenc/core/random.hpp"
#include "xenc/ops/multi_head_attention.hpp"

using namespace xenc;
using namespace xenc::test;
namespace k = xenc::kernels;

extern "C" void openblas_set_num_threads(int);
extern "C" int openblas_get_num_threads(void);

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
using Shape2 = std::array<std::size_t, 2>;

// The [rows, cols] block at (r0, c0) of a matrix tensor.
k::MatView block(Tensor2& t, std::size_t r0, std::size_t c0, std::size_t rows, std::size_t cols) {
  return k::as_matrix(t).block(r0, c0, rows, cols);
}
}  // namespace

TEST(KernelsMatrix, ViewsIndexRowsWithTheStride) {
  Tensor2 t = {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}};
  const k::MatView m = block(t, 1, 1, 2, 2);  // [[5, 6], [9, 10]], stride 4
  EXPECT_EQ(m.rows, 2u);
  EXPECT_EQ(m.cols, 2u);
  EXPECT_EQ(m.stride, 4u);
  EXPECT_EQ(m(0, 0), 5.0f);
  EXPECT_EQ(m(1, 1), 10.0f);
  EXPECT_EQ(m.row(1)[0], 9.0f);
  const k::ConstMatView c = m;  // mutable converts to const
  EXPECT_EQ(c(0, 1), 6.0f);
  EXPECT_TRUE(k::ConstMatView{}.empty());
}

// C = alpha · op(A) op(B) + beta · C on sub-blocks of larger buffers (strides > width); the
// columns of C outside the block stay untouched.
// Transformer-XL's relative shift as a strided view (relative.cpp): element (i, j) is
// z(i, T − 1 − i + j), the formula of the shift, at every T including 1; writing through the
// view of a zeroed buffer fills exactly the band (the backward's shiftᵀ), nothing else.
TEST(KernelsRelativeShift, ViewIsTheShiftFormula) {
  for (std::size_t T : {1u, 2u, 5u}) {
    SCOPED_TRACE("T = " + std::to_string(T));
    Tensor2 z = Tensor2::from_shape({T, 2 * T - 1});
    for (std::size_t n = 0; n < z.size(); ++n) z.flat(n) = float(n);
    const k::MatView shifted = k::relative_shift_view(k::as_matrix(z));
    ASSERT_EQ(shifted.rows, T);
    ASSERT_EQ(shifted.cols, T);
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j < T; ++j)
        EXPECT_EQ(shifted(i, j), z(i, T - 1 - i + j)) << i << ", " << j;
    Tensor2 dz = xt::zeros<float>({T, 2 * T - 1});
    const k::MatView band = k::relative_shift_view(k::as_matrix(dz));
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j < T; ++j) band(i, j) = 1.0f;
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t m = 0; m + 1 < 2 * T; ++m)
        EXPECT_EQ(dz(i, m), m + i >= T - 1 && m + i <= 2 * T - 2 ? 1.0f : 0.0f) << i << ", " << m;
  }
  Tensor2 wrong = Tensor2::from_shape({3, 4});
  EXPECT_THROW(k::relative_shift_view(k::as_matrix(wrong)), std::logic_error);
}

TEST(KernelsGemm, TransposesStridesAlphaBetaMatchLoops) {
  Rng rng(3);
  const std::size_t M = 3, N = 4, K = 5, ld = 9;
  for (k::Op op_a : {k::Op::none, k::Op::transpose})
    for (k::Op op_b : {k::Op::none, k::Op::transpose}) {
      const bool ta = op_a == k::Op::transpose, tb = op_b == k::Op::transpose;
      SCOPED_TRACE(::testing::Message() << "trans_a " << ta << ", trans_b " << tb);
      auto A = random_tensor<Tensor2>(Shape2{8, ld}, rng);
      auto B = random_tensor<Tensor2>(Shape2{8, ld}, rng);
      auto C = random_tensor<Tensor2>(Shape2{M, ld}, rng);
      Tensor2 expected = C;
      for (std::size_t i = 0; i < M; ++i)
        for (std::size_t j = 0; j < N; ++j) {
          double s = 0.0;
          for (std::size_t q = 0; q < K; ++q)
            s += double(ta ? A(q, i) : A(i, q)) * double(tb ? B(j, q) : B(q, j));
          expected(i, j) = float(0.5 * s + 2.0 * C(i, j));
        }
      k::gemm(block(A, 0, 0, ta ? K : M, ta ? M : K), op_a, block(B, 0, 0, tb ? N : K, tb ? K : N),
              op_b, block(C, 0, 0, M, N), 0.5f, 2.0f);
      EXPECT_TRUE(AllClose(C, expected, kNaiveAtol, kNaiveRtol));
    }
}

// Products of at least kSplitGemmWork multiply-adds are cut into blocks of C (on 2 threads
// kGemmBlocksPerThreadOnTwo per thread, 64-multiples, where gemm_blocks packs the least),
// each a 1-thread sgemm on the pool: on 2 threads the result must be the 1-thread result up to
// float rounding, and match the loops, for every transpose, on strided views, with blocks of
// unequal size (the rule's 2 blocks: 520 rows = 320 + 200; at 2 per thread, 2 × 2 blocks: 520 =
// 320 + 200, 400 = 256 + 144). Bit for bit
// under OpenBLAS's AVX-512 (Cooperlake, SkylakeX) and Sandybridge kernels; under Haswell's, sgemm
// on a block of rows rounds some elements one or two units in the last place away from sgemm on the
// whole (1.4e-6 at 6.3). A block cut one row short leaves a row of beta · C: far outside.
TEST(KernelsGemm, LargeProductsOnTwoThreadsEqualOneThreadAndTheLoops) {
  struct Case {
    std::size_t M, N, K;
  };
  Rng rng(5);
  const int before = openblas_get_num_threads();
  for (const Case& sz : {Case{520, 400, 330}, Case{400, 520, 330}})
    for (k::Op op_a : {k::Op::none, k::Op::transpose})
      for (k::Op op_b : {k::Op::none, k::Op::transpose}) {
        const bool ta = op_a == k::Op::transpose, tb = op_b == k::Op::transpose;
        const std::size_t M = sz.M, N = sz.N, K = sz.K;
        SCOPED_TRACE(::testing::Message()
                     << "M " << M << ", N " << N << ", trans_a " << ta << ", trans_b " << tb);
        ASSERT_GE(M * N * K, k::kSplitGemmWork);
        auto A = random_tensor<Tensor2>(Shape2{ta ? K : M, (ta ? M : K) + 7}, rng);
        auto B = random_tensor<Tensor2>(Shape2{tb ? N : K, (tb ? K : N) + 5}, rng);
        const auto C0 = random_tensor<Tensor2>(Shape2{M, N + 3}, rng);
        auto run = [&](int threads) {
          Tensor2 C = C0;
          openblas_set_num_threads(threads);
          k::gemm(block(A, 0, 0, ta ? K : M, ta ? M : K), op_a,
                  block(B, 0, 0, tb ? N : K, tb ? K : N), op_b, block(C, 0, 0, M, N), 0.5f, 2.0f);
          return C;
        };
        const Tensor2 one = run(1);
        Tensor2 expected = C0;
        for (std::size_t i = 0; i < M; ++i)
          for (std::size_t j = 0; j < N; ++j) {
            double s = 0.0;
            for (std::size_t q = 0; q < K; ++q)
              s += double(ta ? A(q, i) : A(i, q)) * double(tb ? B(j, q) : B(q, j));
            expected(i, j) = float(0.5 * s + 2.0 * C0(i, j));
          }
        // every cut the benchmarks compare (BM_GemmSplit's blocks), and the rule (0: 1 block
        // per thread on 2 threads)
        for (const std::size_t blocks :
             {std::size_t(0), std::size_t(1), std::size_t(2), std::size_t(4), std::size_t(8)}) {
          SCOPED_TRACE(::testing::Message() << blocks << " blocks per thread (0: the rule)");
          const std::size_t old = k::set_gemm_blocks_per_thread(blocks);
          const Tensor2 two = run(2);
          EXPECT_EQ(k::set_gemm_blocks_per_thread(old), blocks);
          EXPECT_EQ(openblas_get_num_threads(), 2);
          // Other cuts change which of OpenBLAS's kernels (full or edge blocks) computes an
          // element, so they match the 1-thread product within the formula's tolerance only.
          if (blocks == 0) EXPECT_TRUE(AllClose(two, one, kNaiveAtol, kNaiveRtol));
          EXPECT_TRUE(AllClose(two, expected, 1e-4, 1e-4));
        }
      }
  openblas_set_num_threads(before);
}

// Where a split GEMM cuts C [M, N] into `want` blocks: r row parts and c column parts pack
// (r·N + c·M)·K floats, so the cut is the cheapest with at least `want` blocks of 64-multiples.
// Each row worked out by hand from that rule.
TEST(KernelsGemm, BlocksAreCutWhereTheyPackTheLeast) {
  struct Case {
    std::size_t M, N, want, row_step, row_parts, col_step, col_parts;
  };
  for (const Case& c : {
           // 1×4: 2048 + 4·512 = 4096 against 4·2048 + 512 (4×1) and 2·2048 + 2·512 (2×2)
           Case{512, 2048, 4, 512, 1, 512, 4},
           Case{2048, 512, 4, 512, 4, 512, 1},  // the same, transposed: along the rows
           Case{512, 512, 4, 256, 2, 256, 2},   // 2×2: 2·512 + 2·512 against 5·512 either way
           Case{2048, 2048, 4, 1024, 2, 1024, 2},
           Case{520, 400, 4, 320, 2, 256, 2},  // 2·400 + 2·520 = 1840; 3×2 packs 2240
           Case{64, 5000, 4, 64, 1, 1280, 4},  // one row part only: 1280, 1280, 1280, 1160
           Case{100, 100, 4, 64, 2, 64, 2},    // 64-multiples allow 4 blocks, not more
           Case{100, 100, 16, 64, 2, 64, 2},   // still 4: fewer than wanted
           Case{64, 64, 4, 64, 1, 64, 1},      // one block
           // 16 threads, 2 blocks each: 4×8 (4·1536 + 8·512 = 10240); 8×4 packs 14336, and
           // 2 or 3 row parts give fewer than 32 blocks of 64-multiples
           Case{512, 1536, 32, 128, 4, 192, 8},
       }) {
    SCOPED_TRACE(::testing::Message() << "C [" << c.M << ", " << c.N << "], want " << c.want);
    const k::GemmBlocks g = k::gemm_blocks(c.M, c.N, c.want);
    EXPECT_EQ(g.row_step, c.row_step);
    EXPECT_EQ(g.row_parts, c.row_parts);
    EXPECT_EQ(g.col_step, c.col_step);
    EXPECT_EQ(g.col_parts, c.col_parts);
    // the blocks cover C, each side exactly: the last part is the only short one
    EXPECT_GE(g.row_step * g.row_parts, c.M);
    EXPECT_LT(g.row_step * (g.row_parts - 1), c.M);
    EXPECT_GE(g.col_step * g.col_parts, c.N);
    EXPECT_LT(g.col_step * (g.col_parts - 1), c.N);
  }
}

// A large linear layer on 2 threads is cut into blocks of y along the columns too ([200, 1000]
// with 2 blocks, one per thread: 1×2, gemm_blocks); each block writes its own columns of the bias.
// Against the loops and the 1-thread result, with w a block of rows of a bigger matrix and y
// strided. A block that wrote another block's bias, or none, is off by a bias: far outside.
TEST(KernelsLinear, LargeProductOnTwoThreadsCutAlongTheColumnsMatchesLoops) {
  Rng rng(9);
  const std::size_t N = 200, in = 400, out = 1000;
  ASSERT_GE(N * in * out, k::split_gemm_work());
  const k::GemmBlocks g = k::gemm_blocks(N, out, 2 * k::gemm_blocks_per_thread(2));
  ASSERT_EQ(g.row_parts, 1u);
  ASSERT_EQ(g.col_parts, 2u);
  auto x = random_tensor<Tensor2>(Shape2{N, in}, rng);
  auto w_all = random_tensor<Tensor2>(Shape2{out + 24, in}, rng);  // rows 16 .. 16 + out
  auto b_all = random_tensor<Tensor1>(std::array<std::size_t, 1>{out + 24}, rng);
  for (auto& v : b_all) v *= 10.0f;  // a bias in the wrong columns is far from the loops
  const k::ConstMatView w = k::as_matrix(w_all).block(16, 0, out, in);
  const int before = openblas_get_num_threads();
  const auto run = [&](int threads) {
    Tensor2 y_all = Tensor2::from_shape({N, out + 5});
    y_all.fill(-7.0f);
    openblas_set_num_threads(threads);
    k::linear_rows(k::as_matrix(x), w, &b_all(16), k::as_matrix(y_all).block(0, 0, N, out));
    return y_all;
  };
  const Tensor2 one = run(1), two = run(2);
  openblas_set_num_threads(before);
  for (std::size_t n = 0; n < N; ++n) {
    for (std::size_t o = 0; o < out; ++o) {
      double s = b_all(16 + o);
      for (std::size_t i = 0; i < in; ++i) s += double(x(n, i)) * w_all(16 + o, i);
      ASSERT_NEAR(two(n, o), s, 1e-3) << "row " << n << ", column " << o;
      ASSERT_NEAR(two(n, o), one(n, o), 1e-4) << "row " << n << ", column " << o;
    }
    for (std::size_t o = out; o < out + 5; ++o) ASSERT_EQ(two(n, o), -7.0f);  // past y: untouched
  }
}

// linear_rows_many: the in-projection's three products as one region of the pool. Each block is
// cut and computed as linear_rows does it, so every output bit is linear_rows's, one product at
// a time; the split products meet in ONE region (kernels::pool_stats), and a product below the
// split size is computed whole beside them. Three equal products on 2 threads do not all balance
// whole (one thread would do two), so the first two run whole, each with the bits of linear_rows
// on one thread, and the third is cut as linear_rows cuts it on 2 (gemm_many).
TEST(KernelsLinear, SeveralProductsInOneRegionGiveTheBitsOfOneAtATime) {
  Rng rng(12);
  const std::size_t N = 256, in = 512, out = 512, small = 8;
  ASSERT_GE(N * in * out, k::split_gemm_work());
  ASSERT_LT(small * in * out, k::split_gemm_work());
  auto x1 = random_tensor<Tensor2>(Shape2{N, in}, rng);
  auto x2 = random_tensor<Tensor2>(Shape2{N, in}, rng);
  auto x3 = random_tensor<Tensor2>(Shape2{small, in}, rng);
  auto x4 = random_tensor<Tensor2>(Shape2{N, in}, rng);
  auto w = random_tensor<Tensor2>(Shape2{3 * out, in}, rng);
  auto b = random_tensor<Tensor1>(std::array<std::size_t, 1>{3 * out}, rng);
  const auto wb = [&](std::size_t i) { return k::as_matrix(w).block(i * out, 0, out, in); };
  const int before = openblas_get_num_threads();
  Tensor2 a1 = Tensor2::from_shape({N, out}), a2 = Tensor2::from_shape({N, out}),
          a3 = Tensor2::from_shape({small, out}), a4 = Tensor2::from_shape({N, out});
  openblas_set_num_threads(1);  // the two that run whole, and the small one
  k::linear_rows(k::as_matrix(x1), wb(0), &b(0), k::as_matrix(a1));
  k::linear_rows(k::as_matrix(x2), wb(1), nullptr, k::as_matrix(a2));
  k::linear_rows(k::as_matrix(x3), wb(2), &b(2 * out), k::as_matrix(a3));
  openblas_set_num_threads(2);  // the one that is cut
  k::linear_rows(k::as_matrix(x4), wb(2), &b(2 * out), k::as_matrix(a4));
  Tensor2 m1 = Tensor2::from_shape({N, out}), m2 = Tensor2::from_shape({N, out}),
          m3 = Tensor2::from_shape({small, out}), m4 = Tensor2::from_shape({N, out});
  k::reset_pool_stats();
  k::linear_rows_many({{k::as_matrix(x1), wb(0), &b(0), k::as_matrix(m1)},
                       {k::as_matrix(x2), wb(1), nullptr, k::as_matrix(m2)},
                       {k::as_matrix(x3), wb(2), &b(2 * out), k::as_matrix(m3)},
                       {k::as_matrix(x4), wb(2), &b(2 * out), k::as_matrix(m4)}});
  const k::PoolStats stats = k::pool_stats();
  openblas_set_num_threads(before);
  EXPECT_EQ(stats.regions, 1u);
  const k::GemmBlocks g = k::gemm_blocks(N, out, 2 * k::gemm_blocks_per_thread(2));
  EXPECT_EQ(stats.items, 2 + g.count());
  EXPECT_EQ(std::memcmp(m1.data(), a1.data(), m1.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(m2.data(), a2.data(), m2.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(m3.data(), a3.data(), m3.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(m4.data(), a4.data(), m4.size() * sizeof(float)), 0);
  // and the loops: y = x wᵀ + b for the bias-free product, one element in every block row
  for (std::size_t n = 0; n < N; n += 37) {
    for (std::size_t o = 0; o < out; o += 41) {
      double s = 0.0;
      for (std::size_t i = 0; i < in; ++i) s += double(x2(n, i)) * w(out + o, i);
      ASSERT_NEAR(m2(n, o), s, 1e-3) << "row " << n << ", column " << o;
    }
  }
}

TEST(KernelsLinear, SeveralProductsRefuseAMismatchedOneNamingTheFunction) {
  Tensor2 x = xt::zeros<float>({4, 3}), w = xt::zeros<float>({5, 2}), y = xt::zeros<float>({4, 5});
  try {
    k::linear_rows_many({{k::as_matrix(x), k::as_matrix(w), nullptr, k::as_matrix(y)}});
    FAIL() << "a mismatched product was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("linear_rows_many"), std::string::npos) << e.what();
  }
}

namespace {
void several_sums_in_one_region(bool whole) {
  Rng rng(13);
  const std::size_t N = 256, D = 512, small = 8;
  ASSERT_GE(N * D * D, k::split_gemm_work());
  ASSERT_LT(small * D * D, k::split_gemm_work());
  std::vector<Tensor2> dy;
  for (int i = 0; i < 3; ++i) dy.push_back(random_tensor<Tensor2>(Shape2{N, D}, rng));
  auto x = random_tensor<Tensor2>(Shape2{N, D}, rng);
  auto w = random_tensor<Tensor2>(Shape2{3 * D, D}, rng);
  auto ys = random_tensor<Tensor2>(Shape2{small, D}, rng);
  const Tensor2 dw0 = random_tensor<Tensor2>(Shape2{3 * D, D}, rng);  // += into a gradient
  const auto wb = [&](std::size_t i) { return k::as_matrix(w).block(i * D, 0, D, D); };
  const int before = openblas_get_num_threads();
  const bool whole_before = k::set_gemm_whole_sums(whole);
  openblas_set_num_threads(whole ? 1 : 2);
  // one at a time: gemm per term (whole sums: on one thread, as each runs in its item)
  Tensor2 dx_a = Tensor2::from_shape({N, D}), dw_a = dw0, s_a = Tensor2::from_shape({small, D});
  for (std::size_t i = 0; i < 3; ++i)
    k::gemm(k::as_matrix(dy[i]), k::Op::none, wb(i), k::Op::none, k::as_matrix(dx_a), 1.0f,
            i == 0 ? 0.0f : 1.0f);
  for (std::size_t i = 0; i < 3; ++i)
    k::gemm(k::as_matrix(dy[i]), k::Op::transpose, k::as_matrix(x), k::Op::none,
            k::as_matrix(dw_a).block(i * D, 0, D, D), 1.0f, 1.0f);
  k::gemm(k::as_matrix(ys), k::Op::none, wb(0), k::Op::none, k::as_matrix(s_a));
  openblas_set_num_threads(2);
  // all at once
  Tensor2 dx_m = Tensor2::from_shape({N, D}), dw_m = dw0, s_m = Tensor2::from_shape({small, D});
  const auto term = [&](std::size_t i, float beta) {
    return k::GemmTerm{k::as_matrix(dy[i]), k::Op::none, wb(i), k::Op::none, beta};
  };
  std::vector<k::GemmSum> sums{
      {k::as_matrix(dx_m), {term(0, 0.0f), term(1, 1.0f), term(2, 1.0f)}},
      {k::as_matrix(s_m), {{k::as_matrix(ys), k::Op::none, wb(0), k::Op::none, 0.0f}}}};
  for (std::size_t i = 0; i < 3; ++i)
    sums.push_back({k::as_matrix(dw_m).block(i * D, 0, D, D),
                    {{k::as_matrix(dy[i]), k::Op::transpose, k::as_matrix(x), k::Op::none, 1.0f}}});
  k::reset_pool_stats();
  k::gemm_many(sums);
  const k::PoolStats stats = k::pool_stats();
  openblas_set_num_threads(before);
  k::set_gemm_whole_sums(whole_before);
  EXPECT_EQ(stats.regions, 1u);
  const k::GemmBlocks g = k::gemm_blocks(N, D, 2 * k::gemm_blocks_per_thread(2));
  const k::GemmBlocks gw = k::gemm_blocks(D, D, 2 * k::gemm_blocks_per_thread(2));
  EXPECT_EQ(stats.items, whole ? 4u : g.count() + 3 * gw.count());
  EXPECT_EQ(std::memcmp(dx_m.data(), dx_a.data(), dx_m.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(dw_m.data(), dw_a.data(), dw_m.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(s_m.data(), s_a.data(), s_m.size() * sizeof(float)), 0);
  // and the loops: dx = Σ_i dy_i W_i, dW_1 = dW0_1 + dy_1ᵀ x, one element in every block
  for (std::size_t r = 0; r < N; r += 37)
    for (std::size_t c = 0; c < D; c += 41) {
      double s = 0.0;
      for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t o = 0; o < D; ++o) s += double(dy[i](r, o)) * w(i * D + o, c);
      ASSERT_NEAR(dx_m(r, c), s, 2e-3) << "dx row " << r << ", column " << c;
    }
  for (std::size_t r = 0; r < D; r += 37)
    for (std::size_t c = 0; c < D; c += 41) {
      double s = dw0(D + r, c);
      for (std::size_t n = 0; n < N; ++n) s += double(dy[1](n, r)) * x(n, c);
      ASSERT_NEAR(dw_m(D + r, c), s, 1e-3) << "dW_k row " << r << ", column " << c;
    }
}
}  // namespace

// gemm_many: the in-projection backward's GEMMs as one region of the pool. dx = dy0 W0 + dy1 W1
// + dy2 W2 (a sum of three terms into one buffer, in order) and dW_i += dy_iᵀ x: the four split
// sums meet in ONE region (kernels::pool_stats), and a sum below the split size is computed whole
// beside them. On 2 threads dx (3 terms) against the three dW (1 each) balance exactly, so the
// four run whole, one item each, with the bits of gemm on one thread, term by term; with whole
// sums off, each is cut as gemm's split cuts it, with the bits of gemm on 2 threads.
TEST(KernelsGemm, SeveralSumsInOneRegionGiveTheBitsOfGemmTermByTerm) {
  for (const bool whole : {true, false}) {
    SCOPED_TRACE(whole ? "whole sums" : "cut sums");
    several_sums_in_one_region(whole);
  }
}

// The op that uses it: in_projection_backward at T = 256, D = 512 on 2 threads runs its six
// GEMMs (three dx terms and three dW, or three dx and three dW without self-attention) as one
// region, and gives the bits of linear_rows_backward one block at a time, as it ran before.
TEST(KernelsGemm, InProjectionBackwardIsOneRegionWithTheBitsOfOneBlockAtATime) {
  Rng rng(14);
  const std::size_t T = 256, D = 512;
  ASSERT_GE(T * D * D, k::split_gemm_work());
  ASSERT_LT(T * D, k::kRowPassWork);  // the bias sums run on the caller
  const auto t3 = [&] { return random_tensor<Tensor3>(std::array<std::size_t, 3>{1, T, D}, rng); };
  const Tensor3 x = t3(), key = t3(), value = t3();
  const Projections G{t3(), t3(), t3()};
  const Tensor2 w = random_tensor<Tensor2>(Shape2{3 * D, D}, rng);
  const int before = openblas_get_num_threads();
  openblas_set_num_threads(2);
  for (const bool self : {true, false}) {
    SCOPED_TRACE(self ? "self-attention" : "query, key, value");
    const Tensor3& k_in = self ? x : key;
    const Tensor3& v_in = self ? x : value;
    Tensor2 w_grad = xt::zeros<float>({3 * D, D}), w_grad_a = w_grad;
    Tensor1 b_grad = xt::zeros<float>({3 * D}), b_grad_a = b_grad;
    k::reset_pool_stats();
    const InProjectionGrads g = in_projection_backward(G, x, k_in, v_in, w, w_grad, b_grad, self);
    EXPECT_EQ(k::pool_stats().regions, 1u);
    // before: one linear_rows_backward per block, dx summed into the query's buffer
    Tensor3 dx[3] = {Tensor3::from_shape(x.shape()), Tensor3::from_shape(x.shape()),
                     Tensor3::from_shape(x.shape())};
    const Tensor3* dys[3] = {&G.q, &G.k, &G.v};
    const Tensor3* xs[3] = {&x, &k_in, &v_in};
    for (std::size_t i = 0; i < 3; ++i)
      k::linear_rows_backward(
          k::as_matrix(*dys[i]), k::as_matrix(*xs[i]), k::as_matrix(w).block(i * D, 0, D, D),
          {k::as_matrix(dx[self ? 0 : i]), k::as_matrix(w_grad_a).block(i * D, 0, D, D),
           &b_grad_a(i * D), true, self && i > 0});
    const auto same = [](const auto& a, const auto& b) {
      return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
    };
    EXPECT_TRUE(same(g.query, dx[0]));
    if (!self) {
      EXPECT_TRUE(same(g.key, dx[1]));
      EXPECT_TRUE(same(g.value, dx[2]));
    }
    EXPECT_TRUE(same(w_grad, w_grad_a));
    EXPECT_TRUE(same(b_grad, b_grad_a));
  }
  openblas_set_num_threads(before);
}

namespace {
void linear_backward_in_one_region(bool whole, int threads) {
  SCOPED_TRACE(::testing::Message()
               << (whole ? "whole sums, " : "cut sums, ") << threads << " threads");
  Rng rng(15);
  const std::size_t N = 256, in = 512, out = 512;
  ASSERT_GE(N * in * out, k::split_gemm_work());
  auto dy = random_tensor<Tensor2>(Shape2{N, out}, rng);
  auto x = random_tensor<Tensor2>(Shape2{N, in}, rng);
  auto w = random_tensor<Tensor2>(Shape2{out, in}, rng);
  const Tensor2 dw0 = random_tensor<Tensor2>(Shape2{out, in}, rng);
  const int before = openblas_get_num_threads();
  const bool whole_before = k::set_gemm_whole_sums(whole);
  const bool runs_whole = whole && threads == 2;
  // the reference: gemm on each, on one thread where the sums run whole
  openblas_set_num_threads(runs_whole ? 1 : threads);
  Tensor2 dx_a = Tensor2::from_shape({N, in}), dw_a = dw0;
  k::gemm(k::as_matrix(dy), k::Op::none, k::as_matrix(w), k::Op::none, k::as_matrix(dx_a));
  k::gemm(k::as_matrix(dy), k::Op::transpose, k::as_matrix(x), k::Op::none, k::as_matrix(dw_a),
          1.0f, 1.0f);
  openblas_set_num_threads(threads);
  Tensor2 dx = Tensor2::from_shape({N, in}), dw = dw0;
  Tensor1 db = xt::zeros<float>({out});
  k::reset_pool_stats();
  k::linear_rows_backward(k::as_matrix(dy), k::as_matrix(x), k::as_matrix(w),
                          {k::as_matrix(dx), k::as_matrix(dw), &db(0), true});
  const k::PoolStats stats = k::pool_stats();
  openblas_set_num_threads(before);
  k::set_gemm_whole_sums(whole_before);
  EXPECT_EQ(stats.regions, 1u);
  const std::size_t cut =
      k::gemm_blocks(N, in, threads * k::gemm_blocks_per_thread(threads)).count() +
      k::gemm_blocks(out, in, threads * k::gemm_blocks_per_thread(threads)).count();
  EXPECT_EQ(stats.items, runs_whole ? 2u : cut);
  EXPECT_EQ(std::memcmp(dx.data(), dx_a.data(), dx.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(dw.data(), dw_a.data(), dw.size() * sizeof(float)), 0);
  for (std::size_t o = 0; o < out; o += 53) {
    double s = 0.0;
    for (std::size_t n = 0; n < N; ++n) s += dy(n, o);
    ASSERT_NEAR(db(o), s, 1e-3) << "column " << o;
  }
}
}  // namespace

// A linear layer's backward: dx and dW are independent outputs, so on 2 threads their split
// GEMMs are one region. They have the same work, so they run whole, one item each, with the bits
// of gemm on one thread (no block packs its operands again); with whole sums off, cut, with the
// bits of gemm on 2 threads. On 3 threads two products cannot balance: cut.
TEST(KernelsLinear, BackwardRunsDxAndDwAsOneRegionWithTheBitsOfEachGemm) {
  for (const auto& [whole, threads] : {std::pair{true, 2}, {false, 2}, {true, 3}})
    linear_backward_in_one_region(whole, threads);
}

TEST(KernelsGemm, SumsRunWholeOnlyWhereTheyBalanceOnTheThreads) {
  Rng rng(16);
  const std::size_t N = 256, D = 512;
  ASSERT_GE(N * D * D, k::split_gemm_work());
  std::vector<Tensor2> x, w, y;
  for (int i = 0; i < 4; ++i) {
    x.push_back(random_tensor<Tensor2>(Shape2{N, D}, rng));
    w.push_back(random_tensor<Tensor2>(Shape2{D, D}, rng));
    y.push_back(Tensor2::from_shape({N, D}));
  }
  const auto items = [&](std::size_t sums, int threads) {
    std::vector<k::GemmSum> s;
    for (std::size_t i = 0; i < sums; ++i)
      s.push_back({k::as_matrix(y[i]),
                   {{k::as_matrix(x[i]), k::Op::none, k::as_matrix(w[i]), k::Op::none, 0.0f}}});
    const int before = openblas_get_num_threads();
    openblas_set_num_threads(threads);
    k::reset_pool_stats();
    k::gemm_many(s);
    const std::size_t n = k::pool_stats().items;
    openblas_set_num_threads(before);
    return n;
  };
  const auto cut = [&](std::size_t sums, int threads) {
    return sums *
           k::gemm_blocks(N, D, std::size_t(threads) * k::gemm_blocks_per_thread(threads)).count();
  };
  EXPECT_EQ(items(2, 2), 2u) << "two equal products on 2 threads: whole";
  EXPECT_EQ(items(4, 2), 4u) << "four on 2: two each, whole";
  EXPECT_EQ(items(4, 4), 4u) << "four on 4: whole";
  EXPECT_EQ(items(3, 2), 2 + cut(1, 2)) << "three on 2: two whole, the third cut (whole, one "
                                           "thread would do 2 of 3, 33% over)";
  EXPECT_EQ(items(4, 3), 3 + cut(1, 3)) << "four on 3: three whole, the fourth cut";
  EXPECT_EQ(items(1, 2), cut(1, 2)) << "one product: cut";
  EXPECT_EQ(items(2, 3), cut(2, 3)) << "fewer products than threads: cut";
  const bool before = k::set_gemm_whole_sums(false);
  EXPECT_EQ(items(3, 2), cut(3, 2)) << "whole sums off: all cut";
  k::set_gemm_whole_sums(before);
}

TEST(KernelsGemm, SeveralSumsRefuseAMismatchedTermNamingTheFunction) {
  Tensor2 a = xt::zeros<float>({4, 3}), b = xt::zeros<float>({2, 5}), c = xt::zeros<float>({4, 5});
  try {
    k::gemm_many(
        {{k::as_matrix(c), {{k::as_matrix(a), k::Op::none, k::as_matrix(b), k::Op::none, 0.0f}}}});
    FAIL() << "a mismatched term was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("gemm_many"), std::string::npos) << e.what();
  }
}

// K = 0: the product is an empty sum, so C = beta · C (BLAS alone would leave C untouched).
TEST(KernelsGemm, EmptyInnerDimensionGivesBetaTimesC) {
  Tensor2 a = Tensor2::from_shape({2, 0}), b = Tensor2::from_shape({0, 3});
  Tensor2 c = {{1, 2, 3}, {4, 5, 6}};
  k::gemm(k::as_matrix(a), k::Op::none, k::as_matrix(b), k::Op::none, k::as_matrix(c), 1.0f, 0.5f);
  EXPECT_TRUE(AllClose(c, Tensor2{{0.5, 1, 1.5}, {2, 2.5, 3}}, 0.0, 0.0));
  k::gemm(k::as_matrix(a), k::Op::none, k::as_matrix(b), k::Op::none, k::as_matrix(c));
  EXPECT_TRUE(AllClose(c, Tensor2(xt::zeros<float>({2, 3})), 0.0, 0.0));
}

TEST(KernelsGemm, MismatchedViewsAreALogicError) {
  Tensor2 a = xt::zeros<float>({2, 3}), b = xt::zeros<float>({4, 5}), c = xt::zeros<float>({2, 5});
  EXPECT_THROW(k::gemm(k::as_matrix(a), k::Op::none, k::as_matrix(b), k::Op::none, k::as_matrix(c)),
               std::logic_error);
}

// softmax([0, ln 3]) = [1, 3] / 4; 2 rows of 2 inside rows of 3: the third column is untouched.
// A fully masked row becomes zeros.
TEST(KernelsSoftmax, StridedRowsAndFullyMaskedRows) {
  Tensor2 buf = {{0.0f, std::log(3.0f), 42.0f}, {1.0f, 1.0f, -7.0f}, {-kInf, -kInf, 5.0f}};
  k::softmax_rows(block(buf, 0, 0, 3, 2));
  EXPECT_TRUE(AllClose(buf, Tensor2{{0.25f, 0.75f, 42.0f}, {0.5f, 0.5f, -7.0f}, {0.0f, 0.0f, 5.0f}},
                       kOpAtol, kOpRtol));
}

// NaN is never hidden (PyTorch's behaviour, reference::softmax_row's rule): a row holding NaN
// becomes NaN, with or without -inf entries around it, at every row length around the SIMD
// widths; only a row of -inf alone becomes zeros.
TEST(KernelsSoftmax, RowsHoldingNaNBecomeNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (std::size_t cols : {1u, 2u, 3u, 4u, 7u, 8u, 9u, 16u, 17u}) {
    SCOPED_TRACE("cols = " + std::to_string(cols));
    Tensor2 x = xt::zeros<float>({std::size_t(4), cols});
    for (std::size_t c = 0; c < cols; ++c) {
      x(0, c) = c == cols / 2 ? nan : float(c);  // NaN among finite entries
      x(1, c) = c == cols - 1 ? nan : -kInf;     // NaN among masked entries
      x(2, c) = nan;                             // NaN only
      x(3, c) = -kInf;                           // masked only
    }
    k::softmax_rows(k::as_matrix(x));
    for (std::size_t c = 0; c < cols; ++c) {
      for (std::size_t r = 0; r < 3; ++r) EXPECT_TRUE(std::isnan(x(r, c))) << r << ", " << c;
      EXPECT_EQ(x(3, c), 0.0f);
    }
  }
}

// dx = y ⊙ (dy - Σ dy ⊙ y), in place (dx = dy) as the attention backward uses it.
TEST(KernelsSoftmax, BackwardMatchesTheFormulaInPlace) {
  const Tensor2 y = {{0.25f, 0.75f}, {0.5f, 0.5f}};
  Tensor2 d = {{1.0f, 2.0f}, {3.0f, -1.0f}};
  // row 0: Σ = 0.25 + 1.5 = 1.75 -> [0.25 · (1 - 1.75), 0.75 · (2 - 1.75)] = [-0.1875, 0.1875]
  // row 1: Σ = 1.5 - 0.5 = 1     -> [0.5 · 2, 0.5 · -2] = [1, -1]
  k::softmax_rows_backward(k::as_matrix(y), k::as_matrix(d), k::as_matrix(d));
  EXPECT_TRUE(AllClose(d, Tensor2{{-0.1875f, 0.1875f}, {1.0f, -1.0f}}, kOpAtol, kOpRtol));
}

// In place (y = x) gives the same floats as out of place, on strided rows.
TEST(KernelsLayerNorm, InPlaceEqualsOutOfPlaceOnStridedRows) {
  Rng rng(11);
  for (std::size_t D : {1u, 3u, 8u, 17u, 64u}) {
    SCOPED_TRACE("D = " + std::to_string(D));
    auto x = random_tensor<Tensor2>(Shape2{5, D + 3}, rng, 2.0f);
    auto w = random_tensor<Tensor1>(std::array<std::size_t, 1>{D}, rng);
    auto b = random_tensor<Tensor1>(std::array<std::size_t, 1>{D}, rng);
    Tensor2 y = xt::zeros<float>({std::size_t(5), D});
    std::vector<float> mean(5), rstd(5);
    k::layer_norm_rows(block(x, 0, 0, 5, D), k::as_matrix(y), w.data(), b.data(), 1e-5f,
                       mean.data(), rstd.data());
    // each row against the formula in double
    for (std::size_t n = 0; n < 5; ++n) {
      double m = 0.0, v = 0.0;
      for (std::size_t d = 0; d < D; ++d) m += x(n, d);
      m /= double(D);
      for (std::size_t d = 0; d < D; ++d) v += (x(n, d) - m) * (x(n, d) - m);
      v /= double(D);
      const double r = 1.0 / std::sqrt(v + 1e-5);
      EXPECT_NEAR(mean[n], m, kNaiveAtol);
      for (std::size_t d = 0; d < D; ++d)
        EXPECT_NEAR(y(n, d), (x(n, d) - m) * r * w(d) + b(d), kKernelNormFormula) << n << ", " << d;
    }
    Tensor2 inplace = x;
    k::layer_norm_rows(block(inplace, 0, 0, 5, D), block(inplace, 0, 0, 5, D), w.data(), b.data(),
                       1e-5f, nullptr, nullptr);
    for (std::size_t n = 0; n < 5; ++n) {
      for (std::size_t d = 0; d < D; ++d) EXPECT_EQ(inplace(n, d), y(n, d));
      for (std::size_t d = D; d < D + 3; ++d) EXPECT_EQ(inplace(n, d), x(n, d));  // untouched
    }
  }
}

// y = x Wᵀ + b with W a block of rows of a bigger matrix (as the Q, K, V blocks of
// in_proj_weight), against loops; then the backward with and without accumulation.
TEST(KernelsLinear, WeightBlockForwardAndBackwardMatchLoops) {
  Rng rng(5);
  const std::size_t N = 4, in = 3, out = 2;
  auto x = random_tensor<Tensor2>(Shape2{N, in}, rng);
  auto w_all = random_tensor<Tensor2>(Shape2{3 * out, in}, rng);  // rows 2..3 are used
  auto b_all = random_tensor<Tensor1>(std::array<std::size_t, 1>{3 * out}, rng);
  const k::ConstMatView w = k::as_matrix(w_all).block(out, 0, out, in);
  Tensor2 y = Tensor2::from_shape({N, out});
  k::linear_rows(k::as_matrix(x), w, &b_all(out), k::as_matrix(y));
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t o = 0; o < out; ++o) {
      double s = b_all(out + o);
      for (std::size_t i = 0; i < in; ++i) s += double(x(n, i)) * w_all(out + o, i);
      EXPECT_NEAR(y(n, o), s, kNaiveAtol);
    }
  auto dy = random_tensor<Tensor2>(Shape2{N, out}, rng);
  Tensor2 dx = Tensor2::from_shape({N, in}), dw = xt::ones<float>({out, in});
  Tensor1 db = xt::ones<float>({out});
  for (bool accumulate : {false, true}) {
    SCOPED_TRACE(accumulate ? "accumulate" : "overwrite");
    const Tensor2 dw0 = dw;
    const Tensor1 db0 = db;
    k::linear_rows_backward(k::as_matrix(dy), k::as_matrix(x), w,
                            {k::as_matrix(dx), k::as_matrix(dw), db.data(), accumulate});
    for (std::size_t n = 0; n < N; ++n)
      for (std::size_t i = 0; i < in; ++i) {
        double s = 0.0;
        for (std::size_t o = 0; o < out; ++o) s += double(dy(n, o)) * w_all(out + o, i);
        EXPECT_NEAR(dx(n, i), s, kNaiveAtol);
      }
    for (std::size_t o = 0; o < out; ++o) {
      double sb = accumulate ? db0(o) : 0.0;
      for (std::size_t n = 0; n < N; ++n) sb += dy(n, o);
      EXPECT_NEAR(db(o), sb, kNaiveAtol);
      for (std::size_t i = 0; i < in; ++i) {
        double s = accumulate ? dw0(o, i) : 0.0;
        for (std::size_t n = 0; n < N; ++n) s += double(dy(n, o)) * x(n, i);
        EXPECT_NEAR(dw(o, i), s, kNaiveAtol);
      }
    }
  }
}

// The attention kernel on one head: q, k, v are column blocks of [T, ld] rows (as heads of a
// [B·T, D] projection), with a key padding flag, an additive mask, a score bias and a fixed
// dropout (factors 0 or 2); out and the backward against loops and finite differences.
TEST(KernelsAttention, StridedHeadWithMasksBiasAndDropoutMatchesLoopsAndFiniteDifferences) {
  Rng rng(24);
  const std::size_t Tq = 3, Tk = 4, Dh = 2, ld = 7;  // each row: Dh used values, then padding
  auto q = random_tensor<Tensor2>(Shape2{Tq, ld}, rng);
  auto kk = random_tensor<Tensor2>(Shape2{Tk, ld}, rng);
  auto v = random_tensor<Tensor2>(Shape2{Tk, ld}, rng);
  auto mask = random_tensor<Tensor2>(Shape2{Tq, Tk}, rng);
  auto bias = random_tensor<Tensor2>(Shape2{Tq, Tk}, rng);
  const Tensor2 drop = {{2, 0, 2, 2}, {0, 2, 2, 2}, {2, 2, 2, 0}};
  const bool padding[Tk] = {false, false, true, false};
  auto G = random_tensor<Tensor2>(Shape2{Tq, Dh}, rng);
  const float scale = 1.0f / std::sqrt(float(Dh));
  auto inputs = [&] {
    return k::HeadInputs{block(q, 0, 1, Tq, Dh), block(kk, 0, 1, Tk, Dh), block(v, 0, 1, Tk, Dh)};
  };
  auto run = [&](Tensor2& probs) {
    Tensor2 out = xt::zeros<float>({Tq, Dh});
    Tensor2 scratch = Tensor2::from_shape({Tq, Tk});
    k::attention_head_forward(inputs(), {scale, padding, k::as_matrix(mask), k::as_matrix(bias)},
                              k::as_matrix(probs), k::as_matrix(drop), k::as_matrix(scratch),
                              k::as_matrix(out));
    return out;
  };
  Tensor2 probs = Tensor2::from_shape({Tq, Tk});
  const Tensor2 out = run(probs);
  // P and out = (P ⊙ drop) V from loops in double
  for (std::size_t i = 0; i < Tq; ++i) {
    std::vector<double> s(Tk);
    double m = -1e300, sum = 0.0;
    for (std::size_t j = 0; j < Tk; ++j) {
      double dot = 0.0;
      for (std::size_t e = 0; e < Dh; ++e) dot += double(q(i, 1 + e)) * kk(j, 1 + e);
      s[j] = padding[j] ? -1e300 : dot * scale + mask(i, j) + bias(i, j);
      m = std::max(m, s[j]);
    }
    for (std::size_t j = 0; j < Tk; ++j) sum += padding[j] ? 0.0 : std::exp(s[j] - m);
    for (std::size_t j = 0; j < Tk; ++j) {
      const double p = padding[j] ? 0.0 : std::exp(s[j] - m) / sum;
      EXPECT_NEAR(probs(i, j), p, kNaiveAtol);
    }
    for (std::size_t e = 0; e < Dh; ++e) {
      double o = 0.0;
      for (std::size_t j = 0; j < Tk; ++j)
        o += (padding[j] ? 0.0 : std::exp(s[j] - m) / sum) * drop(i, j) * v(j, 1 + e);
      EXPECT_NEAR(out(i, e), o, kNaiveAtol);
    }
  }
  // backward writes into [T, ld] buffers: the columns outside the head stay 0
  Tensor2 dq = xt::zeros<float>({Tq, ld}), dk = xt::zeros<float>({Tk, ld}),
          dv = xt::zeros<float>({Tk, ld});
  Tensor2 scratch = Tensor2::from_shape({Tq, Tk});
  k::attention_head_backward(
      inputs(), scale, k::as_matrix(probs), k::as_matrix(drop), k::as_matrix(G),
      k::as_matrix(scratch),
      {block(dq, 0, 1, Tq, Dh), block(dk, 0, 1, Tk, Dh), block(dv, 0, 1, Tk, Dh)});
  for (std::size_t i = 0; i < Tq; ++i)
    for (std::size_t c = 0; c < ld; ++c)
      if (c < 1 || c > Dh) EXPECT_EQ(dq(i, c), 0.0f);
  auto loss = [&] {
    Tensor2 p = Tensor2::from_shape({Tq, Tk});
    return dot_loss(run(p), G);
  };
  EXPECT_TRUE(GradientsMatch(
      loss, {input_target("q", q, dq), input_target("k", kk, dk), input_target("v", v, dv)},
      kGradOp));
}

// ALiBi's term computed by the kernel: S = scale · q kᵀ + mask − slope·|i − j|, -inf for the
// padded key, against loops in double; with no terms at all (beta = 0 in the score GEMM) P is
// the plain softmax of the scaled scores, also from loops.
TEST(KernelsAttention, DistanceSlopeAndNoTermsMatchLoops) {
  Rng rng(25);
  const std::size_t Tq = 4, Tk = 5, Dh = 3;
  auto q = random_tensor<Tensor2>(Shape2{Tq, Dh}, rng);
  auto kk = random_tensor<Tensor2>(Shape2{Tk, Dh}, rng);
  auto v = random_tensor<Tensor2>(Shape2{Tk, Dh}, rng);
  auto mask = random_tensor<Tensor2>(Shape2{Tq, Tk}, rng);
  const bool padding[Tk] = {false, true, false, false, false};
  const float scale = 0.5f, slope = 0.25f;
  for (const bool with_terms : {true, false}) {
    SCOPED_TRACE(with_terms ? "mask, padding and slope" : "no terms");
    k::ScoreTerms terms{scale, nullptr, {}, {}};
    if (with_terms) terms = {scale, padding, k::as_matrix(mask), {}, slope};
    Tensor2 probs = xt::ones<float>({Tq, Tk});  // garbage the kernel must overwrite
    Tensor2 out = Tensor2::from_shape({Tq, Dh});
    k::attention_head_forward({k::as_matrix(q), k::as_matrix(kk), k::as_matrix(v)}, terms,
                              k::as_matrix(probs), {}, {}, k::as_matrix(out));
    for (std::size_t i = 0; i < Tq; ++i) {
      std::vector<double> s(Tk), p(Tk);
      double m = -1e300, sum = 0.0;
      for (std::size_t j = 0; j < Tk; ++j) {
        double dot = 0.0;
        for (std::size_t e = 0; e < Dh; ++e) dot += double(q(i, e)) * kk(j, e);
        s[j] = dot * scale;
        if (with_terms)
          s[j] = padding[j] ? -1e300 : s[j] + mask(i, j) - slope * std::fabs(double(i) - double(j));
        m = std::max(m, s[j]);
      }
      for (std::size_t j = 0; j < Tk; ++j)
        sum += (p[j] = s[j] <= -1e300 ? 0.0 : std::exp(s[j] - m));
      for (std::size_t j = 0; j < Tk; ++j)
        EXPECT_NEAR(probs(i, j), p[j] / sum, kNaiveAtol) << i << j;
      for (std::size_t e = 0; e < Dh; ++e) {
        double o = 0.0;
        for (std::size_t j = 0; j < Tk; ++j) o += p[j] / sum * v(j, e);
        EXPECT_NEAR(out(i, e), o, kNaiveAtol);
      }
    }
  }
}

// The persistent pool: every item runs exactly once, on a worker index below the thread count;
// inside an item the budget is 1 and a nested parallel_for runs its items on that thread; the
// first exception is rethrown and the pool keeps working; many regions in a row (the workers
// sleep and wake); a single item runs on the caller with the budget as it is; a budget above the
// core count (16 threads here on 2 cores) works the same; OpenBLAS's thread count is what it was
// after every region.
TEST(KernelsThreads, PoolRunsEveryItemOnceAndRestoresOpenBlas) {
  const int before = openblas_get_num_threads();
  for (int threads : {2, 16}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    openblas_set_num_threads(threads);
    for (int round = 0; round < 200; ++round) {
      const std::size_t n = 1 + std::size_t(round) * 7 % 300;
      std::vector<std::atomic<int>> runs(n);
      std::atomic<std::size_t> bad_worker{0}, bad_budget{0}, nested{0};
      k::parallel_for(n, std::size_t(threads), [&](std::size_t i, std::size_t w) {
        if (w >= std::size_t(threads)) ++bad_worker;
        if (n > 1 && k::thread_budget() != 1) ++bad_budget;  // a region of 2 or more threads
        if (i % 50 == 0) k::parallel_for(5, [&](std::size_t) { ++nested; });
        ++runs[i];
      });
      std::size_t wrong = 0;
      for (const auto& r : runs) wrong += r.load() != 1;
      ASSERT_EQ(wrong, 0u) << "round " << round;
      ASSERT_EQ(bad_worker.load(), 0u);
      ASSERT_EQ(bad_budget.load(), 0u);
      ASSERT_EQ(nested.load(), 5 * ((n + 49) / 50));
      ASSERT_EQ(openblas_get_num_threads(), threads);
    }
    try {
      k::parallel_for(100, [](std::size_t i) {
        if (i == 37) throw std::runtime_error("item 37");
      });
      ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "item 37");
    }
    EXPECT_EQ(openblas_get_num_threads(), threads);
    std::atomic<int> after{0};
    k::parallel_for(64, [&](std::size_t) { ++after; });
    EXPECT_EQ(after.load(), 64);
  }
  openblas_set_num_threads(before);
}

// The pool's accounting (kernels::pool_stats): zero after a reset, nothing for a region run on
// one thread, and for regions on 2 to 4 threads totals that add up: the count of regions,
// participants and items; p · wall = busy + dispatch + wake + tail + lag (the same clock reads);
// busy wall time within p · wall; busy CPU time within busy wall time (plus the clocks' grain).
TEST(KernelsThreads, PoolStatsAddUp) {
  const int before = openblas_get_num_threads();
  k::reset_pool_stats();
  k::PoolStats s = k::pool_stats();
  EXPECT_EQ(s.regions, 0u);
  EXPECT_EQ(s.wall, 0.0);
  openblas_set_num_threads(1);
  std::atomic<std::size_t> sum{0};
  k::parallel_for(10, [&](std::size_t i) { sum += i; });
  EXPECT_EQ(k::pool_stats().regions, 0u) << "a region on one thread is not the pool's";
  for (int threads : {2, 3, 4}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    openblas_set_num_threads(threads);
    k::reset_pool_stats();
    const std::size_t regions = 20, items = 16;
    for (std::size_t r = 0; r < regions; ++r)
      k::parallel_for(items, [&](std::size_t i) {
        volatile double x = 0;  // some work, so that the clocks move
        for (int j = 0; j < 20000; ++j) x = x + double(i * j);
        sum += i;
      });
    s = k::pool_stats();
    EXPECT_EQ(s.regions, regions);
    EXPECT_EQ(s.participants, regions * std::size_t(threads));
    EXPECT_EQ(s.items, regions * items);
    const double p_wall = double(threads) * s.wall;
    EXPECT_NEAR(s.busy_wall + s.dispatch + s.wake + s.tail + s.lag, p_wall, 1e-6);
    EXPECT_GT(s.busy_wall, 0.0);
    EXPECT_LE(s.busy_wall, p_wall + 1e-9);
    EXPECT_GT(s.busy_cpu, 0.0);
    EXPECT_LE(s.busy_cpu, s.busy_wall + 1e-3 * double(regions * std::size_t(threads)));
    EXPECT_GE(s.wake, 0.0);
    EXPECT_GE(s.tail, 0.0);
  }
  k::reset_pool_stats();
  EXPECT_EQ(k::pool_stats().participants, 0u);
  EXPECT_EQ(k::pool_stats().busy_cpu, 0.0);
  openblas_set_num_threads(before);
}

// The row passes run as blocks on the pool above kLayerNormWork and kRowPassWork: layer norm
// forward (y, mean, rstd), its backward (dx in blocks of rows, the parameter gradients summed in
// row order in blocks of columns), relu, relu's backward, a bias gradient's column sums (1000
// columns: the last block not a whole 16), a residual sum, a saved copy, a seeded dropout (its
// mask, x ⊙ mask, the backward's product) and 14 heads' attention dropout factors (head
// boundaries inside the blocks) give the same bits on 1, 2, 3 and 4 threads, the sum, the copy
// and the products those of the loop, the factors dropout_factors' over the whole matrix (per
// head: its stream's); and
// parallel_rows covers every row once, parallel_columns every column once in blocks of whole
// 16s but the last, at any size.
TEST(KernelsThreads, RowPassesGiveTheSameBitsOnOneToFourThreads) {
  const int before = openblas_get_num_threads();
  const std::size_t N = 4101, D = 512;  // 4101 · 512 floats: above both, uneven blocks
  ASSERT_GE(N * D, k::kRowPassWork);
  ASSERT_GE(N * D, k::kLayerNormWork);
  const std::size_t C = 1000;
  Rng rng(23);
  const auto x = random_tensor<Tensor2>(Shape2{N, D}, rng);
  const auto dy = random_tensor<Tensor2>(Shape2{N, D}, rng);
  const auto w = random_tensor<Tensor1>(std::vector<std::size_t>{D}, rng);
  const auto b = random_tensor<Tensor1>(std::vector<std::size_t>{D}, rng);
  const auto g = random_tensor<Tensor2>(Shape2{N, C}, rng);
  const auto s0 = random_tensor<Tensor1>(std::vector<std::size_t>{C}, rng);
  struct Out {
    Tensor2 y, dx, relu, drelu, added, copied, drop_mask, dropped, multiplied, head_factors;
    Tensor1 mean, rstd, dw, db, sums, sums_added;
  };
  const k::DropoutKey drop{0.3f, 0xd20b, 0};
  const std::size_t queries = 293;  // heads' rows: head boundaries fall inside the blocks
  const auto run = [&] {
    Out o{Tensor2::from_shape({N, D}),
          Tensor2::from_shape({N, D}),
          x,
          dy,
          dy,
          Tensor2::from_shape({N, D}),
          Tensor2::from_shape({N, D}),
          Tensor2::from_shape({N, D}),
          dy,
          Tensor2::from_shape({14 * queries, D}),
          Tensor1::from_shape({N}),
          Tensor1::from_shape({N}),
          xt::zeros<float>({D}),
          xt::zeros<float>({D}),
          Tensor1::from_shape({C}),
          s0};
    k::layer_norm_rows(k::as_matrix(x), k::as_matrix(o.y), w.data(), b.data(), 1e-5f, o.mean.data(),
                       o.rstd.data());
    k::layer_norm_rows_backward(k::as_matrix(dy), k::as_matrix(x), w.data(),
                                {o.mean.data(), o.rstd.data()}, k::as_matrix(o.dx), o.dw.data(),
                                o.db.data());
    k::relu_inplace(o.relu.data(), o.relu.size());
    k::relu_backward_inplace(o.drelu.data(), x.data(), x.size());
    k::column_sums(k::as_matrix(g), o.sums.data(), false);
    k::column_sums(k::as_matrix(g), o.sums_added.data(), true);
    k::add_inplace(o.added.data(), x.data(), x.size());
    k::copy_floats(o.copied.data(), x.data(), x.size());
    k::dropout_rows(drop, k::as_matrix(x), k::as_matrix(o.drop_mask), k::as_matrix(o.dropped));
    k::multiply_inplace(o.multiplied.data(), o.drop_mask.data(), o.multiplied.size());
    k::dropout_heads(drop, queries, k::as_matrix(o.head_factors));
    return o;
  };
  const auto same_bits = [](const auto& a, const auto& e) {
    return a.size() == e.size() && std::memcmp(a.data(), e.data(), a.size() * sizeof(float)) == 0;
  };
  openblas_set_num_threads(1);
  const Out one = run();
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(one.added.data()[i], dy.data()[i] + x.data()[i]) << "element " << i;
    ASSERT_EQ(one.copied.data()[i], x.data()[i]) << "element " << i;
    ASSERT_EQ(one.dropped.data()[i], x.data()[i] * one.drop_mask.data()[i]) << "element " << i;
    ASSERT_EQ(one.multiplied.data()[i], dy.data()[i] * one.drop_mask.data()[i]) << "element " << i;
  }
  // the dropout's factors are dropout_factors' over the whole matrix, and each head's are its
  // stream's
  Tensor2 whole = Tensor2::from_shape({N, D});
  k::dropout_factors(drop, 0, 0, k::as_matrix(whole));
  EXPECT_TRUE(same_bits(one.drop_mask, whole));
  for (std::size_t s : {std::size_t(0), std::size_t(5), std::size_t(13)}) {
    Tensor2 head = Tensor2::from_shape({queries, D});
    k::dropout_factors({drop.p, drop.seed, s}, 0, 0, k::as_matrix(head));
    EXPECT_EQ(std::memcmp(head.data(), one.head_factors.data() + s * queries * D,
                          head.size() * sizeof(float)),
              0)
        << "head " << s;
  }
  for (int threads : {2, 3, 4}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    openblas_set_num_threads(threads);
    k::reset_pool_stats();
    const Out n = run();
    EXPECT_EQ(k::pool_stats().regions, 12u)
        << "each pass on the pool, two for layer norm's backward";
    EXPECT_TRUE(same_bits(n.y, one.y));
    EXPECT_TRUE(same_bits(n.mean, one.mean));
    EXPECT_TRUE(same_bits(n.rstd, one.rstd));
    EXPECT_TRUE(same_bits(n.dx, one.dx));
    EXPECT_TRUE(same_bits(n.dw, one.dw));
    EXPECT_TRUE(same_bits(n.db, one.db));
    EXPECT_TRUE(same_bits(n.relu, one.relu));
    EXPECT_TRUE(same_bits(n.drelu, one.drelu));
    EXPECT_TRUE(same_bits(n.sums, one.sums));
    EXPECT_TRUE(same_bits(n.sums_added, one.sums_added));
    EXPECT_TRUE(same_bits(n.added, one.added));
    EXPECT_TRUE(same_bits(n.copied, one.copied));
    EXPECT_TRUE(same_bits(n.drop_mask, one.drop_mask));
    EXPECT_TRUE(same_bits(n.dropped, one.dropped));
    EXPECT_TRUE(same_bits(n.multiplied, one.multiplied));
    EXPECT_TRUE(same_bits(n.head_factors, one.head_factors));
    for (std::size_t rows : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(301)}) {
      std::vector<int> seen(rows, 0);
      std::atomic<std::size_t> calls{0};
      k::parallel_rows(
          rows, 1,
          [&](std::size_t r0, std::size_t r1) {
            ++calls;
            for (std::size_t r = r0; r < r1; ++r) ++seen[r];
          },
          0);
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), std::ptrdiff_t(rows)) << rows << " rows";
      // 4 blocks per thread, as many as there are rows at most (none for no row)
      const std::size_t blocks = std::min(rows, std::size_t(4 * threads));
      const std::size_t step = blocks == 0 ? 1 : (rows + blocks - 1) / blocks;
      EXPECT_EQ(calls.load(), (rows + step - 1) / step) << rows << " rows";
    }
    for (std::size_t cols : {std::size_t(0), std::size_t(1), std::size_t(17), std::size_t(1000)}) {
      std::vector<int> seen(cols, 0);
      std::atomic<std::size_t> calls{0}, unaligned{0};
      k::parallel_columns(
          3, cols,
          [&](std::size_t c0, std::size_t c1) {
            ++calls;
            if (c0 % 16 != 0 || (c1 % 16 != 0 && c1 != cols)) ++unaligned;
            for (std::size_t c = c0; c < c1; ++c) ++seen[c];
          },
          0);
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), std::ptrdiff_t(cols)) << cols << " cols";
      EXPECT_EQ(unaligned.load(), 0u) << cols << " cols";
      // at most 4 blocks per thread; 1000 columns (63 lines) give every thread 2 or more
      EXPECT_LE(calls.load(), std::size_t(4 * threads)) << cols << " cols";
      if (cols == 1000) EXPECT_GE(calls.load(), std::size_t(2 * threads));
    }
  }
  openblas_set_num_threads(before);
}

namespace {
bool same_bits(const Tensor1& a, const Tensor1& e) {
  return a.size() == e.size() && std::memcmp(a.data(), e.data(), a.size() * sizeof(float)) == 0;
}

// An optimiser update whose run(size) takes two steps from the same start: on 1 thread, then on
// 2, 3 and 4, the same bits in every array, one region per step with 4 blocks per thread
// (parallel_rows); below `threshold` elements, no region. Returns the 1-thread arrays.
template <class Run>
auto expect_same_bits_on_one_to_four_threads(const Run& run, std::size_t n, std::size_t threshold) {
  const int before = openblas_get_num_threads();
  openblas_set_num_threads(1);
  const auto one = run(n);
  for (int threads : {2, 3, 4}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    openblas_set_num_threads(threads);
    k::reset_pool_stats();
    const auto many = run(n);
    EXPECT_EQ(k::pool_stats().regions, 2u) << "each step on the pool";
    EXPECT_EQ(k::pool_stats().items, 2u * std::min<std::size_t>(4 * threads, n));
    for (std::size_t i = 0; i < one.size(); ++i)
      EXPECT_TRUE(same_bits(many[i], one[i])) << "array " << i;
    k::reset_pool_stats();
    run(threshold - 1);
    EXPECT_EQ(k::pool_stats().regions, 0u) << "below the threshold: on the calling thread";
  }
  openblas_set_num_threads(before);
  return one;
}
}  // namespace

// An Adam step from kAdamUpdateWork elements runs as blocks on the pool: the same bits on 1, 2, 3
// and 4 threads (one block on 1 thread, uneven blocks on more), one region per step; below the
// threshold, no region.
TEST(KernelsThreads, AdamUpdateGivesTheSameBitsOnOneToFourThreads) {
  const std::size_t n = k::kAdamUpdateWork + 37;
  Rng rng(29);
  const auto theta0 = random_tensor<Tensor1>(std::vector<std::size_t>{n}, rng);
  const auto grad = random_tensor<Tensor1>(std::vector<std::size_t>{n}, rng);
  const auto m0 = random_tensor<Tensor1>(std::vector<std::size_t>{n}, rng, 0.1f);
  const Tensor1 v0 = xt::abs(random_tensor<Tensor1>(std::vector<std::size_t>{n}, rng, 0.1f));
  const k::AdamScalars s{0.9f, 0.999f, 1e-8f, 0.999f, 0.0f, 0.01f / 0.19f, 0.0447f};
  const auto one = expect_same_bits_on_one_to_four_threads(
      [&](std::size_t size) {
        std::array<Tensor1, 3> o{theta0, m0, v0};
        for (int step = 0; step < 2; ++step)
          k::adam_update(o[0].data(), grad.data(), o[1].data(), o[2].data(), size, s);
        return o;
      },
      n, k::kAdamUpdateWork);
  EXPECT_FALSE(same_bits(one[0], theta0)) << "the step moved θ";
}

// An SGD step from the threshold ops/optim.cpp passes (kRowPassWork) runs as blocks on the pool:
// the same bits on 1 to 4 threads, one region per step; below it, no region.
TEST(KernelsThreads, SgdUpdateGivesTheSameBitsOnOneToFourThreads) {
  const std::size_t n = k::kRowPassWork + 37;
  Rng rng(31);
  const auto theta0 = random_tensor<Tensor1>(std::vector<std::size_t>{n}, rng);
  const auto grad = random_tensor<Tensor1>(std::vector<std::size_t>{n}, rng);
  const auto vel0 = random_tensor<Tensor1>(std::vector<std::size_t>{n}, rng, 0.1f);
  const auto one = expect_same_bits_on_one_to_four_threads(
      [&](std::size_t size) {
        std::array<Tensor1, 2> o{theta0, vel0};
        for (int step = 0; step < 2; ++step)
          k::sgd_update(o[0].data(), grad.data(), o[1].data(), size, 0.05f, 0.9f, k::kRowPassWork);
        return o;
      },
      n, k::kRowPassWork);
  EXPECT_FALSE(same_bits(one[0], theta0)) << "the step moved θ";
}

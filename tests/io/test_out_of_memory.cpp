// Running out of memory while loading is an io_error naming the sizes, never std::bad_alloc
// (which a notebook or an app would report as just "std::bad_alloc"). Memory is made to run out
// on purpose: this test binary replaces operator new, and while `g_fail_from` is set, every
// allocation of at least that many bytes throws std::bad_alloc, as a real exhausted heap would.
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

#include "io_test_util.hpp"
#include "xenc/io/npy.hpp"
#include "xenc/io/npz.hpp"
#include "xenc/io/state_dict.hpp"

namespace {
std::size_t g_fail_from = 0;  // 0: never fail
}  // namespace

void* operator new(std::size_t n) {
  if (g_fail_from != 0 && n >= g_fail_from) throw std::bad_alloc();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace xenc_test;

namespace {
// Sets the threshold for one scope.
struct FailAllocationsFrom {
  explicit FailAllocationsFrom(std::size_t n) { g_fail_from = n; }
  ~FailAllocationsFrom() { g_fail_from = 0; }
};
}  // namespace

TEST(OutOfMemory, BuildingAnEncoderIsAnIoError) {
  // post_relu_l2_h2: D = 8, F = 16; its largest parameter, in_proj_weight [24, 8], has 768 bytes.
  const auto state = xenc::load_npz(data_path("post_relu_l2_h2.npz"));
  xenc::load_transformer_encoder(
      state, 2);  // once normally: the table of key names is built once per process
  ::testing::AssertionResult result = ::testing::AssertionFailure();
  {
    FailAllocationsFrom fail(700);
    result = ThrowsWith<xenc::io_error>(
        [&] {
          xenc::load_transformer_encoder(state, 2, xenc::Activation::relu, false, 1e-5f, "w.npz");
        },
        {"load_transformer_encoder: w.npz", "out of memory building a TransformerEncoder",
         "num_layers = 2, d_model = 8, dim_feedforward = 16"});
  }
  EXPECT_TRUE(result);  // checked outside the scope: gtest's own messages allocate too
}

TEST(OutOfMemory, ReadingArraysIsAnIoError) {
  const std::string npy = tmp_path("oom.npy"), npz = tmp_path("oom.npz");
  xenc::save_npy(npy, xt::ones<float>({100, 100}));  // 40,128 bytes
  xenc::save_npz(npz, {{"w", xt::ones<float>({100, 100})}});
  const std::string bytes = read_text(npy);
  std::vector<::testing::AssertionResult> results;
  results.reserve(3);
  {
    FailAllocationsFrom fail(30000);
    results.push_back(ThrowsWith<xenc::io_error>([&] { xenc::load_npy(npy); },
                                                 {"load_npy", "out of memory reading", "oom.npy"}));
    results.push_back(
        ThrowsWith<xenc::io_error>([&] { xenc::parse_npy(bytes, "oom"); },
                                   {"oom", "out of memory allocating 40000 bytes", "[100, 100]"}));
    results.push_back(ThrowsWith<xenc::io_error>([&] { xenc::load_npz(npz); },
                                                 {"load_npz", "key \"w\"", "out of memory"}));
  }
  for (const auto& r : results) EXPECT_TRUE(r);
}

TEST(OutOfMemory, BuildingAttentionIsAnIoError) {
  // D = 8: in_proj_weight [24, 8] has 768 bytes.
  const xenc::StateDict state{{"in_proj_weight", xt::ones<float>({24, 8})},
                              {"in_proj_bias", xt::ones<float>({24})},
                              {"out_proj.weight", xt::ones<float>({8, 8})},
                              {"out_proj.bias", xt::ones<float>({8})}};
  ::testing::AssertionResult result = ::testing::AssertionFailure();
  {
    FailAllocationsFrom fail(700);
    result = ThrowsWith<xenc::io_error>(
        [&] { xenc::load_multihead_attention(state, 2, "mha.npz"); },
        {"load_multihead_attention: mha.npz", "out of memory", "d_model = 8"});
  }
  EXPECT_TRUE(result);
}

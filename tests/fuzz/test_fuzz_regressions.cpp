// Every committed fuzzing input, replayed through the harnesses' entry functions in the normal
// build: the seed corpus (tests/fuzz/corpus/<harness>/) and every input that ever crashed, hung
// or over-allocated (tests/fuzz/regressions/<harness>/, named after what it found). Each must
// finish without an escaping exception (fuzz_entries.hpp swallows only input errors), within a
// few seconds, and without any single allocation above kMaxAllocation: this binary replaces
// operator new to record the largest request, so over-allocation fails here as it does under
// libFuzzer's -malloc_limit_mb.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <string>
#include <vector>

#include "fuzz_entries.hpp"
#include "support/build_path.hpp"

namespace {
std::size_t g_largest_allocation = 0;
}  // namespace

void* operator new(std::size_t n) {
  g_largest_allocation = std::max(g_largest_allocation, n);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

namespace fs = std::filesystem;

// The committed inputs are at most 64 KiB; a deflated member can legitimately grow 1032-fold,
// so 64 MiB is far above any honest need and far below what the crafted inputs used to ask for.
constexpr std::size_t kMaxAllocation = std::size_t(64) << 20;

std::vector<fs::path> inputs_of(const std::string& harness) {
  std::vector<fs::path> files;
  for (const char* kind : {"corpus", "regressions"}) {
    const fs::path dir = fs::path(XENC_FUZZ_DIR) / kind / harness;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class FuzzInputs : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzInputs, ReplayWithoutFindings) {
  const std::string harness = GetParam();
  const auto files = inputs_of(harness);
  ASSERT_FALSE(files.empty()) << "no committed inputs for " << harness
                              << " (run tests/fuzz/make_corpus.py)";
  const auto entry = xenc_fuzz::entry_for(harness);
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_LE(bytes.size(), 65536u) << "committed inputs stay small";
    g_largest_allocation = 0;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_NO_THROW(entry(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
    EXPECT_LE(g_largest_allocation, kMaxAllocation) << "largest single allocation";
    // Not a timing test: a hang (the old loader built 100,001 layers) takes minutes.
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  }
}

INSTANTIATE_TEST_SUITE_P(Harnesses, FuzzInputs, ::testing::ValuesIn(xenc_fuzz::harness_names()),
                         [](const auto& info) { return info.param; });

}  // namespace

// apps/common/heap_policy.cpp, compiled into this test as into every program: the decision (a
// user's thresholds are kept), what it did in this process, and what glibc's heap then does with a
// block below and above 32 MiB, counted by mallinfo2 (hblks: blocks mapped straight from the
// kernel). Every program's --version line of it: tests/apps/test_apps_output.cpp.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

#include "heap_policy.hpp"

namespace {

using xenc_app::heap_thresholds_set_by_user;

TEST(HeapPolicy, UsersThresholdsAreKept) {
  struct Case {
    const char *tunables, *mmap_env, *trim_env;
    bool users;
  };
  for (const Case& c : {
           Case{nullptr, nullptr, nullptr, false},
           Case{"", nullptr, nullptr, false},
           Case{"glibc.malloc.arena_max=2", nullptr, nullptr, false},
           Case{"glibc.cpu.hwcaps=-AVX2", nullptr, nullptr, false},
           Case{"glibc.malloc.mmap_threshold=131072", nullptr, nullptr, true},
           Case{"glibc.malloc.trim_threshold=0", nullptr, nullptr, true},
           Case{"glibc.cpu.hwcaps=-AVX2:glibc.malloc.trim_threshold=5", nullptr, nullptr, true},
           Case{nullptr, "131072", nullptr, true},
           Case{nullptr, nullptr, "0", true},
           Case{"glibc.malloc.arena_max=2", nullptr, "1048576", true},
       }) {
    SCOPED_TRACE(std::string("GLIBC_TUNABLES=") + (c.tunables ? c.tunables : "(unset)") +
                 " MALLOC_MMAP_THRESHOLD_=" + (c.mmap_env ? c.mmap_env : "(unset)") +
                 " MALLOC_TRIM_THRESHOLD_=" + (c.trim_env ? c.trim_env : "(unset)"));
    EXPECT_EQ(heap_thresholds_set_by_user(c.tunables, c.mmap_env, c.trim_env), c.users);
  }
}

bool environment_sets_thresholds() {
  const char* t = std::getenv("GLIBC_TUNABLES");
  return (t != nullptr && (std::strstr(t, "glibc.malloc.mmap_threshold") != nullptr ||
                           std::strstr(t, "glibc.malloc.trim_threshold") != nullptr)) ||
         std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr ||
         std::getenv("MALLOC_TRIM_THRESHOLD_") != nullptr;
}

// Blocks mapped from the kernel now, by glibc's count.
std::size_t mapped_blocks() { return mallinfo2().hblks; }

// A block of `bytes`, written to so that neither the compiler nor the kernel can skip it; returns
// how many more blocks were mapped while it was live.
std::size_t blocks_mapped_for(std::size_t bytes) {
  const std::size_t before = mapped_blocks();
  char* volatile p = static_cast<char*>(std::malloc(bytes));
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 1, bytes);
  const std::size_t after = mapped_blocks();
  std::free(p);
  return after - before;
}

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer's allocator replaces glibc's heap; its mallopt refuses, and the programs say so.
TEST(HeapPolicy, AddressSanitizersAllocatorRefusesAndIsLeftAlone) {
  if (environment_sets_thresholds())
    EXPECT_EQ(xenc_app::heap_setting(), xenc_app::HeapSetting::users);
  else
    EXPECT_EQ(xenc_app::heap_setting(), xenc_app::HeapSetting::refused);
}
#else
// glibc's default maps an 8 MiB block (above its starting 128 KiB threshold) and raises the
// threshold only after such a block is freed; fixed at 32 MiB, the heap serves 8 MiB and maps
// 40 MiB. The 40 MiB block first: its free would raise glibc's moving threshold, were it moving.
TEST(HeapPolicy, BlocksUpTo32MiBComeFromTheHeap) {
  if (environment_sets_thresholds()) {
    EXPECT_EQ(xenc_app::heap_setting(), xenc_app::HeapSetting::users);
    return;
  }
  ASSERT_EQ(xenc_app::heap_setting(), xenc_app::HeapSetting::fixed);
  EXPECT_EQ(xenc_app::heap_summary(),
            "glibc, fixed thresholds (blocks up to 32 MiB reused, 64 MiB kept free)");
  EXPECT_EQ(blocks_mapped_for(std::size_t{8} << 20), 0u);
  EXPECT_EQ(blocks_mapped_for(std::size_t{40} << 20), 1u);
  EXPECT_EQ(blocks_mapped_for(std::size_t{31} << 20), 0u);
  EXPECT_EQ(blocks_mapped_for(std::size_t{33} << 20), 1u);
}
#endif

}  // namespace

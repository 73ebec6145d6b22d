// glibc's heap for a process that runs layers again and again: apps/common/heap_policy.cpp, linked
// into every xenc-* program, the benchmarks and xenc-kernel, sets it before main.
//
// Why. A layer's forward allocates its tensors afresh at every call. glibc maps each block of
// 128 KiB or more straight from the kernel, and moves that threshold up at run time to the size
// of the largest mapped block freed so far ("dynamic mmap threshold", mallopt(3)). Whether the
// next forward's tensors come back from the heap, or are mapped and faulted in page by page again,
// then depends on the order of earlier frees: a change that removed one early temporary made
// BM_EncoderLayerForward/512/512/8 on 1 thread 15% slower, with 4-9x the page faults
// (bench/README.md, "The heap"). Fixed thresholds take the order out of it: blocks up to 32 MiB
// come from the heap, and freed memory at its top is kept up to 64 MiB, so a forward reuses the
// last one's pages.
//
// A user's own settings are kept: when GLIBC_TUNABLES names glibc.malloc.mmap_threshold or
// glibc.malloc.trim_threshold, or MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ is set, nothing
// is changed. A program of your own that links the library gets the same heap with
//     GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864
#pragma once

#include <cstddef>
#include <string>

namespace xenc_app {

inline constexpr std::size_t kHeapMmapThreshold = std::size_t{32} << 20;  // glibc's largest
inline constexpr std::size_t kHeapTrimThreshold = std::size_t{64} << 20;  // 2x, as glibc's own rule

/// What the start-up did with the heap.
enum class HeapSetting {
  fixed,    ///< mallopt set both thresholds
  users,    ///< the user's environment sets them; left alone
  refused,  ///< mallopt refused (another allocator, e.g. AddressSanitizer's)
  other,    ///< not built against glibc (the WebAssembly demo): nothing to set
};

/// The decision, from the environment's values (nullptr = unset): true when the user's
/// environment already sets either threshold.
bool heap_thresholds_set_by_user(const char* glibc_tunables, const char* mmap_threshold_env,
                                 const char* trim_threshold_env);

/// What happened at start-up, in this process.
HeapSetting heap_setting();

/// The --version line after "heap: ": "glibc, fixed thresholds (blocks up to 32 MiB reused,
/// 64 MiB kept free)", or why not.
std::string heap_summary();

}  // namespace xenc_app

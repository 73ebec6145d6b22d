// The heap's thresholds, fixed before main (why: heap_policy.hpp). Needs nothing but glibc, so
// xenc-kernel, which does not link the library, compiles it in as the programs do. Built without
// glibc (emscripten's WebAssembly demo), it sets nothing and says so.
#include "heap_policy.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdlib>
#include <cstring>

namespace xenc_app {
namespace {

#if defined(__GLIBC__)
HeapSetting g_setting = HeapSetting::refused;
#else
HeapSetting g_setting = HeapSetting::other;
#endif

bool names_threshold(const char* tunables) {
  return tunables != nullptr && (std::strstr(tunables, "glibc.malloc.mmap_threshold") != nullptr ||
                                 std::strstr(tunables, "glibc.malloc.trim_threshold") != nullptr);
}

#if defined(__GLIBC__)
// Before main (and before the library's own static objects allocate much): glibc calls the
// functions of .init_array in link order, the program's own after its libraries'.
__attribute__((constructor)) void fix_heap_thresholds() {
  if (heap_thresholds_set_by_user(std::getenv("GLIBC_TUNABLES"),
                                  std::getenv("MALLOC_MMAP_THRESHOLD_"),
                                  std::getenv("MALLOC_TRIM_THRESHOLD_"))) {
    g_setting = HeapSetting::users;
    return;
  }
  // mallopt returns 1 on success. Setting either threshold turns glibc's moving threshold off.
  const bool mmap_set = mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHeapMmapThreshold)) == 1;
  const bool trim_set = mallopt(M_TRIM_THRESHOLD, static_cast<int>(kHeapTrimThreshold)) == 1;
  g_setting = mmap_set && trim_set ? HeapSetting::fixed : HeapSetting::refused;
}
#endif

}  // namespace

bool heap_thresholds_set_by_user(const char* glibc_tunables, const char* mmap_threshold_env,
                                 const char* trim_threshold_env) {
  return names_threshold(glibc_tunables) || mmap_threshold_env != nullptr ||
         trim_threshold_env != nullptr;
}

HeapSetting heap_setting() { return g_setting; }

std::string heap_summary() {
  switch (g_setting) {
    case HeapSetting::fixed:
      return "glibc, fixed thresholds (blocks up to " + std::to_string(kHeapMmapThreshold >> 20) +
             " MiB reused, " + std::to_string(kHeapTrimThreshold >> 20) + " MiB kept free)";
    case HeapSetting::users:
      return "glibc, thresholds from the environment (GLIBC_TUNABLES or MALLOC_*_THRESHOLD_)";
    case HeapSetting::other:
      return "not glibc's heap; left as it is";
    case HeapSetting::refused:
      break;
  }
  return "the allocator refused mallopt's thresholds (not glibc's heap); left as it is";
}

}  // namespace xenc_app

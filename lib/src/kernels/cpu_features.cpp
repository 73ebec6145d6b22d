// What the CPU and the operating system let a program execute, for xenc/core/blas_core.hpp: the
// feature bits of cpuid leaves 1 and 7 and the register states the OS saves (XCR0, by xgetbv).
// The same bits OpenBLAS's driver/others/dynamic.c reads (support_avx, support_avx2,
// support_avx512), plus FMA and AVX-512 F/BW/DQ, which its SkylakeX kernels use.
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "xenc/core/blas_core.hpp"

namespace xenc {

CpuFeatures cpu_features() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  f.fma = c & (1u << 12);
  f.avx = c & (1u << 28);
  if (c & (1u << 27)) {  // OSXSAVE: xgetbv is available
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    f.os_saves_ymm = (lo & 0x6u) == 0x6u;    // SSE and AVX state
    f.os_saves_zmm = (lo & 0xe6u) == 0xe6u;  // and opmask, ZMM0-15 upper halves, ZMM16-31
  }
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    f.avx2 = b & (1u << 5);
    f.avx512f = b & (1u << 16);
    f.avx512dq = b & (1u << 17);
    f.avx512bw = b & (1u << 30);
    f.avx512vl = b & (1u << 31);
  }
#endif
  return f;
}

}  // namespace xenc

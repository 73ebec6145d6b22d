// XENC_VECTOR_KERNEL: build a hot loop for two kinds of x86-64 CPU and pick one at load time.
//
// A compiler targets the oldest x86-64 by default (SSE2: 4 floats per instruction), so that the
// library runs on any 64-bit PC. Marking a function XENC_VECTOR_KERNEL asks GCC to compile it
// twice ("function multi-versioning", the `target_clones` attribute): once like that and once
// for x86-64-v3 (AVX2 + FMA: 8 floats per instruction, every x86 CPU since about 2015). When
// the library is loaded, a small resolver asks the CPU what it supports and binds the call to
// the best copy. The source stays one plain loop; only the machine code differs.
// Elsewhere (other compilers or CPUs, or a -march=native build that has AVX2 already) it is empty.
// XENC_VECTOR_KERNEL_AVX512 adds a third copy for x86-64-v4 (AVX-512: 16 floats), for a loop
// bound by arithmetic rather than memory (the Adam step: a square root and two divisions).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX2__) && \
    !defined(XENC_NO_TARGET_CLONES)
#define XENC_VECTOR_KERNEL __attribute__((target_clones("arch=x86-64-v3", "default")))
#define XENC_VECTOR_KERNEL_AVX512 \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define XENC_VECTOR_KERNEL
#define XENC_VECTOR_KERNEL_AVX512
#endif

// OpenBLAS's own account of itself (openblas_get_config, openblas_get_corename,
// openblas_get_num_threads) for xenc/core/blas_core.hpp, the one-time warning kernels::gemm
// gives when the set it runs is weaker than the CPU's, and the refusal of a set the CPU cannot
// execute (an explicit OPENBLAS_CORETYPE beyond it: SIGILL at the first product otherwise). A build
// without BLAS (WebAssembly: XENC_NO_BLAS) reports "none" and never warns.
#ifndef XENC_NO_BLAS
#include <cblas.h>
#endif

#include <cstdio>
#include <string>

#include "blas_probe.hpp"
#include "xenc/core/blas_core.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

BlasReport blas_report() {
#ifdef XENC_NO_BLAS
  BlasReport r;
  r.library = r.core = "none";
  r.cpu = cpu_features();
  return r;
#else
  return make_blas_report(openblas_get_config(), openblas_get_corename(),
                          openblas_get_num_threads(), cpu_features());
#endif
}

void require_blas_core_runs_here(const char* function) {
#ifndef XENC_NO_BLAS
  static const std::string beyond = blas_report().beyond_cpu;
  if (!beyond.empty()) throw config_error(std::string(function) + ": " + beyond);
#else
  (void)function;
#endif
}

namespace kernels {

void warn_once_if_blas_fallback() {
  static const bool warned = [] {
    const BlasReport r = blas_report();
    if (r.better.empty()) return false;
    const char* cpu = simd_tier_name(cpu_tier(r.cpu));
    if (r.reexec_from.empty())
      std::fprintf(stderr,
                   "xencoder: OpenBLAS runs its %s kernels, but this CPU runs %s: matrix products "
                   "are several times slower than they can be. Set OPENBLAS_CORETYPE=%s in the "
                   "environment before the program starts (OpenBLAS reads it only when it "
                   "loads).\n",
                   r.core.c_str(), cpu, r.better.c_str());
    else
      std::fprintf(stderr,
                   "xencoder: OpenBLAS runs its %s kernels even with OPENBLAS_CORETYPE=%s (set "
                   "by xencoder), on a CPU that runs %s: this OpenBLAS has no faster set for it.\n",
                   r.core.c_str(), r.coretype_env.c_str(), cpu);
    return true;
  }();
  (void)warned;
}

}  // namespace kernels
}  // namespace xenc

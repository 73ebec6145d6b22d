// xencoder_bench: Google Benchmark main with the run's context (build type, BLAS, threads).
//
// The BLAS thread count comes from OpenBLAS itself, which reads OPENBLAS_NUM_THREADS at start
// (unset: one thread per core). Run with e.g. `OPENBLAS_NUM_THREADS=1 ./xencoder_bench`.
#include <cblas.h>

#include <cstdlib>
#include <string>

#include <benchmark/benchmark.h>

#include "heap_policy.hpp"  // apps/common
#include "xenc/config.hpp"

namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

void add_context() {
  benchmark::AddCustomContext("xencoder_version", XENC_VERSION);
  benchmark::AddCustomContext("xencoder_build_type", XENC_BUILD_TYPE);
#ifdef XENC_BENCH_NATIVE
  benchmark::AddCustomContext("xencoder_march_native", "ON");
#else
  benchmark::AddCustomContext("xencoder_march_native", "OFF");
#endif
  benchmark::AddCustomContext("blas_library", XENC_BLAS_LIBRARIES);
  benchmark::AddCustomContext("blas_config", openblas_get_config());
  // The kernels OpenBLAS picked for this CPU (e.g. Haswell = AVX2, SkylakeX = AVX-512);
  // OPENBLAS_CORETYPE overrides the choice when it is set before the library loads.
  benchmark::AddCustomContext("blas_core", openblas_get_corename());
  benchmark::AddCustomContext("OPENBLAS_CORETYPE", env_or("OPENBLAS_CORETYPE", "(unset)"));
  benchmark::AddCustomContext("blas_threads", std::to_string(openblas_get_num_threads()));
  benchmark::AddCustomContext("OPENBLAS_NUM_THREADS", env_or("OPENBLAS_NUM_THREADS", "(unset)"));
  // glibc's heap thresholds, fixed before main as in every program (apps/common/heap_policy.hpp)
  benchmark::AddCustomContext("heap", xenc_app::heap_summary());
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  add_context();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

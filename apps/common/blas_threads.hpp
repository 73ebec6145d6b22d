// Shared by the training apps (included as "../common/blas_threads.hpp"): how many threads
// OpenBLAS, the library's BLAS, uses.
//
// A small model's matrix products (e.g. [32·16, 64] × [64, 192]) take microseconds; spreading
// each over several threads costs more in waking and waiting than it saves, and on a busy
// machine the waiting threads spin. Measured on this project's 2-core machine while other
// programs ran: xenc-extrapolate trained 5 times faster in wall time with 1 thread than with 2.
// So the training apps use one thread unless OPENBLAS_NUM_THREADS says otherwise.
#pragma once

#include <cstdlib>

// OpenBLAS's own extensions (declared in its cblas.h; xencoder links OpenBLAS publicly).
extern "C" void openblas_set_num_threads(int num_threads);
extern "C" int openblas_get_num_threads(void);

namespace xenc_app {

/// Sets OpenBLAS to one thread unless the environment sets OPENBLAS_NUM_THREADS; returns the
/// number of threads OpenBLAS now uses.
inline int one_blas_thread_unless_set() {
  if (std::getenv("OPENBLAS_NUM_THREADS") == nullptr) openblas_set_num_threads(1);
  return openblas_get_num_threads();
}

}  // namespace xenc_app

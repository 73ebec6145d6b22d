// parallel_for: the one place xencoder starts threads of its own: for attention in tiles, whose
// GEMMs are too small for OpenBLAS to split well, and for large GEMMs (gemm.cpp says why).
//
// The thread budget is OpenBLAS's: OPENBLAS_NUM_THREADS (or openblas_set_num_threads) says how
// many cores xencoder may use, for its own threads as for BLAS's. While the workers run, OpenBLAS
// is set to one thread, so that a GEMM inside a worker does not start threads of its own (2
// workers × 2 BLAS threads on 2 cores would oversubscribe them); the old setting is restored
// afterwards. Items are handed out one at a time from an atomic counter, so a slow item (a head
// with a long mask row) does not leave the other thread idle. A build without BLAS
// (WebAssembly: XENC_NO_BLAS) has a budget of one thread: everything runs on the caller's.
#ifndef XENC_NO_BLAS
#include <cblas.h>
#endif

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels.hpp"

namespace xenc::kernels {

namespace {
int blas_threads() {
#ifdef XENC_NO_BLAS
  return 1;
#else
  return openblas_get_num_threads();
#endif
}
void set_blas_threads([[maybe_unused]] int n) {
#ifndef XENC_NO_BLAS
  openblas_set_num_threads(n);
#endif
}

// OpenBLAS at one thread for the scope's lifetime, the old setting restored after it.
struct OneBlasThread {
  const int saved = blas_threads();
  OneBlasThread() { set_blas_threads(1); }
  ~OneBlasThread() { set_blas_threads(saved); }
  OneBlasThread(const OneBlasThread&) = delete;
  OneBlasThread& operator=(const OneBlasThread&) = delete;
};
}  // namespace

std::size_t thread_budget() { return static_cast<std::size_t>(std::max(1, blas_threads())); }

void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  const std::size_t threads = std::min(thread_budget(), n);
  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  const OneBlasThread one_blas_thread;
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        fn(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next = n;  // stop handing out items
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();  // the calling thread is one of the workers
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace xenc::kernels

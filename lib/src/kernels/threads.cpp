// The one pool of threads xencoder runs on: attention's work items (heads × query blocks × batch,
// ops/multi_head_attention.cpp) and the blocks of a large GEMM (gemm.cpp).
//
// The thread budget is OpenBLAS's setting: OPENBLAS_NUM_THREADS (or openblas_set_num_threads)
// says how many cores xencoder may use. OpenBLAS itself never runs threads of its own for
// xencoder: every sgemm is called with OpenBLAS set to one thread (BlasOnOneThread), and the pool
// splits the large ones. Why: after a threaded call, OpenBLAS 0.3.21's idle worker spin-waits for
// the next one for 2^28 TSC ticks (its THREAD_TIMEOUT, read only when the library loads), and
// takes a core from whatever runs next; on the plain path at T = 128 that doubled the CPU time
// (bench/README.md, "One pool"). So at any moment one of the two holds the cores: the pool.
//
// The pool is persistent: budget − 1 workers are started once (more when the budget grows) and
// sleep on a condition variable between regions, so an idle worker costs no CPU. A region hands
// out items from one atomic counter (no lock per item; a slow item does not leave the others
// idle); the caller is worker 0. The mutex is taken twice per region (start, end), never per
// item. One region at a time: a second caller (another thread of the user's, or a parallel_for
// nested inside an item) runs its items on its own thread. A build without BLAS (WebAssembly:
// XENC_NO_BLAS) has a budget of one thread: everything runs on the caller's.
#ifndef XENC_NO_BLAS
#include <cblas.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <ctime>
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

// CPU time the calling threads spent inside regions (nanoseconds), for region_cpu_seconds.
std::atomic<std::uint64_t> caller_region_ns{0};
std::uint64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::uint64_t(t.tv_sec) * 1000000000u + std::uint64_t(t.tv_nsec);
}

std::uint64_t wall_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return std::uint64_t(t.tv_sec) * 1000000000u + std::uint64_t(t.tv_nsec);
}

// Totals behind pool_stats(), in nanoseconds. Written by the caller of a region only (one region
// at a time), after the region ended; relaxed: a reader on another thread sees each total whole.
struct StatTotals {
  std::atomic<std::uint64_t> regions{0}, participants{0}, items{0}, wall{0}, busy_wall{0},
      busy_cpu{0}, wake{0}, dispatch{0}, tail{0}, lag{0};
};
StatTotals totals;
void add(std::atomic<std::uint64_t>& total, std::uint64_t ns) {
  total.fetch_add(ns, std::memory_order_relaxed);
}

// What one participant of a region did: when it ran its first item and finished its last (wall
// clock), and the CPU time it spent in between. Four clock reads per participant per region.
struct Visit {
  std::uint64_t arrive = 0, leave = 0, cpu = 0;
};

// True on a thread while it runs a region's items: a parallel_for there runs serially.
thread_local bool in_region = false;

using ItemFn = std::function<void(std::size_t, std::size_t)>;

class Pool {
 public:
  // Runs fn(item, worker) for item < n on `threads` threads (this one is worker 0).
  void run(std::size_t n, std::size_t threads, const ItemFn& fn) {
    std::unique_lock<std::mutex> region(region_, std::try_to_lock);
    if (!region.owns_lock()) {  // another region is running: this caller works alone
      for (std::size_t i = 0; i < n; ++i) fn(i, 0);
      return;
    }
    while (workers_.size() + 1 < threads) {
      // a new worker waits for the generation after the current one (this region's), however
      // late it starts
      const std::size_t w = workers_.size() + 1;
      const std::uint64_t seen = generation_;
      workers_.emplace_back([this, w, seen] { work_loop(w, seen); });
    }
    if (visits_.size() < threads) visits_.resize(threads);
    const std::uint64_t start = wall_ns();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      fn_ = &fn;
      n_ = n;
      next_ = 0;
      participants_ = threads;
      running_ = threads - 1;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    run_items(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return running_ == 0; });
    const std::uint64_t end = wall_ns();
    fn_ = nullptr;
    account(start, end, threads, n);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run_items(std::size_t worker) {
    in_region = true;
    Visit& visit = visits_[worker];  // this participant's own slot, read by the caller at the end
    visit.arrive = wall_ns();
    const std::uint64_t cpu0 = thread_cpu_ns();
    for (std::size_t i = next_++; i < n_; i = next_++) {
      try {
        (*fn_)(i, worker);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
        next_ = n_;  // stop handing out items
      }
    }
    visit.cpu = thread_cpu_ns() - cpu0;
    visit.leave = wall_ns();
    in_region = false;
  }

  // Adds one region to the totals (the caller, after every participant is done: the workers'
  // visits were written before they took the mutex to report, which the caller holds now).
  void account(std::uint64_t start, std::uint64_t end, std::size_t threads, std::size_t n) {
    std::uint64_t busy_wall = 0, busy_cpu = 0, wake = 0, lag = 0;
    for (std::size_t w = 0; w < threads; ++w) {
      const Visit& v = visits_[w];
      busy_wall += v.leave - v.arrive;
      busy_cpu += v.cpu;
      if (w > 0) {
        wake += v.arrive > start ? v.arrive - start : 0;
        lag += end > v.leave ? end - v.leave : 0;
      }
    }
    add(totals.regions, 1);
    add(totals.participants, threads);
    add(totals.items, n);
    add(totals.wall, end - start);
    add(totals.busy_wall, busy_wall);
    add(totals.busy_cpu, busy_cpu);
    add(totals.wake, wake);
    add(totals.dispatch, visits_[0].arrive - start);
    add(totals.tail, end - visits_[0].leave);
    add(totals.lag, lag);
  }

  void work_loop(std::size_t w, std::uint64_t seen) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (w >= participants_) continue;  // this region asked for fewer threads
      lock.unlock();
      run_items(w);
      lock.lock();
      if (--running_ == 0) done_.notify_one();
    }
  }

  std::mutex region_;  // one region at a time
  std::mutex mutex_;   // guards the fields below, at a region's start and end only
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  std::vector<Visit> visits_;  // one per participant, resized by the caller between regions
  const ItemFn* fn_ = nullptr;
  std::size_t n_ = 0, participants_ = 0, running_ = 0;
  std::uint64_t generation_ = 0;
  std::atomic<std::size_t> next_{0};
  std::mutex error_mutex_;  // taken only when an item throws
  std::exception_ptr error_;
};

// The process's pool, made on first use and never destroyed (its workers sleep until the process
// ends; no static destructor joins threads at exit). A child after fork() has none of the parent's
// workers: it gets a pool of its own.
Pool& pool() {
  static Pool* p = nullptr;
  static pid_t owner = 0;
  static std::mutex made;
  const std::lock_guard<std::mutex> lock(made);
  if (p == nullptr || owner != getpid()) {
    p = new Pool();  // NOLINT: intentionally never freed (see above)
    owner = getpid();
  }
  return *p;
}
}  // namespace

BlasOnOneThread::BlasOnOneThread() : saved_(blas_threads()) {
  if (saved_ != 1) set_blas_threads(1);
}
BlasOnOneThread::~BlasOnOneThread() {
  if (saved_ != 1) set_blas_threads(saved_);
}

std::size_t thread_budget() { return static_cast<std::size_t>(std::max(1, blas_threads())); }

void parallel_for(std::size_t n, std::size_t threads,
                  const std::function<void(std::size_t, std::size_t)>& fn) {
  threads = std::min({threads, thread_budget(), n});
  if (threads <= 1 || in_region) {
    for (std::size_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  const BlasOnOneThread one_blas_thread;
  const std::uint64_t start = thread_cpu_ns();
  pool().run(n, threads, fn);
  caller_region_ns += thread_cpu_ns() - start;
}

double region_cpu_seconds() { return double(caller_region_ns.load()) * 1e-9; }

PoolStats pool_stats() {
  const auto s = [](const std::atomic<std::uint64_t>& ns) {
    return double(ns.load(std::memory_order_relaxed)) * 1e-9;
  };
  PoolStats p;
  p.regions = totals.regions.load(std::memory_order_relaxed);
  p.participants = totals.participants.load(std::memory_order_relaxed);
  p.items = totals.items.load(std::memory_order_relaxed);
  p.wall = s(totals.wall);
  p.busy_wall = s(totals.busy_wall);
  p.busy_cpu = s(totals.busy_cpu);
  p.wake = s(totals.wake);
  p.dispatch = s(totals.dispatch);
  p.tail = s(totals.tail);
  p.lag = s(totals.lag);
  return p;
}

void reset_pool_stats() {
  for (auto* t :
       {&totals.regions, &totals.participants, &totals.items, &totals.wall, &totals.busy_wall,
        &totals.busy_cpu, &totals.wake, &totals.dispatch, &totals.tail, &totals.lag})
    t->store(0, std::memory_order_relaxed);
}

void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  parallel_for(n, thread_budget(), [&fn](std::size_t i, std::size_t) { fn(i); });
}

void parallel_rows(std::size_t rows, std::size_t cols,
                   const std::function<void(std::size_t, std::size_t)>& fn, std::size_t min_work) {
  const std::size_t threads = thread_budget();
  const std::size_t blocks = std::min(rows, 4 * threads);
  if (threads <= 1 || blocks <= 1 || rows * cols < min_work) {
    if (rows != 0) fn(0, rows);
    return;
  }
  const std::size_t step = (rows + blocks - 1) / blocks;
  parallel_for((rows + step - 1) / step, threads,
               [&](std::size_t b, std::size_t) { fn(b * step, std::min(rows, (b + 1) * step)); });
}

void parallel_columns(std::size_t rows, std::size_t cols,
                      const std::function<void(std::size_t, std::size_t)>& fn,
                      std::size_t min_work) {
  // whole 64-byte lines of floats: every block but the last is a multiple of the vector width,
  // so each column meets the same loop whatever the cut
  constexpr std::size_t kLine = 16;
  const std::size_t threads = thread_budget();
  const std::size_t lines = (cols + kLine - 1) / kLine;
  const std::size_t blocks = std::min(lines, 4 * threads);
  if (threads <= 1 || blocks <= 1 || rows * cols < min_work) {
    if (cols != 0) fn(0, cols);
    return;
  }
  const std::size_t step = (lines + blocks - 1) / blocks * kLine;
  parallel_for((cols + step - 1) / step, threads,
               [&](std::size_t b, std::size_t) { fn(b * step, std::min(cols, (b + 1) * step)); });
}

}  // namespace xenc::kernels

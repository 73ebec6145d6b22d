// xencoder_sgemm M N K OPA OPB REPS: one cblas_sgemm C[M, N] = op(A) op(B) (K summed, OPA and OPB
// each "n" or "t"), timed with OpenBLAS's OWN threads at the budget OPENBLAS_NUM_THREADS gives it
// (xencoder never lets OpenBLAS thread: its pool splits large GEMMs, bench/README.md "One pool").
// Prints "wall MS cpu MS threads N core NAME": the mean per call, wall clock and process CPU time,
// after 3 calls that warm the caches and start OpenBLAS's threads, and the kernel set that ran
// (like every program, it re-executes itself with OPENBLAS_CORETYPE when OpenBLAS fell back to a
// weaker set than the CPU runs: apps/common/blas_core_reexec.cpp).
//
// What it is for: bench/gemm_bound.py runs an encoder layer's GEMM shapes through it on 1 and on
// 2 threads, in separate processes, to measure what the machine's BLAS itself gets from a second
// core on those shapes: a bound, measured apart from xencoder's code, on what a layer made mostly
// of these GEMMs can get.
#include <cblas.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {
double seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

bool parse_op(const char* s, CBLAS_TRANSPOSE& op) {
  const std::string v = s;
  if (v == "n")
    op = CblasNoTrans;
  else if (v == "t")
    op = CblasTrans;
  else
    return false;
  return true;
}
}  // namespace

int main(int argc, char** argv) {
  CBLAS_TRANSPOSE op_a = CblasNoTrans, op_b = CblasNoTrans;
  long M = 0, N = 0, K = 0, reps = 0;
  if (argc == 7) {
    M = std::atol(argv[1]);
    N = std::atol(argv[2]);
    K = std::atol(argv[3]);
    reps = std::atol(argv[6]);
  }
  if (argc != 7 || M <= 0 || N <= 0 || K <= 0 || reps <= 0 || !parse_op(argv[4], op_a) ||
      !parse_op(argv[5], op_b)) {
    std::fprintf(stderr,
                 "usage: xencoder_sgemm M N K OPA OPB REPS (M, N, K, REPS >= 1; OPA, OPB: n or t)\n"
                 "  times cblas_sgemm with OpenBLAS's own threads (OPENBLAS_NUM_THREADS)\n");
    return 2;
  }
  // row-major: op(A) is [M, K] and op(B) is [K, N]; A and B as stored
  const long lda = op_a == CblasNoTrans ? K : M, ldb = op_b == CblasNoTrans ? N : K;
  std::vector<float> a(std::size_t(M * K)), b(std::size_t(K * N)), c(std::size_t(M * N));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(i % 7) * 0.1f - 0.3f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = float(i % 5) * 0.1f - 0.2f;
  const auto call = [&] {
    cblas_sgemm(CblasRowMajor, op_a, op_b, int(M), int(N), int(K), 1.0f, a.data(), int(lda),
                b.data(), int(ldb), 0.0f, c.data(), int(N));
  };
  for (int i = 0; i < 3; ++i) call();
  const double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
  for (long i = 0; i < reps; ++i) call();
  const double wall = (seconds(CLOCK_MONOTONIC) - w0) / double(reps);
  const double cpu = (seconds(CLOCK_PROCESS_CPUTIME_ID) - c0) / double(reps);
  std::printf("wall %.4f cpu %.4f threads %d core %s\n", wall * 1e3, cpu * 1e3,
              openblas_get_num_threads(), openblas_get_corename());
  return 0;
}

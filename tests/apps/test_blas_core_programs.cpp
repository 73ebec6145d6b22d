// The OpenBLAS core-set mechanism as programs see it (xenc/core/blas_core.hpp): an xenc-* program
// re-executes itself with OPENBLAS_CORETYPE when OpenBLAS fell back, a user's program gets one
// warning, an explicit OPENBLAS_CORETYPE is respected, and no program runs a fallback set without
// saying so. The fallback is made up with the test-only switch XENC_TEST_BLAS_CORE=Prescott (the
// set OpenBLAS 0.3.21 chooses on an Emerald Rapids Xeon), on whatever CPU runs the test; the set
// each run must end on comes from /proc/cpuinfo's flags, not from the library.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "support/run_program.hpp"

namespace {

using xenc::test::RunResult;

// Runs `program args` with the environment changed by `env` (env(1) arguments: "-u NAME" unsets,
// "NAME=value" sets), in a fresh directory.
RunResult run_with(const std::string& env, const std::string& program, const std::string& args) {
  const std::string dir = xenc::test::fresh_test_dir(XENC_TEST_OUT_DIR);
  return xenc::test::run_program("/usr/bin/env", env + " '" + program + "' " + args, dir);
}

// OpenBLAS chose alone, and (the test switch) chose Prescott; no earlier re-execution.
const std::string kFellBack =
    "-u OPENBLAS_CORETYPE -u XENC_BLAS_REEXEC XENC_TEST_BLAS_CORE=Prescott";

// The set this CPU should run, from Linux's feature flags: "SkylakeX" with AVX-512 F/BW/DQ/VL,
// "Haswell" with AVX2 + FMA, "Sandybridge" with AVX, "" otherwise (Prescott is then right).
std::string best_set_from_proc_cpuinfo() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::set<std::string> flags;
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string w; words >> w;) flags.insert(w);
      break;
    }
  auto has = [&](const char* f) { return flags.count(f) == 1; };
  if (has("avx512f") && has("avx512bw") && has("avx512dq") && has("avx512vl") && has("fma"))
    return "SkylakeX";
  if (has("avx2") && has("fma")) return "Haswell";
  if (has("avx")) return "Sandybridge";
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}
std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(BlasCoreProgram, FallbackIsReplacedByReexecution) {
  const std::string best = best_set_from_proc_cpuinfo();
  ASSERT_FALSE(best.empty()) << "this CPU runs no AVX: OpenBLAS's Prescott is its best set";
  const RunResult r = run_with(kFellBack, XENC_APP_WORD_ORDER, "--version");
  ASSERT_EQ(r.status, 0) << r.err;
  // the line of the re-executed process: OpenBLAS loaded with the variable and runs that set
  EXPECT_TRUE(contains(r.out, "core set " + best + " (OPENBLAS_CORETYPE=" + best +
                                  ", set by xencoder: OpenBLAS chose Prescott on this "))
      << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(BlasCoreProgram, ReexecutedProgramComputesWithoutAWarning) {
  const RunResult plain =
      run_with("-u OPENBLAS_CORETYPE -u XENC_TEST_BLAS_CORE", XENC_APP_WORD_ORDER, "");
  const RunResult r = run_with(kFellBack, XENC_APP_WORD_ORDER, "");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // the demo's narration does not depend on the kernels beyond its printed digits
  EXPECT_TRUE(contains(r.out, "Without positional information (--position none)")) << r.out;
  EXPECT_EQ(count(r.out, "\n"), count(plain.out, "\n"));
}

TEST(BlasCoreProgram, NoSecondReexecutionAndNeverSilent) {
  // as if a re-execution had happened and OpenBLAS still chose Prescott: no loop, and the
  // program says what runs, in --version and on stderr at its first matrix product
  const std::string best = best_set_from_proc_cpuinfo();
  ASSERT_FALSE(best.empty());
  const std::string env = kFellBack + " XENC_BLAS_REEXEC=Prescott";
  const RunResult v = run_with(env, XENC_APP_WORD_ORDER, "--version");
  ASSERT_EQ(v.status, 0) << v.err;
  EXPECT_TRUE(contains(v.out, "core set Prescott (a fallback: this CPU runs ")) << v.out;
  EXPECT_TRUE(contains(v.out, "; set OPENBLAS_CORETYPE=" + best + ")")) << v.out;
  const RunResult r = run_with(env, XENC_APP_WORD_ORDER, "");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count(r.err, "xencoder: OpenBLAS runs its Prescott kernels"), 1u) << r.err;
  EXPECT_TRUE(contains(r.err, "Set OPENBLAS_CORETYPE=" + best + " in the environment")) << r.err;
}

TEST(BlasCoreProgram, ExplicitCoretypeIsRespected) {
  const std::string best = best_set_from_proc_cpuinfo();
  ASSERT_FALSE(best.empty());
  // Sandybridge runs on every CPU with AVX; the test switch is ignored once the variable is set
  const RunResult r = run_with(
      "-u XENC_BLAS_REEXEC XENC_TEST_BLAS_CORE=Prescott "
      "OPENBLAS_CORETYPE=Sandybridge",
      XENC_APP_WORD_ORDER, "--version");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(
      contains(r.out, "core set Sandybridge (OPENBLAS_CORETYPE=Sandybridge; this CPU runs "))
      << r.out;
  EXPECT_FALSE(contains(r.out, "set by xencoder")) << r.out;
}

// The set one tier above the best this CPU runs ("" on an AVX-512 CPU: none is beyond it).
std::string set_beyond(const std::string& best) {
  if (best == "Haswell") return "SkylakeX";
  if (best == "Sandybridge") return "Haswell";
  if (best.empty()) return "Sandybridge";
  return "";
}

// OPENBLAS_CORETYPE naming kernels this CPU cannot execute: respected (never replaced), but the
// program says so in --version and refuses its first matrix product with a message and exit 1,
// where OpenBLAS would stop it with SIGILL (exit 132, no message). On an AVX-512 CPU every set
// runs, and SkylakeX must compute as any other set.
TEST(BlasCoreProgram, CoretypeBeyondTheCpuIsRefusedWithTheValueThatFits) {
  const std::string best = best_set_from_proc_cpuinfo();
  const std::string beyond = set_beyond(best);
  const std::string env = "-u XENC_BLAS_REEXEC -u XENC_TEST_BLAS_CORE OPENBLAS_CORETYPE=";
  if (beyond.empty()) {
    const RunResult r = run_with(env + "SkylakeX", XENC_APP_WORD_ORDER, "");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "Without positional information (--position none)")) << r.out;
    return;
  }
  const RunResult v = run_with(env + beyond, XENC_APP_WORD_ORDER, "--version");
  ASSERT_EQ(v.status, 0) << v.err;
  EXPECT_TRUE(
      contains(v.out, "core set " + beyond + " (OPENBLAS_CORETYPE=" + beyond + ", beyond this "))
      << v.out;
  const RunResult r = run_with(env + beyond, XENC_APP_WORD_ORDER, "");
  EXPECT_EQ(r.status, 1) << "status " << r.status << " (132 = SIGILL): " << r.err;
  EXPECT_TRUE(contains(r.err, "gemm: OPENBLAS_CORETYPE=" + beyond + " makes OpenBLAS run its " +
                                  beyond + " kernels"))
      << r.err;
  EXPECT_TRUE(contains(r.err, best.empty() ? "Unset OPENBLAS_CORETYPE before"
                                           : "Unset OPENBLAS_CORETYPE, or set it to " + best + ","))
      << r.err;
  // the same in a program that calls OpenBLAS through xtensor-blas
  const RunResult pe = run_with(env + beyond, XENC_APP_PE_PROPERTIES, "");
  EXPECT_EQ(pe.status, 1) << "status " << pe.status << ": " << pe.err;
  EXPECT_TRUE(contains(pe.err, "OPENBLAS_CORETYPE=" + beyond + " makes OpenBLAS run")) << pe.err;
}

TEST(BlasCoreProgram, UserProgramIsWarnedOnceWithTheValue) {
  const std::string best = best_set_from_proc_cpuinfo();
  ASSERT_FALSE(best.empty());
  const RunResult r = run_with(kFellBack, XENC_BLAS_USER_PROGRAM, "");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "118\n")) << r.out;  // [[1,2],[3,4]]^3 = [[37, 54], [81, 118]]
  // two products, one warning, naming the variable and the value; no re-execution
  EXPECT_EQ(count(r.err, "xencoder: OpenBLAS runs its Prescott kernels, but this CPU runs "), 1u)
      << r.err;
  EXPECT_TRUE(contains(r.err, "Set OPENBLAS_CORETYPE=" + best + " in the environment")) << r.err;
  EXPECT_TRUE(contains(r.out, "core set Prescott (a fallback")) << r.out;
  // the same program with the variable set as the warning says: no warning
  const RunResult fixed =
      run_with("-u XENC_BLAS_REEXEC OPENBLAS_CORETYPE=" + best, XENC_BLAS_USER_PROGRAM, "");
  ASSERT_EQ(fixed.status, 0) << fixed.err;
  EXPECT_EQ(fixed.err, "");
  EXPECT_TRUE(contains(fixed.out, "core set " + best + " (OPENBLAS_CORETYPE=" + best)) << fixed.out;
}

#ifdef XENC_KERNEL
// xenc-kernel, which does not link the library (its cells load it): the same re-execution, seen
// in its --version line, and an explicit OPENBLAS_CORETYPE kept.
TEST(BlasCoreProgram, KernelReexecutesToo) {
  const std::string best = best_set_from_proc_cpuinfo();
  ASSERT_FALSE(best.empty());
  const RunResult r = run_with(kFellBack, XENC_KERNEL, "--version");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("xenc-kernel ", 0), 0u) << r.out;
  EXPECT_TRUE(contains(r.out, "\nBLAS: OpenBLAS ")) << r.out;
  EXPECT_TRUE(contains(r.out, "core set " + best + " (OPENBLAS_CORETYPE=" + best +
                                  ", set by xencoder: OpenBLAS chose Prescott on this "))
      << r.out;
  // and its heap, fixed as in every program (apps/common/heap_policy.hpp)
  EXPECT_TRUE(contains(
      r.out, "\nheap: glibc, fixed thresholds (blocks up to 32 MiB reused, 64 MiB kept free)\n"))
      << r.out;
  const RunResult own = run_with(
      "-u XENC_BLAS_REEXEC XENC_TEST_BLAS_CORE=Prescott "
      "OPENBLAS_CORETYPE=Sandybridge",
      XENC_KERNEL, "--version");
  ASSERT_EQ(own.status, 0) << own.err;
  EXPECT_TRUE(contains(own.out, "core set Sandybridge (OPENBLAS_CORETYPE=Sandybridge; this CPU "))
      << own.out;
}
#endif

#ifdef XENC_BENCH_SERIAL
// The four benchmark programs (bench/) time what the programs run: past a fallback they re-execute
// too, and say which set ran (xencoder_bench in its context block, xencoder_serial in its BLAS
// line, xencoder_sgemm at the end of its line); none warns. A benchmark on the fallback would time
// kernels no program runs (seen on an Emerald Rapids VM before they re-executed).
TEST(BlasCoreProgram, BenchmarkProgramsReexecuteToo) {
  const std::string best = best_set_from_proc_cpuinfo();
  ASSERT_FALSE(best.empty());
  const std::string env = kFellBack + " OPENBLAS_NUM_THREADS=1";
  const RunResult bench = run_with(
      env, XENC_BENCH,
      "--benchmark_filter=^BM_Sgemm/N:64/ --benchmark_min_time=0.01 --benchmark_format=json");
  ASSERT_EQ(bench.status, 0) << bench.err;
  EXPECT_TRUE(contains(bench.out, "\"blas_core\": \"" + best + "\"")) << bench.out;
  EXPECT_TRUE(contains(bench.out, "\"OPENBLAS_CORETYPE\": \"" + best + "\"")) << bench.out;
  EXPECT_EQ(bench.err, "");

  const RunResult serial = run_with(env, XENC_BENCH_SERIAL, "32 32 4 forward 1");
  ASSERT_EQ(serial.status, 0) << serial.err;
  EXPECT_TRUE(contains(serial.out, "\nBLAS: OpenBLAS ")) << serial.out;
  EXPECT_TRUE(contains(serial.out, "core set " + best + " (OPENBLAS_CORETYPE=" + best +
                                       ", set by xencoder: OpenBLAS chose Prescott on this "))
      << serial.out;
  EXPECT_EQ(serial.err, "");

  const RunResult sgemm = run_with(env, XENC_BENCH_SGEMM, "16 16 16 n t 2");
  ASSERT_EQ(sgemm.status, 0) << sgemm.err;
  EXPECT_TRUE(contains(sgemm.out, " core " + best + "\n")) << sgemm.out;
  EXPECT_EQ(sgemm.err, "");

  const RunResult memory = run_with(env, XENC_BENCH_MEMORY, "32 32 4");
  ASSERT_EQ(memory.status, 0) << memory.err;
  EXPECT_EQ(memory.err, "");
}
#endif

// Every xenc-* program's --version says which BLAS, which core set and how many threads.
TEST(BlasCoreProgram, EveryProgramsVersionNamesTheBlas) {
  std::istringstream programs(XENC_PROGRAMS);  // paths separated by spaces
  int seen = 0;
  for (std::string path; programs >> path; ++seen) {
    const RunResult r = run_with("-u XENC_TEST_BLAS_CORE", path, "--version");
    EXPECT_EQ(r.status, 0) << path << ": " << r.err;
    const std::string name = path.substr(path.rfind('/') + 1);
    EXPECT_EQ(r.out.rfind(name + " ", 0), 0u) << r.out;
    EXPECT_TRUE(contains(r.out, "\nBLAS: OpenBLAS ")) << path << ": " << r.out;
    EXPECT_TRUE(contains(r.out, ", core set ")) << path << ": " << r.out;
    EXPECT_TRUE(contains(r.out, " thread")) << path << ": " << r.out;
  }
  EXPECT_EQ(seen, 11);
}

}  // namespace

// Which of OpenBLAS's kernel sets runs, and whether it is the best one the CPU can execute.
//
// OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its GEMM kernels when it loads: from the CPU's
// family and model, or from OPENBLAS_CORETYPE when that is set. A CPU newer than the OpenBLAS
// release is not in its tables, and 0.3.21 (Debian 12) then runs an older set: an Emerald Rapids
// Xeon (family 6, model 207) or a Raptor Lake laptop (model 183) gets Prescott, SSE3 kernels 3-7x
// slower than its AVX-512 or AVX2 ones (driver/others/dynamic.c: an unknown extended model of
// family 6 falls through to the Pentium 4 case). The CPU itself says what it can run (cpuid), so
// xencoder compares the two:
//
//   - choose_blas_core, the decision, a pure function: OpenBLAS's core name and the CPU's features
//     in, the core set to ask for out (or "" when OpenBLAS's choice is already the best);
//   - blas_report, the state of this process: library, core set, threads, what the environment
//     says, and the decision for this CPU.
//
// What happens with the decision: every xenc-* program and xenc-kernel re-executes itself once
// with OPENBLAS_CORETYPE set to the better set before main (apps/common/blas_core_reexec.cpp;
// OpenBLAS reads the variable only when it loads); any other program that links the library gets
// one warning on stderr at its first GEMM, naming the variable and the value to set. An explicit
// OPENBLAS_CORETYPE is always respected.
#pragma once

#include <string>
#include <string_view>

namespace xenc {

/// What the CPU and the operating system let a program execute (cpuid leaves 1 and 7, xgetbv).
struct CpuFeatures {
  bool avx = false, avx2 = false, fma = false;
  bool avx512f = false, avx512bw = false, avx512dq = false, avx512vl = false;
  bool os_saves_ymm = false;  // XCR0 bits 1-2: the OS saves the AVX registers
  bool os_saves_zmm = false;  // XCR0 bits 5-7 too: the OS saves the AVX-512 registers
};

/// The kernel tiers that matter for sgemm, weakest first. OpenBLAS's x86-64 core sets by tier:
/// sse: Prescott, Core2, Penryn, Dunnington, Nehalem, Atom, Nano, Opteron(_SSE3), Barcelona,
/// Bobcat (and the 32-bit Katmai ... Athlon); avx: Sandybridge, Bulldozer, Piledriver,
/// Steamroller, Excavator; avx2: Haswell, Zen; avx512: SkylakeX, Cooperlake, SapphireRapids.
enum class SimdTier { sse, avx, avx2, avx512 };

/// "SSE", "AVX", "AVX2", "AVX-512".
const char* simd_tier_name(SimdTier tier);

/// The best tier the CPU can execute: avx512 needs AVX-512 F, BW, DQ and VL, AVX2 + FMA and the
/// OS saving the zmm registers; avx2 needs AVX2 + FMA (+ AVX, ymm saved); avx needs AVX.
SimdTier cpu_tier(const CpuFeatures& cpu);

/// The tier of an OpenBLAS core set, by name, ignoring case ("Prescott" -> sse). false when the
/// name is none of OpenBLAS's x86-64 sets (another architecture, "Unknown").
bool core_tier(std::string_view core, SimdTier& tier);

/// The decision. `core` is OpenBLAS's choice (openblas_get_corename()), `cpu` what the CPU can
/// run, `dynamic_arch` whether this OpenBLAS holds several sets (its config says DYNAMIC_ARCH:
/// only then does OPENBLAS_CORETYPE choose anything). Returns the set to put in OPENBLAS_CORETYPE
/// when OpenBLAS's choice is of a weaker tier than the CPU's: "SkylakeX" for AVX-512 (0.3.21
/// cannot be asked for Cooperlake by name: its force_coretype stops one entry short; for float32
/// the two sets share their sgemm kernels), "Haswell" for AVX2 + FMA, "Sandybridge" for AVX.
/// Returns "" when the choice is already of the CPU's tier (Zen on AVX2, Cooperlake on AVX-512),
/// when the name is unknown, or when OpenBLAS has one set only.
std::string choose_blas_core(std::string_view core, const CpuFeatures& cpu, bool dynamic_arch);

/// The environment variables of the mechanism, besides OPENBLAS_CORETYPE:
/// kBlasReexecMarker is set by a program's re-execution to the core set OpenBLAS had chosen (so a
/// second re-execution never happens, and --version can say why the variable is set);
/// kBlasTestCore is for tests only: when OPENBLAS_CORETYPE is unset, the library believes that
/// OpenBLAS chose this set (e.g. "Prescott"), so a test can show what a fallback does.
inline constexpr const char* kBlasReexecMarker = "XENC_BLAS_REEXEC";
inline constexpr const char* kBlasTestCore = "XENC_TEST_BLAS_CORE";

/// This process's BLAS.
struct BlasReport {
  std::string library;        // "OpenBLAS 0.3.21", or "none" (WebAssembly: plain C++ GEMM)
  std::string core;           // the core set OpenBLAS runs (or believes it runs: kBlasTestCore)
  int threads = 1;            // openblas_get_num_threads()
  bool dynamic_arch = false;  // several core sets, chosen at load time
  std::string coretype_env;   // OPENBLAS_CORETYPE, "" when unset
  std::string reexec_from;    // kBlasReexecMarker: OpenBLAS's own choice before the re-execution
  CpuFeatures cpu;
  std::string better;      // choose_blas_core for this CPU when OpenBLAS chose alone, else ""
  std::string beyond_cpu;  // blas_core_beyond_cpu: OPENBLAS_CORETYPE asks for kernels the CPU
                           // cannot execute (the sentence that says so), else ""
};

/// When OPENBLAS_CORETYPE made OpenBLAS run a core set of a higher tier than the CPU can execute
/// (`core`, what OpenBLAS runs, "SkylakeX" on an AVX2 CPU), the sentence that says so and what to
/// set instead; "" otherwise (the variable unset, a set the CPU runs, or a name of no known tier).
/// Such a set's matrix products stop the process with an illegal instruction (SIGILL), so
/// kernels::gemm throws this sentence instead of calling OpenBLAS, and --version prints it.
std::string blas_core_beyond_cpu(std::string_view coretype_env, std::string_view core,
                                 const CpuFeatures& cpu);

/// Throws xenc::config_error("<function>: " + report.beyond_cpu) for this process's BLAS when that
/// is not empty: before a matrix product that would stop the process with an illegal instruction.
/// kernels::gemm calls it (function "gemm"); code that calls BLAS another way (xtensor-blas) can
/// call it first. The check is made once per process; later calls cost one load of a static.
void require_blas_core_runs_here(const char* function);

/// What cpuid and xgetbv say about this CPU (all false on other architectures).
CpuFeatures cpu_features();

/// A report from OpenBLAS's answers (`config`: openblas_get_config(), "OpenBLAS 0.3.21 ...
/// DYNAMIC_ARCH ..."; `core`: openblas_get_corename()) and the environment: OPENBLAS_CORETYPE,
/// kBlasReexecMarker, and kBlasTestCore, which replaces `core` when OPENBLAS_CORETYPE is unset.
BlasReport make_blas_report(const std::string& config, const std::string& core, int threads,
                            const CpuFeatures& cpu);

/// The report for this process (cpuid, openblas_get_config/corename/num_threads, environment).
BlasReport blas_report();

/// One line for --version: the BLAS, its core set (and why that one), its thread count.
///   "BLAS: OpenBLAS 0.3.21, core set Zen (OpenBLAS's choice; the CPU's best tier: AVX2), 2
///   threads"
std::string blas_summary(const BlasReport& report);

/// The core set a program should re-execute itself with, or "" (OPENBLAS_CORETYPE already set,
/// already re-executed, or OpenBLAS's choice is the CPU's best).
std::string blas_core_for_reexec(const BlasReport& report);

}  // namespace xenc

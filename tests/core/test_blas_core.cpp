// The OpenBLAS core-set decision (xenc/core/blas_core.hpp): a table of CPUs, each with the core set
// OpenBLAS 0.3.21 (Debian 12) chooses for it and its features, and the set xencoder must ask for.
// The "OpenBLAS chooses" column is read from 0.3.21's driver/others/dynamic.c, get_coretype():
// an Intel family-6 CPU whose extended model has no case there falls through the missing `break`
// into the Pentium 4 case (family 0xf) and gets Prescott; a known extended model with an unknown
// model returns NULL, and then x86-64 builds pick by features (Cooperlake, SkylakeX, Haswell,
// Sandybridge, Prescott).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "xenc/core/blas_core.hpp"

namespace {

using xenc::CpuFeatures;
using xenc::SimdTier;

CpuFeatures sse_only() { return {}; }
CpuFeatures avx_only() {
  CpuFeatures f;
  f.avx = f.os_saves_ymm = true;
  return f;
}
CpuFeatures avx2_fma() {
  CpuFeatures f = avx_only();
  f.avx2 = f.fma = true;
  return f;
}
CpuFeatures avx512() {
  CpuFeatures f = avx2_fma();
  f.avx512f = f.avx512bw = f.avx512dq = f.avx512vl = f.os_saves_zmm = true;
  return f;
}

struct Row {
  const char* cpu;       // the CPU, family/model in decimal
  const char* openblas;  // openblas_get_corename() on it, OPENBLAS_CORETYPE unset
  CpuFeatures features;
  const char* expected;  // the set xencoder asks for ("" = OpenBLAS's choice is right)
};

TEST(BlasCore, ChoiceForEachCpuOfTheTable) {
  CpuFeatures knl = avx2_fma();  // Knights Landing: AVX-512 F without BW, DQ, VL
  knl.avx512f = knl.os_saves_zmm = true;
  CpuFeatures no_zmm = avx512();  // an OS (or hypervisor) that does not save the zmm registers
  no_zmm.os_saves_zmm = false;
  CpuFeatures avx2_no_fma = avx_only();
  avx2_no_fma.avx2 = true;
  const Row rows[] = {
      // 6/207, extended model 12: no case in 0.3.21, falls through to Prescott (issue 28)
      {"Emerald Rapids (6/207)", "Prescott", avx512(), "SkylakeX"},
      {"Raptor Lake (6/183)", "Prescott", avx2_fma(), "Haswell"},
      {"Arrow Lake (6/198)", "Prescott", avx2_fma(), "Haswell"},
      {"Lunar Lake (6/189)", "Prescott", avx2_fma(), "Haswell"},
      // known to 0.3.21: left alone
      {"Sapphire Rapids (6/143)", "Cooperlake", avx512(), ""},
      {"Skylake-SP (6/85)", "SkylakeX", avx512(), ""},
      {"Ice Lake client (6/126)", "SkylakeX", avx512(), ""},
      {"Skylake client (6/94)", "Haswell", avx2_fma(), ""},
      {"Sandy Bridge (6/42)", "Sandybridge", avx_only(), ""},
      {"Nehalem (6/26)", "Nehalem", sse_only(), ""},
      {"Zen 3 (25/1)", "Zen", avx2_fma(), ""},
      {"Zen 4 (25/17), AVX-512 BF16", "Cooperlake", avx512(), ""},
      {"Zen 5 (26/2), by features", "Cooperlake", avx512(), ""},
      // weaker tiers chosen for what the CPU runs
      {"AVX-512 CPU on Haswell kernels", "Haswell", avx512(), "SkylakeX"},
      {"AVX-512 CPU on Zen kernels", "Zen", avx512(), "SkylakeX"},
      {"AVX2 CPU on Sandybridge kernels", "Sandybridge", avx2_fma(), "Haswell"},
      {"AVX CPU on Nehalem kernels", "Nehalem", avx_only(), "Sandybridge"},
      {"AVX2 CPU on Bulldozer kernels", "Bulldozer", avx2_fma(), "Haswell"},
      {"name in lower case", "prescott", avx512(), "SkylakeX"},
      // features that do not make a tier
      {"Knights Landing (6/87)", "Haswell", knl, ""},
      {"AVX-512 without the OS saving zmm", "Haswell", no_zmm, ""},
      {"AVX2 without FMA", "Prescott", avx2_no_fma, "Sandybridge"},
      {"SSE only", "Prescott", sse_only(), ""},
      // names that are not OpenBLAS x86-64 sets
      {"unknown name", "Unknown", avx512(), ""},
      {"another architecture", "ARMV8", avx512(), ""},
  };
  for (const Row& row : rows)
    EXPECT_EQ(xenc::choose_blas_core(row.openblas, row.features, true), row.expected)
        << row.cpu << ": OpenBLAS chose " << row.openblas;
}

// An explicit OPENBLAS_CORETYPE whose kernels the CPU cannot execute (OpenBLAS's matrix products
// would stop the process with SIGILL): the sentence kernels::gemm throws, naming the variable, the
// set, both tiers and the value that fits; "" whenever the set runs on the CPU.
TEST(BlasCore, CoretypeBeyondTheCpuIsNamedWithTheValueThatFits) {
  struct Case {
    const char* env;   // OPENBLAS_CORETYPE
    const char* core;  // what OpenBLAS then runs
    CpuFeatures cpu;
    const char* says;  // "" = runs here; else a part of the sentence
  };
  const Case cases[] = {
      {"SkylakeX", "SkylakeX", avx2_fma(),
       "OPENBLAS_CORETYPE=SkylakeX makes OpenBLAS run its SkylakeX kernels (AVX-512), which this "
       "CPU cannot execute (it runs AVX2): a matrix product would stop the program with an "
       "illegal instruction. Unset OPENBLAS_CORETYPE, or set it to Haswell, before the program "
       "starts (OpenBLAS reads it only when it loads)."},
      {"haswell", "Haswell", avx_only(), "or set it to Sandybridge,"},
      {"Cooperlake", "Cooperlake", avx2_fma(), "its Cooperlake kernels (AVX-512)"},
      {"Sandybridge", "Sandybridge", sse_only(),
       "(it runs SSE): a matrix product would stop the program with an illegal instruction. "
       "Unset OPENBLAS_CORETYPE before the program starts"},
      // a build without AVX-512 kernels maps SkylakeX to Haswell: what runs is what counts
      {"SkylakeX", "Haswell", avx2_fma(), ""},
      {"SkylakeX", "SkylakeX", avx512(), ""},
      {"Sandybridge", "Sandybridge", avx2_fma(), ""},
      {"Prescott", "Prescott", sse_only(), ""},
      {"Unknown", "Unknown", sse_only(), ""},
      {"", "SkylakeX", avx2_fma(), ""},  // OpenBLAS chose alone (or the test switch): not ours
  };
  for (const Case& c : cases) {
    const std::string got = xenc::blas_core_beyond_cpu(c.env, c.core, c.cpu);
    if (*c.says == '\0')
      EXPECT_EQ(got, "") << c.env << " running " << c.core;
    else
      EXPECT_NE(got.find(c.says), std::string::npos)
          << c.env << " running " << c.core << ": " << got;
  }
}

TEST(BlasCore, OpenBlasWithOneSetIsLeftAlone) {
  // without DYNAMIC_ARCH, OPENBLAS_CORETYPE chooses nothing
  EXPECT_EQ(xenc::choose_blas_core("Prescott", avx512(), false), "");
}

TEST(BlasCore, TiersOfCpusAndNames) {
  EXPECT_EQ(xenc::cpu_tier(sse_only()), SimdTier::sse);
  EXPECT_EQ(xenc::cpu_tier(avx_only()), SimdTier::avx);
  EXPECT_EQ(xenc::cpu_tier(avx2_fma()), SimdTier::avx2);
  EXPECT_EQ(xenc::cpu_tier(avx512()), SimdTier::avx512);
  CpuFeatures avx_no_os = avx_only();  // AVX in cpuid, but the OS does not save ymm
  avx_no_os.os_saves_ymm = false;
  EXPECT_EQ(xenc::cpu_tier(avx_no_os), SimdTier::sse);
  SimdTier t = SimdTier::avx512;
  ASSERT_TRUE(xenc::core_tier("Opteron_SSE3", t));
  EXPECT_EQ(t, SimdTier::sse);
  ASSERT_TRUE(xenc::core_tier("excavator", t));
  EXPECT_EQ(t, SimdTier::avx);
  ASSERT_TRUE(xenc::core_tier("SapphireRapids", t));
  EXPECT_EQ(t, SimdTier::avx512);
  EXPECT_FALSE(xenc::core_tier("Skylake", t));
  EXPECT_STREQ(xenc::simd_tier_name(SimdTier::avx512), "AVX-512");
}

// ---- the report and the --version line --------------------------------------------------------

// Sets or unsets environment variables for one test, restoring them afterwards.
class Env {
 public:
  void set(const char* name, const char* value) {
    remember(name);
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~Env() {
    for (const auto& [name, value] : saved_)
      if (value.first)
        setenv(name.c_str(), value.second.c_str(), 1);
      else
        unsetenv(name.c_str());
  }

 private:
  void remember(const char* name) {
    for (const auto& s : saved_)
      if (s.first == name) return;
    const char* v = std::getenv(name);
    saved_.push_back({name, {v != nullptr, v ? v : ""}});
  }
  std::vector<std::pair<std::string, std::pair<bool, std::string>>> saved_;
};

const char* kConfig = "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Prescott MAX_THREADS=64";

TEST(BlasReport, FallbackAloneIsReportedWithTheValueToSet) {
  Env env;
  env.set("OPENBLAS_CORETYPE", nullptr);
  env.set(xenc::kBlasReexecMarker, nullptr);
  env.set(xenc::kBlasTestCore, nullptr);
  const xenc::BlasReport r = xenc::make_blas_report(kConfig, "Prescott", 16, avx512());
  EXPECT_EQ(r.library, "OpenBLAS 0.3.21");
  EXPECT_TRUE(r.dynamic_arch);
  EXPECT_EQ(r.better, "SkylakeX");
  EXPECT_EQ(xenc::blas_core_for_reexec(r), "SkylakeX");
  EXPECT_EQ(xenc::blas_summary(r),
            "BLAS: OpenBLAS 0.3.21, core set Prescott (a fallback: this CPU runs AVX-512; set "
            "OPENBLAS_CORETYPE=SkylakeX), 16 threads");
}

TEST(BlasReport, ExplicitCoretypeIsRespected) {
  Env env;
  env.set("OPENBLAS_CORETYPE", "Sandybridge");
  env.set(xenc::kBlasReexecMarker, nullptr);
  env.set(xenc::kBlasTestCore, "Prescott");  // ignored: OpenBLAS did not choose alone
  const xenc::BlasReport r = xenc::make_blas_report(kConfig, "Sandybridge", 1, avx512());
  EXPECT_EQ(r.core, "Sandybridge");
  EXPECT_EQ(r.better, "");
  EXPECT_EQ(xenc::blas_core_for_reexec(r), "");
  EXPECT_EQ(xenc::blas_summary(r),
            "BLAS: OpenBLAS 0.3.21, core set Sandybridge (OPENBLAS_CORETYPE=Sandybridge; this CPU "
            "runs AVX-512), 1 thread");
  env.set("OPENBLAS_CORETYPE", "SkylakeX");
  EXPECT_EQ(xenc::blas_summary(xenc::make_blas_report(kConfig, "SkylakeX", 2, avx2_fma())),
            "BLAS: OpenBLAS 0.3.21, core set SkylakeX (OPENBLAS_CORETYPE=SkylakeX, beyond this "
            "AVX2 CPU: xencoder refuses its matrix products, which would stop with an illegal "
            "instruction), 2 threads");
}

TEST(BlasReport, TestSwitchMakesTheLibraryBelieveInAFallback) {
  Env env;
  env.set("OPENBLAS_CORETYPE", nullptr);
  env.set(xenc::kBlasReexecMarker, nullptr);
  env.set(xenc::kBlasTestCore, "Prescott");
  const xenc::BlasReport r = xenc::make_blas_report(kConfig, "Zen", 2, avx2_fma());
  EXPECT_EQ(r.core, "Prescott");
  EXPECT_EQ(xenc::blas_core_for_reexec(r), "Haswell");
}

TEST(BlasReport, AfterTheReexecutionNoSecondOne) {
  Env env;
  env.set("OPENBLAS_CORETYPE", "SkylakeX");
  env.set(xenc::kBlasReexecMarker, "Prescott");
  const xenc::BlasReport r = xenc::make_blas_report(kConfig, "SkylakeX", 16, avx512());
  EXPECT_EQ(r.reexec_from, "Prescott");
  EXPECT_EQ(r.better, "");
  EXPECT_EQ(xenc::blas_core_for_reexec(r), "");
  EXPECT_EQ(xenc::blas_summary(r),
            "BLAS: OpenBLAS 0.3.21, core set SkylakeX (OPENBLAS_CORETYPE=SkylakeX, set by "
            "xencoder: OpenBLAS chose Prescott on this AVX-512 CPU), 16 threads");
  // an OpenBLAS without AVX-512 kernels maps SkylakeX to Haswell: still weaker, and said so
  const xenc::BlasReport h = xenc::make_blas_report(kConfig, "Haswell", 16, avx512());
  EXPECT_EQ(h.better, "SkylakeX");
  EXPECT_EQ(xenc::blas_core_for_reexec(h), "");
  EXPECT_NE(xenc::blas_summary(h).find("this OpenBLAS has no AVX-512 set"), std::string::npos)
      << xenc::blas_summary(h);
  // the marker without OPENBLAS_CORETYPE (a failed exec put it back): no second try
  env.set("OPENBLAS_CORETYPE", nullptr);
  EXPECT_EQ(xenc::blas_core_for_reexec(xenc::make_blas_report(kConfig, "Prescott", 1, avx512())),
            "");
}

TEST(BlasReport, OneSetAndNoBlas) {
  Env env;
  env.set("OPENBLAS_CORETYPE", nullptr);
  env.set(xenc::kBlasReexecMarker, nullptr);
  env.set(xenc::kBlasTestCore, nullptr);
  const xenc::BlasReport r = xenc::make_blas_report(
      "OpenBLAS 0.3.26 NO_LAPACKE Haswell MAX_THREADS=64", "Haswell", 4, avx512());
  EXPECT_FALSE(r.dynamic_arch);
  EXPECT_EQ(r.better, "");
  EXPECT_EQ(xenc::blas_summary(r),
            "BLAS: OpenBLAS 0.3.26, core set Haswell (the only set of this OpenBLAS), 4 threads");
  xenc::BlasReport none;
  none.library = "none";
  EXPECT_EQ(xenc::blas_summary(none), "BLAS: none (plain C++ GEMM), 1 thread");
}

// cpuid against Linux's own reading of it: /proc/cpuinfo lists a feature only when the CPU has it
// and the kernel enabled it (the AVX-512 flags go when the OS does not save zmm).
TEST(CpuFeatures, AgreeWithProcCpuinfo) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string w; words >> w;) flags.insert(w);
      break;
    }
  ASSERT_FALSE(flags.empty()) << "no flags line in /proc/cpuinfo";
  const CpuFeatures f = xenc::cpu_features();
  EXPECT_EQ(f.avx && f.os_saves_ymm, flags.count("avx") == 1);
  EXPECT_EQ(f.avx2, flags.count("avx2") == 1);
  EXPECT_EQ(f.fma, flags.count("fma") == 1);
  const bool zmm = f.os_saves_zmm;
  EXPECT_EQ(f.avx512f && zmm, flags.count("avx512f") == 1);
  EXPECT_EQ(f.avx512bw && zmm, flags.count("avx512bw") == 1);
  EXPECT_EQ(f.avx512dq && zmm, flags.count("avx512dq") == 1);
  EXPECT_EQ(f.avx512vl && zmm, flags.count("avx512vl") == 1);
}

}  // namespace

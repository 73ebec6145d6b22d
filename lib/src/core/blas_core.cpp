// The decision of xenc/core/blas_core.hpp: which OpenBLAS core set a CPU should run. Pure string
// and flag logic; the cpuid and OpenBLAS calls that feed it are in lib/src/kernels/blas_probe.cpp.
//
// The names are OpenBLAS's (driver/others/dynamic.c, `corename[]`, 0.3.21; SapphireRapids from
// 0.3.22 on), compared ignoring case as OpenBLAS's force_coretype does.
#include "xenc/core/blas_core.hpp"

#include <cctype>
#include <cstdlib>
#include <string>

namespace xenc {

namespace {
struct NamedCore {
  const char* name;
  SimdTier tier;
};
constexpr NamedCore kCores[] = {
    {"Katmai", SimdTier::sse},        {"Coppermine", SimdTier::sse},
    {"Northwood", SimdTier::sse},     {"Prescott", SimdTier::sse},
    {"Banias", SimdTier::sse},        {"Atom", SimdTier::sse},
    {"Core2", SimdTier::sse},         {"Penryn", SimdTier::sse},
    {"Dunnington", SimdTier::sse},    {"Nehalem", SimdTier::sse},
    {"Athlon", SimdTier::sse},        {"Opteron", SimdTier::sse},
    {"Opteron_SSE3", SimdTier::sse},  {"Barcelona", SimdTier::sse},
    {"Nano", SimdTier::sse},          {"Bobcat", SimdTier::sse},
    {"Sandybridge", SimdTier::avx},   {"Bulldozer", SimdTier::avx},
    {"Piledriver", SimdTier::avx},    {"Steamroller", SimdTier::avx},
    {"Excavator", SimdTier::avx},     {"Haswell", SimdTier::avx2},
    {"Zen", SimdTier::avx2},          {"SkylakeX", SimdTier::avx512},
    {"Cooperlake", SimdTier::avx512}, {"SapphireRapids", SimdTier::avx512},
};

bool same_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

// The set to ask for, per tier: the oldest name of the tier, which every DYNAMIC_ARCH build of
// the last years accepts (a build without AVX-512 kernels maps SkylakeX to Haswell itself).
const char* core_for_tier(SimdTier tier) {
  switch (tier) {
    case SimdTier::avx512:
      return "SkylakeX";
    case SimdTier::avx2:
      return "Haswell";
    case SimdTier::avx:
      return "Sandybridge";
    case SimdTier::sse:
      break;
  }
  return "";
}
}  // namespace

const char* simd_tier_name(SimdTier tier) {
  switch (tier) {
    case SimdTier::avx512:
      return "AVX-512";
    case SimdTier::avx2:
      return "AVX2";
    case SimdTier::avx:
      return "AVX";
    case SimdTier::sse:
      break;
  }
  return "SSE";
}

SimdTier cpu_tier(const CpuFeatures& cpu) {
  // each tier needs the one below it: OpenBLAS's AVX-512 kernels also use AVX2 and FMA
  const bool avx = cpu.avx && cpu.os_saves_ymm;
  const bool avx2 = avx && cpu.avx2 && cpu.fma;
  const bool avx512 =
      avx2 && cpu.avx512f && cpu.avx512bw && cpu.avx512dq && cpu.avx512vl && cpu.os_saves_zmm;
  if (avx512) return SimdTier::avx512;
  if (avx2) return SimdTier::avx2;
  if (avx) return SimdTier::avx;
  return SimdTier::sse;
}

bool core_tier(std::string_view core, SimdTier& tier) {
  for (const NamedCore& c : kCores)
    if (same_ignoring_case(core, c.name)) {
      tier = c.tier;
      return true;
    }
  return false;
}

std::string choose_blas_core(std::string_view core, const CpuFeatures& cpu, bool dynamic_arch) {
  SimdTier chosen = SimdTier::sse;
  if (!dynamic_arch || !core_tier(core, chosen)) return "";
  const SimdTier best = cpu_tier(cpu);
  return chosen < best ? core_for_tier(best) : "";
}

std::string blas_core_beyond_cpu(std::string_view coretype_env, std::string_view core,
                                 const CpuFeatures& cpu) {
  SimdTier runs = SimdTier::sse;
  const SimdTier can = cpu_tier(cpu);
  if (coretype_env.empty() || !core_tier(core, runs) || runs <= can) return "";
  const std::string set(core);
  std::string s = "OPENBLAS_CORETYPE=" + std::string(coretype_env) + " makes OpenBLAS run its " +
                  set + " kernels (" + simd_tier_name(runs) + "), which this CPU cannot execute (" +
                  "it runs " + simd_tier_name(can) +
                  "): a matrix product would stop the program with an illegal instruction. ";
  const char* fits = core_for_tier(can);
  s += *fits != '\0' ? "Unset OPENBLAS_CORETYPE, or set it to " + std::string(fits) + ","
                     : std::string("Unset OPENBLAS_CORETYPE");
  return s + " before the program starts (OpenBLAS reads it only when it loads).";
}

namespace {
std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}
}  // namespace

BlasReport make_blas_report(const std::string& config, const std::string& core, int threads,
                            const CpuFeatures& cpu) {
  BlasReport r;
  r.cpu = cpu;
  r.threads = threads;
  // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64": name and version
  r.library = config.substr(0, config.find(' ', config.find(' ') + 1));
  r.dynamic_arch = config.find("DYNAMIC_ARCH") != std::string::npos;
  r.core = core;
  r.coretype_env = env("OPENBLAS_CORETYPE");
  r.reexec_from = r.coretype_env.empty() ? "" : env(kBlasReexecMarker);
  // the test-only switch: believe that OpenBLAS, choosing alone, chose this set
  const std::string pretend = env(kBlasTestCore);
  if (r.coretype_env.empty() && !pretend.empty()) r.core = pretend;
  // a user's OPENBLAS_CORETYPE is theirs; ours (after the re-execution) is checked again
  if (r.coretype_env.empty() || !r.reexec_from.empty())
    r.better = choose_blas_core(r.core, r.cpu, r.dynamic_arch);
  r.beyond_cpu = blas_core_beyond_cpu(r.coretype_env, r.core, r.cpu);
  return r;
}

std::string blas_core_for_reexec(const BlasReport& r) {
  if (!r.coretype_env.empty() || !env(kBlasReexecMarker).empty()) return "";
  return r.better;
}

std::string blas_summary(const BlasReport& r) {
  std::string s = "BLAS: " + r.library;
  if (r.library == "none") return s + " (plain C++ GEMM), 1 thread";
  s += ", core set " + r.core;
  SimdTier tier = SimdTier::sse;
  const bool known = core_tier(r.core, tier);
  const std::string cpu = simd_tier_name(cpu_tier(r.cpu));
  if (!r.reexec_from.empty())
    s += " (OPENBLAS_CORETYPE=" + r.coretype_env + ", set by xencoder: OpenBLAS chose " +
         r.reexec_from + " on this " + cpu + " CPU" +
         (r.better.empty() ? std::string(")") : "; this OpenBLAS has no " + cpu + " set)");
  else if (!r.beyond_cpu.empty())
    s += " (OPENBLAS_CORETYPE=" + r.coretype_env + ", beyond this " + cpu +
         " CPU: xencoder refuses its matrix products, which would stop with an illegal "
         "instruction)";
  else if (!r.coretype_env.empty())
    s += " (OPENBLAS_CORETYPE=" + r.coretype_env + "; this CPU runs " + cpu + ")";
  else if (!r.better.empty())
    s += " (a fallback: this CPU runs " + cpu + "; set OPENBLAS_CORETYPE=" + r.better + ")";
  else if (!r.dynamic_arch)
    s += " (the only set of this OpenBLAS)";
  else if (known)
    s += " (OpenBLAS's choice; the CPU's best tier: " + cpu + ")";
  else
    s += " (OpenBLAS's choice)";
  return s + ", " + std::to_string(r.threads) + (r.threads == 1 ? " thread" : " threads");
}

}  // namespace xenc

// Linked into every xenc-* program and xenc-kernel (apps/CMakeLists.txt, notebooks/kernel/): before
// main, when OpenBLAS chose a weaker kernel set than the CPU runs (xenc/core/blas_core.hpp), the
// program executes itself again, once, with OPENBLAS_CORETYPE set to the better set. OpenBLAS
// reads that variable only while it loads, so setting it in the running process would change
// nothing. The same arguments and environment, plus XENC_BLAS_REEXEC (the set OpenBLAS had
// chosen): it stops a second re-execution and lets --version say why the variable is set.
//
// A user's OPENBLAS_CORETYPE is never overridden. When exec fails, the program runs on and the
// library warns at its first matrix product, so a fallback set never runs silently.
//
// OpenBLAS is found by name: the programs link it (through libxencoder); xenc-kernel does not
// (its cells load the library), so there this file opens XENC_REEXEC_BLAS_LIBRARY, the OpenBLAS
// the cells will load, to ask it.
#include "blas_core_reexec.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <xenc/core/blas_core.hpp>

namespace {

using NameFunction = char* (*)();
using CountFunction = int (*)();

void* openblas_symbol(const char* name) {
  void* f = dlsym(RTLD_DEFAULT, name);
#ifdef XENC_REEXEC_BLAS_LIBRARY
  if (f == nullptr && dlopen(XENC_REEXEC_BLAS_LIBRARY, RTLD_NOW | RTLD_GLOBAL) != nullptr)
    f = dlsym(RTLD_DEFAULT, name);
#endif
  return f;
}
NameFunction openblas_function(const char* name) {
  return reinterpret_cast<NameFunction>(openblas_symbol(name));
}

// glibc calls the functions of .init_array with (argc, argv, envp); argv is main's own.
__attribute__((constructor)) void reexec_on_better_blas_core(int, char** argv, char**) {
  if (argv == nullptr || std::getenv("OPENBLAS_CORETYPE") != nullptr ||
      std::getenv(xenc::kBlasReexecMarker) != nullptr)
    return;
  const NameFunction config = openblas_function("openblas_get_config");
  const NameFunction corename = openblas_function("openblas_get_corename");
  if (config == nullptr || corename == nullptr) return;
  const xenc::BlasReport report =
      xenc::make_blas_report(config(), corename(), 1, xenc::cpu_features());
  const std::string core = xenc::blas_core_for_reexec(report);
  if (core.empty()) return;
  setenv(xenc::kBlasReexecMarker, report.core.c_str(), 1);
  setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  execv("/proc/self/exe", argv);
  // exec failed: back to OpenBLAS's own choice, which the library's warning names
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv(xenc::kBlasReexecMarker);
}

}  // namespace

namespace xenc_app {

std::string blas_summary_of_loaded_openblas() {
  const NameFunction config = openblas_function("openblas_get_config");
  const NameFunction corename = openblas_function("openblas_get_corename");
  const auto threads = reinterpret_cast<CountFunction>(openblas_symbol("openblas_get_num_threads"));
  if (config == nullptr || corename == nullptr || threads == nullptr)
    return "BLAS: no OpenBLAS found";
  return xenc::blas_summary(
      xenc::make_blas_report(config(), corename(), threads(), xenc::cpu_features()));
}

}  // namespace xenc_app

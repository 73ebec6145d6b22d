// xenc-kernel: a Jupyter kernel for xencoder's C++17 notebooks (xeus + clang's incremental
// interpreter). Jupyter starts it from its kernelspec (kernel.json):
//
//     xenc-kernel -f CONNECTION_FILE [CLANG_ARG...]
//
// CLANG_ARGs (from kernel.json: -I<dir> for the kernel's headers, xencoder and its dependencies)
// are added to the interpreter's command line.
//
// The cells are code a student wrote, run in this process (not in Jupyter's server), under a
// memory limit: XENC_KERNEL_MEMORY_MIB, or three quarters of the machine's memory when it is not
// set. A cell that asks for more gets std::bad_alloc, shown as its error, and the kernel lives on;
// without the limit, one `std::vector<float>(1e11)` would push the whole machine into swap.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <xeus/xkernel.hpp>
#include <xeus/xkernel_configuration.hpp>
#include <xeus/xserver_zmq.hpp>
#include <zmq.hpp>

#include "blas_core_reexec.hpp"  // apps/common: the --version line of the BLAS
#include "cell_interpreter.hpp"
#include "heap_policy.hpp"  // apps/common: and of the heap
#include "kernel_server.hpp"

namespace {

// The address-space limit for the cells, in bytes (0: leave the limit as it is).
rlim_t memory_limit_bytes() {
  const rlim_t mib = 1024 * 1024;
  if (const char* v = std::getenv("XENC_KERNEL_MEMORY_MIB")) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (end != v && *end == '\0' && n > 0) return rlim_t(n) * mib;
    std::cerr << "xenc-kernel: XENC_KERNEL_MEMORY_MIB is '" << v
              << "', expected a number of MiB > 0; using the default\n";
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return rlim_t(pages) / 4 * 3 * rlim_t(page);
}

void limit_memory() {
  const rlim_t want = memory_limit_bytes();
  rlimit now{};
  if (want == 0 || getrlimit(RLIMIT_AS, &now) != 0) return;
  if (now.rlim_cur != RLIM_INFINITY && now.rlim_cur <= want) return;  // a lower limit stays
  if (now.rlim_max != RLIM_INFINITY && now.rlim_max < want) return;
  now.rlim_cur = want;
  setrlimit(RLIMIT_AS, &now);
}

}  // namespace

int main(int argc, char** argv) {
  std::string connection_file;
  // C++17 as the notebooks' xcpp17 kernelspec; the flag xtensor 0.24 needs with clang 19; no
  // warning for a #define made again (an edited cell run again is the normal case), nor for a
  // class template's static member used before a cell defines it (a later cell may); and clang's
  // own headers, which it would otherwise look for next to this executable.
  std::vector<std::string> clang_args = {
      "-std=c++17",           "-fno-relaxed-template-template-args",
      "-Wno-macro-redefined", "-Wno-undefined-var-template",
      "-resource-dir",        XENC_CLANG_RESOURCE_DIR};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-f" && i + 1 < argc) {
      connection_file = argv[++i];
    } else if (a == "--version") {
      std::cout << "xenc-kernel 1.0 (xeus, clang " << XENC_CLANG_VERSION << ")\n"
                << xenc_app::blas_summary_of_loaded_openblas() << "\n"
                << "heap: " << xenc_app::heap_summary() << "\n";
      return 0;
    } else {
      clang_args.push_back(a);
    }
  }
  if (connection_file.empty()) {
    std::cerr << "usage: xenc-kernel -f CONNECTION_FILE [CLANG_ARG...]\n"
                 "(Jupyter starts it: install the kernelspec, then pick \"C++17 (xencoder)\")\n";
    return 2;
  }
  // printf and std::cout are line-buffered, as on a terminal: each line reaches the captured fd 1
  // when it is printed, so the kernel can send it while the cell runs (see cell_output.hpp).
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  limit_memory();
  // SIGINT stays blocked except while a compiled cell runs (see CellInterpreter::run). Blocking
  // it here, before xeus and ZeroMQ start their threads, makes them inherit the block, so
  // Jupyter's Interrupt is always delivered to this (the cells') thread.
  sigset_t interrupt;
  sigemptyset(&interrupt);
  sigaddset(&interrupt, SIGINT);
  pthread_sigmask(SIG_BLOCK, &interrupt, nullptr);

  try {
    auto context = xeus::make_context<zmq::context_t>();
    auto interpreter = std::make_unique<xenc_kernel::CellInterpreter>(clang_args);
    xeus::xconfiguration config = xeus::load_configuration(connection_file);
    xeus::xkernel kernel(config, xeus::get_user_name(), std::move(context), std::move(interpreter),
                         xenc_kernel::make_kernel_server);
    kernel.start();
  } catch (const std::exception& e) {
    std::cerr << "xenc-kernel: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

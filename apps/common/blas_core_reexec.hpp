// apps/common/blas_core_reexec.cpp's one function for a program that does not link the library
// (xenc-kernel, whose cells load it): the --version line of xenc::blas_summary, from the OpenBLAS
// this process has loaded, or would load.
#pragma once

#include <string>

namespace xenc_app {

/// "BLAS: OpenBLAS 0.3.21, core set Zen (...), 2 threads", asking OpenBLAS by symbol name.
std::string blas_summary_of_loaded_openblas();

}  // namespace xenc_app

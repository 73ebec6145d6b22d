// The library's side of xenc/core/blas_core.hpp inside the kernels layer: the one-time warning
// that kernels::gemm gives when OpenBLAS runs a weaker core set than the CPU can.
#pragma once

namespace xenc::kernels {

/// On the first call only: when OpenBLAS chose its kernels alone (OPENBLAS_CORETYPE unset) and
/// chose a weaker set than the CPU runs, or when xencoder's re-execution asked for a set that this
/// OpenBLAS does not have, one line on stderr naming OPENBLAS_CORETYPE and the value to set. Later
/// calls cost one load of a static.
void warn_once_if_blas_fallback();

}  // namespace xenc::kernels

// xcpp::display for xenc-kernel: the function xeus-cling and xeus-cpp give notebooks, here
// publishing through the kernel's display hook. xenc/viz/display.hpp calls it when it finds this
// header (its show(x) = xcpp::display(x) inside a kernel); the kernel puts this directory first
// on the include path, so no other kernel is affected.
#pragma once

#include "xenc_kernel/prelude.hpp"

namespace xcpp {

/// Shows x as display_data: the MIME bundle from mime_bundle_repr(x) (found by ADL).
template <class T>
void display(const T& x) {
  xenc_kernel_publish(mime_bundle_repr(x).dump().c_str(), 0);
}

}  // namespace xcpp

// Thread-local gradient mode (see grad_mode.hpp).
#include "xenc/core/grad_mode.hpp"

namespace xenc {

namespace {
thread_local bool grad_enabled = true;
}

bool GradMode::is_enabled() { return grad_enabled; }
void GradMode::set_enabled(bool enabled) { grad_enabled = enabled; }

}  // namespace xenc

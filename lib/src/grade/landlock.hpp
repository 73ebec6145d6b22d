// The file view of a Box without namespaces (internal to sandbox.cpp): where bubblewrap cannot
// start, a Landlock ruleset gives the child the same files the box's namespaces would have. It
// reads /usr, the loader's files in /etc, a few devices, its own /proc/self and Box::read_only
// (Box::hidden left out), writes only Box::scratch (unless Box::scratch_read_only), and makes no
// TCP connection. Landlock is the kernel's sandbox for unprivileged processes (Linux 5.13); it
// needs no namespaces, so it holds in a container that forbids them, as Gradescope's does.
#pragma once

#include <string>

#include "xenc/grade/sandbox.hpp"

namespace xenc::grade::detail {

/// Empty where this kernel has Landlock (asked once per process) and XENC_GRADE_NO_LANDLOCK is
/// not set; else one line saying why not.
const std::string& landlock_unavailable();

/// A Landlock ruleset (a descriptor, close-on-exec) with box's files, or -1 with the reason in
/// error. Called before fork: it walks folders and allocates.
int landlock_ruleset(const Box& box, std::string& error);

/// In the child, between fork and exec (async-signal-safe): adds its own /proc/self to ruleset,
/// sets no_new_privs and restricts itself. False when the kernel refused.
bool landlock_restrict(int ruleset);

}  // namespace xenc::grade::detail

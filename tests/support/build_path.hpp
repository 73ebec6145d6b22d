// The paths a test executable needs (its reference data, the programs it runs, its output folder),
// as macros: XENC_TEST_DATA_DIR, XENC_APP_WORD_ORDER, ... Each expands to build_path("NAME"),
// defined in the executable's generated build_paths/<target>.cpp (xenc_build_paths in
// cmake/XencBuildPaths.cmake says why the paths are not on the compile command line).
#pragma once

namespace xenc::test {

/// The path this test executable was built with under `name` (the macro's name); throws
/// std::invalid_argument naming the target and `name` if it has none.
const char* build_path(const char* name);

}  // namespace xenc::test

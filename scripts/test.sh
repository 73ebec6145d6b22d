#!/usr/bin/env bash
# The README's second command: set up, build everything, and run the whole test suite with ctest.
#   bash scripts/test.sh              Release build in build/
#   bash scripts/test.sh --sanitize   AddressSanitizer + UndefinedBehaviorSanitizer build in
#                                     build-asan/ (CI runs both)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

dir=build
flags=(-DCMAKE_BUILD_TYPE=Release)
if [[ "${1:-}" == "--sanitize" ]]; then
  dir=build-asan
  # Notebooks run in clang-repl, which cannot load a sanitized library; the benchmark smoke
  # test runs in the Release build.
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DXENC_SANITIZE=ON -DXENC_BUILD_NOTEBOOK_TESTS=OFF)
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
cmake -S . -B "$dir" "${flags[@]}"
cmake --build "$dir" -j"$(nproc)"
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)"

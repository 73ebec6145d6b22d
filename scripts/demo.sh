#!/usr/bin/env bash
# The README's first command: set up, build, and run the main demo ("cat chased mouse" vs
# "mouse chased cat"). Extra arguments go to the demo, e.g. bash scripts/demo.sh --help
# Installs a compiler, CMake and the library's dependencies only (scripts/setup.sh --demo): no
# browser, no emscripten, no LLVM, no Jupyter. A new build/ is configured without the tests, the
# benchmarks and the notebooks (their dependencies are test.sh's); an existing one is kept as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --demo
only_the_library=()
if [[ ! -f build/CMakeCache.txt ]]; then
  only_the_library=(-DXENC_BUILD_TESTS=OFF -DXENC_BUILD_BENCH=OFF -DXENC_BUILD_NOTEBOOK_TESTS=OFF)
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${only_the_library[@]}"
cmake --build build -j"$(nproc)" --target word_order
./build/apps/word_order/xenc-word-order "$@"

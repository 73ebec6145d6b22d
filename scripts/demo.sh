#!/usr/bin/env bash
# The README's first command: set up, build, and run the main demo ("cat chased mouse" vs
# "mouse chased cat"). Extra arguments go to the demo, e.g. bash scripts/demo.sh --help
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)" --target word_order
./build/apps/word_order/xenc-word-order "$@"

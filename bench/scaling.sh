#!/usr/bin/env bash
# bench/scaling.sh [--grid tiny] [--reps N] [--min-time S] [--baseline OTHER_XENCODER_BENCH]
#
# Issue #28's thread targets on THIS machine: xencoder on 1 thread against 2 threads
# (OPENBLAS_NUM_THREADS), inference and training step, plain and tiled path, at T = 128, 512,
# 2048 (and 4096 on the tiled path), interleaved, medians of 3; the wall-clock speed-up, its
# ceiling (two 1-thread copies at once against one) and the CPU-time ratio per point, one verdict
# per target, OpenBLAS's start-up spin, the serial fraction at T = 2048 and the
# crossovers that place kThreadedAttentionMinWork and kSplitGemmWork. The logic and what each
# number is: bench/scaling.py. Wall-clock times: run it on an idle machine. Meant to take under 8
# minutes on 2 idle cores (it prints how long it took); --grid tiny: a check that it runs. Builds
# the two programs it runs first (BUILD_DIR, default build/).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cmake --build "$build" --target xencoder_bench xencoder_serial -j2 >/dev/null
exec python3 bench/scaling.py --bench "$build/bench/xencoder_bench" \
  --serial "$build/bench/xencoder_serial" "$@"

#!/usr/bin/env bash
# Fuzzes the loaders and the tokenizer with libFuzzer (clang-19, ASan + UBSan) for a fixed time
# per harness, starting from the committed corpus. Exits non-zero if any harness finds a crash,
# an uncaught exception, a leak, an over-allocation or a hang.
#   bash scripts/fuzz.sh [seconds]     seconds per harness (default 60); CI runs the default
#
# Build: build-fuzz/ (clang++-19, the whole project with -fsanitize=fuzzer-no-link,address,
# undefined so that libFuzzer sees the library's coverage; XENC_BUILD_FUZZERS=ON).
# Corpus: new inputs go to build-fuzz/corpus/<harness>/ (not committed); the committed seeds
# (tests/fuzz/corpus/<harness>/) and past findings (tests/fuzz/regressions/<harness>/) are read.
# Findings: build-fuzz/artifacts/<harness>/{crash,leak,oom,timeout}-<sha1>. Copy each into
# tests/fuzz/regressions/<harness>/ so that test_fuzz_regressions replays it in every build.
#
# Limits, and why:
#   -malloc_limit_mb=64   one allocation above 64 MiB is a finding. Inputs are at most
#                         16 KiB (-max_len), and deflate expands at most 1032:1, so no honest
#                         input needs more than ~17 MiB at once; the crafted files of issue 12
#                         asked for 4 GiB and 1 TB.
#   -rss_limit_mb=2048    the whole process above 2 GiB (ASan's shadow memory and quarantine
#                         plus the in-memory corpus stay well below): a slow leak or many
#                         medium allocations.
#   -timeout=10           one input taking more than 10 s is a hang (a normal one takes < 10 ms
#                         under ASan; the old loader built 100,001 layers for one key).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
dir=build-fuzz
harnesses=(npy npz state_dict checkpoint tokenizer)

# -fno-relaxed-template-template-args: clang >= 19 applies P0522 by default, which makes
# xtensor 0.24's rebind_container specialisations ambiguous (as notebooks/CMakeLists.txt does
# for clang-repl). -Wno-pass-failed: clang cannot vectorise every `omp simd` loop under ASan.
san="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
san+=" -fno-relaxed-template-template-args -Wno-deprecated-no-relaxed-template-template-args -Wno-pass-failed"
launcher=()
# ccache as in test.sh: paths inside this checkout hashed relative to it, so CI's fresh clone
# finds the objects of an earlier clone's build (without it, every fuzz build compiled from scratch).
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi
# -O1 and line tables only (-gline-tables-only): what libFuzzer's documentation builds with, and
# 2-3x faster to compile than RelWithDebInfo's -O2 -g; crash reports still name file and line.
CC=clang-19 CXX=clang++-19 cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 "${launcher[@]}" \
  -DCMAKE_CXX_FLAGS="$san" -DCMAKE_C_FLAGS="$san" \
  -DXENC_BUILD_FUZZERS=ON -DXENC_BUILD_TESTS=ON -DXENC_BUILD_APPS=OFF -DXENC_BUILD_BENCH=OFF \
  -DXENC_BUILD_NOTEBOOK_TESTS=OFF >/dev/null
targets=()
for h in "${harnesses[@]}"; do targets+=(--target "fuzz_$h"); done
cmake --build "$dir" -j"$(nproc)" "${targets[@]}"

export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# One harness per core at a time: each still gets its full `seconds` of fuzzing, in half the wall
# time on two cores.
fuzz_one() {
  local h=$1
  mkdir -p "$dir/corpus/$h" "$dir/artifacts/$h"
  local seeds=("tests/fuzz/corpus/$h")
  if [[ -d "tests/fuzz/regressions/$h" ]]; then seeds+=("tests/fuzz/regressions/$h"); fi
  "$dir/tests/fuzz/fuzz_$h" "$dir/corpus/$h" "${seeds[@]}" \
    -max_total_time="$seconds" -max_len=16384 -timeout=10 \
    -rss_limit_mb=2048 -malloc_limit_mb=64 \
    -artifact_prefix="$dir/artifacts/$h/" -print_final_stats=1 \
    >"$dir/fuzz_$h.log" 2>&1
}
jobs_at_once=$(nproc)
pids=()
names=()
failed=()
# wait_first: waits for the oldest running harness and reports it.
wait_first() {
  local pid=${pids[0]} h=${names[0]}
  pids=("${pids[@]:1}")
  names=("${names[@]:1}")
  if ! wait "$pid"; then
    failed+=("$h")
    echo "fuzz.sh: fuzz_$h FAILED; the end of $dir/fuzz_$h.log:"
    tail -n 40 "$dir/fuzz_$h.log"
  else
    echo "fuzz.sh: fuzz_$h: $(grep -E "stat::number_of_executed_units|Done [0-9]+ runs" \
                               "$dir/fuzz_$h.log" | tail -n 1 || true)"
  fi
}
for h in "${harnesses[@]}"; do
  if [[ ${#pids[@]} -ge $jobs_at_once ]]; then wait_first; fi
  echo "fuzz.sh: fuzz_$h for ${seconds} s"
  fuzz_one "$h" &
  pids+=($!)
  names+=("$h")
done
while [[ ${#pids[@]} -gt 0 ]]; do wait_first; done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: findings in: ${failed[*]} (inputs in $dir/artifacts/)"
  exit 1
fi
echo "fuzz.sh: ${#harnesses[@]} harnesses, ${seconds} s each, no findings"

#!/usr/bin/env bash
# The README's second command: set up, build everything, and run the whole test suite with ctest.
#   bash scripts/test.sh              Release build in build/
#   bash scripts/test.sh --sanitize   AddressSanitizer + UndefinedBehaviorSanitizer build in
#                                     build-asan/ (CI runs both)
#   bash scripts/test.sh --kernels    the Release suite again under two other OpenBLAS kernel
#                                     sets this CPU can run, the first with 1 BLAS thread (CI
#                                     runs it too: a printed number must hold on every CPU)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --all

dir=build
# every part on, also in a build/ that demo.sh or notebooks.sh configured without the tests
flags=(-DCMAKE_BUILD_TYPE=Release -DXENC_BUILD_TESTS=ON -DXENC_BUILD_BENCH=ON
       -DXENC_BUILD_NOTEBOOK_TESTS=ON)
mode="${1:-}"
if [[ "$mode" == "--sanitize" ]]; then
  dir=build-asan
  # Notebooks run in clang-repl, which cannot load a sanitized library; the benchmarks and their
  # smoke test are built and run in the Release build only.
  # -O1 -g1 (line tables: ASan's and UBSan's reports still name file and line) compiles 2-3x
  # faster than RelWithDebInfo's -O2 -g; the build is most of this pass's time, the tests under
  # ASan take about 2 minutes.
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DXENC_SANITIZE=ON -DXENC_BUILD_NOTEBOOK_TESTS=OFF
         -DXENC_BUILD_BENCH=OFF "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
         "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
elif [[ -n "$mode" && "$mode" != "--kernels" ]]; then
  echo "usage: bash scripts/test.sh [--sanitize | --kernels]" >&2
  exit 2
fi
# ccache (setup.sh --all installs it): a second run, or CI after a developer's build on the same
# machine, compiles only what changed; the results are the compiler's own either way.
# Paths inside this checkout are hashed relative to it, so another clone hits the same entries.
if command -v ccache > /dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  flags+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$dir" "${flags[@]}"
cmake --build "$dir" -j"$(nproc)"

if [[ "$mode" != "--kernels" ]]; then
  ctest --test-dir "$dir" --output-on-failure -j"$(nproc)"
  exit 0
fi

# OpenBLAS picks its kernels from the CPU at run time (DYNAMIC_ARCH), unless OPENBLAS_CORETYPE
# names a set. Every set rounds a GEMM differently, so every test must pass under each: run the
# suite under the first two of these that this CPU can execute (AVX-512, AVX without FMA, AVX2),
# the first with one BLAS thread and the second with OpenBLAS's default (a thread per core).
flags_of_cpu=$(grep -m1 '^flags' /proc/cpuinfo || true)
sets=()
for candidate in SkylakeX:avx512f Sandybridge:avx Haswell:avx2; do
  name=${candidate%%:*}
  needs=${candidate##*:}
  if [[ " $flags_of_cpu " == *" $needs "* ]]; then sets+=("$name"); fi
done
if [[ ${#sets[@]} -lt 2 ]]; then
  echo "test.sh --kernels: this CPU runs fewer than two of SkylakeX, Sandybridge, Haswell;" \
       "nothing more to compare" >&2
  exit 0
fi
# Tests whose outcome cannot depend on the kernels are not repeated: installing and linking,
# the student HTML in a browser, the WebAssembly build (no OpenBLAS), exit codes of README commands,
# the checks that read sources only (formatting, layering, one oracle, the README's copy, the
# notebooks' cross-references, setup.sh's apt entries), the notebook kernel's protocol and stress
# tests, and the grader's end-to-end runs (grade.*: compiling, sandboxing and scoring student
# processes; the verdicts' numbers are test_grade's, which does run under every set). A notebook's
# numbers are checked by notebook_run_* + notebook_outputs_current_*; notebook_solved_* only asks
# that the reference solutions pass, which test_grade covers too.
same_on_every_kernel='^(install\.|wasm\.|xenc_kernel_|readme_commands\.|notebooks_html_in_browser|notebook_installed_setup_header|nbtool_|source_is_formatted$|js_is_formatted$|readme_minimal_program_is_apps_minimal$|layering_|one_oracle_|reference\.uses_only_core$|reference\.layer_calls_ops$|notebooks_cross_references$|notebooks_validate$|setup\.|grade\.|notebook_solved_)'
echo "== ctest with OPENBLAS_CORETYPE=${sets[0]}, OPENBLAS_NUM_THREADS=1"
OPENBLAS_CORETYPE=${sets[0]} OPENBLAS_NUM_THREADS=1 \
  ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" -E "$same_on_every_kernel"
echo "== ctest with OPENBLAS_CORETYPE=${sets[1]}, OpenBLAS's default thread count"
(unset OPENBLAS_NUM_THREADS; OPENBLAS_CORETYPE=${sets[1]} \
  ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" -E "$same_on_every_kernel")

#!/usr/bin/env bash
# The README's third command: opens the notebooks in Jupyter on xenc-kernel.
#   bash scripts/notebooks.sh [--port N] [--check]
# Installs what is missing (apt, through scripts/setup.sh --notebooks: the library's
# dependencies, xeus, LLVM/clang 19's libraries and Jupyter), builds the library and the kernel in
# build/, installs the kernelspec for this user (~/.local/share/jupyter/kernels/xenc-cpp17,
# pointing at build/), then runs Debian's `jupyter notebook` on notebooks/ and prints its URL.
# Stop it with Ctrl+C.
# --check: the same, but Jupyter runs in the background while notebooks/kernel/tests/
# jupyter_check.py checks it as a browser would (the URL answers, Jupyter lists xenc-cpp17, a
# kernel it starts runs the notebooks' setup header), then stops; exit 0 if all hold. CI runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
port=8888
check=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --port) port="$2"; shift 2 ;;
    --check) check=1; shift ;;
    *) echo "usage: bash scripts/notebooks.sh [--port N] [--check]" >&2; exit 2 ;;
  esac
done
bash scripts/setup.sh --notebooks
# A new build/ without the tests and the benchmarks (their dependencies are test.sh's); the
# notebooks' folder holds the kernel, so it is always on.
without_tests=()
if [[ ! -f build/CMakeCache.txt ]]; then
  without_tests=(-DXENC_BUILD_TESTS=OFF -DXENC_BUILD_BENCH=OFF)
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DXENC_BUILD_NOTEBOOK_TESTS=ON "${without_tests[@]}"
cmake --build build -j"$(nproc)" --target xenc-kernel xencoder xencoder_io xencoder_viz
spec=build/notebooks/kernel/jupyter/kernels/xenc-cpp17
if [[ ! -f "$spec/kernel.json" ]]; then
  echo "notebooks.sh: xenc-kernel was not built (see the cmake output above)" >&2
  exit 1
fi
# The build tree's kernelspec (its argv points at build/): Jupyter finds it under ~/.local.
jupyter kernelspec install --user --replace --name xenc-cpp17 "$spec" >/dev/null
jupyter kernelspec list | grep xenc-cpp17
# Trusted, the notebooks show their committed figures (SVG) before they are run: Jupyter hides
# the outputs of a notebook it did not run itself.
/usr/bin/python3 -m nbformat.sign notebooks/[0-9][0-9]_*.ipynb
server=(jupyter notebook --no-browser --port "$port" --notebook-dir notebooks)
if [[ $(id -u) -eq 0 ]]; then server+=(--allow-root); fi
if [[ $check -eq 0 ]]; then
  echo "notebooks.sh: starting Jupyter on notebooks/; open the URL it prints below (Ctrl+C stops it)"
  exec "${server[@]}"
fi
log=$(mktemp)
"${server[@]}" > "$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -f "$log"' EXIT
if ! /usr/bin/python3 notebooks/kernel/tests/jupyter_check.py "$pid"; then
  echo "notebooks.sh --check: failed; Jupyter's log:" >&2
  cat "$log" >&2
  exit 1
fi
echo "notebooks.sh --check: Jupyter and xenc-kernel work; stopping Jupyter"

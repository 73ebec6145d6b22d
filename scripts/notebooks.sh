#!/usr/bin/env bash
# The README's third command: opens the notebooks in Jupyter on xenc-kernel.
#   bash scripts/notebooks.sh [--port N]
# Installs what is missing (apt, through scripts/setup.sh), builds the library and the kernel in
# build/, installs the kernelspec for this user (~/.local/share/jupyter/kernels/xenc-cpp17,
# pointing at build/), then runs Debian's `jupyter notebook` on notebooks/ and prints its URL.
# Stop it with Ctrl+C.
set -euo pipefail
cd "$(dirname "$0")/.."
port=8888
if [[ "${1:-}" == "--port" ]]; then port="$2"; fi
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)" --target xenc-kernel xencoder xencoder_io xencoder_viz
spec=build/notebooks/kernel/jupyter/kernels/xenc-cpp17
if [[ ! -f "$spec/kernel.json" ]]; then
  echo "notebooks.sh: xenc-kernel was not built (see the cmake output above)" >&2
  exit 1
fi
# The build tree's kernelspec (its argv points at build/): Jupyter finds it under ~/.local.
jupyter kernelspec install --user --replace --name xenc-cpp17 "$spec" >/dev/null
jupyter kernelspec list | grep xenc-cpp17
echo "notebooks.sh: starting Jupyter on notebooks/; open the URL below (Ctrl+C stops it)"
root=()
if [[ $(id -u) -eq 0 ]]; then root=(--allow-root); fi
exec jupyter notebook --no-browser --port "$port" --notebook-dir notebooks "${root[@]}"

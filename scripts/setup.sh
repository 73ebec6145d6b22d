#!/usr/bin/env bash
# Installs what xencoder needs on a fresh Debian 12 machine (apt only; nothing is downloaded
# from anywhere else). Uses sudo when not root. Safe to run again: it installs only what is
# missing. Usage: bash scripts/setup.sh [--with-python]   (--with-python adds python3-torch and
# python3-numpy, needed only to regenerate reference values and to run the PyTorch comparisons).
# jupyter-nbconvert, libjs-mathjax and chromium are always installed: the test suite renders the
# student HTML and checks it in a headless browser.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libxtensor-dev libxtensor-blas-dev libopenblas-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libzip-dev libutf8proc-dev
  clang-tools-19 clang-format-19
  clang-19 libclang-rt-19-dev
  librsvg2-bin
  libxml2-dev
  jupyter-nbconvert libjs-mathjax chromium
  # xenc-kernel (notebooks/kernel), the notebooks' Jupyter kernel, and Jupyter itself: the
  # notebooks run through nbclient in the test suite, and in `jupyter notebook`
  xeus-dev libclang-cpp19-dev libclang-19-dev llvm-19-dev
  python3-nbclient python3-jupyter-client jupyter-client jupyter-notebook
)
if [[ "${1:-}" == "--with-python" ]]; then
  packages+=(python3 python3-numpy python3-torch)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#packages[@]} packages are installed"
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
echo "setup: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

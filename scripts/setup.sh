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
  # the WebAssembly build (cmake/XencWasm.cmake; tests/wasm)
  emscripten
  # the grader's sandbox (xenc/grade/sandbox.hpp: bwrap; prlimit is util-linux's)
  bubblewrap util-linux
)
# npm, for Playwright in the browser tests: Debian's package, unless the Node.js already installed
# brings its own (NodeSource's nodejs provides npm and conflicts with Debian's npm package)
if ! command -v npm > /dev/null; then
  packages+=(npm)
fi
if [[ "${1:-}" == "--with-python" ]]; then
  packages+=(python3 python3-numpy python3-torch)
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi

# utf8proc's C source, for the WebAssembly build (Debian ships utf8proc compiled for the host
# only): Debian's source package, unpacked into .deps/ of this checkout. apt needs a deb-src line
# for the same mirror; it is added as its own file, once.
fetch_utf8proc_source() {
  local deps; deps="$(cd "$(dirname "$0")/.." && pwd)/.deps"
  compgen -G "$deps/utf8proc-*/utf8proc.c" > /dev/null && return 0
  local list=/etc/apt/sources.list.d/xencoder-deb-src.sources
  if [[ ! -f $list ]]; then
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
      "${sudo_cmd[@]}" tee "$list" > /dev/null
    "${sudo_cmd[@]}" apt-get update -qq
  fi
  mkdir -p "$deps" && (cd "$deps" && apt-get source -qq --download-only utf8proc 2> /dev/null &&
                       tar -xzf utf8proc_*.orig.tar.gz && rm -f utf8proc_*)
  echo "setup: utf8proc's source is in $(ls -d "$deps"/utf8proc-*)"
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#packages[@]} packages are installed"
else
  echo "setup: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
fetch_utf8proc_source

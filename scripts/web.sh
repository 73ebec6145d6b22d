#!/usr/bin/env bash
# The lesson in a browser: builds the library to WebAssembly (emscripten, cmake/XencWasm.cmake)
# with the page of apps/web/ into one static folder, build/wasm/web/, and serves that folder on
# localhost. Installs what is missing with apt first (scripts/setup.sh --web: the library's
# dependencies, emscripten, and utf8proc's source from Debian's source package). Nothing is
# downloaded from anywhere else, and the page fetches nothing but its own files.
#
#   bash scripts/web.sh                 # build, then serve on http://127.0.0.1:8000/ (Ctrl-C stops)
#   bash scripts/web.sh --port 8080     # another port
#   bash scripts/web.sh --build-only    # build the folder only
#
# The folder is the whole page: copy it to any static web server (the server must send .wasm
# files as application/wasm).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build_only=false
port=8000
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-only) build_only=true ;;
    --port) port="${2:?--port needs a number}"; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "web.sh: unknown option $1 (--build-only, --port N, --help)" >&2; exit 2 ;;
  esac
  shift
done

bash "$root/scripts/setup.sh" --web
utf8proc=$(ls -d "$root"/.deps/utf8proc-* | head -n 1)
build="$root/build/wasm"
mkdir -p "$root/build"
# emscripten's link step needs node's global modules (Debian keeps them in /usr/share/nodejs)
export NODE_PATH=/usr/share/nodejs
if command -v ccache > /dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER-ccache}
  export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER-ccache}
fi
echo "web.sh: configuring the WebAssembly build in $build"
emcmake cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DXENC_UTF8PROC_SOURCE_DIR="$utf8proc" \
  > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target xenc_web_page
site="$build/web"
echo "web.sh: the page is the folder $site ($(du -sh "$site" | cut -f1)):"
ls -l "$site" | tail -n +2 | awk '{print "  " $NF "  " $5 " bytes"}'
if $build_only; then
  echo "web.sh: copy that folder to any web server (it must send .wasm as application/wasm), or run"
  echo "        bash scripts/web.sh to serve it here"
  exit 0
fi
exec node "$root/apps/web/serve.mjs" "$site" "$port"

#!/usr/bin/env bash
# Installs what one of the README's commands needs on a Debian 12 machine (apt only; nothing is
# downloaded from anywhere else). Uses sudo when not root. Safe to run again: it installs only
# what is missing.
#
#   bash scripts/setup.sh --demo        a C++ compiler, CMake and the library's dependencies
#                                       (xtensor, xtensor-blas, OpenBLAS, CLI11, nlohmann-json,
#                                       libzip, utf8proc; zip): scripts/demo.sh
#   bash scripts/setup.sh --notebooks   --demo's, and the Jupyter kernel's: xeus, clang 19's
#                                       interpreter libraries (LLVM 19), Jupyter: notebooks.sh
#   bash scripts/setup.sh --web         --demo's, emscripten, and utf8proc's C source: web.sh
#   bash scripts/setup.sh [--all]       everything the test suite uses (all of the above, and
#                                       GoogleTest, Google Benchmark, clang-format/clang-tidy 19,
#                                       libFuzzer's runtime, libxml2, rsvg, nbconvert, MathJax,
#                                       Chromium and npm for the browser tests, black for the
#                                       Python tools): test.sh
#   --with-python (with any of them)    adds python3-torch and python3-numpy, needed only to
#                                       regenerate reference values and to run the PyTorch
#                                       comparisons
#   bash scripts/setup.sh --print-deb-src   prints the deb-src entries it would add (below) and
#                                       changes nothing (XENC_APT_ETC: read another /etc/apt)
#
# utf8proc's source (--web, --all): Debian ships utf8proc compiled for the host only, so the
# WebAssembly build compiles Debian's source package, unpacked into .deps/ of this checkout.
# apt needs a deb-src entry for that. When apt has none that holds utf8proc, this script adds
# /etc/apt/sources.list.d/xencoder-deb-src.sources (or .list): deb-src entries made from the
# machine's own Debian entries for its release (the same mirrors, suite, components and keys),
# read from /etc/apt/sources.list.d/*.sources (deb822) or /etc/apt/sources.list and *.list (one
# line per entry). Nothing else is written to the apt configuration.
set -euo pipefail

demo=(
  build-essential cmake pkg-config
  libxtensor-dev libxtensor-blas-dev libopenblas-dev
  nlohmann-json3-dev libcli11-dev libzip-dev libutf8proc-dev
  # xenc-grade-all --gradescope-bundle writes its zip with zip
  zip
)
# xenc-kernel (notebooks/kernel), the notebooks' Jupyter kernel, and Jupyter itself
notebooks=(
  xeus-dev libclang-cpp19-dev libclang-19-dev llvm-19-dev
  python3-nbclient python3-jupyter-client jupyter-client jupyter-notebook
)
# the WebAssembly build (cmake/XencWasm.cmake)
web=(emscripten)
# the rest of the test suite: tests, benchmarks, formatting and layering checks, fuzzing, the
# notebooks through clang-repl and nbconvert, SVG rendering, the browser tests
tests=(
  git ccache libgtest-dev libgmock-dev libbenchmark-dev
  clang-tools-19 clang-format-19 clang-19 libclang-rt-19-dev
  librsvg2-bin libxml2-dev
  jupyter-nbconvert libjs-mathjax chromium
  # the grader's sandbox (xenc/grade/sandbox.hpp: bwrap; prlimit is util-linux's); unzip and
  # shellcheck for the Gradescope bundle's check (tests/grade/check_gradescope_bundle.sh)
  bubblewrap util-linux unzip shellcheck
  # the Python tools' formatter (ctest python_is_formatted: scripts/format.sh --check)
  black
)

command=all
with_python=0
for arg in "$@"; do
  case "$arg" in
    --demo) command=demo ;;
    --notebooks) command=notebooks ;;
    --web) command=web ;;
    --all) command=all ;;
    --with-python) with_python=1 ;;
    --print-deb-src) command=print-deb-src ;;
    *) echo "usage: bash scripts/setup.sh [--demo | --notebooks | --web | --all] [--with-python]" >&2
       exit 2 ;;
  esac
done

packages=("${demo[@]}")
case "$command" in
  notebooks) packages+=("${notebooks[@]}") ;;
  web) packages+=("${web[@]}") ;;
  all) packages+=("${notebooks[@]}" "${web[@]}" "${tests[@]}")
       # npm, for Playwright in the browser tests: Debian's package, unless the Node.js already
       # installed brings its own (NodeSource's nodejs provides npm and conflicts with Debian's)
       if ! command -v npm > /dev/null; then packages+=(npm); fi ;;
esac
if [[ $with_python -eq 1 ]]; then
  packages+=(python3 python3-numpy python3-torch)
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi

release_codename() { (. "${XENC_APT_ETC:-/etc/apt}/../os-release" 2> /dev/null || . /etc/os-release; echo "${VERSION_CODENAME:-}"); }

# deb-src entries made from the machine's own deb entries for release $1, on stdout, in the format
# of the first place that has any: deb822 stanzas from /etc/apt/sources.list.d/*.sources (prints
# "sources" on fd 3), else one-line entries from sources.list and *.list (prints "list" on fd 3).
derive_deb_src() {
  local codename=$1 f etc=${XENC_APT_ETC:-/etc/apt}
  local deb822=()
  for f in "$etc"/sources.list.d/*.sources; do [[ -f $f ]] && deb822+=("$f"); done
  if [[ ${#deb822[@]} -gt 0 ]]; then
    # A stanza: fields "Name: value", continuation lines start with a space (a Signed-By key
    # block), stanzas end at a blank line. Kept: enabled stanzas of Types deb whose Suites hold
    # the release; written with that suite only.
    local text
    text=$(awk -v codename="$codename" '
      function flush(   i, n, types, suites, keep, out) {
        if (nfields == 0) return
        keep = 0
        n = split(tolower(val["types"]), types, /[ \t]+/)
        for (i = 1; i <= n; i++) if (types[i] == "deb") keep = 1
        if (tolower(val["enabled"]) ~ /^[ \t]*no/) keep = 0
        n = split(val["suites"], suites, /[ \t]+/)
        found = 0
        for (i = 1; i <= n; i++) if (suites[i] == codename) found = 1
        if (keep && found && val["uris"] != "") {
          out = "Types: deb-src\nURIs: " val["uris"] "\nSuites: " codename "\nComponents: " val["components"] "\n"
          if (raw["signed-by"] != "") out = out "Signed-By:" raw["signed-by"] "\n"
          printf "%s\n", out
        }
        delete val; delete raw; nfields = 0; last = ""
      }
      /^#/ { next }
      /^[ \t]*$/ { flush(); next }
      /^[ \t]/ { if (last != "") raw[last] = raw[last] "\n" $0; next }
      {
        name = tolower(substr($0, 1, index($0, ":") - 1))
        value = substr($0, index($0, ":") + 1)
        raw[name] = value
        sub(/^[ \t]+/, "", value); sub(/[ \t]+$/, "", value)
        val[name] = value; last = name; nfields++
      }
      END { flush() }' "${deb822[@]}")
    if [[ -n $text ]]; then
      echo sources >&3
      printf '%s\n' "$text"
      return 0
    fi
  fi
  local lists=()
  [[ -f $etc/sources.list ]] && lists+=("$etc/sources.list")
  for f in "$etc"/sources.list.d/*.list; do [[ -f $f ]] && lists+=("$f"); done
  [[ ${#lists[@]} -eq 0 ]] && return 0
  # "deb [options] URI suite component..." for the release -> the same line with deb-src
  local lines
  lines=$(awk -v codename="$codename" '
    $1 == "deb" {
      i = 2; opts = ""
      if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) { opts = opts $i " "; i++ }; opts = opts $i " "; i++ }
      if ($(i + 1) == codename) { $1 = "deb-src"; print }
    }' "${lists[@]}")
  if [[ -n $lines ]]; then
    echo list >&3
    printf '%s\n' "$lines"
  fi
}

# utf8proc's C source, for the WebAssembly build: Debian's source package, into .deps/.
fetch_utf8proc_source() {
  local deps; deps="$(cd "$(dirname "$0")/.." && pwd)/.deps"
  compgen -G "$deps/utf8proc-*/utf8proc.c" > /dev/null && return 0
  if ! apt-cache showsrc utf8proc 2> /dev/null | grep -q '^Package: utf8proc'; then
    local codename format entries
    codename=$(release_codename)
    if [[ -z $codename ]]; then
      echo "setup: /etc/os-release names no release (VERSION_CODENAME); add a deb-src entry" \
           "for utf8proc's source to apt yourself" >&2
      return 1
    fi
    local tmp; tmp=$(mktemp)
    entries=$(derive_deb_src "$codename" 3> "$tmp")
    format=$(cat "$tmp"); rm -f "$tmp"
    if [[ -z $entries ]]; then
      echo "setup: apt has no deb entry for $codename to make a deb-src entry from; add a" \
           "deb-src entry that holds utf8proc yourself" >&2
      return 1
    fi
    local list=/etc/apt/sources.list.d/xencoder-deb-src.$format
    echo "setup: adding $list (deb-src entries for $codename, from this machine's own apt sources)"
    printf '%s\n' "$entries" | "${sudo_cmd[@]}" tee "$list" > /dev/null
    "${sudo_cmd[@]}" apt-get update -qq
  fi
  mkdir -p "$deps" && (cd "$deps" && apt-get source -qq --download-only utf8proc 2> /dev/null &&
                       tar -xzf utf8proc_*.orig.tar.gz && rm -f utf8proc_*) || true
  if ! compgen -G "$deps/utf8proc-*/utf8proc.c" > /dev/null; then
    echo "setup: could not fetch utf8proc's source into $deps (apt-get source utf8proc)" >&2
    return 1
  fi
  echo "setup: utf8proc's source is in $(ls -d "$deps"/utf8proc-*)"
}

if [[ $command == print-deb-src ]]; then
  derive_deb_src "$(release_codename)" 3>&1
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#packages[@]} packages for --$command are installed"
else
  echo "setup: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [[ $command == web || $command == all ]]; then
  fetch_utf8proc_source
fi
# The JavaScript formatter that ctest js_is_formatted runs (--all only): prettier at the version
# scripts/prettier/package-lock.json pins, from the npm registry, into scripts/prettier/.
prettier_dir="$(cd "$(dirname "$0")" && pwd)/prettier"
if [[ $command == all && ! -x $prettier_dir/node_modules/.bin/prettier ]]; then
  echo "setup: installing prettier into $prettier_dir (npm ci)"
  (cd "$prettier_dir" && npm ci --no-audit --no-fund --loglevel=error)
fi

#!/usr/bin/env bash
# Formats xencoder's C++ sources with the project's .clang-format and the clang-format the project
# installs (clang-format-19, Debian 12; scripts/setup.sh installs it), and the web page's
# JavaScript (apps/web/*.js, *.mjs) with prettier as .prettierrc.json says (prettier 3.6.2, pinned
# in scripts/prettier/package.json; install it with `npm ci --prefix scripts/prettier`).
#   bash scripts/format.sh                 rewrite every C++ file of the tree in place
#   bash scripts/format.sh --check         change nothing; list the files clang-format would
#                                          change and exit 1 if there is one (ctest
#                                          source_is_formatted runs this)
#   bash scripts/format.sh [--check] F...  the same for the files F only (*.js and *.mjs go to
#                                          prettier, *.py to black, the others to clang-format)
#   bash scripts/format.sh --list-python   the Python tools black formats, one per line
# Without FILE arguments the JavaScript is formatted or checked when prettier is installed, and
# skipped with a note on stderr when it is not (ctest js_is_formatted checks it where it is).
# The Python tools (the tracked *.py of scripts/, bench/, tests/ but tests/grade/, and
# notebooks/tools/) go to black as pyproject.toml says (Debian 12's black 23, scripts/setup.sh
# --all installs it), in the same way: skipped with a note when black is missing (ctest
# python_is_formatted checks them where it is). notebooks/kernel/tests/ and tests/grade/ are
# not formatted yet (other work edits them).
# The tree's C++ files are the tracked *.cpp, *.hpp, *.h and *.cc (git ls-files; outside a git
# checkout, the same names found under apps/ bench/ lib/ notebooks/ tests/). Never formatted:
#   *.in                   templates CMake fills in (config.hpp.in, xenc_cling.hpp.in: @VARS@)
#   notebooks' *.ipynb     JSON; a cell's C++ is formatted by hand, as it is read in the notebook
#   .deps/, build*/        Debian's utf8proc source (scripts/setup.sh) and build trees, untracked
# CLANG_FORMAT=<program> overrides the formatter (the check needs the same major version as
# whoever formatted the tree: another version breaks lines differently).
set -euo pipefail
cd "$(dirname "$0")/.."

# The Python tools formatted by black (the listed folders' tracked *.py; see above).
python_tools=('scripts/*.py' 'bench/*.py' 'tests/*.py' 'tests/apps/*.py' 'tests/fuzz/*.py'
              'tests/io/*.py' 'tests/reference/*.py' 'notebooks/tools/*.py')
list_python() {
  if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    git ls-files -- "${python_tools[@]/#/:(glob)}"
  else
    for g in "${python_tools[@]}"; do compgen -G "$g" || true; done
  fi
}
if [[ "${1:-}" == "--list-python" ]]; then  # (ctest python_is_formatted checks these)
  list_python
  exit 0
fi

check=0
if [[ "${1:-}" == "--check" ]]; then
  check=1
  shift
elif [[ "${1:-}" == -* ]]; then
  echo "usage: bash scripts/format.sh [--check] [FILE...]" >&2
  exit 2
fi

# ---- JavaScript: prettier -------------------------------------------------------------------------
prettier=scripts/prettier/node_modules/.bin/prettier
js=()
py=()
cpp=()
js_status=0
py_status=0
for f in "$@"; do
  case "$f" in
    *.js | *.mjs) js+=("$f") ;;
    *.py) py+=("$f") ;;
    *) cpp+=("$f") ;;
  esac
done
if [[ $# -eq 0 ]]; then
  if [[ -x "$prettier" ]]; then
    if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
      mapfile -t js < <(git ls-files -- 'apps/web/*.js' 'apps/web/*.mjs')
    else
      mapfile -t js < <(find apps/web -maxdepth 1 -type f \( -name '*.js' -o -name '*.mjs' \) | sort)
    fi
  else
    echo "format.sh: $prettier not installed (npm ci --prefix scripts/prettier):" \
         "the JavaScript is not formatted or checked" >&2
  fi
elif [[ ${#js[@]} -gt 0 && ! -x "$prettier" ]]; then
  echo "format.sh: $prettier not found; install it with npm ci --prefix scripts/prettier" >&2
  exit 2
fi
if [[ ${#js[@]} -gt 0 ]]; then
  if [[ $check -eq 0 ]]; then
    "$prettier" --log-level warn --write "${js[@]}"
    echo "format.sh: ${#js[@]} JavaScript files formatted with prettier $("$prettier" --version)"
  elif ! unformatted_js=$("$prettier" --list-different "${js[@]}"); then
    [[ -n "$unformatted_js" ]] || exit 2  # prettier itself failed (a missing file, a syntax error)
    echo "$unformatted_js"
    echo "format.sh --check: $(wc -l <<< "$unformatted_js") of ${#js[@]} JavaScript files are" \
         "not formatted as .prettierrc.json says; run bash scripts/format.sh" >&2
    js_status=1
  else
    echo "format.sh --check: all ${#js[@]} JavaScript files are formatted"
  fi
fi

# ---- Python: black --------------------------------------------------------------------------------
black="${BLACK:-black}"
if [[ $# -eq 0 ]]; then
  if command -v "$black" > /dev/null; then
    mapfile -t py < <(list_python)
  else
    echo "format.sh: $black not installed (bash scripts/setup.sh --all):" \
         "the Python tools are not formatted or checked" >&2
  fi
elif [[ ${#py[@]} -gt 0 ]] && ! command -v "$black" > /dev/null; then
  echo "format.sh: $black not found; install it with bash scripts/setup.sh --all" >&2
  exit 2
fi
if [[ ${#py[@]} -gt 0 ]]; then
  if [[ $check -eq 0 ]]; then
    "$black" --quiet "${py[@]}"
    echo "format.sh: ${#py[@]} Python files formatted with $("$black" --version | head -1)"
  elif ! "$black" --quiet --check "${py[@]}" 2> /dev/null; then
    # --check's own list of the files it would change (exit 1), or its error (exit 123)
    "$black" --check "${py[@]}" 2>&1 | grep -v '^Oh no\|^All done\|files\? would be' || true
    echo "format.sh --check: Python files are not formatted as pyproject.toml says; run" \
         "bash scripts/format.sh" >&2
    py_status=1
  else
    echo "format.sh --check: all ${#py[@]} Python files are formatted"
  fi
fi
if [[ $# -gt 0 && ${#cpp[@]} -eq 0 ]]; then
  exit $((js_status | py_status))
fi

# ---- C++: clang-format ----------------------------------------------------------------------------
clang_format="${CLANG_FORMAT:-clang-format-19}"
if ! command -v "$clang_format" > /dev/null; then
  echo "format.sh: $clang_format not found; install it with bash scripts/setup.sh" \
       "(apt-get install clang-format-19)" >&2
  exit 2
fi

files=()
if [[ $# -gt 0 ]]; then
  files=("${cpp[@]}")
elif git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.h' '*.cc')
else
  mapfile -t files < <(find apps bench lib notebooks tests \
    \( -name .deps -o -name 'build*' -o -name node_modules \) -prune -o \
    -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cc' \) -print | sort)
fi
if [[ ${#files[@]} -eq 0 ]]; then
  echo "format.sh: no C++ file found" >&2
  exit 2
fi

if [[ $check -eq 0 ]]; then
  "$clang_format" -i --style=file "${files[@]}"
  echo "format.sh: ${#files[@]} files formatted with $("$clang_format" --version)"
  exit 0  # (formatting never fails on style)
fi

# --dry-run --Werror reports each place a file differs from its formatted form as
# "file:line:col: error: code should be clang-formatted"; one line per file is enough here.
report=$("$clang_format" --dry-run --Werror --ferror-limit=1 --style=file "${files[@]}" 2>&1) && rc=0 || rc=$?
unformatted=$(grep -oE '^[^:]+:[0-9]+:[0-9]+: error: code should be clang-formatted' <<< "$report" |
              cut -d: -f1 | sort -u || true)
if [[ $rc -ne 0 && -z "$unformatted" ]]; then
  echo "$report" >&2  # clang-format itself failed (a missing file, a bad .clang-format)
  echo "format.sh: $clang_format failed (exit $rc)" >&2
  exit 2
fi
if [[ -n "$unformatted" ]]; then
  count=$(wc -l <<< "$unformatted")
  echo "$unformatted"
  echo "format.sh --check: $count of ${#files[@]} C++ files are not formatted as .clang-format" \
       "says ($("$clang_format" --version)); run bash scripts/format.sh" >&2
  exit 1
fi
echo "format.sh --check: all ${#files[@]} C++ files are formatted"
exit $((js_status | py_status))

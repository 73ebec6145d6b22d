#!/usr/bin/env bash
# Runs every program command that a README prints, as typed, and fails if one fails.
#
#   bash tests/readme/run_readme_commands.sh BUILD_DIR README.md WORK_DIR
#
# What counts as a command: in a ```bash (or ```sh, ```console, unlabelled) block, each line that
# starts with `./build/apps/...`, `build/apps/...` or `xenc-<name>`, then a space or its end (not
# `xenc-<name>:`, a program's message in a transcript; continued by a trailing backslash,
# a trailing `# comment` dropped); and each inline code span that starts with `xenc-<name> --`
# and holds no placeholder (`<`, `[`, `|`, `...`, `W.npz`, `X.npy`). `./build/` becomes
# BUILD_DIR, `xenc-<name>` the program in BUILD_DIR/apps/<name>. The commands of one README run
# in order in one fresh WORK_DIR, so a `--load` can use what an earlier `--save` wrote.
#
# Small settings where a flag allows it: the training programs get `--epochs 1` (and
# xenc-extrapolate fewer sequences; nothing when it only reads a study back, --study-from)
# appended, since a README shows the full run and ctest runs it already at its defaults
# (test_train_order_full, test_extrapolate_full). A README command that sets the flag itself
# keeps its value.
set -uo pipefail
build=$(cd "$1" && pwd)
readme=$2
work=$3
rm -rf "$work" && mkdir -p "$work"

program_path() {  # xenc-word-order -> BUILD/apps/word_order/xenc-word-order (any apps/ folder)
  find "$build/apps" -name "$1" -type f -perm -u+x -print -quit
}
placeholder() {  # a synopsis, not a command: <x>, [--opt], a|b, ..., W.npz, X.npy
  [[ $1 =~ [\<\[\|] || $1 == *"..."* || $1 == *"W.npz"* || $1 == *"X.npy"* ]]
}

small_settings() {  # extra flags for a program, unless the command sets them
  local prog=$1 cmd=$2 extra=""
  case $prog in
    xenc-train-order)
      [[ $cmd == *"--epochs"* || $cmd == *"--load"* ]] || extra+=" --epochs 1" ;;
    xenc-extrapolate)
      # --study-from trains nothing, and refuses the training flags (the options are the file's)
      [[ $cmd == *"--study-from"* ]] && return
      [[ $cmd == *"--epochs"* ]] || extra+=" --epochs 1"
      [[ $cmd == *"--train-sequences"* ]] || extra+=" --train-sequences 500"
      [[ $cmd == *"--test-sequences"* ]] || extra+=" --test-sequences 20" ;;
  esac
  echo "$extra"
}

commands=()
# 1. fenced blocks
while IFS= read -r line; do placeholder "$line" || commands+=("$line"); done < <(awk '
  # a fence closes the block it opened, whatever its language (a ```python block must not
  # leave the lines after it counted as an unlabelled block)
  /^```/ { if (infence) { infence = 0; inb = 0 } else { infence = 1; lang = substr($0, 4); inb = (lang == "" || lang == "bash" || lang == "sh" || lang == "console") } next }
  !inb { next }
  {
    l = $0
    if (cont != "") { l = cont " " l; cont = "" }
    sub(/^[ \t]+/, "", l)
    if (l ~ /\\$/) { cont = substr(l, 1, length(l) - 1); next }
    # a program name followed by a colon is its message in a transcript, not a command
    if (l ~ /^(\.\/)?build\/apps\/[^ \t:]+([ \t]|$)/ || l ~ /^xenc-[a-z-]+([ \t]|$)/) {
      sub(/[ \t]+#.*$/, "", l)
      print l
    }
  }' "$readme")
# 2. inline code spans
while IFS= read -r span; do
  placeholder "$span" || commands+=("$span")
done < <(grep -oE '`xenc-[a-z-]+ --[^`]*`' "$readme" | tr -d '`' | awk '!seen[$0]++')

if [[ ${#commands[@]} -eq 0 ]]; then
  echo "$readme: no program commands"
  exit 0
fi

failures=0
n=0
for cmd in "${commands[@]}"; do
  n=$((n + 1))
  prog=$(echo "$cmd" | awk '{print $1}')
  prog=${prog##*/}
  path=$(program_path "$prog")
  if [[ -z $path ]]; then
    echo "FAIL [$n] $cmd: no program $prog under $build/apps"
    failures=$((failures + 1))
    continue
  fi
  args=${cmd#* }
  [[ $args == "$cmd" ]] && args=""
  extra=$(small_settings "$prog" "$cmd")
  # the README's arguments, as a shell would split them (quotes kept)
  full="\"$path\" $args$extra"
  start=$(date +%s%N)
  (cd "$work" && eval "$full" > "out_$n.txt" 2> "err_$n.txt" < /dev/null)
  rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  if [[ $rc -ne 0 ]]; then
    echo "FAIL [$n] $cmd$extra: exit $rc"
    sed 's/^/    /' "$work/err_$n.txt" | head -20
    failures=$((failures + 1))
  else
    printf 'ok   [%d] %s%s (%d.%03d s)\n' "$n" "$cmd" "$extra" $((ms / 1000)) $((ms % 1000))
  fi
done
echo "$readme: ${#commands[@]} commands, $failures failed"
[[ $failures -eq 0 ]]

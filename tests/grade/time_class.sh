#!/usr/bin/env bash
# Times xenc-grade-all on a class of N students × 8 exercises, with the sandbox (bubblewrap's
# namespaces) and without it (XENC_GRADE_NO_NAMESPACES=1, the process sandbox alone), and prints
# both times and their ratio. Not a ctest: run it by hand on an idle machine (issue 27's goal:
# 100 students cost at most 1.5× with the sandbox).
#
#     bash tests/grade/time_class.sh [N=100] [BUILD_DIR=build] [WORK_DIR=$BUILD_DIR/time-class]
#
# Each student hands in the 8 exercises below: the reference solutions of tests/grade/solutions,
# with a classic mistake in about one exercise in four (tests/grade/bad: no max subtracted, no
# transpose, a compile error, an abort, a segfault) and a missing file (the stub) in one in
# eight. Each handed-in file ends with a comment naming its student, so no two students' files
# are the same bytes (the build cache compiles identical files once; a real class's files
# differ). Both runs grade the same class and must give the same grades.csv. The sandboxed run
# starts with an empty cache (--cache). Then the regrade of one student: student_000 alone, one
# of its files changed, graded with the sandboxed run's cache. BUILD_DIR is installed into
# WORK_DIR/prefix first.
set -euo pipefail
n=${1:-100}
build=$(cd "${2:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=${3:-$build/time-class}
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > /dev/null
grade_all=$work/prefix/bin/xenc-grade-all
exercises=(softmax layer_norm_forward layer_norm_backward attention split_heads merge_heads
  linear_backward cross_entropy)
declare -A mistakes=(
  [softmax]="softmax_without_max.cpp softmax_no_compile.cpp"
  [merge_heads]="merge_heads_without_transpose.cpp merge_heads_segfault.cpp"
  [attention]="attention_no_compile.cpp"
  [split_heads]="split_heads_abort.cpp")
for ((s = 0; s < n; ++s)); do
  dir=$work/class/$(printf 'student_%03d' "$s")/exercises
  mkdir -p "$dir"
  for ((e = 0; e < ${#exercises[@]}; ++e)); do
    name=${exercises[e]}
    pick=$(((s * 7 + e * 3) % 8))
    if ((pick == 0)); then
      continue  # not handed in: the stub
    elif ((pick <= 2)) && [[ -n ${mistakes[$name]:-} ]]; then
      read -r -a bad <<< "${mistakes[$name]}"
      cp "$here/bad/${bad[$(((s + e) % ${#bad[@]}))]}" "$dir/$name.cpp"
    else
      cp "$here/solutions/$name.cpp" "$dir/$name.cpp"
    fi
    printf '\n// %s\n' "$(basename "$(dirname "$dir")")" >> "$dir/$name.cpp"
  done
done
points=$(printf '"%s": 1, ' "${exercises[@]}")
cat > "$work/grading.json" << JSON
{"exercises": {${points%, }}, "time_limit_seconds": 10, "compile_time_limit_seconds": 120}
JSON

run() {  # label class-dir output-dir [env...]
  local label=$1 class=$2 out=$3 start end
  shift 3
  start=$(date +%s.%N)
  env "$@" "$grade_all" "$class" --settings "$work/grading.json" --output "$out" \
    --cache "$work/cache" > "$out.log" 2>&1 || true
  end=$(date +%s.%N)
  grep -q '^wrote ' "$out.log" || { echo "time_class: $label: xenc-grade-all failed:" >&2; cat "$out.log" >&2; exit 1; }
  echo "$end - $start" | bc
}
plain=$(run "without namespaces" "$work/class" "$work/grades-plain" XENC_GRADE_NO_NAMESPACES=1)
boxed=$(run "with the sandbox" "$work/class" "$work/grades-sandbox")
mkdir -p "$work/one"
cp -r "$work/class/student_000" "$work/one/"
changed=$(find "$work/one/student_000/exercises" -name '*.cpp' | sort | head -n 1)
printf '// changed\n' >> "$changed"
one=$(run "the regrade of one student" "$work/one" "$work/grades-one")
grep -q '^Sandbox: ' "$work/grades-sandbox.log" &&
  { echo "time_class: bwrap did not start here; the sandboxed run is not one" >&2; exit 1; }
# the same grades; a note may name its log, under each run's own output folder
for run in plain sandbox; do
  sed "s#$work/grades-$run/#OUT/#g" "$work/grades-$run/grades.csv" > "$work/grades-$run.csv"
done
cmp -s "$work/grades-plain.csv" "$work/grades-sandbox.csv" || {
  echo "time_class: the two runs' grades.csv differ:" >&2
  diff "$work/grades-plain.csv" "$work/grades-sandbox.csv" >&2 || true
  exit 1
}
printf '%d students × %d exercises: without namespaces %.1f s, with the sandbox %.1f s, ratio %.2f\n' \
  "$n" "${#exercises[@]}" "$plain" "$boxed" "$(echo "$boxed / $plain" | bc -l)"
printf 'the regrade of one student with one changed file: %.1f s\n' "$one"

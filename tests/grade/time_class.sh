#!/usr/bin/env bash
# Times xenc-grade-all on a class of N students × 8 exercises, and checks what a teacher would
# check on its results. Not a ctest: run it by hand on an idle machine (issue 27: the sandbox costs
# at most 1.5× the process sandbox alone; issue 31: 100 students in at most 8 minutes, one
# student's regrade in at most 15 s, the class report right).
#
#     bash tests/grade/time_class.sh [N=100] [BUILD_DIR=build] [WORK_DIR=$BUILD_DIR/time-class]
#
# The class: each student hands in the 8 exercises below, the reference solutions of
# tests/grade/solutions, with a classic mistake in about one exercise in four (tests/grade/bad: no
# max subtracted, no transpose, a compile error, an abort, a segfault) and a missing file (the
# stub) in one in eight. Each handed-in file ends with a comment naming its student, so no two
# students' files are the same bytes (the build cache compiles identical files once; a real
# class's files differ). Planted in it (N >= 30): a copied softmax (a solution written
# differently from the reference, tests/grade/similarity/softmax_independent_loops.cpp, handed in
# by one student, a copy of it with every variable renamed by another, and a reformatted copy by a
# third) and one more independent softmax (softmax_independent_xtensor.cpp), not a copy.
# The hostile class: the same students, with ten of them handing in a hostile softmax
# (tests/grade/hostile: a forged verdict, killing the grader, a daemon, writing others' files, a
# fork bomb, reading the secrets, a template bomb, #include </dev/zero>, #include of a file
# outside the submission, memory outside its address space).
# Runs, each with an empty cache unless said:
#   1. the class without namespaces (XENC_GRADE_NO_NAMESPACES=1, the process sandbox alone);
#   2. the class with the sandbox: the same grades.csv as 1 (issue 27's ratio: 2 / 1);
#   3. the hostile class with the sandbox (issue 31's class of N): every honest student's row as
#      in 2; the class report flags exactly the three copied pairs, counts each known mistake for
#      exactly the students who were handed it, and lists every crash, hang and compile error;
#   4. the regrade of one student: student_000 with one file changed, `--only student_000` into
#      3's folder with 3's cache: the other N - 1 rows byte for byte as they were.
# BUILD_DIR is installed into WORK_DIR/prefix first.
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
student() { printf 'student_%03d' "$1"; }
# the planted students, at the same places of any class of N >= 30
declare -A planted=() hostile_at=()
if ((n >= 30)); then
  planted[$((11 * n / 100))]=original planted[$((47 * n / 100))]=renamed
  planted[$((74 * n / 100))]=reformatted planted[$((25 * n / 100))]=independent
  hostile=(forged_verdict kills_grader daemon writes_others fork_bomb reads_secrets template_bomb
    include_dev_zero include_shadow escapes_memory)
  for ((h = 0; h < ${#hostile[@]}; ++h)); do
    at=$(((5 + 10 * h) * n / 100))
    while [[ -n ${planted[$at]:-} || -n ${hostile_at[$at]:-} || $at == 0 ]]; do at=$(((at + 1) % n)); done
    hostile_at[$at]=${hostile[h]}
  done
fi
: > "$work/handed.txt"  # student exercise file: what the generator handed each one
for ((s = 0; s < n; ++s)); do
  dir=$work/class/$(student "$s")/exercises
  mkdir -p "$dir"
  for ((e = 0; e < ${#exercises[@]}; ++e)); do
    name=${exercises[e]}
    pick=$(((s * 7 + e * 3) % 8))
    file=
    if [[ $name == softmax && -n ${planted[$s]:-} ]]; then
      file=planted:${planted[$s]}
      case ${planted[$s]} in
        original) cp "$here/similarity/softmax_independent_loops.cpp" "$dir/softmax.cpp" ;;
        independent) cp "$here/similarity/softmax_independent_xtensor.cpp" "$dir/softmax.cpp" ;;
        renamed)  # every variable renamed, the comments changed
          sed -e 's/\bresult\b/out/g; s/\bwidth\b/cols/g; s/\brow\b/r/g; s/\bend\b/last/g' \
            -e 's/\bstop\b/limit/g; s/\bpeak\b/biggest/g; s/\bnorm\b/scale/g; s/\bv\b/val/g' \
            -e 's/\bp\b/q/g; s#^//.*#// my softmax#' \
            "$here/similarity/softmax_independent_loops.cpp" > "$dir/softmax.cpp" ;;
        reformatted)  # braces on their own lines, tabs, no comments
          sed -e 's#^//.*##; s/) {$/)\n{/; s/^  /\t/; s/ else {$/\n\telse\n\t{/' \
            "$here/similarity/softmax_independent_loops.cpp" > "$dir/softmax.cpp" ;;
      esac
    elif ((pick == 0)); then
      continue  # not handed in: the stub
    elif ((pick <= 2)) && [[ -n ${mistakes[$name]:-} ]]; then
      read -r -a bad <<< "${mistakes[$name]}"
      file=${bad[$(((s + e) % ${#bad[@]}))]}
      cp "$here/bad/$file" "$dir/$name.cpp"
    else
      file=solution
      cp "$here/solutions/$name.cpp" "$dir/$name.cpp"
    fi
    printf '\n// %s\n' "$(student "$s")" >> "$dir/$name.cpp"
    echo "$(student "$s") $name $file" >> "$work/handed.txt"
  done
done
cp -r "$work/class" "$work/hostile-class"
: > "$work/hostile.txt"
for at in "${!hostile_at[@]}"; do
  cp "$here/hostile/softmax_${hostile_at[$at]}.cpp" "$work/hostile-class/$(student "$at")/exercises/softmax.cpp"
  echo "$(student "$at") ${hostile_at[$at]}" >> "$work/hostile.txt"
done
points=$(printf '"%s": 1, ' "${exercises[@]}")
cat > "$work/grading.json" << JSON
{"exercises": {${points%, }}, "time_limit_seconds": 10, "compile_time_limit_seconds": 120}
JSON

run() {  # label class-dir output-dir cache-dir [xenc-grade-all options...] [-- env...]
  local label=$1 class=$2 out=$3 cache=$4 start end
  shift 4
  local opts=() envs=()
  while (($#)) && [[ $1 != -- ]]; do opts+=("$1"); shift; done
  (($#)) && shift && envs=("$@")
  start=$(date +%s.%N)
  env "${envs[@]}" "$grade_all" "$class" --settings "$work/grading.json" --output "$out" \
    --cache "$cache" "${opts[@]}" > "$out.log" 2>&1 || true
  end=$(date +%s.%N)
  grep -q '^wrote ' "$out.log" || { echo "time_class: $label: xenc-grade-all failed:" >&2; cat "$out.log" >&2; exit 1; }
  echo "$end - $start" | bc
}
plain=$(run "without namespaces" "$work/class" "$work/grades-plain" "$work/cache-plain" -- XENC_GRADE_NO_NAMESPACES=1)
boxed=$(run "with the sandbox" "$work/class" "$work/grades-sandbox" "$work/cache-sandbox")
grep -q '^Sandbox: ' "$work/grades-sandbox.log" &&
  { echo "time_class: bwrap did not start here; the sandboxed run is not one" >&2; exit 1; }
hostile_run=$(run "the hostile class" "$work/hostile-class" "$work/grades-hostile" "$work/cache-hostile")
cp "$work/grades-hostile/grades.csv" "$work/hostile-before-regrade.csv"
changed=$work/hostile-class/student_000/exercises/$(head -n 1 < <(cd "$work/hostile-class/student_000/exercises" && ls))
printf '// changed\n' >> "$changed"
one=$(run "the regrade of one student" "$work/hostile-class" "$work/grades-hostile" "$work/cache-hostile" --only student_000)

# the same grades; a note may name its log, under each run's own output folder; a row's time
# differs from run to run
strip() { sed -E "s#$work/grades-[a-z]+/#OUT/#g; s#,[0-9T:-]+Z,([^,]*)\$#,<when>,\\1#" "$1"; }
strip "$work/grades-plain/grades.csv" > "$work/grades-plain.csv"
strip "$work/grades-sandbox/grades.csv" > "$work/grades-sandbox.csv"
cmp -s "$work/grades-plain.csv" "$work/grades-sandbox.csv" || {
  echo "time_class: the two runs' grades.csv differ:" >&2
  diff "$work/grades-plain.csv" "$work/grades-sandbox.csv" >&2 || true
  exit 1
}
# the regrade kept the other rows byte for byte
diff <(grep -v '^student_000,' "$work/hostile-before-regrade.csv") \
  <(grep -v '^student_000,' "$work/grades-hostile/grades.csv") > /dev/null ||
  { echo "time_class: the regrade of student_000 changed other rows" >&2; exit 1; }
/usr/bin/python3 "$here/check_time_class.py" "$work" "$n"
printf '%d students × %d exercises: without namespaces %.1f s, with the sandbox %.1f s, ratio %.2f\n' \
  "$n" "${#exercises[@]}" "$plain" "$boxed" "$(echo "$boxed / $plain" | bc -l)"
printf 'the class with %d hostile students, with the sandbox: %.1f s\n' "${#hostile_at[@]}" "$hostile_run"
printf 'the regrade of one student with one changed file (--only): %.1f s, the other %d rows kept\n' "$one" "$((n - 1))"

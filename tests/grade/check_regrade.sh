#!/usr/bin/env bash
# A regrade of one student after a killed grade (issues 27 and 31): a class of two graded into
# --output DIR, where h_killed has full marks, is regraded with `--only h_killed` into the same
# DIR with h_killed's new softmax waiting 60 s; this script kills the grade program grading
# h_killed while it waits (SIGKILL, by its pid), as the machine or a teacher might. Then: the
# earlier full-marks report of h_killed is gone, its CSV row says "not graded" with no points,
# xenc-grade-all exits 1, and grades.csv without that row is byte for byte the first run's
# without it (a_correct's row, its time and settings, unchanged: only h_killed was regraded), and
# so are a_correct's reports; canvas.csv follows the merged grades.csv, and class.json still
# counts both students. --only refuses a student
# who has no folder before building anything (an earlier grades.csv with other columns is
# refused too: test_grade_gradebook). Kept small for CI: one exercise, two students, two runs.
# Needs bubblewrap.
# Usage: check_regrade.sh BUILD_DIR SOLUTIONS_DIR HOSTILE_DIR WORK_DIR [SHARED_DIR]
# With SHARED_DIR (the fixture grade.shared_template, setup_shared.cmake): its install and its
# build cache, instead of an install of BUILD_DIR of its own.
set -euo pipefail
build=$1 solutions=$2 hostile=$3 work=$4 shared=${5:-}
fail() { echo "check_regrade: $*" >&2; exit 1; }
rm -rf "$work"
cache=()
if [[ -n $shared ]]; then
  grade_all=$shared/prefix/bin/xenc-grade-all
  cache=(--cache "$shared/cache")
else
  cmake --install "$build" --prefix "$work/prefix" > /dev/null
  grade_all=$work/prefix/bin/xenc-grade-all
fi

for who in a_correct h_killed; do
  mkdir -p "$work/class/$who/exercises"
  cp "$solutions/softmax.cpp" "$work/class/$who/exercises/softmax.cpp"
done
cat > "$work/grading.json" << 'JSON'
{"exercises": {"softmax": 2}, "time_limit_seconds": 120, "compile_time_limit_seconds": 60}
JSON

"$grade_all" "$work/class" "${cache[@]}" --settings "$work/grading.json" --output "$work/grades" > /dev/null
cp "$work/grades/grades.csv" "$work/first.csv"
cp "$work/grades/a_correct.txt" "$work/grades/a_correct.json" "$work"/
grep -q '^h_killed,2,2,2,' "$work/first.csv" || fail "h_killed has not full marks first:
$(cat "$work/first.csv")"
grep -Eq '^  "points": 2(\.0)?,' "$work/grades/h_killed.json" || fail "no full-marks report for h_killed first"

# the regrade: h_killed's softmax now waits, and its grade is killed while it does
cp "$hostile/softmax_waits.cpp" "$work/class/h_killed/exercises/softmax.cpp"
rc=0
"$grade_all" "$work/class" "${cache[@]}" --only nobody --settings "$work/grading.json" \
  --output "$work/grades" > "$work/nobody.out" 2>&1 || rc=$?
[[ $rc == 2 && $(cat "$work/nobody.out") == "xenc-grade-all: --only nobody: no student folder $work/class/nobody" ]] ||
  fail "--only nobody exited $rc: $(cat "$work/nobody.out")"
"$grade_all" "$work/class" "${cache[@]}" --only h_killed --settings "$work/grading.json" --output "$work/grades" \
  > "$work/regrade.out" 2>&1 &
all_pid=$!
child="$work/grades/work/students/h_killed/scratch/softmax/grade-softmax"
submission="$work/grades/work/students/h_killed/src"
pid_with() {  # the pids whose command line holds every argument
  for cmdline in /proc/[0-9]*/cmdline; do
    local args ok=1
    args=$(tr '\0' '\n' 2> /dev/null < "$cmdline") || continue
    for word in "$@"; do grep -qxF -- "$word" <<< "$args" || ok=0; done
    [[ $ok == 1 ]] && basename "$(dirname "$cmdline")"
  done
  return 0
}
killed=
for _ in $(seq 1 1200); do
  if [[ -n $(pid_with "$child") ]]; then
    for pid in $(pid_with --submission "$submission"); do
      kill -KILL "$pid" && killed=$pid
    done
    [[ -n $killed ]] && break
  fi
  kill -0 $all_pid 2> /dev/null || break
  sleep 0.5
done
rc=0
wait $all_pid || rc=$?
[[ -n $killed ]] || fail "never saw h_killed's grade-softmax run: $(cat "$work/regrade.out")"
[[ $rc == 1 ]] || fail "xenc-grade-all exited $rc after its grade was killed, expected 1"
csv=$(cat "$work/grades/grades.csv")
row=$(grep '^h_killed,' <<< "$csv") || fail "no h_killed row:
$csv"
[[ $row == 'h_killed,,,,"not graded: grade was killed (SIGKILL) from outside, within its limits'* ]] ||
  fail "h_killed's row after its grade was killed: $row"
for ext in txt json; do
  [[ ! -e $work/grades/h_killed.$ext ]] || fail "the earlier run's h_killed.$ext is still there:
$(cat "$work/grades/h_killed.$ext")"
done
grep -v '^h_killed,' <<< "$csv" > "$work/without-killed.csv"
grep -v '^h_killed,' "$work/first.csv" > "$work/first-without-killed.csv"
cmp "$work/without-killed.csv" "$work/first-without-killed.csv" ||
  fail "the others' rows differ from the first run's:
$csv
---
$(cat "$work/first.csv")"
for ext in txt json; do
  cmp "$work/a_correct.$ext" "$work/grades/a_correct.$ext" || fail "a_correct.$ext changed"
done
grep -qF "wrote $work/grades/grades.csv (1 student graded, the other rows kept), their reports" "$work/regrade.out" ||
  fail "the regrade printed: $(cat "$work/regrade.out")"
[[ $(cat "$work/grades/canvas.csv") == "Student,ID,SIS User ID,SIS Login ID,Section,xencoder assignment
a_correct,,,a_correct,,2
h_killed,,,h_killed,,"* ]] || fail "canvas.csv after the regrade: $(cat "$work/grades/canvas.csv")"
# the class report after --only covers the whole class: a_correct's kept answer, h_killed's new one
python3 - "$work/grades/class.json" << 'PY' || fail "class.json after the regrade: $(cat "$work/grades/class.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert (r["students"], r["graded"]) == (2, 1), (r["students"], r["graded"])
PY
echo "check_regrade: h_killed's row after its grade was killed: $row"

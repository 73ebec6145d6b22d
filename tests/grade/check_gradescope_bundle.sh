#!/usr/bin/env bash
# Gradescope's autograder bundle (issue 31), run by check_class.cmake after grading its class: 
# `xenc-grade-all --gradescope-bundle` writes the zip; it is unpacked into a fake /autograder
# tree, its setup.sh and run_autograder pass shellcheck (when installed) and bash -n, setup.sh
# builds the template there (its apt and xencoder-build steps skipped: xencoder is already
# installed, PREFIX bound at /usr/local, where setup.sh installs it), and run_autograder grades one student's files from /autograder/submission (softmax.cpp
# at the top, merge_heads.cpp in exercises/) with the script's own paths: bwrap binds the fake
# tree at /autograder, and the run is without namespaces, as in Gradescope's container. Then
# results.json must parse, hold every top-level field of Gradescope's specification (but the
# leaderboard's) and the student's points.
# Usage: check_gradescope_bundle.sh WORK_DIR PREFIX TEMPLATE GRADING_JSON STUDENT_DIR POINTS MAX
set -euo pipefail
work=$1 prefix=$2 template=$3 settings=$4 student=$5 points=$6 max=$7
fail() { echo "check_gradescope_bundle: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
out=$("$prefix/bin/xenc-grade-all" --gradescope-bundle "$work/bundle.zip" --template "$template" \
  --settings "$settings") || fail "xenc-grade-all --gradescope-bundle failed: $out"
[[ $out == "wrote $work/bundle.zip: setup.sh, run_autograder, the template of $template with $settings as its grading.json and "*" files of xencoder's source ("*")" ]] ||
  fail "it printed: $out"
root=$work/autograder
mkdir -p "$root/source" "$root/submission/exercises"
unzip -q "$work/bundle.zip" -d "$root/source"
for f in setup.sh run_autograder; do
  [[ -x $root/source/$f ]] || fail "$f is not at the zip's root, executable"
  bash -n "$root/source/$f" || fail "$f: bash -n"
  if command -v shellcheck > /dev/null; then shellcheck "$root/source/$f" || fail "$f: shellcheck"; fi
done
cmp "$settings" "$root/source/template/grading.json" || fail "the template's grading.json is not --settings"
for f in CMakeLists.txt scripts/setup.sh lib/src/grade/runner.cpp; do
  [[ -f $root/source/xencoder/$f ]] || fail "no xencoder/$f in the zip"
done
[[ ! -e $root/source/template/build ]] || fail "the template's build folder is in the zip"
cp "$root/source/run_autograder" "$root/run_autograder"  # as Gradescope's image build does
cp "$student/exercises/softmax.cpp" "$root/submission/softmax.cpp"
cp "$student/exercises/merge_heads.cpp" "$root/submission/exercises/merge_heads.cpp"

box=(bwrap --ro-bind /usr /usr --ro-bind /etc /etc --symlink usr/bin /bin --symlink usr/lib /lib
     --symlink usr/lib64 /lib64 --symlink usr/sbin /sbin --proc /proc --dev /dev --tmpfs /tmp
     --ro-bind "$prefix" /usr/local --bind "$root" /autograder --chdir /autograder
     --setenv PATH /usr/local/bin:/usr/bin:/bin)
"${box[@]}" --setenv XENC_SETUP_SKIP_INSTALL 1 bash /autograder/source/setup.sh \
  > "$work/setup.log" 2>&1 || fail "setup.sh failed: $(tail -30 "$work/setup.log")"
rc=0
"${box[@]}" --setenv XENC_GRADE_NO_NAMESPACES 1 /autograder/run_autograder > "$work/run.log" 2>&1 || rc=$?
[[ $rc == 0 ]] || fail "run_autograder exited $rc: $(cat "$work/run.log")"
python3 - "$root/results/results.json" "$points" "$max" << 'PY' || fail "results.json: see above"
import json, sys
r = json.load(open(sys.argv[1]))
points, max_points = float(sys.argv[2]), float(sys.argv[3])
fields = {"score": (int, float), "execution_time": (int, float), "output": str,
          "output_format": str, "test_output_format": str, "test_name_format": str,
          "visibility": str, "stdout_visibility": str, "extra_data": dict, "tests": list}
for name, kind in fields.items():
    assert name in r, f"no top-level {name}: {sorted(r)}"
    assert isinstance(r[name], kind), f"{name} is {r[name]!r}"
assert r["score"] == points, r["score"]
assert r["extra_data"]["max_points"] == max_points, r["extra_data"]
assert r["execution_time"] >= 1, r["execution_time"]
assert r["visibility"] == "visible" and r["stdout_visibility"] == "hidden"
assert r["output_format"] == r["test_output_format"] == r["test_name_format"] == "text"
assert sum(t["score"] for t in r["tests"]) == points
assert abs(sum(t["max_score"] for t in r["tests"]) - max_points) < 1e-9
failed = [t for t in r["tests"] if t["status"] == "failed"]
assert failed and all(t["name"].startswith("softmax: ") for t in failed), failed
assert any("softmax without the max subtraction" in t["output"] for t in failed), failed
print(f"check_gradescope_bundle: results.json has every field; score {r['score']} of "
      f"{max_points}, {len(failed)} failed tests, execution_time {r['execution_time']} s")
PY

#!/usr/bin/env python3
"""What a teacher checks on time_class.sh's runs (see its header): the honest students' rows of
the hostile class equal the sandboxed run's, no hostile student scores its softmax, and the class
report flags exactly the copied softmax pairs, counts each known mistake for exactly the students
who were handed it, and lists every crash, hang and compile error.

    check_time_class.py WORK_DIR N
"""
import csv
import json
import re
import sys
from collections import defaultdict

work, n = sys.argv[1], int(sys.argv[2])
problems = []


def rows(path):
    with open(path, newline="") as f:
        out = {}
        for r in csv.DictReader(f):
            r.pop("graded_at")
            r["notes"] = re.sub(re.escape(work) + r"/grades-[a-z]+/", "OUT/", r["notes"])
            out[r["student"]] = r
        return out


handed = defaultdict(dict)  # student -> exercise -> what the generator handed in
for line in open(work + "/handed.txt"):
    who, exercise, what = line.split()
    handed[who][exercise] = what
hostile = dict(line.split() for line in open(work + "/hostile.txt"))
sandbox, attacked = rows(work + "/grades-sandbox/grades.csv"), rows(work + "/grades-hostile/grades.csv")
if len(attacked) != n:
    problems.append("the hostile class's grades.csv has %d rows, not %d" % (len(attacked), n))
for who, row in sandbox.items():
    if who in hostile:
        if float(attacked[who]["softmax"] or 0) >= 1:
            problems.append("%s (%s) scored softmax: %s" % (who, hostile[who], attacked[who]))
    elif attacked.get(who) != row:
        problems.append("%s's row differs with hostile students in the class:\n  %s\n  %s"
                        % (who, row, attacked.get(who)))

report = json.load(open(work + "/grades-hostile/class.json"))
if (report["students"], report["graded"]) != (n, n):
    problems.append("class.json counts %s students, %s graded" % (report["students"], report["graded"]))

# copied work: the three copies of one softmax, pairwise; never the independent one
plants = {what.split(":")[1]: who for who, ex in handed.items() for what in [ex.get("softmax", "")]
          if what.startswith("planted:") and who not in hostile}
copies = {plants[k] for k in ("original", "renamed", "reformatted") if k in plants}
flagged = {(e["exercise"], frozenset((p["a"], p["b"]))) for e in report["similarity"]["exercises"]
           for p in e["pairs"]}
for a in copies:
    for b in copies:
        if a < b and ("softmax", frozenset((a, b))) not in flagged:
            problems.append("the copied pair %s, %s is not flagged" % (a, b))
for exercise, pair in flagged:
    a, b = sorted(pair)
    same_file = handed[a].get(exercise) == handed[b].get(exercise) and not (
        exercise == "softmax" and (a in hostile or b in hostile))
    if not (exercise == "softmax" and pair <= copies) and not same_file:
        problems.append("flagged %s %s, %s, which are not copies (%s, %s)"
                        % (exercise, a, b, handed[a].get(exercise), handed[b].get(exercise)))
if "independent" in plants and any(plants["independent"] in p for _, p in flagged):
    problems.append("the independent softmax of %s is flagged" % plants["independent"])

# the known mistakes: each exhibit's students are exactly those handed its file
exhibit_file = {"softmax without the max subtraction": ("softmax", "softmax_without_max.cpp"),
                "heads merged by a reshape without the transpose":
                    ("merge_heads", "merge_heads_without_transpose.cpp")}
named = {e["title"]: set(e["students"]) for e in report["exhibits"]}
for title, (exercise, f) in exhibit_file.items():
    expected = {w for w, ex in handed.items() if ex.get(exercise) == f and not (exercise == "softmax" and w in hostile)}
    if named.get(title, set()) != expected:
        problems.append("exhibit '%s': report names %s, handed to %s"
                        % (title, sorted(named.get(title, set())), sorted(expected)))
for title in set(named) - set(exhibit_file):
    problems.append("exhibit '%s' named for %s, handed to nobody" % (title, sorted(named[title])))

# need a look: every crash, abort and compile error handed in
kinds = {"softmax_no_compile.cpp": "did not compile", "attention_no_compile.cpp": "did not compile",
         "merge_heads_segfault.cpp": "crashed", "split_heads_abort.cpp": "crashed"}
looks = {(x["student"], x["exercise"]): x["kind"] for x in report["need_a_look"]}
for who, ex in handed.items():
    for exercise, f in ex.items():
        if f in kinds and not (exercise == "softmax" and who in hostile):
            if looks.get((who, exercise)) != kinds[f]:
                problems.append("%s's %s (%s): need a look says %s, expected %s"
                                % (who, exercise, f, looks.get((who, exercise)), kinds[f]))

top = sorted(report["exhibits"], key=lambda e: -e["count"])
print("check_time_class: %d rows; copied pairs flagged: %s; known mistakes: %s; need a look: %d"
      % (len(attacked), sorted(tuple(sorted(p)) for e, p in flagged if e == "softmax"),
         ", ".join("%s %d" % (e["title"], e["count"]) for e in top), len(looks)))
for p in problems:
    print("check_time_class: " + p, file=sys.stderr)
sys.exit(1 if problems else 0)

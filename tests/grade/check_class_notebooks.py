#!/usr/bin/env python3
"""A teacher's grading.json makes the class's notebooks (issue 19, point 3; ctest
grade.class_notebooks). The commands of the teacher README's walk-through (apps/assignment/
README.md, the block after `<!-- class-notebooks: commands -->`), run by bash as printed there,
in WORK_DIR: `notebooks` is a link to the source tree's, and HOME a folder whose
xencoder-install/bin/xenc-grade-all is this build's. Its grading.json chooses two exercises with
points that are not the default (softmax 2.5 in notebook 03, merge_heads 3 in notebook 05, whose
split_heads is left out) and hints "off". The commands make registry.json
(`xenc-grade-all --exercises --settings grading.json`) and class-notebooks/ (course_cells.py
--registry on a copy of the notebooks), and check it (--check).

Checked: the cells of every other exercise (heading, stub, check) are gone, a notebook left with
no exercise loses its exercise intro and the "(exercises)" line of its objectives, one that keeps
some of them speaks of those only (an objective generated from their names), the chosen
exercises keep theirs with the teacher's points in the heading and HintLevel::off in the check
cell, every cell that is not an exercise cell is unchanged, `--check` passes on the copy and
fails on the committed notebooks (whose points and hints are the defaults). With --run, the
copy's softmax stub and check cell run (behind notebook 03's setup cells) on the notebook runner,
and the stub's failed report shows its values but no hint, where the committed notebook's report
of the same stub shows one.

    check_class_notebooks.py --grade-all XENC_GRADE_ALL --source SOURCE_DIR --work WORK_DIR
                             [--run COMMAND... (with @NB@ and @OUT@ where the notebook and the
                              outputs file go)]
The README block is found in SOURCE_DIR/apps/assignment/README.md; notebooks/README.md must print
the same.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

SETTINGS = {"exercises": {"softmax": 2.5, "merge_heads": 3}, "hints": "off"}
CHOSEN = {"softmax": "(2.5 points)", "merge_heads": "(3 points)"}

failures = []


def expect(ok, what):
    if not ok:
        failures.append(what)
    return ok


def xenc(cell):
    return cell.get("metadata", {}).get("xenc", {})


def source(cell):
    return "".join(cell["source"])


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    return r.returncode, r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grade-all", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--run", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    tool = os.path.join(a.source, "notebooks", "tools", "course_cells.py")
    committed = os.path.join(a.source, "notebooks")
    shutil.rmtree(a.work, ignore_errors=True)
    copy = os.path.join(a.work, "class-notebooks")
    home_bin = os.path.join(a.work, "home", "xencoder-install", "bin")
    os.makedirs(home_bin)
    os.symlink(os.path.abspath(a.grade_all), os.path.join(home_bin, "xenc-grade-all"))
    os.symlink(committed, os.path.join(a.work, "notebooks"))
    with open(os.path.join(a.work, "grading.json"), "w") as f:
        json.dump(SETTINGS, f)

    # the README's commands, as printed: grading.json -> registry.json -> class-notebooks/
    def readme_block(path):
        m = re.search(r"<!-- class-notebooks: commands -->\s*```[a-z]*\n(.*?)\n\s*```",
                      open(os.path.join(a.source, path)).read(), re.S)
        if not m:
            sys.exit(path + ": no ``` block after <!-- class-notebooks: commands -->")
        return "\n".join(l.strip() for l in m.group(1).split("\n"))
    commands = readme_block(os.path.join("apps", "assignment", "README.md"))
    expect(readme_block(os.path.join("notebooks", "README.md")) == commands,
           "notebooks/README.md prints other commands than apps/assignment/README.md")
    rc, out = run(["bash", "-euo", "pipefail", "-c", commands], cwd=a.work,
                  env=dict(os.environ, HOME=os.path.join(a.work, "home")))
    if rc:
        sys.exit("the README's commands failed (exit %d):\n%s\n%s" % (rc, commands, out))
    expect("the exercise cells of class-notebooks match the registry: 2 exercises" in out,
           "the README's --check did not say it passed:\n" + out)
    registry = os.path.join(a.work, "registry.json")
    reg = json.load(open(registry))
    expect(reg["hints"] == "off", "registry: hints %r, expected \"off\"" % reg["hints"])
    expect({e["name"]: e["points"] for e in reg["exercises"]} == {"softmax": 2.5, "merge_heads": 3},
           "registry: exercises %r" % reg["exercises"])
    expect("split_heads" in reg.get("not_selected", []), "registry: split_heads not in not_selected")
    names = sorted(f for f in os.listdir(committed) if re.match(r"\d\d_.*\.ipynb$", f))
    expect(sorted(os.listdir(copy)) == names, "class-notebooks/ holds %s" % os.listdir(copy))

    # each exercise counts once: in the committed notebooks every exercise has one heading, and the
    # class's headings add up to the registry's total (2.5 + 3 points)
    def headings(folder):
        found = []
        for n in names:
            for c in json.load(open(os.path.join(folder, n)))["cells"]:
                m = re.match(r"### Exercise: .*\(([0-9.]+) points?\)", source(c))
                if c["cell_type"] == "markdown" and m:
                    found.append((xenc(c).get("belongs_to"), float(m.group(1))))
        return found
    owners = [o for o, _ in headings(committed)]
    twice = sorted({o for o in owners if owners.count(o) > 1})
    expect(not twice, "exercises in more than one committed notebook: %s" % twice)
    total = sum(p for _, p in headings(copy))
    expect(total == sum(e["points"] for e in reg["exercises"]),
           "the class's notebooks count %g points, the registry %g" %
           (total, sum(e["points"] for e in reg["exercises"])))

    # the cells, notebook by notebook
    seen = {}
    for n in names:
        before = json.load(open(os.path.join(committed, n)))["cells"]
        after = json.load(open(os.path.join(copy, n)))["cells"]
        stubs = [xenc(c)["exercise"] for c in after if xenc(c).get("exercise")]
        owners = {xenc(c)["belongs_to"] for c in after if xenc(c).get("belongs_to")}
        expect(set(stubs) <= set(CHOSEN), "%s: stubs of exercises not chosen: %s" % (n, stubs))
        expect(owners == set(stubs), "%s: heading/check cells of %s, stubs of %s" % (n, owners, stubs))
        for c in after:
            s = source(c)
            for m in re.finditer(r"check_(\w+)\(assignment", s):
                expect(m.group(1) in CHOSEN, "%s: a check cell of %s is left" % (n, m.group(1)))
            if c["cell_type"] == "markdown" and s.startswith("### Exercise:"):
                expect(xenc(c).get("belongs_to") in CHOSEN, "%s: heading left: %s" % (n, s.split("\n")[0]))
            owner = xenc(c).get("belongs_to")
            if owner and c["cell_type"] == "markdown":
                expect(CHOSEN[owner] in s.split("\n")[0],
                       "%s: heading of %s without %s: %s" % (n, owner, CHOSEN[owner], s.split("\n")[0]))
                seen[owner + " heading"] = True
            if owner and c["cell_type"] == "code":
                expect("xenc::grade::HintLevel::off)" in s and "HintLevel::full" not in s,
                       "%s: check cell of %s does not pass HintLevel::off:\n%s" % (n, owner, s))
                seen[owner + " check"] = True
            if s.startswith("## Exercises"):
                expect(bool(stubs), "%s: an exercise intro without exercises" % n)
                expect("(hints are turned off in this course)" in s, "%s: the intro promises hints" % n)
            if s.startswith("### Learning objectives") and not stubs:
                expect("(exercise" not in s, "%s: objectives still name exercises:\n%s" % (n, s))
        # nothing else changed: the cells course_cells.py does not own are the committed ones
        own = lambda cells: [c for c in cells if "part" not in xenc(c)]
        expect(own(before) == own(after), "%s: cells other than the course cells changed" % n)
        if any(xenc(c).get("exercise") for c in before) and not stubs:
            expect(not any(xenc(c).get("part") == "exercise" for c in after),
                   "%s: exercise cells left in a notebook without exercises" % n)
    for e in CHOSEN:
        expect(seen.get(e + " heading") and seen.get(e + " check"), "%s: heading or check cell missing" % e)
    expect(not any(xenc(c).get("exercise") == "split_heads"
                   for c in json.load(open(os.path.join(copy, "05_word_order.ipynb")))["cells"]),
           "05_word_order: split_heads (not chosen) is still there")
    # a notebook that keeps some of its exercises speaks of those only: 03 keeps softmax (not
    # attention), 05 merge_heads (not split_heads)
    for n, kept, gone in [("03_attention.ipynb", "`softmax`", "masked attention yourself"),
                          ("05_word_order.ipynb", "`merge_heads`", "those two reshapes")]:
        texts = [source(c) for c in json.load(open(os.path.join(copy, n)))["cells"]
                 if c["cell_type"] == "markdown"]
        objectives = [t for t in texts if t.startswith("### Learning objectives")]
        expect(len(objectives) == 1 and "* (exercise) write %s yourself." % kept in objectives[0],
               "%s: the objectives do not name the one exercise kept, %s:\n%s" % (n, kept, objectives))
        expect(not any(gone in t or "split a `[B, T, D]`" in t for t in texts),
               "%s: a sentence still speaks of an exercise that is not there (%s)" % (n, gone))

    # --check passed on the copy (the README's last command); it fails on the committed notebooks
    # (default points, full hints)
    rc, out = run([sys.executable, tool, "--registry", registry, "--check", committed])
    expect(rc != 0 and "the registry says (2.5 points)" in out and 'hint level "off"' in out,
           "course_cells.py --check of the committed notebooks against the class's registry:\n" + out)

    # run the copy's softmax stub and check cell behind notebook 03's setup cells
    if a.run:
        nb = json.load(open(os.path.join(copy, "03_attention.ipynb")))
        codes = [c for c in nb["cells"] if c["cell_type"] == "code"]
        setup = codes[:2]  # the setup header, then the includes
        for c in setup:
            lines = [l for l in source(c).split("\n") if l.strip()]
            if not all(l.startswith("#include") for l in lines):
                sys.exit("03_attention.ipynb: expected the first two code cells to be includes:\n" + source(c))
        aliases = [c for c in codes if xenc(c).get("part") == "exercise" and not xenc(c).get("exercise")]
        stub = [c for c in codes if xenc(c).get("exercise") == "softmax"]
        check = [c for c in codes if xenc(c).get("belongs_to") == "softmax"]
        mini = dict(nb, cells=[nb["cells"][0]] + setup + aliases + stub + check)
        mini_path, out_path = os.path.join(a.work, "softmax.ipynb"), os.path.join(a.work, "softmax.outputs.json")
        with open(mini_path, "w") as f:
            json.dump(mini, f, indent=1, ensure_ascii=False)
        cmd = [mini_path if x == "@NB@" else out_path if x == "@OUT@" else x for x in a.run]
        rc, out = run(cmd)
        if rc:
            sys.exit("running the class notebook's softmax cells failed (%s):\n%s" % (" ".join(cmd), out))
        report = "".join(o.get("text") and "".join(o["text"]) or "" for o in json.load(open(out_path))[-1])
        expect(report.startswith("✘ softmax: 0 of 8 checks passed"), "the check cell's report:\n" + report)
        expect("computed: threw an exception: softmax: not implemented yet" in report,
               "the report shows no values:\n" + report)
        expect("hint:" not in report, "hints are off, but the report shows one:\n" + report)
        # the committed notebook's report of the same stub, at full hints, shows them
        orig = json.load(open(os.path.join(committed, "03_attention.ipynb")))["cells"]
        full = "".join("".join(o.get("text", [])) for c in orig if xenc(c).get("belongs_to") == "softmax"
                       and c["cell_type"] == "code" for o in c["outputs"])
        expect("hint: the function is still the stub: implement it." in full,
               "the committed notebook's softmax report shows no hint:\n" + full)
        print("ran the class notebook's softmax check: %d lines, no hint" % len(report.splitlines()))

    if failures:
        sys.exit("\n".join(["FAILED: " + f for f in failures]))
    print("grading.json (softmax 2.5, merge_heads 3, hints off) made %d notebooks with 2 exercises"
          % len(names))


if __name__ == "__main__":
    main()

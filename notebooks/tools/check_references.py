#!/usr/bin/env python3
"""Checks what the notebooks' text refers to, so that a student reads only what is true here.

    python3 notebooks/tools/check_references.py NOTEBOOK_DIR REPO_ROOT

For every NN_topic.ipynb in NOTEBOOK_DIR:
  * "the first of N" (notebooks) says how many notebooks there are;
  * "notebook NN" names a notebook that exists;
  * "section N" (not after "notebook NN's" or "notebook NN,") names a "## N." heading of the
    same notebook;
  * "the pitfall of section N" names a heading N about pitfalls;
  * a program `xenc-NAME` (except the kernel, xenc-kernel and xenc-cpp17) is an app of
    REPO_ROOT/apps (an xenc_add_app(NAME ...) in apps/*/CMakeLists.txt, NAME with '_' for '-');
  * no issue number ("issue 10"), article number ("article 003") or "the article", in the text
    or in the committed outputs (what a program printed);
  * no cling or conda set-up in the markdown (`#pragma cling`, conda, $CONDA_PREFIX): it is in
    REPO_ROOT/notebooks/README.md's section on other kernels, "Opening them in xeus-cling", which
    each notebook's first cell links (README.md).
Prints one line per finding, then what to do, and exits 1 if there is any.
"""
import glob
import json
import os
import re
import sys

WORDS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}


def main():
    notebook_dir, root = sys.argv[1], sys.argv[2]
    notebooks = sorted(glob.glob(os.path.join(notebook_dir, "[0-9][0-9]_*.ipynb")))
    numbers = {os.path.basename(p)[:2] for p in notebooks}
    programs = set()
    for cmake in glob.glob(os.path.join(root, "apps", "*", "CMakeLists.txt")):
        programs |= {
            "xenc-" + n.replace("_", "-")
            for n in re.findall(r"xenc_add_app\(\s*([a-z0-9_]+)", open(cmake).read())
        }
    findings = []
    readme = open(os.path.join(root, "notebooks", "README.md"), encoding="utf-8").read()
    if "## Opening them in xeus-cling" not in readme:
        findings.append(
            "notebooks/README.md: no section 'Opening them in xeus-cling', which the "
            "notebooks point to for other kernels"
        )
    for path in notebooks:
        name = os.path.basename(path)
        cells = json.load(open(path, encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells)
        markdown = [
            ("cell %d" % i, "".join(c["source"]))
            for i, c in enumerate(cells)
            if c["cell_type"] == "markdown"
        ]
        outputs = "\n".join("".join(o.get("text", "")) for c in cells for o in c.get("outputs", []))
        for cell, source in markdown:
            for m in re.finditer(r"#pragma cling|\$?CONDA_PREFIX|\bconda\b", source):
                findings.append(
                    "%s %s: '%s' is the set-up of another kernel; it belongs in "
                    "notebooks/README.md (Opening them in xeus-cling)" % (name, cell, m.group(0))
                )
        if not any(
            "Opening them in xeus-cling" in source and "(README.md)" in source
            for _, source in markdown[:1]
        ):
            findings.append(
                '%s: its first cell does not point to "Opening them in xeus-cling" '
                "in [the notebooks' README](README.md) for other kernels" % name
            )
        sections = set(re.findall(r"^## (\d+)\.", text, re.M))
        headings = dict(re.findall(r"^## (\d+)\.(.*)$", text, re.M))
        for m in re.finditer(r"pitfalls? (?:of|in) section (\d+)", text):
            if "itfall" not in headings.get(m.group(1), ""):
                findings.append(
                    "%s: names 'the pitfall of section %s'; section %s is '%s'"
                    % (name, m.group(1), m.group(1), headings.get(m.group(1), "").strip())
                )
        for m in re.finditer(r"first of (\w+)(?= (?:that|notebooks))", text):
            n = WORDS.get(m.group(1).lower(), int(m.group(1)) if m.group(1).isdigit() else None)
            if n is not None and n != len(notebooks):
                findings.append(
                    "%s: says 'first of %s', there are %d notebooks"
                    % (name, m.group(1), len(notebooks))
                )
        for m in re.finditer(r"[Nn]otebooks? (\d\d)\b", text):
            if m.group(1) not in numbers:
                findings.append("%s: names notebook %s, which does not exist" % (name, m.group(1)))
        for m in re.finditer(r"(notebook \d\d(?:'s|,) )?\b[Ss]ection (\d+)", text):
            if not m.group(1) and m.group(2) not in sections:
                findings.append(
                    "%s: names section %s; its sections are %s"
                    % (name, m.group(2), ", ".join(sorted(sections, key=int)))
                )
        for m in re.finditer(r"\bxenc-[a-z0-9-]+", text):
            if (
                m.group(0) != "xenc-cpp17"
                and m.group(0) not in programs
                and m.group(0) != "xenc-kernel"
            ):
                findings.append(
                    "%s: names the program %s, which apps/ does not build" % (name, m.group(0))
                )
        for pattern, what in [
            (r"\b[Ii]ssues? #?\d+", "an issue number"),
            (r"\b[Aa]rticle #?\d+", "an article number"),
            (r"\bthe article\b", "'the article'"),
        ]:
            for m in re.finditer(pattern, text, re.I):
                findings.append("%s: names %s ('%s')" % (name, what, m.group(0)))
            for m in re.finditer(pattern, outputs, re.I):
                findings.append("%s: an output names %s ('%s')" % (name, what, m.group(0)))
    for f in findings:
        print(f)
    if findings:
        print(
            "%d finding(s). Edit the notebook's markdown so that it names what exists here "
            "(count the notebooks, the '## N.' headings, the apps), and drop issue and article "
            "numbers: a student cannot look them up; the set-up of other kernels goes in README.md."
            % len(findings)
        )
        return 1
    print("%d notebooks: every cross-reference checked" % len(notebooks))
    return 0


if __name__ == "__main__":
    sys.exit(main())

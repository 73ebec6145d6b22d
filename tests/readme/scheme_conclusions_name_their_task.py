#!/usr/bin/env python3
"""Every conclusion about a position scheme names the task it was measured on (issue #30, item 5).

    python3 tests/readme/scheme_conclusions_name_their_task.py REPO_ROOT

Why: ALiBi keeps 99.6% at 8 x L_train on neighbour_sum and stays near one half on copy_left; a
sentence "ALiBi keeps its accuracy" that does not say on which task reads as a general verdict,
and two such sentences contradict each other.

Where it looks: README.md, apps/README.md, the READMEs of apps/extrapolate, apps/train_order and
apps/web (prose and the programs' outputs that they copy, as captured by running them), the web
page's text (apps/web/index.html without its tags), and every notebook's markdown and committed
outputs (what its cells printed). The conclusions that xenc-extrapolate and xenc-train-order
generate are checked where they are made, on every verdict, by their unit tests
(test_extrapolate_report: ExtrapolateConclusions.EveryConclusionNamesTheTask; test_train_order).

What a conclusion is: a sentence (a list item and a table row count as one) that names a scheme
and a verdict.
  * schemes: rope/RoPE, alibi/ALiBi and sinusoidal anywhere; learned, relative, randomized and
    none (ordinary English words) only as `name`, **name**, "name positions", or lower-case at
    the start of a sentence or line as the programs print them ("none did not learn ...");
  * verdicts: keeps its accuracy (or keeps N%), holds to/up/at, falls, degrades, extrapolates,
    generalizes, solves, best, worst, well below, beats, at/near/above chance, capped, stuck at,
    accuracy (not "no accuracy"), slowest to learn, learns more slowly, reaches N%.
  ("keeps" alone is not a verdict: RoPE keeps norms, alibi keeps a cosine at 1.) A notebook's
  check line ("claim ... expected X computed Y") is not read: it restates an item of the
  notebook's "Checks" list, which is.

The rule (strict, but not silly): a conclusion passes when
  1. it names a task itself: a rule of xenc/data/position_tasks.hpp (copy_left, neighbour_sum,
     reverse_string, ...; read from the header's enum), "word_roles" or the agent/patient task
     of xenc-train-order ("agent or patient", "agent/patient", "agent from the patient"),
     "the study's tasks", or (the ALiBi paper's) "language modelling"; or
  2. it says "the task", "this task", "that task", "its task", "each task" or "these tasks",
     and its section names a task as in 1. A section is: in a README, the text under one
     heading; in a notebook, the cells from one "## " heading to the next; a program output
     (a fenced block, or one cell's output) is a section of its own; on the web page, the page;
     or
  3. it is an item of a list whose lead-in (the paragraph just before the list) names a task
     as in 1.
A bare "the model keeps its accuracy" in a section about neighbour_sum does not pass: it has to
point at the task. Prints every conclusion that fails, with its file and line, and exits 1.
"""
import html
import json
import os
import re
import sys

SCHEME_WORDS = r"(?:learned|relative|randomized|none)"
SCHEME = re.compile(
    r"\b(?:rope|alibi|sinusoidal)\b|`" + SCHEME_WORDS + r"`|\*\*" + SCHEME_WORDS + r"\*\*"
    r"|\b(?:learned|relative|randomized) positions?\b",
    re.I,
)
# lower-case at the start of a sentence or line, as the programs print it ("none did not learn
# the task"); case-sensitive, since "None of them" is English
SCHEME_START = re.compile(r"^(?:[-*] )?" + SCHEME_WORDS + r"(?=[ :,])(?! of )")
VERDICT = re.compile(
    r"\b(?:keeps? (?:its |their )?accuracy|keeps? (?:at least |about )?\d|holds? (?:to|up|at)\b"
    r"|falls?|degrades?|(?<![-\w`])extrapolat(?:es?|ed|ing)|generali[sz](?:es?|ed|ing)|solves?"
    r"|best|worst|well below|beats?|(?:at|near|above) chance|capped|stuck at|(?<!no )accuracy"
    r"|slowest to learn|learns more slowly|reaches \d)\b",
    re.I,
)
# a notebook's check line ("claim ... expected X computed Y") restates a claim of its "Checks"
# list, which is read as markdown
CHECK_LINE = re.compile(r"\bexpected\b.*\bcomputed\b")
TASK_IN_WORDS = re.compile(r"\b(?:the|this|that|its|each) task\b|\bthese tasks\b", re.I)


def task_names(root):
    header = open(
        os.path.join(root, "lib/include/xenc/data/position_tasks.hpp"), encoding="utf-8"
    ).read()
    body = re.search(r"enum class PositionRule \{(.*?)\}", header, re.S).group(1)
    names = re.findall(r"\b([a-z_]+)\b", re.sub(r"//.*", "", body))
    assert "copy_left" in names and "neighbour_sum" in names, names
    words = [
        r"word_roles",
        r"agent ?(?:/|or|-|and|vs\.?|from the) ?patient",
        r"the study's tasks",
        r"(?:causal )?language model(?:s|ling)?",
    ]
    return re.compile(r"\b(?:" + "|".join(names + words) + r")\b", re.I)


def sentences(text):
    """Splits a paragraph into sentences (at '. ' before an upper-case letter or a backtick)."""
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z`*(\"“])", text)
    return [p for p in parts if p.strip()]


def is_conclusion(sentence):
    if CHECK_LINE.search(sentence):
        return False
    names_scheme = SCHEME.search(sentence) or SCHEME_START.match(sentence.strip())
    return bool(names_scheme and VERDICT.search(sentence))


class Unit:
    """A paragraph, list item, table row or output line, with where it is and its section."""

    def __init__(self, where, text, section, lead_in=""):
        self.where, self.text, self.section, self.lead_in = where, text, section, lead_in


def markdown_units(name, text, first_line=1, section_start=r"^#{1,6} "):
    """The units of a markdown text: paragraphs, list items, table rows, fenced blocks' lines."""
    units = []
    lines = text.split("\n")
    section_id = 0
    block, block_start, fence, fence_lines = [], 0, False, []
    lead_in, last_paragraph, in_list = "", "", False

    def flush():
        nonlocal block, lead_in, last_paragraph, in_list
        if not block:
            return
        joined = " ".join(l.strip() for l in block)
        is_item = re.match(r"^\s*(?:[-*]|\d+\.) ", block[0]) is not None
        if is_item:
            if not in_list:
                lead_in, in_list = last_paragraph, True
            units.append(Unit("%s:%d" % (name, block_start), joined, section_id, lead_in))
        elif block[0].lstrip().startswith("|"):
            for i, row in enumerate(block):
                units.append(Unit("%s:%d" % (name, block_start + i), row, section_id))
            in_list = False
        else:
            units.append(Unit("%s:%d" % (name, block_start), joined, section_id))
            last_paragraph, in_list = joined, False
        block = []

    output_id = 0
    for n, line in enumerate(lines, first_line):
        if line.startswith("```"):
            flush()
            if fence:
                output_id += 1
                key = ("output", name, output_id)
                for i, l in fence_lines:
                    units.append(Unit("%s:%d" % (name, i), l, key))
                fence_lines = []
            fence = not fence
            continue
        if fence:
            fence_lines.append((n, line))
            continue
        if re.match(section_start, line):
            flush()
            section_id += 1
            in_list, last_paragraph = False, ""
            units.append(Unit("%s:%d" % (name, n), line, section_id))
            continue
        if not line.strip():
            flush()
            continue
        if re.match(r"^\s*(?:[-*]|\d+\.) ", line):
            flush()
        if block == []:
            block_start = n
        block.append(line)
    flush()
    return [Unit(u.where, u.text, (name, u.section), u.lead_in) for u in units]


def notebook_units(path, root):
    name = os.path.relpath(path, root)
    cells = json.load(open(path, encoding="utf-8"))["cells"]
    units, section = [], 0
    for i, c in enumerate(cells):
        source = "".join(c["source"])
        if c["cell_type"] == "markdown":
            if re.search(r"^## ", source, re.M):
                section += 1
            for u in markdown_units("%s cell %d" % (name, i), source, section_start=r"^## "):
                units.append(Unit(u.where, u.text, (name, section), u.lead_in))
        printed = "".join("".join(o.get("text", "")) for o in c.get("outputs", []))
        for line in printed.split("\n"):
            if line.strip():
                units.append(Unit("%s cell %d (output)" % (name, i), line, (name, "out", i)))
    return units


def html_units(path, root):
    name = os.path.relpath(path, root)
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", text, flags=re.S)
    units = []
    for n, para in enumerate(re.split(r"</?(?:p|li|h\d|summary|label|option)\b[^>]*>", text)):
        plain = html.unescape(re.sub(r"<[^>]+>", " ", para))
        plain = " ".join(plain.split())
        if plain:
            units.append(Unit("%s (text %d)" % (name, n), plain, (name, "page")))
    return units


def check(units, task):
    """The conclusions that fail the rule, and how many conclusions there are."""
    section_names_task = {}
    for u in units:
        if task.search(u.text):
            section_names_task[u.section] = True
    failures, found = [], 0
    for u in units:
        for s in sentences(u.text):
            if not is_conclusion(s):
                continue
            found += 1
            if task.search(s):
                continue
            if TASK_IN_WORDS.search(s) and section_names_task.get(u.section):
                continue
            if u.lead_in and task.search(u.lead_in):
                continue
            failures.append((u.where, VERDICT.search(s).group(0), s))
    return failures, found


def main():
    root = sys.argv[1]
    task = task_names(root)
    units = []
    for readme in [
        "README.md",
        "apps/README.md",
        "apps/extrapolate/README.md",
        "apps/train_order/README.md",
        "apps/web/README.md",
    ]:
        units += markdown_units(readme, open(os.path.join(root, readme), encoding="utf-8").read())
    units += html_units(os.path.join(root, "apps/web/index.html"), root)
    notebooks = sorted(
        os.path.join(root, "notebooks", f)
        for f in os.listdir(os.path.join(root, "notebooks"))
        if re.match(r"\d\d_.*\.ipynb$", f)
    )
    for nb in notebooks:
        units += notebook_units(nb, root)
    failures, found = check(units, task)
    for where, verdict, s in failures:
        print("%s: a verdict ('%s') on a scheme, but no task: %s" % (where, verdict, s))
    if failures:
        print(
            "%d conclusion(s) without their task. Name the task the numbers come from "
            "(neighbour_sum, copy_left, the agent/patient task of xenc-train-order, ...), or say "
            "'this task' in a section that names it: the verdict on a scheme depends on the task."
            % len(failures)
        )
        return 1
    # the detector itself: these files hold dozens of conclusions (44 when this test was
    # written); far fewer means that a pattern no longer matches, not that the text is clean
    if found < 30:
        print(
            "only %d conclusions found in %d units: has the detector stopped matching?"
            % (found, len(units))
        )
        return 1
    print(
        "%d paragraphs, items and output lines read, %d conclusions about a scheme: each names "
        "its task" % (len(units), found)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs a notebook in Jupyter (nbclient, the library behind `jupyter nbconvert --execute`) on
xenc-kernel and writes the outputs in the form `nbtool run` writes them: OUT.json is a list with
one entry per code cell, that cell's nbformat outputs (stdout streams and display_data).

    run_notebook.py NB.ipynb OUT.json [--kernel xenc-cpp17] [--executed EXECUTED.ipynb]
                    [--nbtool NBTOOL [--solutions DIR] [--grades pass|fail]]

With --solutions, the exercise cells run with the reference solutions of DIR (`nbtool
with-solutions`); with --grades, `nbtool grades` then checks the grader's reports in OUT.json
(pass: every check passes; fail: every stub fails), as notebooks/tools/run_graded.cmake does for
clang-repl.

Fails (exit 1) if any cell gives an error output, naming the cell and showing the error.
Text written to stderr is reported and, like `nbtool run`, left out of OUT.json. The kernel is
found through JUPYTER_PATH (the build tree's kernelspec; see notebooks/kernel/CMakeLists.txt).
"""
import argparse
import json
import os
import subprocess
import sys

import nbformat
from nbclient import NotebookClient


def lines(text):
    return text.splitlines(keepends=True)


def nbtool_form(outputs):
    """stdout streams (consecutive ones merged) and display_data, with text split in lines."""
    result = []
    for o in outputs:
        if o["output_type"] == "stream" and o["name"] == "stdout":
            if result and result[-1]["output_type"] == "stream":
                result[-1]["text"] += o["text"]
            else:
                result.append({"name": "stdout", "output_type": "stream", "text": o["text"]})
        elif o["output_type"] == "display_data":
            data = {mime: lines(v) if isinstance(v, str) and (mime.startswith("text/") or mime == "image/svg+xml")
                    else v for mime, v in o["data"].items()}
            result.append({"data": data, "metadata": {}, "output_type": "display_data"})
    for o in result:
        if o["output_type"] == "stream":
            o["text"] = lines(o["text"])
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("notebook")
    ap.add_argument("out")
    ap.add_argument("--kernel", default="xenc-cpp17")
    ap.add_argument("--executed", help="also write the executed notebook here")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per cell")
    ap.add_argument("--nbtool")
    ap.add_argument("--solutions")
    ap.add_argument("--grades", choices=["pass", "fail"])
    args = ap.parse_args()
    if (args.solutions or args.grades) and not args.nbtool:
        ap.error("--solutions and --grades need --nbtool")

    source = args.notebook
    if args.solutions:
        source = os.path.splitext(args.out)[0] + ".with-solutions.ipynb"
        subprocess.run([args.nbtool, "with-solutions", args.notebook, args.solutions, source], check=True)
    nb = nbformat.read(source, as_version=4)
    client = NotebookClient(nb, kernel_name=args.kernel, timeout=args.timeout, allow_errors=True,
                            startup_timeout=120, resources={"metadata": {"path": "."}})
    client.execute()

    failures = 0
    all_outputs = []
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    for k, cell in enumerate(code_cells, start=1):
        tag = "%s: code cell %d of %d" % (args.notebook, k, len(code_cells))
        for o in cell.outputs:
            if o["output_type"] == "error":
                failures += 1
                print("%s failed: %s: %s\n--- cell ---\n%s\n--- traceback ---\n%s" %
                      (tag, o["ename"], o["evalue"], cell.source, "\n".join(o["traceback"])[:3000]),
                      file=sys.stderr)
            elif o["output_type"] == "stream" and o["name"] == "stderr":
                print("%s wrote to stderr (not an error):\n%s" % (tag, o["text"][:3000]), file=sys.stderr)
            elif o["output_type"] == "execute_result":
                failures += 1
                print("%s shows a value (execute_result) that `nbtool run` cannot record; end the "
                      "cell with a semicolon" % tag, file=sys.stderr)
        all_outputs.append(nbtool_form(cell.outputs))
    for path in (args.out, args.executed):
        if path and os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(json.dumps(all_outputs, indent=1, ensure_ascii=False) + "\n")
    if args.executed:
        nbformat.write(nb, args.executed)
    print("%s: %d code cells, %d failed (Jupyter, kernel %s)" %
          (args.notebook, len(code_cells), failures, args.kernel))
    if failures:
        return 1
    if args.grades:
        return subprocess.run([args.nbtool, "grades", args.notebook, args.out, args.grades]).returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())

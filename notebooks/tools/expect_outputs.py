#!/usr/bin/env python3
# Fails unless every expected line is one of the output lines of a notebook run (OUT.json, as
# `nbtool run` or kernel/tests/run_notebook.py writes it: per code cell, its nbformat outputs).
#   Usage: python3 expect_outputs.py OUT.json LINE...
import json, sys

if len(sys.argv) < 3:
    sys.exit("usage: expect_outputs.py OUT.json LINE...")
lines = set()
for cell in json.load(open(sys.argv[1], encoding="utf-8")):
    for o in cell:
        text = o.get("text", "")
        lines.update(
            l.strip() for l in ("".join(text) if isinstance(text, list) else text).split("\n")
        )
missing = [l for l in sys.argv[2:] if l.strip() not in lines]
for l in missing:
    print("%s: no output line reads: %s" % (sys.argv[1], l))
if missing:
    sys.exit(1)
print("%s: all %d expected lines found" % (sys.argv[1], len(sys.argv) - 2))

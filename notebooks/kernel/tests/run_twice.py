#!/usr/bin/env python3
"""Runs every code cell of each notebook twice in one xenc-kernel, as a student's Run All, then
Run All again without a restart: re-running a cell is the normal case, so the second round must
give no error either (it redefines every function, class, variable and lambda of the first).

    JUPYTER_PATH=build/notebooks/kernel/jupyter run_twice.py NB.ipynb...

Prints one line per notebook and round; any error names the notebook, round and cell, shows the
error, and makes the exit code 1.
"""
import json
import os
import sys
import time

from jupyter_client.manager import start_new_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_protocol import execute, wait_for_iopub  # noqa: E402

KERNEL = os.environ.get("XENC_KERNEL_NAME", "xenc-cpp17")


def run_twice(path):
    with open(path) as f:
        cells = ["".join(c["source"]) for c in json.load(f)["cells"] if c["cell_type"] == "code"]
    km, kc = start_new_kernel(kernel_name=KERNEL, startup_timeout=300)
    errors = []
    try:
        wait_for_iopub(kc)
        for round_ in (1, 2):
            started = time.time()
            for i, code in enumerate(cells):
                reply, _ = execute(kc, code, timeout=900)
                if reply["status"] != "ok":
                    errors.append("%s, round %d, code cell %d: %s\n%s" % (
                        os.path.basename(path), round_, i + 1, reply.get("ename"),
                        "\n".join(reply.get("traceback", []))[:3000]))
            print("%s: round %d, %d cells, %.0f s, %d errors so far"
                  % (os.path.basename(path), round_, len(cells), time.time() - started, len(errors)),
                  flush=True)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return errors


def main():
    errors = []
    for path in sys.argv[1:]:
        errors += run_twice(path)
    for e in errors:
        print("ERROR " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

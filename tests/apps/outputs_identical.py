#!/usr/bin/env python3
"""Captures what every program (xenc-word-order, -extrapolate, -train-order, -pe-properties,
-attention-map, -pe-heatmap, -pe-pitfalls, -init-encoder, -encode) prints and writes (stdout,
stderr, exit code, --json, --help, every SVG/CSV/npz/npy they write) at small but representative settings, so a refactoring can be shown to change no byte of
their output.

    # 1. before the change: build the apps of the old tree, capture
    python3 tests/apps/outputs_identical.py capture OLD/build /tmp/out_before
    # 2. after: build the apps of the new tree, capture again, compare
    python3 tests/apps/outputs_identical.py capture build /tmp/out_after
    python3 tests/apps/outputs_identical.py compare /tmp/out_before /tmp/out_after
    # or only some programs: capture BUILD DEST pe_properties,attention_map

BUILD is a CMake build directory holding apps/<name>/xenc-<name> (targets word_order,
extrapolate, train_order, pe_properties, attention_map, pe_heatmap). Both captures must run on
the same machine (the same OpenBLAS kernels): trained numbers are compared byte for byte. Only
measured times (the "time" column, "total 1.2 s", JSON "seconds"/"total_seconds") are blanked:
they differ from run to run. The training apps use one BLAS thread (their default), so a run repeats exactly.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile

WORD_ORDER = [
    ("defaults", []),
    ("defaults_json", ["--json"]),
    ("defaults_svg", ["--svg-dir", "{out}/svg"]),
    ("all", ["--position", "all"]),
    ("all_json_svg", ["--position", "all", "--json", "--svg-dir", "{out}/svg"]),
    ("none", ["--position", "none"]),
    ("alibi", ["--position", "alibi"]),
    ("rope", ["--position", "rope"]),
    ("identical", ["--a", "the cat", "--b", "the cat", "--position", "all"]),
    (
        "repeated_alibi",
        [
            "--a",
            "the cat chased the mouse",
            "--b",
            "mouse the chased cat the",
            "--position",
            "alibi",
        ],
    ),
    (
        "repeated_all",
        ["--a", "the dog bit the man", "--b", "the man bit the dog", "--position", "all"],
    ),
    (
        "reversed_all",
        ["--a", "the cat chased a mouse", "--b", "mouse a chased cat the", "--position", "all"],
    ),
    (
        "not_permutation",
        ["--a", "cat chased mouse", "--b", "the dog chased the cat", "--position", "all"],
    ),
    ("one_shared", ["--a", "cat sat", "--b", "dog sat"]),
    ("d1", ["--d-model", "1", "--heads", "1", "--position", "learned"]),
    ("d1_default", ["--d-model", "1", "--heads", "1"]),
    ("d2", ["--d-model", "2", "--heads", "1", "--position", "all"]),
    ("scale", ["--scale-embedding", "--position", "all"]),
    ("no_shared", ["--a", "cat", "--b", "dog"]),
    ("empty", ["--a", "", "--b", "dog"]),
    ("heads", ["--d-model", "10", "--heads", "4"]),
    ("too_big", ["--d-model", "4096", "--layers", "48", "--ff", "65536"]),
]

EXTRAP_SMALL = [
    "--epochs",
    "1",
    "--train-sequences",
    "200",
    "--test-sequences",
    "20",
    "--d-model",
    "16",
    "--heads",
    "2",
    "--ff",
    "32",
    "--test-lengths",
    "8,16,32",
    "--quiet",
]
EXTRAPOLATE = [
    ("small", EXTRAP_SMALL + ["--svg-dir", "{out}/svg"]),
    ("small_json", EXTRAP_SMALL + ["--json", "--svg-dir", "{out}/svg"]),
    ("small_learned", EXTRAP_SMALL + ["--learned-max-len", "32", "--schemes", "learned,none"]),
    (
        "copy_left",
        EXTRAP_SMALL + ["--rule", "copy_left", "--schemes", "alibi,rope", "--svg-dir", ""],
    ),
    (
        "progress",
        [
            "--epochs",
            "2",
            "--train-sequences",
            "100",
            "--test-sequences",
            "10",
            "--d-model",
            "8",
            "--heads",
            "2",
            "--ff",
            "16",
            "--test-lengths",
            "16",
            "--schemes",
            "none",
            "--svg-dir",
            "",
        ],
    ),
    ("bad_offset", ["--offset", "4", "--test-lengths", "8"]),
    ("bad_heads", ["--d-model", "10", "--heads", "4"]),
    ("too_long", ["--max-minutes", "0.001"]),
    ("too_big", ["--d-model", "512", "--ff", "4096", "--layers", "12", "--max-memory-mb", "16"]),
]

TRAIN_SMALL = [
    "--epochs",
    "1",
    "--nouns",
    "6",
    "--verbs",
    "2",
    "--d-model",
    "8",
    "--heads",
    "2",
    "--ff",
    "16",
    "--quiet",
]
TRAIN_ORDER = [
    ("small", TRAIN_SMALL + ["--svg-dir", "{out}/svg", "--save", "{out}/ckpt"]),
    ("small_json", TRAIN_SMALL + ["--json", "--svg-dir", "{out}/svg"]),
    ("progress", TRAIN_SMALL[:-1] + ["--schemes", "none,rope", "--svg-dir", ""]),
    (
        "load",
        ["--load", "{out}/../small/ckpt/sinusoidal.npz", "--sentence", "the cat saw the zebra"],
    ),
    (
        "load_json",
        ["--load", "{out}/../small/ckpt/rope.npz", "--sentence", "the cat saw the zebra", "--json"],
    ),
    ("evaluate", ["--load", "{out}/../small/ckpt/learned.npz", "--evaluate", "{out}/eval.npz"]),
    ("bad_heads", ["--d-model", "10", "--heads", "4"]),
    ("sentence_no_load", ["--sentence", "the cat"]),
    ("load_no_sentence", ["--load", "{out}/../small/ckpt/sinusoidal.npz"]),
    (
        "evaluate_onto_load",
        ["--load", "{out}/../small/ckpt/none.npz", "--evaluate", "{out}/../small/ckpt/none.npz"],
    ),
    ("too_long", ["--max-minutes", "0.001"]),
    ("too_big", ["--d-model", "512", "--ff", "4096", "--layers", "12", "--max-memory-mb", "16"]),
]

PE_PROPERTIES = [
    ("defaults", ["--svg", "{out}/sim.svg", "--offset-svg", "{out}/off.svg"]),
    (
        "d64",
        [
            "--d-model",
            "64",
            "--positions",
            "100",
            "--shift",
            "7",
            "--svg",
            "{out}/sim.svg",
            "--offset-svg",
            "{out}/off.svg",
        ],
    ),
]

ATTENTION_MAP = [
    ("defaults", ["--svg-dir", "{out}/svg"]),
    ("json", ["--json"]),
    ("json_svg", ["--json", "--svg-dir", "{out}/svg", "--position", "alibi"]),
    (
        "long",
        ["--sentence", "a b c d e f g h i j k l m n", "--heads", "4", "--svg-dir", "{out}/svg"],
    ),
    ("rope_one_layer", ["--position", "rope", "--layers", "1", "--svg-dir", ""]),
    ("wide_tokens", ["--sentence", "antidisestablishment is long", "--svg-dir", ""]),
    ("empty", ["--sentence", " "]),
    (
        "too_big_output",
        [
            "--sentence",
            "a b c d e f g h",
            "--heads",
            "8",
            "--layers",
            "48",
            "--max-output-mb",
            "1",
            "--svg-dir",
            "{out}/svg",
        ],
    ),
]

PE_HEATMAP = [
    ("defaults", []),
    (
        "d128",
        [
            "--positions",
            "100",
            "--d-model",
            "128",
            "--dims",
            "0,2,8,32",
            "--svg",
            "{out}/pe.svg",
            "--csv",
            "{out}/pe.csv",
            "--lines-svg",
            "{out}/lines.svg",
        ],
    ),
    ("tiny", ["--positions", "1", "--d-model", "2"]),
    ("odd", ["--d-model", "7"]),
    ("bad_dims", ["--dims", "70"]),
    ("too_big", ["--positions", "10000", "--d-model", "8192"]),
    (
        "too_big_memory",
        [
            "--positions",
            "10000",
            "--d-model",
            "8192",
            "--max-output-mb",
            "100000",
            "--max-memory-mb",
            "16",
        ],
    ),
]

PE_PITFALLS = [
    ("defaults", []),
    ("only3", ["--only", "3"]),
    ("bad_only", ["--only", "6"]),
]

INIT_ENCODER = [
    (
        "d8",
        ["--d-model", "8", "--heads", "2", "--dim-feedforward", "16", "--output", "{out}/w.npz"],
    ),
    (
        "trained",
        [
            "--d-model",
            "8",
            "--heads",
            "2",
            "--dim-feedforward",
            "16",
            "--layers",
            "3",
            "--activation",
            "gelu",
            "--norm-first",
            "--final-norm",
            "--layer-norm-eps",
            "1e-6",
            "--seed",
            "7",
            "--train-steps",
            "3",
            "--compressed",
            "--output",
            "{out}/w.npz",
        ],
    ),
    ("missing_output", ["--d-model", "8", "--heads", "2", "--dim-feedforward", "16"]),
    (
        "bad_heads",
        ["--d-model", "10", "--heads", "4", "--dim-feedforward", "16", "--output", "{out}/w.npz"],
    ),
    (
        "too_big",
        [
            "--d-model",
            "4096",
            "--heads",
            "8",
            "--dim-feedforward",
            "65536",
            "--layers",
            "48",
            "--output",
            "{out}/w.npz",
        ],
    ),
    (
        "too_long",
        [
            "--d-model",
            "512",
            "--heads",
            "8",
            "--dim-feedforward",
            "2048",
            "--train-steps",
            "100000",
            "--max-minutes",
            "0.001",
            "--output",
            "{out}/w.npz",
        ],
    ),
]

# {x}: a [2, 5, 8] float32 X written by capture (numpy, fixed values); the weights are
# init_encoder's (captured first)
ENCODE = [
    (
        "d8",
        [
            "--weights",
            "{out}/../../init_encoder/d8/w.npz",
            "--heads",
            "2",
            "--input",
            "{x}",
            "--output",
            "{out}/y.npy",
        ],
    ),
    (
        "trained",
        [
            "--weights",
            "{out}/../../init_encoder/trained/w.npz",
            "--heads",
            "2",
            "--activation",
            "gelu",
            "--norm-first",
            "--layer-norm-eps",
            "1e-6",
            "--input",
            "{x}",
            "--output",
            "{out}/y.npy",
        ],
    ),
    (
        "bad_heads",
        [
            "--weights",
            "{out}/../../init_encoder/d8/w.npz",
            "--heads",
            "3",
            "--input",
            "{x}",
            "--output",
            "{out}/y.npy",
        ],
    ),
    (
        "missing_input",
        [
            "--weights",
            "{out}/../../init_encoder/d8/w.npz",
            "--heads",
            "2",
            "--output",
            "{out}/y.npy",
        ],
    ),
]

APPS = [
    ("word_order", WORD_ORDER),
    ("extrapolate", EXTRAPOLATE),
    ("train_order", TRAIN_ORDER),
    ("pe_properties", PE_PROPERTIES),
    ("attention_map", ATTENTION_MAP),
    ("pe_heatmap", PE_HEATMAP),
    ("pe_pitfalls", PE_PITFALLS),
    ("init_encoder", INIT_ENCODER),
    ("encode", ENCODE),
]
# every program's --help too: the option records must not change the command line
for _, _cases in APPS:
    _cases.append(("help", ["--help"]))
# the folder of apps/ that holds each program
FOLDER = {"init_encoder": "encode"}

TIME_TEXT = re.compile(r"(\d+\.\d) s\b|(\d+) steps/s|ETA \d+ s")


def blank_times(text):
    return TIME_TEXT.sub("<time>", text)


def blank_json_times(obj):
    if isinstance(obj, dict):
        return {
            k: ("<time>" if k in ("seconds", "total_seconds") else blank_json_times(v))
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [blank_json_times(v) for v in obj]
    return obj


def write_x(path):
    """The input of the encode cases: X [2, 5, 8] float32, x[i] = (i % 7 - 3) / 4 in C order, as
    numpy.save writes it (format 1.0; no NumPy needed)."""
    import struct

    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 5, 8), }"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<80f", *[(i % 7 - 3) / 4 for i in range(80)]))


def capture(build, dest, only=None):
    os.makedirs(dest, exist_ok=True)
    x = os.path.abspath(os.path.join(dest, "_x.npy"))
    write_x(x)
    for app, cases in APPS:
        if only and app not in only:
            continue
        exe = os.path.join(
            os.path.abspath(build), "apps", FOLDER.get(app, app), "xenc-" + app.replace("_", "-")
        )
        for name, args in cases:
            out = os.path.abspath(os.path.join(dest, app, name))
            os.makedirs(out, exist_ok=True)
            argv = [exe] + [a.replace("{out}", out).replace("{x}", x) for a in args]
            p = subprocess.run(argv, cwd=out, capture_output=True, text=True)
            stdout = p.stdout
            if "--json" in args and p.returncode == 0 and app in ("extrapolate", "train_order"):
                stdout = json.dumps(blank_json_times(json.loads(stdout)), indent=2) + "\n"
            else:
                stdout = blank_times(stdout)
            # paths in the output name the capture directory: make them relative
            stdout = stdout.replace(out, "{out}")
            stderr = p.stderr.replace(out, "{out}")
            stdout, stderr = stdout.replace(x, "{x}"), stderr.replace(x, "{x}")
            # --help's "Usage:" names the executable
            stdout, stderr = stdout.replace(exe, "{exe}"), stderr.replace(exe, "{exe}")
            with open(os.path.join(out, "_stdout.txt"), "w") as f:
                f.write(stdout)
            with open(os.path.join(out, "_stderr.txt"), "w") as f:
                f.write(stderr)
            with open(os.path.join(out, "_exit.txt"), "w") as f:
                f.write(str(p.returncode) + "\n")
            print(f"{app}/{name}: exit {p.returncode}")


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def npz_members(path):
    """An .npz (zip) as {member: sha256}: the zip headers hold the time it was written."""
    with zipfile.ZipFile(path) as z:
        return {n: hashlib.sha256(z.read(n)).hexdigest() for n in z.namelist()}


def compare(a, b):
    def files(root):
        got = {}
        for d, _, names in os.walk(root):
            for n in names:
                full = os.path.join(d, n)
                got[os.path.relpath(full, root)] = full
        return got

    fa, fb = files(a), files(b)
    bad = 0
    for rel in sorted(set(fa) | set(fb)):
        if rel not in fa or rel not in fb:
            print(f"only in {'the first' if rel in fa else 'the second'}: {rel}")
            bad += 1
        elif rel.endswith(".npz") and npz_members(fa[rel]) != npz_members(fb[rel]):
            print(f"differs: {rel} (member names or contents)")
            bad += 1
        elif not rel.endswith(".npz") and digest(fa[rel]) != digest(fb[rel]):
            print(f"differs: {rel}")
            bad += 1
    print(f"{len(set(fa) | set(fb))} files compared, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) in (4, 5) and sys.argv[1] == "capture":
        capture(sys.argv[2], sys.argv[3], sys.argv[4].split(",") if len(sys.argv) == 5 else None)
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)

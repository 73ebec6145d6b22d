#!/usr/bin/env python3
"""What a second core gives an encoder layer's GEMMs, apart from the rest of it (issue #28).

    python3 bench/gemm_bound.py [--T 512,2048] [--D 512] [--rounds 5]
                                [--sgemm build/bench/xencoder_sgemm]
                                [--serial build/bench/xencoder_serial]

Every GEMM shape of one encoder layer (batch 1, D, F = 4·D; the forward's q, k, v and out
projections and the two feed-forward products, and for a training step also their backward's dx
and dW) is timed by `xencoder_sgemm` on 1 and on 2 threads, two ways, `--rounds` times; medians:

- OpenBLAS's OWN threads, apart from any of xencoder's code: 1 and 2 threads alternating in
  separate processes (an idle OpenBLAS worker spins after a threaded call, so the two budgets
  never share a process);
- xencoder's own cut, what the layer runs (xencoder never lets OpenBLAS thread: its pool cuts a
  large GEMM into blocks, each a 1-thread sgemm; bench/README.md, "One pool"): 1 and 2 threads
  alternating call by call in one process, wall clock and the process's CPU time;
- no cut: one whole product alone against two whole products at once, each a 1-thread sgemm on
  a thread of xencoder's pool, alternating in one process: the CPU time the chip itself adds to
  a product when the other core works too (no packing added, no waits).

Per T it prints each shape's speed-ups, then what 2 threads give the layer's GEMMs as a whole
(their 1-thread times summed, over their 2-thread times summed, each shape counted as often as the
layer runs it), each way, and for xencoder's cut their CPU time on 2 threads over that on 1. With
`--serial`, it also runs the layer itself in `xencoder_serial` (the same layer, automatic path)
and prints the share these GEMMs take of its 1-thread time, g, and two bounds beside what the
layer measured:

- speed-up: the layer's if everything else ran exactly twice as fast on 2 threads,
  1 / (g / s + (1 − g) / 2), s the GEMMs' speed-up (for each cut);
- CPU time: the layer's 2-thread CPU over its 1-thread CPU if everything else took no more CPU
  on 2 threads than on 1, g · c + (1 − g), c the GEMMs' own ratio under xencoder's cut (and,
  beside it, under no cut: two whole products at once).

They are bounds on a layer whose GEMMs are cut as these are, not on every possible GEMM.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys


# the layer's GEMMs: (name, M, N, K, op(A), op(B), times per step); row-major, y = x Wᵀ
def layer_gemms(T, D, train):
    """The GEMMs of one encoder layer (batch 1, F = 4·D, W stored [out, in] as nn.Linear does).

    >>> [(n, M, N, K, c) for n, M, N, K, _, _, c in layer_gemms(512, 512, False)]
    [('q, k, v, out', 512, 512, 512, 4), ('ff1', 512, 2048, 512, 1), ('ff2', 512, 512, 2048, 1)]
    >>> len(layer_gemms(512, 512, True)), sum(g[6] for g in layer_gemms(512, 512, True))
    (9, 18)
    >>> [g for g in layer_gemms(128, 64, True) if g[0] == "ff1 dW"]
    [('ff1 dW', 256, 64, 128, 't', 'n', 1)]
    """
    F = 4 * D
    fwd = [
        ("q, k, v, out", T, D, D, "n", "t", 4),
        ("ff1", T, F, D, "n", "t", 1),
        ("ff2", T, D, F, "n", "t", 1),
    ]
    if not train:
        return fwd
    # dx = dy W: [T, out] x [out, in]; dW = dyᵀ x: [out, T] x [T, in]
    return fwd + [
        ("q, k, v, out dx", T, D, D, "n", "n", 4),
        ("ff1 dx", T, D, F, "n", "n", 1),
        ("ff2 dx", T, F, D, "n", "n", 1),
        ("q, k, v, out dW", D, D, T, "t", "n", 4),
        ("ff1 dW", F, D, T, "t", "n", 1),
        ("ff2 dW", D, F, T, "t", "n", 1),
    ]


def gemm_speedup(rows):
    """rows: [(1-thread ms, 2-thread ms, times per step)]: the GEMMs' speed-up as a whole.

    >>> round(gemm_speedup([(2.0, 1.0, 4), (10.0, 6.0, 1)]), 3)
    1.8
    """
    return sum(a * c for a, _, c in rows) / sum(b * c for _, b, c in rows)


def cpu_bound(share, ratio):
    """The layer's 2-thread CPU time over its 1-thread CPU time when its GEMMs (share of its
    1-thread time) take `ratio` times their 1-thread CPU on 2 threads and everything else no more.

    >>> round(cpu_bound(0.8, 1.25), 3)
    1.2
    >>> cpu_bound(0.0, 1.5), cpu_bound(1.0, 1.5)
    (1.0, 1.5)
    """
    return share * ratio + (1.0 - share)


def layer_bound(share, speedup):
    """The layer's speed-up when its GEMMs (share of its 1-thread time) get `speedup` and
    everything else exactly 2x.

    >>> round(layer_bound(0.78, 1.62), 3)
    1.691
    >>> layer_bound(0.0, 1.0), layer_bound(1.0, 1.5)
    (2.0, 1.5)
    """
    return 1.0 / (share / speedup + (1.0 - share) / 2.0)


cores = set()  # the kernel sets xencoder_sgemm reported (it re-executes past a fallback)


def run_sgemm(sgemm, g, threads, reps, *mode):
    """xencoder_sgemm on one shape of the layer with OPENBLAS_NUM_THREADS=threads: its line."""
    _, M, N, K, oa, ob, _ = g
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    out = subprocess.run(
        [sgemm, str(M), str(N), str(K), oa, ob, str(reps), *mode],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    cores.add(re.search(r"core (\S+)", out).group(1))
    return out


def time_gemm(sgemm, g, threads):
    """cblas_sgemm on OpenBLAS's own threads: wall ms per call."""
    _, M, N, K, _, _, _ = g
    reps = min(2000, max(3, int(2.5e10 / (2.0 * M * N * K))))  # ~0.25 s at 100 GFLOP/s
    out = run_sgemm(sgemm, g, threads, reps)
    return float(re.search(r"wall ([0-9.]+)", out).group(1))


def run_in_one_process(sgemm, g, mode):
    """xencoder_sgemm's xencoder or pair mode (1 and 2 threads alternating in one process): its
    line."""
    _, M, N, K, _, _, _ = g
    reps = min(1000, max(5, int(1.25e10 / (2.0 * M * N * K))))  # ~0.25 s per side at 100 GFLOP/s
    return run_sgemm(sgemm, g, 2, reps, mode)


def time_cut(sgemm, g):
    """xencoder's gemm on 1 and 2 threads: (wall1, cpu1, wall2, cpu2, blocks), ms per call."""
    out = run_in_one_process(sgemm, g, "xencoder")
    keys = ("wall1", "cpu1", "wall2", "cpu2")
    values = [float(re.search(rf"{k} ([0-9.]+)", out).group(1)) for k in keys]
    return (*values, int(re.search(r"blocks (\d+)", out).group(1)))


def time_pair(sgemm, g):
    """One whole product alone against two at once: (CPU alone, CPU of the pair), ms."""
    out = run_in_one_process(sgemm, g, "pair")
    m = re.search(r"alone wall [0-9.]+ cpu ([0-9.]+) pair wall [0-9.]+ cpu ([0-9.]+)", out)
    return float(m.group(1)), float(m.group(2))


def layer_run(serial, T, D, mode):
    """The layer in xencoder_serial (5 repetitions, 1 and 2 threads alternating): its 1-thread
    wall (ms), 2-thread speed-up and 2-thread CPU over 1-thread CPU."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2")
    out = subprocess.run(
        [serial, str(T), str(D), "8", mode, "5"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    wall1 = float(re.search(r"^1 thread: wall ([0-9.]+) ms", out, re.M).group(1))
    two = re.search(r"^2 threads: .*\(([0-9.]+)x of 1 thread's\); speed-up ([0-9.]+)x", out, re.M)
    return wall1, float(two.group(2)), float(two.group(1))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sgemm", default="build/bench/xencoder_sgemm")
    ap.add_argument("--serial", default=None, help="xencoder_serial: the layer's 1-thread time")
    ap.add_argument("--T", default="512,2048")
    ap.add_argument("--D", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    print(
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, "
        f"{a.rounds} rounds, medians; OpenBLAS's threads: 1 and 2 alternating in separate "
        f"processes; xencoder's cut and two whole at once: 1 and 2 alternating in one process"
    )
    for T in [int(t) for t in a.T.split(",")]:
        measured, cut = {}, {}
        for g in layer_gemms(T, a.D, True):
            one, two, runs, pairs = [], [], [], []
            for _ in range(a.rounds):
                one.append(time_gemm(a.sgemm, g, 1))
                two.append(time_gemm(a.sgemm, g, 2))
                runs.append(time_cut(a.sgemm, g))
                pairs.append(time_pair(a.sgemm, g))
            measured[g[0]] = (statistics.median(one), statistics.median(two), g[6])
            ratios = [x / y for x, y in zip(one, two)]
            w1, c1, w2, c2 = (statistics.median(r[i] for r in runs) for i in range(4))
            alone, pair = (statistics.median(p[i] for p in pairs) for i in range(2))
            cut[g[0]] = (w1, w2, g[6], c1, c2, alone, pair)
            cut_ratios = [r[0] / r[2] for r in runs]
            print(
                f"T={T} {g[0]:<16} [{g[1]}, {g[3]}] x [{g[3]}, {g[2]}] x{g[6]}: "
                f"OpenBLAS {measured[g[0]][0]:8.3f} ms on 1 thread, {measured[g[0]][1]:8.3f} ms "
                f"on 2: {measured[g[0]][0] / measured[g[0]][1]:.2f}x "
                f"(rounds {min(ratios):.2f}-{max(ratios):.2f}x); "
                f"xencoder's cut ({runs[0][4]} blocks) {w1:8.3f} ms, {w2:8.3f} ms: {w1 / w2:.2f}x "
                f"(rounds {min(cut_ratios):.2f}-{max(cut_ratios):.2f}x) at {c2 / c1:.2f}x the CPU; "
                f"two whole at once {pair / (2 * alone):.2f}x the CPU of one alone",
                flush=True,
            )
        for mode, train in (("forward", False), ("train", True)):
            rows = [measured[g[0]] for g in layer_gemms(T, a.D, train)]
            cut_rows = [cut[g[0]] for g in layer_gemms(T, a.D, train)]
            s = gemm_speedup(rows)
            s_cut = gemm_speedup([r[:3] for r in cut_rows])
            c_cut = sum(r[4] * r[2] for r in cut_rows) / sum(r[3] * r[2] for r in cut_rows)
            c_pair = sum(r[6] * r[2] for r in cut_rows) / sum(2 * r[5] * r[2] for r in cut_rows)
            what = "forward" if not train else "training step"
            print(
                f"T={T}, D={a.D}, {what}: 2 threads give the layer's GEMMs {s:.2f}x together "
                f"with OpenBLAS's own threads, {s_cut:.2f}x with xencoder's cut, at {c_cut:.2f}x "
                f"the CPU (two of each whole at once: {c_pair:.2f}x the CPU)"
            )
            if a.serial:
                total, speedup, cpu_ratio = layer_run(a.serial, T, a.D, mode)
                gemm = sum(x * c for x, _, c in rows)
                share = min(1.0, gemm / total)
                print(
                    f"  the layer on 1 thread: {total:.2f} ms, of which these GEMMs "
                    f"{gemm:.2f} ms ({100 * share:.0f}%). With everything else exactly 2x "
                    f"faster, the layer would reach {layer_bound(share, s):.2f}x with OpenBLAS's "
                    f"threads, {layer_bound(share, s_cut):.2f}x with xencoder's cut; with "
                    f"everything else at no more CPU, {cpu_bound(share, c_cut):.2f}x the CPU with "
                    f"xencoder's cut ({cpu_bound(share, c_pair):.2f}x if the GEMMs cost what two "
                    f"whole ones at once cost). "
                    f"Measured beside them: {speedup:.2f}x at {cpu_ratio:.2f}x the CPU"
                )
    print(f"OpenBLAS kernels that ran in xencoder_sgemm: {', '.join(sorted(cores))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

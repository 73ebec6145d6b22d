#!/usr/bin/env python3
"""What the machine's BLAS gets from a second core on an encoder layer's GEMMs (issue #28).

    python3 bench/gemm_bound.py [--T 512,2048] [--D 512] [--rounds 5]
                                [--sgemm build/bench/xencoder_sgemm]
                                [--serial build/bench/xencoder_serial]

xencoder never lets OpenBLAS thread: its own pool cuts a large GEMM into blocks, each a 1-thread
sgemm (bench/README.md, "One pool"). This script measures the same GEMMs with OpenBLAS's OWN
threads instead, apart from any of xencoder's code: every GEMM shape of one encoder layer (batch 1,
D, F = 4·D; the forward's q, k, v and out projections and the two feed-forward products, and for a
training step also their backward's dx and dW), each timed by `xencoder_sgemm` on 1 and on 2
threads, in separate processes (an idle OpenBLAS worker spins after a threaded call, so the two
budgets never share a process), alternating, `--rounds` times; medians.

Per T it prints each shape's speed-up, then what OpenBLAS's 2 threads give the layer's GEMMs as a
whole (their 1-thread times summed, over their 2-thread times summed, each shape counted as often
as the layer runs it). With `--serial`, it also reads the layer's own 1-thread time from
`xencoder_serial` (the same layer, automatic path) and prints the share these GEMMs take of it, and
the speed-up the layer would reach if everything else ran exactly twice as fast on 2 threads:
1 / (g / s + (1 − g) / 2), g the GEMMs' share, s their speed-up. That is a bound on a layer whose
GEMMs are cut as well as OpenBLAS cuts them, not a bound on every possible GEMM.
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


def time_gemm(sgemm, g, threads):
    _, M, N, K, oa, ob, _ = g
    reps = min(2000, max(3, int(2.5e10 / (2.0 * M * N * K))))  # ~0.25 s at 100 GFLOP/s
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads))
    out = subprocess.run(
        [sgemm, str(M), str(N), str(K), oa, ob, str(reps)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    cores.add(re.search(r"core (\S+)", out).group(1))
    return float(re.search(r"wall ([0-9.]+)", out).group(1))


def layer_ms(serial, T, D, mode):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2")
    out = subprocess.run(
        [serial, str(T), str(D), "8", mode, "5"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return float(re.search(r"^1 thread: wall ([0-9.]+) ms", out, re.M).group(1))


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
        f"{a.rounds} rounds, 1 and 2 threads alternating in separate processes, medians"
    )
    for T in [int(t) for t in a.T.split(",")]:
        measured = {}
        for g in layer_gemms(T, a.D, True):
            one, two = [], []
            for _ in range(a.rounds):
                one.append(time_gemm(a.sgemm, g, 1))
                two.append(time_gemm(a.sgemm, g, 2))
            measured[g[0]] = (statistics.median(one), statistics.median(two), g[6])
            ratios = [x / y for x, y in zip(one, two)]
            print(
                f"T={T} {g[0]:<16} [{g[1]}, {g[3]}] x [{g[3]}, {g[2]}] x{g[6]}: "
                f"{measured[g[0]][0]:8.3f} ms on 1 thread, {measured[g[0]][1]:8.3f} ms on 2: "
                f"{measured[g[0]][0] / measured[g[0]][1]:.2f}x "
                f"(rounds {min(ratios):.2f}-{max(ratios):.2f}x)",
                flush=True,
            )
        for mode, train in (("forward", False), ("train", True)):
            rows = [measured[g[0]] for g in layer_gemms(T, a.D, train)]
            s = gemm_speedup(rows)
            what = "forward" if not train else "training step"
            print(
                f"T={T}, D={a.D}, {what}: OpenBLAS's own 2 threads give the layer's GEMMs "
                f"{s:.2f}x together"
            )
            if a.serial:
                total = layer_ms(a.serial, T, a.D, mode)
                gemm = sum(x * c for x, _, c in rows)
                share = min(1.0, gemm / total)
                print(
                    f"  the layer on 1 thread: {total:.2f} ms, of which these GEMMs "
                    f"{gemm:.2f} ms ({100 * share:.0f}%): with everything else exactly 2x "
                    f"faster, the layer would reach {layer_bound(share, s):.2f}x"
                )
    print(f"OpenBLAS kernels that ran in xencoder_sgemm: {', '.join(sorted(cores))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

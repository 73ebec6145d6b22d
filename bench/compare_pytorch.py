#!/usr/bin/python3
"""Side-by-side timing of one encoder-layer forward: xencoder vs PyTorch, on this CPU.

Run with Debian's Python (python3-torch 1.13), after building xencoder_bench (Release):

    /usr/bin/python3 bench/compare_pytorch.py                 # 1 and 2 threads, full grid
    /usr/bin/python3 bench/compare_pytorch.py --threads 1 --reps 3 --sizes 3,64,4 16,128,4
    /usr/bin/python3 bench/compare_pytorch.py --memory        # also the peak-memory table
    /usr/bin/python3 bench/compare_pytorch.py --train --threads 1   # one training step instead
    /usr/bin/python3 bench/compare_pytorch.py --batch 8 --sizes 128,512,8 512,512,8  # batch of 8

What is compared (the same work on both sides):
  PyTorch   nn.TransformerEncoderLayer(D, H, dim_feedforward=4·D, dropout=0.1, relu,
            batch_first=True, norm_first=False), .eval(), under torch.no_grad(), input [1, T, D]
  xencoder  BM_EncoderLayerForward/T/D/H of build/bench/xencoder_bench (the same layer in
            evaluation mode inside a NoGradGuard); with --batch 8, input [8, T, D] on both
            sides and BM_EncoderLayerForwardBatch8/T/D/H
  sgemm     BM_Sgemm/N:1024 of xencoder_bench: OpenBLAS's C = A·B at 1024³, the ceiling,
            sampled right after every xencoder sample

Threads: for each thread count n this script re-runs itself as a worker process with
OPENBLAS_NUM_THREADS=n and OMP_NUM_THREADS=n in its environment (OpenBLAS reads them when it
is loaded, in PyTorch's process as in ours) and torch.set_num_threads(n).
Timing: the two frameworks alternate, size by size, repetition by repetition (so a noisy
neighbour hurts both alike); each sample is the mean over >= --min-time seconds of forwards;
the table shows the median of --reps samples. FLOP/s counts 24·T·D² + 4·T²·D per forward.
The targets are judged on wall-clock time. The CPU-time columns (process CPU time, all
threads) are printed too: on a shared machine they leave out the time other processes took.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GRID = [(3, 64, 4), (16, 128, 4), (128, 256, 8), (512, 512, 8), (1024, 512, 8)]
SGEMM_N = 1024


def layer_flops(T, D):
    return 24 * T * D * D + 4 * T * T * D


def run_bench(binary, pattern, min_time):
    """Runs xencoder_bench on one benchmark; returns ((wall s, process CPU s) per iteration,
    context)."""
    out = subprocess.run(
        [
            str(binary),
            f"--benchmark_filter={pattern}",
            f"--benchmark_min_time={min_time}",
            "--benchmark_format=json",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    if not out.strip():  # Google Benchmark prints nothing when the filter matches no benchmark
        raise RuntimeError(f"{pattern!r} matched no benchmark in {binary}")
    doc = json.loads(out)
    runs = [b for b in doc["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
    if len(runs) != 1:
        raise RuntimeError(f"{pattern!r} matched {len(runs)} benchmarks in {binary}")
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[runs[0]["time_unit"]]
    return (runs[0]["real_time"] * scale, runs[0]["cpu_time"] * scale), doc["context"]


def time_torch(layer, x, min_time):
    """(wall s, process CPU s) per forward, means over at least min_time seconds."""
    import torch

    with torch.no_grad():
        n, elapsed = 0, 0.0
        start, start_cpu = time.perf_counter(), time.process_time()
        while elapsed < min_time:
            layer(x)
            n += 1
            elapsed = time.perf_counter() - start
        cpu = time.process_time() - start_cpu
    return elapsed / n, cpu / n


def torch_blas_core():
    """openblas_get_corename() of the OpenBLAS this process (PyTorch) has loaded, or '?'."""
    import ctypes

    with open("/proc/self/maps") as maps:
        libs = sorted({l.split()[-1] for l in maps if "openblas" in l.split()[-1].lower()})
    for lib in libs:
        try:
            corename = ctypes.CDLL(lib).openblas_get_corename
        except (OSError, AttributeError):
            continue
        corename.restype = ctypes.c_char_p
        return corename().decode()
    return "?"


def worker(args):
    """One thread count: alternate PyTorch and xencoder; print the samples as JSON."""
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    binary = Path(args.bench)
    rows = []
    context = {}
    sgemm = []
    for T, D, H in args.sizes:
        layer = torch.nn.TransformerEncoderLayer(
            D,
            H,
            dim_feedforward=4 * D,
            dropout=0.1,
            activation="relu",
            batch_first=True,
            norm_first=False,
        ).eval()
        x = torch.randn(args.batch, T, D)
        with torch.no_grad():
            for _ in range(3):
                layer(x)  # warm-up: allocator, OpenBLAS buffers
        torch_s, xenc_s, sgemm_s = [], [], []
        for rep in range(args.reps):
            order = ["torch", "xenc"] if rep % 2 == 0 else ["xenc", "torch"]
            for who in order:
                if who == "torch":
                    torch_s.append(time_torch(layer, x, args.min_time))
                else:
                    name = "BM_EncoderLayerForward" + ("Batch8" if args.batch == 8 else "")
                    t, context = run_bench(binary, f"^{name}/{T}/{D}/{H}/", args.min_time)
                    xenc_s.append(t)
                    # the BLAS ceiling, sampled right after each xencoder sample, so that the
                    # two see the same load on a shared machine (paired ratios below)
                    sgemm_s.append(run_bench(binary, f"^BM_Sgemm/N:{SGEMM_N}/", args.min_time)[0])
        sgemm.extend(sgemm_s)
        rows.append({"T": T, "D": D, "H": H, "torch": torch_s, "xenc": xenc_s, "sgemm": sgemm_s})
    json.dump(
        {
            "threads": args.threads,
            "batch": args.batch,
            "rows": rows,
            "sgemm": sgemm,
            "context": context,
            "torch_version": torch.__version__,
            "torch_blas_core": torch_blas_core(),
            "torch_threads": torch.get_num_threads(),
        },
        sys.stdout,
    )


def medians(samples):
    """[(wall, cpu), ...] -> (median wall, median cpu)"""
    return (statistics.median(w for w, _ in samples), statistics.median(c for _, c in samples))


def fmt_time(s):
    return f"{s * 1e3:.3f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} µs"


def report(result):
    n = result["threads"]
    sgemm_wall, sgemm_cpu = medians(result["sgemm"])
    sgemm_flops = 2 * SGEMM_N**3 / sgemm_wall
    sgemm_flops_cpu = 2 * SGEMM_N**3 / sgemm_cpu
    print(
        f"\n### {n} thread{'s' if n > 1 else ''}  (torch {result['torch_version']}, "
        f"torch threads {result['torch_threads']}, OpenBLAS threads "
        f"{result['context'].get('blas_threads', '?')}, xencoder "
        f"{result['context'].get('xencoder_build_type', '?')}, -march=native "
        f"{result['context'].get('xencoder_march_native', '?')})\n"
    )
    print(
        f"OpenBLAS kernels: {result['context'].get('blas_core', '?')} in xencoder_bench, "
        f"{result.get('torch_blas_core', '?')} in PyTorch's process (OPENBLAS_CORETYPE="
        f"{os.environ.get('OPENBLAS_CORETYPE', '(unset)')})\n"
    )
    print(
        f"OpenBLAS sgemm {SGEMM_N}³ in the same run: {sgemm_flops / 1e9:.1f} GFLOP/s wall-clock, "
        f"{sgemm_flops_cpu / 1e9:.1f} GFLOP/s per CPU-second (median of {len(result['sgemm'])}; "
        f'"xencoder / sgemm" is the median of the ratios of each xencoder sample to the sgemm '
        f"sample taken right after it)\n"
    )
    print(
        "| T | D | H | PyTorch median | xencoder median | PyTorch GFLOP/s | xencoder GFLOP/s "
        "| ratio PyTorch/xencoder | xencoder / sgemm | ratio, CPU time | xencoder / sgemm, CPU time |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    checks = []
    for r in result["rows"]:
        T, D, H = r["T"], r["D"], r["H"]
        (tt, tt_cpu), (tx, tx_cpu) = medians(r["torch"]), medians(r["xenc"])
        fl = result.get("batch", 1) * layer_flops(T, D)
        ratio, ratio_cpu = tt / tx, tt_cpu / tx_cpu
        # share of sgemm's FLOP/s: the median of the paired samples (xencoder, then sgemm)
        sgemm_flop = 2 * SGEMM_N**3
        of_sgemm = statistics.median(
            (fl / x[0]) / (sgemm_flop / g[0]) for x, g in zip(r["xenc"], r["sgemm"])
        )
        of_sgemm_cpu = statistics.median(
            (fl / x[1]) / (sgemm_flop / g[1]) for x, g in zip(r["xenc"], r["sgemm"])
        )
        print(
            f"| {T} | {D} | {H} | {fmt_time(tt)} | {fmt_time(tx)} | {fl / tt / 1e9:.2f} | "
            f"{fl / tx / 1e9:.2f} | {ratio:.2f} | {of_sgemm:.0%} | {ratio_cpu:.2f} | "
            f"{of_sgemm_cpu:.0%} |"
        )
        checks.append(
            (f"T={T} D={D}: ratio >= 1.0", ratio >= 1.0, f"{ratio:.2f}", f"{ratio_cpu:.2f}")
        )
        if T == 3 and D == 64:
            checks.append(
                (f"T={T} D={D}: ratio >= 3.0", ratio >= 3.0, f"{ratio:.2f}", f"{ratio_cpu:.2f}")
            )
        if T == 1024 and D == 512:
            checks.append(
                (
                    f"T={T} D={D}: >= 70% of sgemm FLOP/s",
                    of_sgemm >= 0.7,
                    f"{of_sgemm:.0%}",
                    f"{of_sgemm_cpu:.0%}",
                )
            )
    print()
    for name, ok, value, value_cpu in checks:
        print(f"- {'PASS' if ok else 'FAIL'}  {name}  (wall-clock: {value}; CPU time: {value_cpu})")
    return all(ok for _, ok, _, _ in checks)


def memory_table(build, sizes_T, D, H):
    """Peak RSS of one forward in a fresh process per T: xencoder_memory and a PyTorch probe."""
    probe = (
        "import sys, torch\n"
        "def hwm():\n"
        "    for l in open('/proc/self/status'):\n"
        "        if l.startswith('VmHWM:'): return int(l.split()[1]) * 1024\n"
        "T, D, H = map(int, sys.argv[1:4]); torch.set_num_threads(1)\n"
        "layer = torch.nn.TransformerEncoderLayer(D, H, 4 * D, 0.1, batch_first=True).eval()\n"
        "x = torch.randn(1, T, D); before = hwm()\n"
        "with torch.no_grad(): y = layer(x)\n"
        "print(before, hwm())\n"
    )
    print(f"\n### Peak resident memory of one forward (D = {D}, H = {H}, F = {4 * D}, no grad)\n")
    print(
        "| T | one [T,T] matrix | xencoder plain: peak added by forward | xencoder tiled | "
        "PyTorch: peak added by forward |"
    )
    print("|---:|---:|---:|---:|---:|")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    # Decided before running: PyTorch 1.13 holds the scores of all H heads at once, H·T² floats,
    # and xencoder's plain path one head's T²; a probe that would need more than half of the
    # memory available now is not started.
    available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")

    def fits(score_bytes):
        return score_bytes < available / 2

    def xenc_added(T, path):
        if path == "plain" and not fits(4 * T * T):
            return "(does not fit)"
        out = subprocess.run(
            [str(build / "bench" / "xencoder_memory"), str(T), str(D), str(H), "--path", path],
            check=True,
            capture_output=True,
            text=True,
            env=env,
        ).stdout
        return f"{float(out.split('forward_added=')[1].split()[0]):.0f} MiB"

    for T in sizes_T:
        plain, tiled = xenc_added(T, "plain"), xenc_added(T, "tiled")
        torch_added = f"(does not fit: {H * 4 * T * T / 2**30:.0f} GiB of scores)"
        if fits(H * 4 * T * T):
            tb, ta = map(
                int,
                subprocess.run(
                    [sys.executable, "-c", probe, str(T), str(D), str(H)],
                    check=True,
                    capture_output=True,
                    text=True,
                    env=env,
                ).stdout.split(),
            )
            torch_added = f"{(ta - tb) / 2**20:.0f} MiB"
        print(f"| {T} | {4 * T * T / 2**20:.0f} MiB | {plain} | {tiled} | {torch_added} |")


# ---- training step (issue 10): forward + backward + one AdamW step ------------------------------
# A self-contained section: `--train` times BM_EncoderLayerTrainStep/T/D/H (bench/bench_train.cpp)
# beside the same step in PyTorch: zero_grad(); y = layer(x); (y * dy).sum().backward();
# torch.optim.AdamW.step(); dropout 0, train mode. Targets at 1 thread: ratio >= 1.0 everywhere,
# >= 3.0 at (16, 128, 4).
TRAIN_GRID = [(3, 64, 4), (16, 128, 4), (128, 256, 8), (512, 512, 8)]


def time_torch_train(layer, opt, x, dy, min_time):
    """(wall s, process CPU s) per training step, means over at least min_time seconds."""
    n, elapsed = 0, 0.0
    start, start_cpu = time.perf_counter(), time.process_time()
    while elapsed < min_time:
        opt.zero_grad()
        (layer(x) * dy).sum().backward()
        opt.step()
        n += 1
        elapsed = time.perf_counter() - start
    return elapsed / n, (time.process_time() - start_cpu) / n


def train_worker(args):
    """One thread count: alternate PyTorch and xencoder training steps; print JSON samples."""
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    rows = []
    for T, D, H in args.sizes:
        layer = torch.nn.TransformerEncoderLayer(
            D,
            H,
            dim_feedforward=4 * D,
            dropout=0.0,
            activation="relu",
            batch_first=True,
            norm_first=False,
        ).train()
        opt = torch.optim.AdamW(layer.parameters(), lr=1e-4)
        x, dy = torch.randn(1, T, D), torch.randn(1, T, D)
        # xencoder's backward always returns dL/dx; PyTorch computes it only when x requires grad
        x.requires_grad_(args.input_grad)
        time_torch_train(layer, opt, x, dy, 0.05)  # warm-up
        torch_s, xenc_s = [], []
        for rep in range(args.reps):
            for who in ["torch", "xenc"] if rep % 2 == 0 else ["xenc", "torch"]:
                if who == "torch":
                    torch_s.append(time_torch_train(layer, opt, x, dy, args.min_time))
                else:
                    xenc_s.append(
                        run_bench(
                            Path(args.bench),
                            f"^BM_EncoderLayerTrainStep/{T}/{D}/{H}/",
                            args.min_time,
                        )[0]
                    )
        rows.append({"T": T, "D": D, "H": H, "torch": torch_s, "xenc": xenc_s})
    json.dump(
        {"threads": args.threads, "rows": rows, "torch_version": torch.__version__}, sys.stdout
    )


def train_report(result):
    n = result["threads"]
    print(
        f"\n### Training step, {n} thread{'s' if n > 1 else ''} (torch {result['torch_version']})\n"
    )
    print(
        "| T | D | H | PyTorch median | xencoder median | ratio PyTorch/xencoder | ratio, CPU time |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    checks = []
    for r in result["rows"]:
        T, D, H = r["T"], r["D"], r["H"]
        (tt, tt_cpu), (tx, tx_cpu) = medians(r["torch"]), medians(r["xenc"])
        print(
            f"| {T} | {D} | {H} | {fmt_time(tt)} | {fmt_time(tx)} | {tt / tx:.2f} | {tt_cpu / tx_cpu:.2f} |"
        )
        checks.append((f"T={T} D={D}: ratio >= 1.0", tt / tx >= 1.0, f"{tt / tx:.2f}"))
        if (T, D, H) == (16, 128, 4):
            checks.append((f"T={T} D={D}: ratio >= 3.0", tt / tx >= 3.0, f"{tt / tx:.2f}"))
    print()
    for name, ok, value in checks:
        print(f"- {'PASS' if ok else 'FAIL'}  {name}  (wall-clock: {value})")
    return all(ok for _, ok, _ in checks)


def train_main(args, binary):
    print(
        "## xencoder vs PyTorch: one training step of a TransformerEncoderLayer (forward, backward "
        "of (y·dy).sum(), AdamW step), batch 1, F = 4·D, post-norm, relu, float32, dropout 0\n"
    )
    print(
        f"Load average at start {os.getloadavg()[0]:.1f}; {args.reps} samples of >= {args.min_time} s "
        f"per cell, medians"
    )
    print(
        "PyTorch computes dL/dx (x.requires_grad), as xencoder's backward does"
        if args.input_grad
        else "PyTorch's x does not require grad: PyTorch skips dL/dx, which xencoder's backward "
        "computes (--input-grad: both compute it)"
    )
    sizes = args.sizes if args.sizes != GRID else TRAIN_GRID
    all_ok = True
    for n in [int(v) for v in args.threads.split(",")]:
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(n), OMP_NUM_THREADS=str(n))
        cmd = [
            sys.executable,
            __file__,
            "--train-worker",
            "--threads",
            str(n),
            "--bench",
            str(binary),
            *(["--input-grad"] if args.input_grad else []),
            "--reps",
            str(args.reps),
            "--min-time",
            str(args.min_time),
            "--sizes",
        ] + [",".join(map(str, s)) for s in sizes]
        out = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
        all_ok &= train_report(json.loads(out))
    print(f"\nLoad average at the end: {os.getloadavg()[0]:.1f}")
    return 0 if all_ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=str(ROOT / "build"), help="CMake build directory")
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    p.add_argument("--reps", type=int, default=5, help="samples per framework and size")
    p.add_argument("--min-time", type=float, default=0.3, help="seconds per sample")
    p.add_argument("--sizes", nargs="*", default=None, help="T,D,H triples (default: the grid)")
    p.add_argument("--memory", action="store_true", help="also print the peak-memory table")
    p.add_argument(
        "--omp-wait-policy",
        choices=["active", "passive"],
        default=None,
        help="set OMP_WAIT_POLICY for the workers (only PyTorch uses OpenMP; on a "
        "busy machine its spinning idle threads slow it down a lot at 2 threads)",
    )
    p.add_argument(
        "--train",
        action="store_true",
        help="time one training step (forward, backward, AdamW) instead of the forward",
    )
    p.add_argument(
        "--input-grad",
        action="store_true",
        help="--train: PyTorch's x requires grad, so both sides compute dL/dx "
        "(xencoder's backward always returns it; by default PyTorch skips it)",
    )
    p.add_argument("--train-worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(
        "--batch",
        type=int,
        choices=[1, 8],
        default=1,
        help="sequences per forward (8: BM_EncoderLayerForwardBatch8)",
    )
    p.add_argument("--bench", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.sizes = [tuple(int(v) for v in s.split(",")) for s in args.sizes] if args.sizes else GRID

    if args.train_worker:
        args.threads = int(args.threads)
        train_worker(args)
        return 0
    if args.worker:
        args.threads = int(args.threads)
        worker(args)
        return 0

    build = Path(args.build)
    binary = build / "bench" / "xencoder_bench"
    if not binary.exists():
        sys.exit(f"{binary} not found: build first (cmake --build {build} -j2)")
    if args.train:
        return train_main(args, binary)
    cpu = next(
        (
            l.split(":", 1)[1].strip()
            for l in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
            if l.startswith("Model name")
        ),
        "?",
    )
    print(
        f"## xencoder vs PyTorch: one TransformerEncoderLayer forward, batch {args.batch}, F = 4·D, "
        f"post-norm, relu, float32, eval, no grad\n"
    )
    print(
        f"CPU: {cpu}, {os.cpu_count()} logical CPUs; load average at start "
        f"{os.getloadavg()[0]:.1f}; {args.reps} samples of >= {args.min_time} s per cell, "
        f"medians; OMP_WAIT_POLICY={args.omp_wait_policy or os.environ.get('OMP_WAIT_POLICY', '(unset)')}"
    )
    all_ok = True
    for n in [int(v) for v in args.threads.split(",")]:
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(n), OMP_NUM_THREADS=str(n))
        if args.omp_wait_policy:
            env["OMP_WAIT_POLICY"] = args.omp_wait_policy
        cmd = [
            sys.executable,
            __file__,
            "--worker",
            "--threads",
            str(n),
            "--bench",
            str(binary),
            "--reps",
            str(args.reps),
            "--min-time",
            str(args.min_time),
            "--batch",
            str(args.batch),
            "--sizes",
        ] + [",".join(map(str, s)) for s in args.sizes]
        out = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE, text=True).stdout
        all_ok &= report(json.loads(out))
    print(f"\nLoad average at the end: {os.getloadavg()[0]:.1f}")
    if args.memory:
        memory_table(build, [512, 1024, 2048, 4096, 8192, 32768], 512, 8)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())

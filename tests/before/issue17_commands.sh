#!/bin/bash
# Issue 17's command lines, run against the programs of the code before the fix (63280be), each
# under an address-space cap of 4 GiB and a timeout of 120 s, printing its exit, seconds, peak
# resident memory (GNU time) and the last line of its stderr. Not part of ctest: it is the record
# behind tests/README.md's "Failed before" table, for a reviewer to rerun.
#
#   git worktree add --detach /work/before 63280be
#   cmake -S /work/before -B /work/before/build -DCMAKE_BUILD_TYPE=Release -DXENC_BUILD_BENCH=OFF \
#         -DXENC_BUILD_NOTEBOOK_TESTS=OFF && cmake --build /work/before/build -j2 --target \
#         encode init_encoder attention_map extrapolate train_order word_order
#   bash tests/before/issue17_commands.sh /work/before/build /tmp/issue17_before
#
# Needs /usr/bin/python3 with NumPy (the crafted inputs), GNU time and prlimit.
set -u
build=${1:?old build directory}
work=${2:?scratch directory}
apps=$build/apps
mkdir -p "$work" && cd "$work" || exit 1

# run NAME CMD...: CMD under 4 GiB of address space and 120 s (TIMEOUT=seconds to change it);
# one summary line.
run() {
  local name=$1
  shift
  prlimit --as=$((4 << 30)) /usr/bin/time -v -o "$name.time" timeout "${TIMEOUT:-120}" "$@" \
    >"$name.out" 2>"$name.err"
  local rc=$?
  local peak secs
  peak=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$name.time")
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$name.time")
  printf '%-28s exit %3d  %9s  peak %5s MiB  stderr: %s\n' "$name" "$rc" "$secs" "$peak" \
    "$(tail -c 300 "$name.err" | tail -n 1)"
}

# ---- inputs ----------------------------------------------------------------------------------
/usr/bin/python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(0)
# X for xenc-encode: T = 20,000 (640 KB) and T = 100,000 (3.2 MB), D = 8
for t in (20000, 100000):
    np.save(f"x{t}.npy", rng.standard_normal((t, 8)).astype(np.float32))
# one encoder layer, D = 8, F = 30,000,000: zeros, compressed (the issue's 4 MB .npz)
D, F = 8, 30000000
sd = {
    "layers.0.self_attn.in_proj_weight": np.zeros((3 * D, D), np.float32),
    "layers.0.self_attn.in_proj_bias": np.zeros(3 * D, np.float32),
    "layers.0.self_attn.out_proj.weight": np.zeros((D, D), np.float32),
    "layers.0.self_attn.out_proj.bias": np.zeros(D, np.float32),
    "layers.0.linear1.weight": np.zeros((F, D), np.float32),
    "layers.0.linear1.bias": np.zeros(F, np.float32),
    "layers.0.linear2.weight": np.zeros((D, F), np.float32),
    "layers.0.linear2.bias": np.zeros(D, np.float32),
}
for n in ("norm1", "norm2"):
    sd[f"layers.0.{n}.weight"] = np.ones(D, np.float32)
    sd[f"layers.0.{n}.bias"] = np.zeros(D, np.float32)
np.savez_compressed("huge_ff.npz", **sd)
PY
stat -c 'input %n %s bytes' x20000.npy x100000.npy huge_ff.npz
"$apps/encode/xenc-init-encoder" --d-model 8 --heads 2 --dim-feedforward 16 --output w.npz >/dev/null
"$apps/train_order/xenc-train-order" --schemes none --epochs 1 --quiet --svg-dir '' --save ck >/dev/null
sentence() { python3 -c "import sys; print(' '.join(['a'] * int(sys.argv[1])))" "$1"; }

# ---- section 2: resources --------------------------------------------------------------------
run encode_T20000 "$apps/encode/xenc-encode" --weights w.npz --heads 2 --input x20000.npy --output y.npy
run encode_T100000 "$apps/encode/xenc-encode" --weights w.npz --heads 2 --input x100000.npy --output y.npy
run encode_F30M "$apps/encode/xenc-encode" --weights huge_ff.npz --heads 2 --input x20000.npy --output y.npy
run attention_map_F30M "$apps/attention_map/xenc-attention-map" --weights huge_ff.npz --heads 2 --svg-dir ''
run sentence_40000 "$apps/train_order/xenc-train-order" --load ck/none.npz --sentence "$(sentence 40000)"
run sentence_131000 "$apps/train_order/xenc-train-order" --load ck/none.npz --sentence "$(python3 -c "print('.' * 131000)")"
run extrapolate_big "$apps/extrapolate/xenc-extrapolate" --train-length 256 --batch-size 4096 \
  --d-model 512 --ff 4096 --layers 12 --svg-dir ''

# ---- section 5: progress and time ---------------------------------------------------------------
# on a terminal (script(1) gives the program a pty), 30 s each: what the progress line says (the
# peak printed is script's own: the program is killed before script could wait for it)
TIMEOUT=30 run extrapolate_eta_tty script -qfec "$apps/extrapolate/xenc-extrapolate --epochs 1000 \
--train-sequences 100000 --d-model 128 --ff 512 --layers 12 --heads 8 --svg-dir ''" /dev/null
printf '%-28s last progress line: %s\n' "" "$(tr '\r' '\n' <extrapolate_eta_tty.out | sed 's/\x1b\[K//g' | grep ETA | tail -n 1)"
TIMEOUT=30 run init_encoder_40_tty script -qfec "$apps/encode/xenc-init-encoder --layers 40 \
--d-model 256 --heads 2 --dim-feedforward 1024 --train-steps 100000 --output w40.npz" /dev/null
printf '%-28s last progress line: %s\n' "" "$(tr '\r' '\n' <init_encoder_40_tty.out | grep -v '^$' | tail -n 1)"

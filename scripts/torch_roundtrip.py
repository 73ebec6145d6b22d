#!/usr/bin/python3
"""Weights built and trained in xencoder load into PyTorch and give the same outputs.

For a few encoder configurations this script
  1. runs build/apps/encode/xenc-init-encoder: xencoder builds a TransformerEncoder with its own
     seeded initialisation, trains it for some Adam steps, saves the state_dict as .npz;
  2. builds the same torch.nn.TransformerEncoder (batch_first=True, dropout 0) and calls
     load_state_dict(..., strict=True) with the arrays of that file;
  3. runs build/apps/encode/xenc-encode on random X (with a padding mask) and compares its Y with
     PyTorch's output at every non-padded position (bound: 1e-4 absolute).

    cmake --build build -j2 --target encode init_encoder
    /usr/bin/python3 scripts/torch_roundtrip.py [--build build]

Exit status 0 when every configuration matches, 1 otherwise.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import torch

# 1.13 warns that nested tensors (its fast path for padded batches) are a prototype
warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors")

TOL = 1e-4

# layers, D, heads, F, activation, norm_first, final_norm, eps
CONFIGS = [
    (2, 8, 2, 16, "relu", False, False, 1e-5),
    (3, 12, 3, 24, "gelu", True, True, 1e-6),
    (1, 16, 8, 32, "gelu", False, True, 1e-5),
]


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{result.stderr}")
    return result.stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--build", default=os.path.join(root, "build"))
    args = parser.parse_args()
    init_app = os.path.join(args.build, "apps", "encode", "xenc-init-encoder")
    encode_app = os.path.join(args.build, "apps", "encode", "xenc-encode")
    rng = np.random.default_rng(0)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for i, (layers, D, H, F, act, norm_first, final_norm, eps) in enumerate(CONFIGS):
            name = (
                f"{layers} layer(s), D={D}, H={H}, F={F}, {act}, "
                f"{'pre' if norm_first else 'post'}-norm, final norm {final_norm}, eps {eps}"
            )
            print(f"== {name}")
            w = os.path.join(tmp, f"w{i}.npz")
            cmd = [
                init_app,
                "--layers",
                str(layers),
                "--d-model",
                str(D),
                "--heads",
                str(H),
                "--dim-feedforward",
                str(F),
                "--activation",
                act,
                "--layer-norm-eps",
                str(eps),
                "--seed",
                str(i),
                "--train-steps",
                "20",
                "--output",
                w,
            ]
            cmd += ["--norm-first"] if norm_first else []
            cmd += ["--final-norm", "--compressed"] if final_norm else []
            print("   xencoder:", run(cmd).replace("\n", "\n   xencoder: "))

            # PyTorch takes the file with load_state_dict (strict: same keys, same shapes)
            layer = torch.nn.TransformerEncoderLayer(
                D,
                H,
                F,
                dropout=0.0,
                activation=act,
                layer_norm_eps=eps,
                batch_first=True,
                norm_first=norm_first,
            )
            norm = torch.nn.LayerNorm(D, eps=eps) if final_norm else None
            model = torch.nn.TransformerEncoder(layer, layers, norm=norm).eval()
            state = {k: torch.from_numpy(v) for k, v in np.load(w).items()}
            result = model.load_state_dict(state, strict=True)
            print(
                f"   torch.load_state_dict: {len(state)} tensors, missing {result.missing_keys}, "
                f"unexpected {result.unexpected_keys}"
            )

            # the same X and padding mask through both
            B, T = 3, 7
            x = rng.standard_normal((B, T, D)).astype(np.float32)
            mask = np.zeros((B, T), dtype=bool)
            mask[1, 5:] = True
            mask[2, 3:] = True
            np.save(os.path.join(tmp, "x.npy"), x)
            np.save(os.path.join(tmp, "m.npy"), mask)
            y_path = os.path.join(tmp, "y.npy")
            cmd = [
                encode_app,
                "--weights",
                w,
                "--heads",
                str(H),
                "--activation",
                act,
                "--layer-norm-eps",
                str(eps),
                "--input",
                os.path.join(tmp, "x.npy"),
                "--padding-mask",
                os.path.join(tmp, "m.npy"),
                "--output",
                y_path,
            ]
            cmd += ["--norm-first"] if norm_first else []
            run(cmd)
            y_xenc = np.load(y_path)
            with torch.no_grad():
                y_torch = model(
                    torch.from_numpy(x), src_key_padding_mask=torch.from_numpy(mask)
                ).numpy()
            err = float(np.abs(y_xenc - y_torch)[~mask].max())
            verdict = "OK" if err <= TOL else "MISMATCH"
            ok = ok and err <= TOL
            print(
                f"   encode vs torch at {int((~mask).sum())} real positions: "
                f"max |diff| = {err:.2e} (bound {TOL:g}) {verdict}"
            )
    print("all configurations match" if ok else "some configurations differ")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Reference data for tests/io: PyTorch 1.13 encoders, layers and attention modules with random
weights, their inputs and outputs, written as .npz/.npy with NumPy; plus malformed files for
the error tests. The C++ tests (test_io, and the encode app's ctest) need no Python.

    /usr/bin/python3 tests/io/generate.py        # rewrites tests/io/data/

Each configuration axis of the parity claim is covered by at least one case (not the full
cross product): post/pre-norm, relu/gelu, 1..6 layers, 1..8 heads, with/without final norm,
several eps, with/without padding mask (right-aligned and scattered), T from 1 to 512,
B from 1 to 8, float32/float64 inputs, savez/savez_compressed, single-layer and stack keys.

References: the model runs in evaluation mode under torch.no_grad() (the 1.13 fast path, and
for post-norm stacks with a right-aligned mask the nested-tensor path, which returns zeros at
padded positions); the script checks that it agrees with the plain path (train mode with
dropout 0) at every non-padded position before writing anything.
"""
import copy
import json
import os
import shutil
import warnings

import numpy as np
import torch

# 1.13 warns that nested tensors (its fast path for padded batches) are a prototype
warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors")

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")

torch.manual_seed(1234)
rng = np.random.default_rng(1234)


def randomize(module):
    """Every parameter random (PyTorch's init leaves biases 0 and norm weights 1, which would not
    show a bias or norm weight loaded into the wrong place)."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.3 * torch.randn_like(p))
            elif name.endswith("bias"):
                p.copy_(0.3 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) / np.sqrt(p.shape[1]))


def make_mask(kind, B, T):
    """None, 'right' (padding at the end; row 0 unpadded) or 'scattered' (anywhere)."""
    if kind is None:
        return None
    m = np.zeros((B, T), dtype=bool)
    for b in range(B):
        if kind == "right":
            length = T if b == 0 else int(rng.integers(1, max(T, 2)))  # 1 .. T-1
            m[b, length:] = True
        else:
            m[b] = rng.random(T) < 0.35
            m[b, int(rng.integers(0, T))] = False  # at least one real position
    assert m.any() and not m.all(axis=1).any(), f"mask {kind} {B}x{T} pads nothing or a whole row"
    return m


def state_arrays(module, dtype=np.float32):
    return {k: v.detach().numpy().astype(dtype) for k, v in module.state_dict().items()}


def save_npz(path, arrays, compressed):
    (np.savez_compressed if compressed else np.savez)(path, **arrays)


def run_encoder(module, x, mask):
    """(fast-path output, plain-path output) for the same module and inputs."""
    xt = torch.from_numpy(x.astype(np.float32))
    mt = None if mask is None else torch.from_numpy(mask)
    module.eval()
    with torch.no_grad():
        fast = module(xt, src_key_padding_mask=mt)
    module.train()  # dropout is 0: train mode only switches the fast paths off
    plain = module(xt, src_key_padding_mask=mt).detach()
    module.eval()
    return fast.numpy(), plain.numpy()


def check_agree(name, a, b, mask):
    keep = np.ones(a.shape[:2], dtype=bool) if mask is None else ~mask
    err = np.abs(a - b)[keep].max()
    assert err < 1e-5, f"{name}: PyTorch fast and plain paths differ by {err}"


def check_conditioning(name, module, x, mask, y32):
    """A fixture is only a fair test of 1e-4 parity if PyTorch's own float32 result is well
    within it of the exact (float64) one. With tiny D (D = 2) LayerNorm is ill-conditioned
    (|dy/dx| ~ 1/(2 sqrt(eps)) when the two entries nearly coincide): any float32 rounding is
    amplified ~150x, and PyTorch's own error reached half the tolerance. Such cases are refused."""
    m64 = copy.deepcopy(module).double().eval()
    with torch.no_grad():
        y64 = m64(
            torch.from_numpy(x.astype(np.float64)),
            src_key_padding_mask=None if mask is None else torch.from_numpy(mask),
        ).numpy()
    keep = np.ones(y32.shape[:2], dtype=bool) if mask is None else ~mask
    err = np.abs(y32 - y64)[keep].max()
    assert err < 2.5e-5, f"{name}: PyTorch float32 is {err} from float64: ill-conditioned case"
    return float(err)


# ---- encoder and single-layer cases ----------------------------------------------------------
# name, layers (0 = a single TransformerEncoderLayer), D, H, F, norm_first, activation,
# final_norm, eps, T, B, mask, x dtype, weights dtype, compressed
CASES = [
    ("post_relu_l2_h2", 2, 8, 2, 16, False, "relu", False, 1e-5, 5, 2, None, "f4", "f4", False),
    ("pre_relu_l2_h2", 2, 8, 2, 16, True, "relu", False, 1e-5, 5, 2, None, "f4", "f4", True),
    ("post_gelu_l1_h4", 1, 8, 4, 32, False, "gelu", True, 1e-5, 7, 3, "right", "f8", "f8", False),
    ("pre_gelu_l3_h1", 3, 6, 1, 12, True, "gelu", True, 1e-6, 6, 2, "right", "f4", "f4", True),
    (
        "post_relu_l4_h3_final",
        4,
        6,
        3,
        12,
        False,
        "relu",
        True,
        1e-3,
        9,
        4,
        "right",
        "f4",
        "f4",
        False,
    ),
    ("pre_relu_l5_h5", 5, 10, 5, 8, True, "relu", False, 1e-5, 4, 5, "scattered", "f4", "f4", True),
    ("post_gelu_l6_h6", 6, 6, 6, 8, False, "gelu", False, 1e-5, 3, 6, None, "f8", "f4", True),
    ("pre_gelu_l6_h8_final", 6, 8, 8, 8, True, "gelu", True, 1e-5, 5, 7, "right", "f4", "f4", True),
    (
        "post_relu_l2_h7",
        2,
        14,
        7,
        16,
        False,
        "relu",
        False,
        1e-5,
        6,
        8,
        "scattered",
        "f4",
        "f4",
        False,
    ),
    ("post_gelu_l3_h8_eps01", 3, 8, 8, 16, False, "gelu", True, 0.1, 5, 1, None, "f4", "f4", True),
    (
        "pre_relu_l1_h2_eps1e-12",
        1,
        8,
        2,
        8,
        True,
        "relu",
        True,
        1e-12,
        5,
        2,
        "right",
        "f4",
        "f4",
        False,
    ),
    ("post_relu_l3_h4_t1", 3, 8, 4, 16, False, "relu", True, 1e-5, 1, 3, None, "f4", "f4", False),
    (
        "pre_gelu_l2_h2_t2_mask",
        2,
        8,
        2,
        16,
        True,
        "gelu",
        False,
        1e-5,
        2,
        2,
        "right",
        "f4",
        "f4",
        False,
    ),
    (
        "post_relu_l2_h2_t64",
        2,
        8,
        2,
        16,
        False,
        "relu",
        True,
        1e-5,
        64,
        2,
        "right",
        "f4",
        "f4",
        True,
    ),
    ("post_gelu_l2_h2_t512", 2, 4, 2, 8, False, "gelu", True, 1e-5, 512, 1, None, "f4", "f4", True),
    (
        "pre_relu_l1_h1_t512_mask",
        1,
        4,
        1,
        8,
        True,
        "relu",
        False,
        1e-5,
        512,
        2,
        "right",
        "f4",
        "f4",
        True,
    ),
    (
        "post_relu_l1_h2_b8_mask",
        1,
        8,
        2,
        16,
        False,
        "relu",
        False,
        1e-5,
        4,
        8,
        "right",
        "f4",
        "f4",
        False,
    ),
    (
        "layer_post_relu_h2",
        0,
        8,
        2,
        16,
        False,
        "relu",
        False,
        1e-5,
        5,
        2,
        "right",
        "f4",
        "f4",
        False,
    ),
    (
        "layer_pre_gelu_h4",
        0,
        8,
        4,
        12,
        True,
        "gelu",
        False,
        1e-4,
        6,
        3,
        "scattered",
        "f8",
        "f4",
        True,
    ),
]


def build_encoder(layers, D, H, F, norm_first, act, final_norm, eps):
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
    if layers == 0:
        module = layer
    else:
        norm = torch.nn.LayerNorm(D, eps=eps) if final_norm else None
        module = torch.nn.TransformerEncoder(layer, layers, norm=norm)
    randomize(module)
    return module


def encoder_cases(manifest):
    for (
        name,
        layers,
        D,
        H,
        F,
        norm_first,
        act,
        final_norm,
        eps,
        T,
        B,
        mask_kind,
        x_dtype,
        w_dtype,
        compressed,
    ) in CASES:
        module = build_encoder(layers, D, H, F, norm_first, act, final_norm, eps)
        x = rng.standard_normal((B, T, D)).astype(np.float32)
        mask = make_mask(mask_kind, B, T)
        fast, plain = run_encoder(module, x, mask)
        check_agree(name, fast, plain, mask)
        torch_err = check_conditioning(name, module, x, mask, plain)
        save_npz(
            os.path.join(DATA, name + ".npz"),
            state_arrays(module, np.float64 if w_dtype == "f8" else np.float32),
            compressed,
        )
        io = {"x": x.astype(np.float64 if x_dtype == "f8" else np.float32), "y": fast}
        if mask is not None:
            io["mask"] = mask
        np.savez_compressed(os.path.join(DATA, name + "_io.npz"), **io)
        manifest["encoder"].append(
            {
                "name": name,
                "single_layer": layers == 0,
                "num_layers": max(layers, 1),
                "d_model": D,
                "nhead": H,
                "dim_feedforward": F,
                "norm_first": norm_first,
                "activation": act,
                "final_norm": final_norm and layers > 0,
                "eps": eps,
                "T": T,
                "B": B,
                "mask": mask_kind or "none",
                "torch_f32_vs_f64": torch_err,
            }
        )


# ---- MultiheadAttention alone ----------------------------------------------------------------
# name, D, H, B, Tq, Tk (0 = self-attention), key padding mask, bias
MHA_CASES = [
    ("mha_self_h1", 4, 1, 2, 5, 0, None, True),
    ("mha_self_h2_mask", 8, 2, 3, 6, 0, "scattered", True),
    ("mha_self_h8_t24_mask", 16, 8, 2, 24, 0, "right", True),
    ("mha_cross_h4", 8, 4, 2, 3, 7, "right", True),
    ("mha_self_h3_nobias", 6, 3, 1, 4, 0, None, False),
]


def mha_cases(manifest):
    for name, D, H, B, Tq, Tk, mask_kind, bias in MHA_CASES:
        mha = torch.nn.MultiheadAttention(D, H, dropout=0.0, bias=bias, batch_first=True)
        randomize(mha)
        q = rng.standard_normal((B, Tq, D)).astype(np.float32)
        if Tk == 0:
            k = v = q
        else:
            k = rng.standard_normal((B, Tk, D)).astype(np.float32)
            v = rng.standard_normal((B, Tk, D)).astype(np.float32)
        mask = make_mask(mask_kind, B, Tk or Tq)
        qt, kt, vt = (torch.from_numpy(a) for a in (q, k, v))
        if Tk == 0:
            kt = vt = qt  # the same tensor: PyTorch's self-attention path
        mt = None if mask is None else torch.from_numpy(mask)
        mha.eval()
        with torch.no_grad():
            y, w = mha(
                qt, kt, vt, key_padding_mask=mt, need_weights=True, average_attn_weights=False
            )
        y2, w2 = mha(qt, kt, vt, key_padding_mask=mt, need_weights=True, average_attn_weights=False)
        assert np.abs(y.numpy() - y2.detach().numpy()).max() < 1e-5
        assert np.abs(w.numpy() - w2.detach().numpy()).max() < 1e-6
        save_npz(os.path.join(DATA, name + ".npz"), state_arrays(mha), False)
        io = {"query": q, "y": y.numpy(), "attn": w.numpy()}
        if Tk:
            io["key"], io["value"] = k, v
        if mask is not None:
            io["mask"] = mask
        np.savez_compressed(os.path.join(DATA, name + "_io.npz"), **io)
        manifest["mha"].append(
            {
                "name": name,
                "d_model": D,
                "nhead": H,
                "self": Tk == 0,
                "bias": bias,
                "mask": mask_kind or "none",
            }
        )


# ---- the encode app, end to end (plain .npy inputs and outputs) ------------------------------
def app_cases(manifest):
    # a: pre-norm gelu stack with final norm, X float64 [T, D], no mask
    enc = build_encoder(2, 8, 4, 16, True, "gelu", True, 1e-6)
    x = rng.standard_normal((6, 8))
    fast, plain = run_encoder(enc, x[None].astype(np.float32), None)
    check_agree("app_a", fast, plain, None)
    np.savez(os.path.join(DATA, "app_a.npz"), **state_arrays(enc))
    np.save(os.path.join(DATA, "app_a_x.npy"), x)  # float64
    np.save(os.path.join(DATA, "app_a_y.npy"), fast[0])
    # b: post-norm relu stack, X float32 [B, T, D], mask bool [B, T] (right-aligned: nested path)
    enc = build_encoder(3, 8, 2, 16, False, "relu", False, 1e-5)
    x = rng.standard_normal((3, 5, 8)).astype(np.float32)
    m = make_mask("right", 3, 5)
    fast, plain = run_encoder(enc, x, m)
    check_agree("app_b", fast, plain, m)
    np.savez_compressed(os.path.join(DATA, "app_b.npz"), **state_arrays(enc))
    np.save(os.path.join(DATA, "app_b_x.npy"), x)
    np.save(os.path.join(DATA, "app_b_mask.npy"), m)
    np.save(os.path.join(DATA, "app_b_y.npy"), fast)
    # c: a single TransformerEncoderLayer, X float32 [B, T, D], mask bool [T] (every batch row)
    enc = build_encoder(0, 4, 2, 8, False, "gelu", False, 1e-5)
    x = rng.standard_normal((2, 4, 4)).astype(np.float32)
    m1 = np.array([False, False, True, False])
    m = np.broadcast_to(m1, (2, 4)).copy()
    fast, plain = run_encoder(enc, x, m)
    check_agree("app_c", fast, plain, m)
    np.savez(os.path.join(DATA, "app_c.npz"), **state_arrays(enc))
    np.save(os.path.join(DATA, "app_c_x.npy"), x)
    np.save(os.path.join(DATA, "app_c_mask.npy"), m1)
    np.save(os.path.join(DATA, "app_c_y.npy"), fast)
    manifest["app"] = [
        {
            "name": "app_a",
            "heads": 4,
            "activation": "gelu",
            "norm_first": True,
            "eps": 1e-6,
            "mask": False,
        },
        {
            "name": "app_b",
            "heads": 2,
            "activation": "relu",
            "norm_first": False,
            "eps": 1e-5,
            "mask": True,
        },
        {
            "name": "app_c",
            "heads": 2,
            "activation": "gelu",
            "norm_first": False,
            "eps": 1e-5,
            "mask": True,
        },
    ]


# ---- files numpy writes that xencoder must refuse (or accept) --------------------------------
def format_files():
    d = os.path.join(DATA, "format")
    os.makedirs(d, exist_ok=True)
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    np.save(os.path.join(d, "f4_2x3.npy"), a)
    np.save(os.path.join(d, "f8_2x3.npy"), a.astype(np.float64))
    np.save(os.path.join(d, "f4_scalar.npy"), np.float32(2.5))
    np.save(os.path.join(d, "f4_empty_0x3.npy"), np.zeros((0, 3), np.float32))
    with open(os.path.join(d, "f4_2x3_v2.npy"), "wb") as f:
        np.lib.format.write_array(f, a, version=(2, 0))
    np.save(os.path.join(d, "i8_2x3.npy"), np.arange(6, dtype=np.int64).reshape(2, 3))
    np.save(os.path.join(d, "f2_2x3.npy"), a.astype(np.float16))
    np.save(os.path.join(d, "f4_2x3_fortran.npy"), np.asfortranarray(a))
    np.save(os.path.join(d, "f4be_2x3.npy"), a.astype(">f4"))
    np.save(os.path.join(d, "b1_2x3.npy"), np.array([[True, False, True], [False, False, True]]))
    np.save(os.path.join(d, "struct.npy"), np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
    with open(os.path.join(d, "f4_2x3.npy"), "rb") as f:
        whole = f.read()
    with open(os.path.join(d, "f4_2x3_truncated.npy"), "wb") as f:
        f.write(whole[:-5])  # 19 of the 24 data bytes
    with open(os.path.join(d, "f4_2x3_header_cut.npy"), "wb") as f:
        f.write(whole[:40])
    # archives: stored and deflated, float64, a member of another dtype, corrupt, truncated
    np.savez(os.path.join(d, "stored.npz"), a=a, b=np.float32([1, 2]))
    np.savez_compressed(os.path.join(d, "deflated.npz"), a=a, b=np.float32([1, 2]))
    np.savez(os.path.join(d, "f8.npz"), a=a.astype(np.float64))
    np.savez(os.path.join(d, "int_member.npz"), a=a, count=np.int64([3]))
    np.savez(os.path.join(d, "fortran_member.npz"), a=np.asfortranarray(a))
    with open(os.path.join(d, "stored.npz"), "rb") as f:
        z = bytearray(f.read())
    with open(os.path.join(d, "truncated.npz"), "wb") as f:
        f.write(bytes(z[: len(z) // 2]))
    # flip one data byte of member a (stored, so its data is in the clear): a CRC-32 mismatch
    pos = z.find(a.tobytes())
    assert pos > 0
    z[pos + 1] ^= 0x40
    with open(os.path.join(d, "crc.npz"), "wb") as f:
        f.write(bytes(z))
    with open(os.path.join(d, "not_a_zip.npz"), "wb") as f:
        f.write(b"this is not a zip archive\n")


def main():
    if os.path.isdir(DATA):
        shutil.rmtree(DATA)
    os.makedirs(DATA)
    manifest = {
        "generator": "tests/io/generate.py",
        "torch": torch.__version__,
        "numpy": np.__version__,
        "tolerance": 1e-4,
        "encoder": [],
        "mha": [],
    }
    encoder_cases(manifest)
    mha_cases(manifest)
    app_cases(manifest)
    format_files()
    with open(os.path.join(DATA, "cases.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    total = sum(os.path.getsize(os.path.join(r, n)) for r, _, ns in os.walk(DATA) for n in ns)
    print(f"wrote {DATA}: {total} bytes")


if __name__ == "__main__":
    main()

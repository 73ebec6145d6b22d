#!/usr/bin/python3
"""Reference values for the xencoder test suite, computed independently with PyTorch / NumPy.

Run with Debian's interpreter (python3-torch 1.13, python3-numpy):

    /usr/bin/python3 tests/reference/generate.py

It writes one small JSON file per component into tests/reference/data/. The C++ tests read
them with nlohmann_json and need no Python. Every file holds the *inputs* (generated here from
a fixed seed, rounded to float32 so that C++ feeds exactly the same numbers) and the outputs
and gradients PyTorch computes from them in float64.

Array format: {"shape": [2, 3], "data": [row-major values]}; booleans and ids are integers.
"""
import json
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
rng = np.random.default_rng(20240601)


def f32(shape, scale=1.0):
    """Random float32 inputs (normal, times scale)."""
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def t64(a):
    """float32 numpy array -> float64 torch tensor holding exactly the same values."""
    return torch.tensor(np.asarray(a, dtype=np.float64))


def arr(a):
    """Encode an array: float32 values printed with 9 significant digits (round-trip exact)."""
    a = a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
    shape = list(a.shape)
    flat = a.reshape(-1)
    if a.dtype == np.bool_:
        data = [int(v) for v in flat]
    elif np.issubdtype(a.dtype, np.integer):
        data = [int(v) for v in flat]
    else:
        data = [float("%.9g" % np.float32(v)) for v in flat]
    return {"shape": shape, "data": data}


def state(module):
    return {k: arr(v) for k, v in module.state_dict().items()}


def grads(module):
    return {k: arr(p.grad) for k, p in module.named_parameters()}


def write(name, description, content):
    content = {
        "description": description,
        "generator": "tests/reference/generate.py",
        "torch": torch.__version__,
        "numpy": np.__version__,
        **content,
    }
    path = os.path.join(OUT, name + ".json")
    with open(path, "w") as f:
        json.dump(content, f, separators=(",", ":"))
        f.write("\n")
    print("%-28s %7d bytes" % (name + ".json", os.path.getsize(path)))


def randomize_(module):
    """PyTorch zero-initialises some biases and sets LayerNorm to (1, 0): give every parameter
    random values so that each one is actually exercised by the comparison."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if "norm" in name and name.endswith("weight"):
                p.copy_(torch.tensor(1.0 + 0.2 * rng.standard_normal(p.shape)))
            else:
                p.copy_(torch.tensor(f32(p.shape, 0.3).astype(np.float64)))
            # store float32-representable values only
            p.copy_(p.float().double())


# ---- ops -------------------------------------------------------------------------------


def gen_linear():
    x, w, b = f32((2, 3, 4)), f32((5, 4), 0.5), f32((5,), 0.5)
    dy = f32((2, 3, 5))
    xt_, wt, bt = t64(x).requires_grad_(), t64(w).requires_grad_(), t64(b).requires_grad_()
    y = F.linear(xt_, wt, bt)
    y.backward(t64(dy))
    write(
        "linear",
        "torch.nn.functional.linear(x, weight, bias) and its gradients for dy",
        {
            "x": arr(x),
            "weight": arr(w),
            "bias": arr(b),
            "y": arr(y),
            "dy": arr(dy),
            "dx": arr(xt_.grad),
            "dweight": arr(wt.grad),
            "dbias": arr(bt.grad),
        },
    )


def gen_softmax():
    x = f32((4, 6), 2.0)
    mask = np.zeros((4, 6), dtype=bool)  # true = set to -inf before the softmax
    mask[1, [0, 3]] = True
    mask[3, [1, 2, 5]] = True
    dy = f32((4, 6))
    xm = t64(x).masked_fill(torch.tensor(mask), float("-inf")).requires_grad_()
    y = torch.softmax(xm, dim=-1)
    y.backward(t64(dy))
    write(
        "softmax",
        "torch.softmax(x.masked_fill(mask, -inf), -1) and dx for dy",
        {"x": arr(x), "mask": arr(mask), "y": arr(y), "dy": arr(dy), "dx": arr(xm.grad)},
    )


def gen_layer_norm():
    cases = {}
    for name, offset, scale in [("plain", 0.0, 1.0), ("offset", 10.0, 0.1)]:
        x = (f32((2, 3, 6), scale) + np.float32(offset)).astype(np.float32)
        w = (1.0 + f32((6,), 0.3)).astype(np.float32)
        b = f32((6,), 0.3)
        dy = f32((2, 3, 6))
        xt_, wt, bt = t64(x).requires_grad_(), t64(w).requires_grad_(), t64(b).requires_grad_()
        y = F.layer_norm(xt_, (6,), wt, bt, 1e-5)
        y.backward(t64(dy))
        cases[name] = {
            "x": arr(x),
            "weight": arr(w),
            "bias": arr(b),
            "eps": 1e-5,
            "y": arr(y),
            "dy": arr(dy),
            "dx": arr(xt_.grad),
            "dweight": arr(wt.grad),
            "dbias": arr(bt.grad),
        }
    write(
        "layer_norm",
        "torch.nn.functional.layer_norm over the last axis, eps = 1e-5",
        {"cases": cases},
    )


def gen_activation():
    x = np.linspace(-4.0, 4.0, 17).astype(np.float32)
    x = np.concatenate([x, f32((7,), 2.0)]).astype(np.float32)
    x[8] = np.float32(0.5)  # relu'(0) is a convention: keep x away from 0
    dy = f32(x.shape)
    out = {"x": arr(x), "dy": arr(dy)}
    for name, fn in [("relu", torch.relu), ("gelu", lambda t: F.gelu(t, approximate="none"))]:
        xt_ = t64(x).requires_grad_()
        y = fn(xt_)
        y.backward(t64(dy))
        out[name] = {"y": arr(y), "dx": arr(xt_.grad)}
    write("activation", "torch.relu and F.gelu(approximate='none') with dx for dy", out)


def gen_embedding():
    w = f32((6, 4))
    w[0] = 0.0  # padding row
    ids = np.array([[2, 5, 0], [5, 1, 3]], dtype=np.int64)
    dy = f32((2, 3, 4))
    wt = t64(w).requires_grad_()
    y = F.embedding(torch.tensor(ids), wt, padding_idx=0)
    y.backward(t64(dy))
    write(
        "embedding",
        "F.embedding(ids, weight, padding_idx=0) and dweight for dy",
        {
            "weight": arr(w),
            "ids": arr(ids),
            "padding_idx": 0,
            "y": arr(y),
            "dy": arr(dy),
            "dweight": arr(wt.grad),
        },
    )


def gen_cross_entropy():
    logits = f32((5, 4), 2.0)
    targets = np.array([1, 0, -100, 3, 1], dtype=np.int64)
    lt = t64(logits).requires_grad_()
    loss = F.cross_entropy(lt, torch.tensor(targets), ignore_index=-100)
    loss.backward()
    write(
        "cross_entropy",
        "F.cross_entropy(logits, targets, ignore_index=-100), mean reduction",
        {
            "logits": arr(logits),
            "targets": arr(targets),
            "ignore_index": -100,
            "loss": float(loss),
            "dlogits": arr(lt.grad),
        },
    )


def gen_attention():
    B, H, Tq, Tk, Dh = 2, 2, 4, 5, 3
    q, k, v = f32((B, H, Tq, Dh)), f32((B, H, Tk, Dh)), f32((B, H, Tk, Dh))
    kpm = np.zeros((B, Tk), dtype=bool)
    kpm[1, 3:] = True
    attn_mask = f32((Tq, Tk), 0.5)
    do = f32((B, H, Tq, Dh))
    qt, kt, vt = (t64(a).requires_grad_() for a in (q, k, v))
    s = qt @ kt.transpose(-1, -2) / math.sqrt(Dh) + t64(attn_mask)
    s = s.masked_fill(torch.tensor(kpm)[:, None, None, :], float("-inf"))
    p = torch.softmax(s, dim=-1)
    o = p @ vt
    o.backward(t64(do))
    write(
        "attention",
        "softmax(Q K^T / sqrt(Dh) + attn_mask, key padding -> -inf) V, grads for dO",
        {
            "query": arr(q),
            "key": arr(k),
            "value": arr(v),
            "key_padding_mask": arr(kpm),
            "attn_mask": arr(attn_mask),
            "output": arr(o),
            "weights": arr(p),
            "doutput": arr(do),
            "dquery": arr(qt.grad),
            "dkey": arr(kt.grad),
            "dvalue": arr(vt.grad),
        },
    )


def sinusoid(positions, D):
    """The formula: PE(p, 2i) = sin(p / 10000^(2i/D)), PE(p, 2i+1) = cos(p / 10000^(2i/D))."""
    p = np.asarray(positions, dtype=np.float64)[:, None]
    i = np.arange(D // 2, dtype=np.float64)[None, :]
    angle = p / np.power(10000.0, 2.0 * i / D)
    pe = np.zeros((len(positions), D))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe


def gen_positional():
    write(
        "positional",
        "sinusoidal PE from the formula in NumPy (float64)",
        {
            "table_d6": arr(sinusoid(range(10), 6)),
            "positions_d128": [0, 1, 2, 7, 50, 1000, 12345],
            "table_d128": arr(sinusoid([0, 1, 2, 7, 50, 1000, 12345], 128)),
        },
    )


def gen_rng():
    # std::mt19937(seed) is the reference generator, init_genrand(seed): NumPy's legacy seeding.
    out = {}
    for seed in (0, 42):
        words = np.random.RandomState(seed)._bit_generator.random_raw(16).astype(np.uint64)
        u = (words >> np.uint64(8)).astype(np.float64) * 2.0**-24
        u1, u2 = 1.0 - u[0::2], u[1::2]
        z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * math.pi * u2)
        out[str(seed)] = {"words": [int(w) for w in words], "uniform": arr(u), "normal": arr(z)}
    write(
        "rng",
        "mt19937 raw words (NumPy RandomState legacy seeding), (w >> 8) * 2^-24, and "
        "Box-Muller z = sqrt(-2 ln(1 - u1)) cos(2 pi u2) on consecutive pairs",
        {"seeds": out},
    )


def gen_optim():
    p0 = f32((6,))
    c = np.abs(f32((6,))).astype(np.float32) + np.float32(0.1)
    out = {"p0": arr(p0), "c": arr(c), "steps": 5}
    # loss = sum(c * p^2), so grad = 2 c p
    for name, make in [
        ("adam", lambda ps: torch.optim.Adam(ps, lr=0.1)),
        ("adam_wd", lambda ps: torch.optim.Adam(ps, lr=0.05, weight_decay=0.1)),
        ("sgd_momentum", lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9)),
    ]:
        p = t64(p0).requires_grad_()
        opt = make([p])
        for _ in range(5):
            opt.zero_grad()
            (t64(c) * p * p).sum().backward()
            opt.step()
        out[name] = arr(p)
    write("optim", "torch.optim.Adam / SGD for 5 steps on loss = sum(c * p^2)", out)


# ---- modules ---------------------------------------------------------------------------


def gen_multihead_attention():
    D, H, B, T = 8, 2, 2, 5
    torch.manual_seed(0)
    mha = torch.nn.MultiheadAttention(D, H, batch_first=True).double()
    randomize_(mha)
    out = {"embed_dim": D, "num_heads": H, "state_dict": state(mha)}

    # self-attention with a key padding mask and an additive attention mask
    x = f32((B, T, D))
    kpm = np.zeros((B, T), dtype=bool)
    kpm[1, 3:] = True
    attn_mask = f32((T, T), 0.5)
    dy = f32((B, T, D))
    xt_ = t64(x).requires_grad_()
    y, w = mha(
        xt_,
        xt_,
        xt_,
        key_padding_mask=torch.tensor(kpm),
        attn_mask=t64(attn_mask),
        need_weights=True,
        average_attn_weights=False,
    )
    mha.zero_grad()
    y.backward(t64(dy))
    out["self"] = {
        "x": arr(x),
        "key_padding_mask": arr(kpm),
        "attn_mask": arr(attn_mask),
        "output": arr(y),
        "weights": arr(w),
        "doutput": arr(dy),
        "dx": arr(xt_.grad),
        "grads": grads(mha),
    }

    # general attention: different query, key, value; Tq != Tk
    Tq, Tk = 4, 6
    q, k, v = f32((B, Tq, D)), f32((B, Tk, D)), f32((B, Tk, D))
    kpm2 = np.zeros((B, Tk), dtype=bool)
    kpm2[0, 5] = True
    kpm2[1, 2:] = True
    dy2 = f32((B, Tq, D))
    qt, kt, vt = (t64(a).requires_grad_() for a in (q, k, v))
    y2, w2 = mha(
        qt,
        kt,
        vt,
        key_padding_mask=torch.tensor(kpm2),
        need_weights=True,
        average_attn_weights=False,
    )
    mha.zero_grad()
    y2.backward(t64(dy2))
    out["general"] = {
        "query": arr(q),
        "key": arr(k),
        "value": arr(v),
        "key_padding_mask": arr(kpm2),
        "output": arr(y2),
        "weights": arr(w2),
        "doutput": arr(dy2),
        "dquery": arr(qt.grad),
        "dkey": arr(kt.grad),
        "dvalue": arr(vt.grad),
        "grads": grads(mha),
    }
    write(
        "multihead_attention",
        "torch.nn.MultiheadAttention(8, 2, batch_first=True), float64, random weights; "
        "weights are per head (average_attn_weights=False)",
        out,
    )


def gen_transformer_encoder_layer():
    D, H, F_, B, T = 8, 2, 16, 2, 5
    cases = {}
    for norm_first in (False, True):
        for act in ("relu", "gelu"):
            torch.manual_seed(1)
            layer = torch.nn.TransformerEncoderLayer(
                D, H, F_, dropout=0.1, activation=act, batch_first=True, norm_first=norm_first
            ).double()
            randomize_(layer)
            layer.eval()  # dropout off; gradients stay on, so PyTorch takes the reference path
            x = f32((B, T, D))
            kpm = np.zeros((B, T), dtype=bool)
            kpm[1, 3:] = True
            dy = f32((B, T, D))
            dy[kpm] = 0.0  # the loss ignores padded positions
            xt_ = t64(x).requires_grad_()
            y = layer(xt_, src_key_padding_mask=torch.tensor(kpm))
            y.backward(t64(dy))
            name = ("pre" if norm_first else "post") + "_" + act
            cases[name] = {
                "norm_first": norm_first,
                "activation": act,
                "state_dict": state(layer),
                "x": arr(x),
                "key_padding_mask": arr(kpm),
                "y": arr(y),
                "dy": arr(dy),
                "dx": arr(xt_.grad),
                "grads": grads(layer),
            }
    write(
        "transformer_encoder_layer",
        "torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True) in eval mode, float64, "
        "random weights, key padding mask; dy is zero at padded positions",
        {"d_model": D, "nhead": H, "dim_feedforward": F_, "layer_norm_eps": 1e-5, "cases": cases},
    )


def gen_transformer_encoder():
    D, H, F_, B, T, N = 8, 2, 16, 2, 5, 2
    torch.manual_seed(2)
    layer = torch.nn.TransformerEncoderLayer(
        D, H, F_, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    )
    enc = torch.nn.TransformerEncoder(
        layer, N, norm=torch.nn.LayerNorm(D), enable_nested_tensor=False
    ).double()
    randomize_(enc)
    enc.eval()
    keys = [[k, list(v.shape)] for k, v in enc.state_dict().items()]
    post = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(D, H, F_, batch_first=True), N
    )
    post_keys = [[k, list(v.shape)] for k, v in post.state_dict().items()]
    x = f32((B, T, D))
    kpm = np.zeros((B, T), dtype=bool)
    kpm[0, 4] = True
    dy = f32((B, T, D))
    dy[kpm] = 0.0
    xt_ = t64(x).requires_grad_()
    y = enc(xt_, src_key_padding_mask=torch.tensor(kpm))
    y.backward(t64(dy))
    write(
        "transformer_encoder",
        "torch.nn.TransformerEncoder(pre-norm gelu layer, 2, norm=LayerNorm(8)) and the "
        "state_dict keys of TransformerEncoder(layer, 2) without and with a final norm",
        {
            "d_model": D,
            "nhead": H,
            "dim_feedforward": F_,
            "num_layers": N,
            "keys_with_norm": keys,
            "keys_without_norm": post_keys,
            "state_dict": state(enc),
            "x": arr(x),
            "key_padding_mask": arr(kpm),
            "y": arr(y),
            "dy": arr(dy),
            "dx": arr(xt_.grad),
            "grads": grads(enc),
        },
    )


def gen_adamw():
    """torch.optim.AdamW on two parameters (a vector and a matrix) for 1 and 10 steps.

    loss = sum(c * p^2) + sum(q^3) / 3, so grad p = 2 c p and grad q = q^2; each config
    differs in lr, betas, eps and weight_decay (torch's defaults included)."""
    p0, q0 = f32((6,)), f32((2, 3))
    c = np.abs(f32((6,))).astype(np.float32) + np.float32(0.1)
    configs = {
        "default": dict(lr=1e-3),
        "paper": dict(lr=0.05, betas=(0.9, 0.98), eps=1e-9, weight_decay=0.1),
        "strong_decay": dict(lr=0.1, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.5),
    }
    out = {"p0": arr(p0), "q0": arr(q0), "c": arr(c), "runs": {}}
    for name, kw in configs.items():
        run = {
            "config": {
                "lr": kw["lr"],
                "betas": list(kw.get("betas", (0.9, 0.999))),
                "eps": kw.get("eps", 1e-8),
                "weight_decay": kw.get("weight_decay", 0.01),
            }
        }
        for steps in (1, 10):
            p, q = t64(p0).requires_grad_(), t64(q0).requires_grad_()
            opt = torch.optim.AdamW([p, q], **kw)
            for _ in range(steps):
                opt.zero_grad()
                ((t64(c) * p * p).sum() + (q**3).sum() / 3).backward()
                opt.step()
            run["p_%d" % steps], run["q_%d" % steps] = arr(p), arr(q)
        out["runs"][name] = run
    write("adamw", "torch.optim.AdamW for 1 and 10 steps on loss = sum(c p^2) + sum(q^3)/3", out)


def alibi_get_slopes(n):
    """ALiBi slopes, verbatim from the authors' code (ofirpress/attention_with_linear_biases)."""

    def get_slopes_power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2)
        + alibi_get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


def rope_complex(x, H):
    """RoPE as Meta's LLaMA code writes it: pairs (2i, 2i+1) as complex numbers times e^(i·t·θ_i).
    x: [B, T, D] float64 -> same shape."""
    B, T, D = x.shape
    Dh = D // H
    theta = 10000.0 ** (-torch.arange(0, Dh, 2, dtype=torch.float64) / Dh)
    angles = torch.outer(torch.arange(T, dtype=torch.float64), theta)  # [T, Dh/2]
    rot = torch.polar(torch.ones_like(angles), angles)  # e^(i t θ)
    xc = torch.view_as_complex(x.reshape(B, T, H, Dh // 2, 2).contiguous())
    return torch.view_as_real(xc * rot[None, :, None, :]).reshape(B, T, D)


def attention_with_position(mha, x, kpm, scheme):
    """Self-attention with the in/out projections of `mha`, RoPE on q, k or ALiBi on the scores,
    and a key padding mask (True = padding)."""
    B, T, D = x.shape
    H = mha.num_heads
    Dh = D // H
    qkv = F.linear(x, mha.in_proj_weight, mha.in_proj_bias)
    q, k, v = qkv[..., :D], qkv[..., D : 2 * D], qkv[..., 2 * D :]
    if scheme == "rope":
        q, k = rope_complex(q, H), rope_complex(k, H)
    heads = lambda a: a.reshape(B, T, H, Dh).transpose(1, 2)  # [B, T, D] -> [B, H, T, Dh]
    s = heads(q) @ heads(k).transpose(-1, -2) / math.sqrt(Dh)  # [B, H, T, T]
    if scheme == "alibi":
        m = torch.tensor(alibi_get_slopes(H), dtype=torch.float64)
        pos = torch.arange(T, dtype=torch.float64)
        dist = (pos[:, None] - pos[None, :]).abs()
        s = s - m[:, None, None] * dist[None]  # [H, T, T]
    s = s.masked_fill(torch.tensor(kpm)[:, None, None, :], float("-inf"))
    p = torch.softmax(s, dim=-1)
    ctx = (p @ heads(v)).transpose(1, 2).reshape(B, T, D)
    return mha.out_proj(ctx), p


def gen_position_in_attention():
    D, H, B, T = 8, 2, 2, 5
    torch.manual_seed(1)
    mha = torch.nn.MultiheadAttention(D, H, batch_first=True).double()
    randomize_(mha)
    out = {
        "embed_dim": D,
        "num_heads": H,
        "state_dict": state(mha),
        "alibi_slopes": {str(n): alibi_get_slopes(n) for n in (1, 2, 3, 4, 6, 8, 12, 16)},
    }
    x = f32((B, T, D))
    dy = f32((B, T, D))
    kpm = np.zeros((B, T), dtype=bool)
    kpm[1, 3:] = True
    for scheme in ("rope", "alibi"):
        for masked in (False, True):
            m = kpm if masked else np.zeros((B, T), dtype=bool)
            xt_ = t64(x).requires_grad_()
            mha.zero_grad()
            y, w = attention_with_position(mha, xt_, m, scheme)
            y.backward(t64(dy))
            out[scheme + ("_masked" if masked else "")] = {
                "x": arr(x),
                "key_padding_mask": arr(m),
                "output": arr(y),
                "weights": arr(w),
                "doutput": arr(dy),
                "dx": arr(xt_.grad),
                "grads": grads(mha),
            }
    write(
        "position_in_attention",
        "self-attention with torch.nn.MultiheadAttention(8, 2)'s projections (float64, random "
        "weights) and RoPE (complex form, as in Meta's LLaMA code) or ALiBi (slopes from the "
        "authors' get_slopes), with and without a key padding mask",
        out,
    )


def special(a):
    """Encode an array that may hold NaN and infinities (JSON has no such numbers): "data" with
    0 in their place, and "kind" per element: 0 finite, 1 NaN, 2 +inf, 3 -inf."""
    a = a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
    kind = np.where(np.isnan(a), 1, np.where(np.isposinf(a), 2, np.where(np.isneginf(a), 3, 0)))
    enc = arr(np.where(kind == 0, a, 0.0).astype(np.float32))
    enc["kind"] = [int(k) for k in kind.reshape(-1)]
    return enc


def gen_nan_rules():
    """PyTorch's behaviour at the edges the library decides on: softmax rows holding NaN, +inf or
    only -inf, and cross-entropy with every target ignored (loss and gradient)."""
    nan, inf = float("nan"), float("inf")
    x = torch.tensor(
        [
            [nan, 1.0, 2.0, 0.5],  # NaN among finite entries
            [nan, -inf, -inf, -inf],  # NaN among masked entries
            [nan, nan, nan, nan],  # NaN only
            [inf, 1.0, 2.0, 0.5],  # +inf: inf - inf = NaN
            [-inf, -inf, -inf, -inf],  # masked only: PyTorch NaN, xencoder zeros
            [0.0, -inf, 1.0, -inf],
        ],  # an ordinary masked row
        dtype=torch.float64,
    )
    y = torch.softmax(x, dim=-1)
    logits = t64(f32((3, 4)))
    logits.requires_grad_()
    targets = torch.tensor([-100, -100, -100])
    loss = F.cross_entropy(logits, targets, ignore_index=-100)
    loss.backward()
    write(
        "nan_rules",
        "torch.softmax on rows with NaN, +inf and -inf; F.cross_entropy with every "
        "target ignored",
        {
            "softmax": {"x": special(x), "y": special(y)},
            "cross_entropy_all_ignored": {
                "logits": arr(logits),
                "targets": arr(targets),
                "ignore_index": -100,
                "loss_is_nan": bool(torch.isnan(loss)),
                "dlogits": arr(logits.grad),
            },
        },
    )


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    torch.set_grad_enabled(True)
    for gen in (
        gen_linear,
        gen_softmax,
        gen_layer_norm,
        gen_activation,
        gen_embedding,
        gen_cross_entropy,
        gen_attention,
        gen_positional,
        gen_rng,
        gen_optim,
        gen_multihead_attention,
        gen_transformer_encoder_layer,
        gen_transformer_encoder,
        gen_adamw,
        gen_position_in_attention,
        gen_nan_rules,
    ):
        gen()

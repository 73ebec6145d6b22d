#!/usr/bin/python3
"""Reference values for Transformer-XL's relative positions (Dai et al., 2019, section 3.3),
encoder form, written from the paper with PyTorch, independently of xencoder's code:

    S_h[i, j] = ((q_i + u_h) . k_j + (q_i + v_h) . (W_R R_{i-j})_h) / sqrt(Dh)

R_d is the sinusoidal encoding of the distance d = i - j (PE(d, 2i) = sin(d w_i),
PE(d, 2i+1) = cos(d w_i), w_i = 10000^(-2i/D)). The position term is computed here from a
[T, T, D] table of R_{i-j}, with no relative shift (xencoder uses the shift). A randomized case
(Ruoss et al., 2023, the authors' NOISY_RELATIVE) replaces the distance |i - j| = n by s_n, a
given sorted sample with s_0 = 0, keeping the sign of i - j.

Run with Debian's interpreter (python3-torch 1.13):

    /usr/bin/python3 tests/reference/generate_relative.py

It writes tests/reference/data/relative_attention.json (helpers from generate.py).
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate as g  # noqa: E402  (f32, t64, arr, state, grads, randomize_)

g.rng = np.random.default_rng(20261127)


def sinusoid(d, D):
    """PE(d) for a tensor of (possibly negative) distances d: [...] -> [..., D] (float64)."""
    w = 10000.0 ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)  # [D/2]
    a = d[..., None] * w  # [..., D/2]
    return torch.stack((torch.sin(a), torch.cos(a)), dim=-1).reshape(*d.shape, D)


def relative_self_attention(mha, x, kpm, u, vb, w_r, dist):
    """Self-attention with mha's projections and Transformer-XL's two terms. dist: [T, T] the
    distance value of each (query i, key j)."""
    B, T, D = x.shape
    H = mha.num_heads
    Dh = D // H
    qkv = F.linear(x, mha.in_proj_weight, mha.in_proj_bias)
    q, k, v = qkv[..., :D], qkv[..., D : 2 * D], qkv[..., 2 * D :]
    heads = lambda a: a.reshape(B, T, H, Dh).transpose(1, 2)  # [B, T, D] -> [B, H, T, Dh]
    q, k, v = heads(q), heads(k), heads(v)
    rel = (sinusoid(dist, D) @ w_r.T).reshape(T, T, H, Dh)  # W_R R_{i-j}: [T, T, H, Dh]
    content = torch.einsum("bhid,bhjd->bhij", q + u[None, :, None, :], k)
    position = torch.einsum("bhid,ijhd->bhij", q + vb[None, :, None, :], rel)
    s = (content + position) / math.sqrt(Dh)
    s = s.masked_fill(torch.tensor(kpm)[:, None, None, :], float("-inf"))
    p = torch.softmax(s, dim=-1)
    ctx = (p @ v).transpose(1, 2).reshape(B, T, D)
    return mha.out_proj(ctx), p


def rope_at(x, H, positions):
    """RoPE with pairs (2i, 2i+1) as complex numbers times e^(i p_t theta_i). x: [B, T, D]."""
    B, T, D = x.shape
    Dh = D // H
    theta = 10000.0 ** (-torch.arange(0, Dh, 2, dtype=torch.float64) / Dh)
    angles = torch.outer(torch.tensor(positions, dtype=torch.float64), theta)
    rot = torch.polar(torch.ones_like(angles), angles)
    xc = torch.view_as_complex(x.reshape(B, T, H, Dh // 2, 2).contiguous())
    return torch.view_as_real(xc * rot[None, :, None, :]).reshape(B, T, D)


def alibi_slopes(n):
    """For H a power of two: 2^(-8(h+1)/H) (the paper; the tests use H = 2)."""
    return [2.0 ** (-8.0 * (h + 1) / n) for h in range(n)]


def randomized_in_attention(mha, x, scheme, positions, sample):
    B, T, D = x.shape
    H = mha.num_heads
    Dh = D // H
    qkv = F.linear(x, mha.in_proj_weight, mha.in_proj_bias)
    q, k, v = qkv[..., :D], qkv[..., D : 2 * D], qkv[..., 2 * D :]
    if scheme == "rope":
        q, k = rope_at(q, H, positions), rope_at(k, H, positions)
    heads = lambda a: a.reshape(B, T, H, Dh).transpose(1, 2)
    s = heads(q) @ heads(k).transpose(-1, -2) / math.sqrt(Dh)
    if scheme == "alibi":
        idx = torch.arange(T)
        dist = torch.tensor(sample, dtype=torch.float64)[(idx[:, None] - idx[None, :]).abs()]
        m = torch.tensor(alibi_slopes(H), dtype=torch.float64)
        s = s - m[:, None, None] * dist[None]
    p = torch.softmax(s, dim=-1)
    ctx = (p @ heads(v)).transpose(1, 2).reshape(B, T, D)
    return mha.out_proj(ctx), p


def main():
    D, H, B, T = 8, 2, 2, 5
    torch.manual_seed(3)
    mha = torch.nn.MultiheadAttention(D, H, batch_first=True).double()
    g.randomize_(mha)
    u, vb = g.f32((H, D // H), 0.5), g.f32((H, D // H), 0.5)
    w_r = g.f32((D, D), 0.5)
    x, dy = g.f32((B, T, D)), g.f32((B, T, D))
    kpm = np.zeros((B, T), dtype=bool)
    kpm[1, 3:] = True
    idx = torch.arange(T, dtype=torch.float64)
    plain = idx[:, None] - idx[None, :]  # i - j
    sample = [0, 3, 4, 9, 15]  # s_0 = 0 < s_1 < ... < s_{T-1}
    noisy = torch.sign(plain) * torch.tensor(sample, dtype=torch.float64)[plain.abs().long()]
    out = {
        "embed_dim": D,
        "num_heads": H,
        "state_dict": g.state(mha),
        "content_bias": g.arr(u),
        "position_bias": g.arr(vb),
        "position_weight": g.arr(w_r),
        "randomized_distances": sample,
    }
    for name, dist, masked in (
        ("plain", plain, False),
        ("plain_masked", plain, True),
        ("randomized", noisy, False),
    ):
        m = kpm if masked else np.zeros((B, T), dtype=bool)
        xt_ = g.t64(x).requires_grad_()
        ut, vt, wt = (g.t64(a).requires_grad_() for a in (u, vb, w_r))
        mha.zero_grad()
        y, w = relative_self_attention(mha, xt_, m, ut, vt, wt, dist)
        y.backward(g.t64(dy))
        out[name] = {
            "x": g.arr(x),
            "key_padding_mask": g.arr(m),
            "output": g.arr(y),
            "weights": g.arr(w),
            "doutput": g.arr(dy),
            "dx": g.arr(xt_.grad),
            "grads": g.grads(mha),
            "content_bias_grad": g.arr(ut.grad),
            "position_bias_grad": g.arr(vt.grad),
            "position_weight_grad": g.arr(wt.grad),
        }
    # Randomized positions (Ruoss et al., 2023) in RoPE and ALiBi, with given samples: RoPE
    # rotates token t by its position p_t (complex form, as Meta's LLaMA code); ALiBi's distance
    # |i - j| = n becomes s_n (the authors' NOISY_ALIBI without its +0.5 on one side: xencoder's
    # ALiBi is symmetric).
    positions = [2, 9, 10, 40, 77]
    for name in ("rope_randomized", "alibi_randomized"):
        xt_ = g.t64(x).requires_grad_()
        mha.zero_grad()
        y, w = randomized_in_attention(mha, xt_, name.split("_")[0], positions, sample)
        y.backward(g.t64(dy))
        out[name] = {
            "x": g.arr(x),
            "output": g.arr(y),
            "weights": g.arr(w),
            "doutput": g.arr(dy),
            "dx": g.arr(xt_.grad),
            "grads": g.grads(mha),
        }
    out["randomized_positions"] = positions
    content = {
        "description": "self-attention with torch.nn.MultiheadAttention(8, 2)'s projections "
        "(float64, random weights) and Transformer-XL's relative positions written from "
        "the paper ([T, T, D] table of W_R R_{i-j}, no shift); plain, with a key padding "
        "mask, and with randomized distances (|i - j| = n -> s_n); and RoPE at given positions "
        "p_t, ALiBi with randomized distances s_|i-j| (Ruoss et al., 2023)",
        "generator": "tests/reference/generate_relative.py",
        "torch": torch.__version__,
        "numpy": np.__version__,
        **out,
    }
    path = os.path.join(g.OUT, "relative_attention.json")
    with open(path, "w") as f:
        json.dump(content, f, separators=(",", ":"))
        f.write("\n")
    print("relative_attention.json %7d bytes" % os.path.getsize(path))


if __name__ == "__main__":
    torch.set_grad_enabled(True)
    main()

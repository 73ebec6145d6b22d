#!/usr/bin/python3
"""xenc-train-order's checkpoints in PyTorch: the same model, the same predictions.

A checkpoint (.npz, lib/include/xenc/io/checkpoint.hpp) holds every parameter under its
PyTorch name plus "xenc.meta" (UTF-8 JSON: config, labels, vocabulary). This script builds the
equivalent torch model (nn.Embedding, positions, nn.TransformerEncoder, nn.Linear), loads the
weights with load_state_dict(strict=True), and compares it with xencoder on the checkpoint's
held-out set:

    cmake --build build -j2 --target train_order
    /usr/bin/python3 scripts/torch_train_order.py [--build build] [CKPT.npz ...]

Without checkpoints it first trains one per scheme (xenc-train-order --save, the defaults).
For each checkpoint, `xenc-train-order --load CKPT --evaluate OUT.npz` writes the held-out ids,
padding mask, labels and xencoder's logits; PyTorch must give the same predicted role for every
noun and logits within 1e-4 (absolute) at every non-padded position. Exit status 0 when all
agree.

    /usr/bin/python3 scripts/torch_train_order.py --make-fixture tests/io/data

writes the small PyTorch-trained checkpoints and their logits that the ctest test
(tests/io/test_checkpoint.cpp, Checkpoint.LoadsPyTorchTrainedCheckpoints) reproduces
without Python.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

warnings.filterwarnings("ignore", message="The PyTorch API of nested tensors")
warnings.filterwarnings("ignore", message="enable_nested_tensor is True")

TOL = 1e-4
META = "xenc.meta"


def sinusoidal(T, D):
    """PE(p, 2i) = sin(p / 10000^(2i/D)), PE(p, 2i+1) = cos(...) (ops/positional.hpp), float64."""
    pos = np.arange(T, dtype=np.float64)[:, None]
    i = np.arange(D // 2, dtype=np.float64)[None, :]
    angle = pos / np.power(10000.0, 2.0 * i / D)
    pe = np.zeros((T, D))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return torch.tensor(pe, dtype=torch.float32)


class TokenClassifier(nn.Module):
    """xenc::TokenClassifier: embedding -> (x sqrt(D)) -> positions -> encoder -> head."""

    def __init__(self, cfg, num_labels):
        super().__init__()
        D = cfg["d_model"]
        self.cfg = cfg
        self.embedding = nn.Embedding(cfg["vocab_size"], D, padding_idx=cfg["padding_idx"])
        if cfg["position"] == "learned":
            self.position = nn.Embedding(cfg["max_len"], D)
        elif cfg["position"] not in ("none", "sinusoidal", "rope", "alibi"):
            raise ValueError(
                "position scheme %r has no PyTorch twin in this script" % cfg["position"]
            )
        layer = nn.TransformerEncoderLayer(
            D,
            cfg["nhead"],
            cfg["dim_feedforward"],
            dropout=cfg["dropout"],
            activation=cfg["activation"],
            layer_norm_eps=cfg["layer_norm_eps"],
            batch_first=True,
            norm_first=cfg["norm_first"],
        )
        norm = nn.LayerNorm(D, eps=cfg["layer_norm_eps"]) if cfg["final_norm"] else None
        self.encoder = nn.TransformerEncoder(
            layer, cfg["num_layers"], norm=norm, enable_nested_tensor=False
        )
        self.head = nn.Linear(D, num_labels)

    def forward(self, ids, padding_mask):
        x = self.embedding(ids)
        if self.cfg["scale_embedding"]:
            x = x * math.sqrt(self.cfg["d_model"])
        T = ids.shape[1]
        if self.cfg["position"] == "learned":
            x = x + self.position.weight[:T]
        elif self.cfg["position"] == "sinusoidal":
            x = x + sinusoidal(T, self.cfg["d_model"])
        if self.cfg["position"] in ("rope", "alibi"):
            # positions inside attention: nn.TransformerEncoderLayer has no hook, so run its
            # modules by hand (same weights, same order of operations)
            for layer in self.encoder.layers:
                x = encoder_layer_with_position(layer, x, padding_mask, self.cfg["position"])
            if self.encoder.norm is not None:
                x = self.encoder.norm(x)
            return self.head(x)
        return self.head(self.encoder(x, src_key_padding_mask=padding_mask))


def alibi_slopes(n):
    """ALiBi slopes as in the authors' code (ofirpress/attention_with_linear_biases, get_slopes)."""

    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    c = 2 ** math.floor(math.log2(n))
    return power_of_2(c) + alibi_slopes(2 * c)[0::2][: n - c]


def rope(x, H):
    """RoPE, interleaved pairs (2i, 2i+1) as complex numbers times e^(i t θ_i), θ_i = 10000^(-2i/Dh)."""
    B, T, D = x.shape
    Dh = D // H
    theta = 10000.0 ** (-torch.arange(0, Dh, 2, dtype=torch.float64) / Dh)
    rot = torch.polar(
        torch.ones(T, Dh // 2, dtype=torch.float64),
        torch.outer(torch.arange(T, dtype=torch.float64), theta),
    )
    xc = torch.view_as_complex(x.double().reshape(B, T, H, Dh // 2, 2).contiguous())
    return torch.view_as_real(xc * rot[None, :, None, :]).reshape(B, T, D).to(x.dtype)


def self_attention_with_position(mha, x, padding_mask, position):
    B, T, D = x.shape
    H = mha.num_heads
    q, k, v = F.linear(x, mha.in_proj_weight, mha.in_proj_bias).chunk(3, dim=-1)
    if position == "rope":
        q, k = rope(q, H), rope(k, H)
    heads = lambda a: a.reshape(B, T, H, D // H).transpose(1, 2)  # [B, T, D] -> [B, H, T, Dh]
    s = heads(q) @ heads(k).transpose(-1, -2) / math.sqrt(D // H)
    if position == "alibi":
        m = torch.tensor(alibi_slopes(H), dtype=x.dtype)
        pos = torch.arange(T, dtype=x.dtype)
        s = s - m[:, None, None] * (pos[:, None] - pos[None, :]).abs()
    s = s.masked_fill(padding_mask[:, None, None, :], float("-inf"))
    ctx = (torch.softmax(s, dim=-1) @ heads(v)).transpose(1, 2).reshape(B, T, D)
    return mha.out_proj(ctx)


def encoder_layer_with_position(layer, x, padding_mask, position):
    """nn.TransformerEncoderLayer.forward (eval mode) with rope or alibi inside self-attention."""
    act = layer.activation if callable(layer.activation) else getattr(F, layer.activation)
    ff = lambda y: layer.linear2(act(layer.linear1(y)))
    sa = lambda y: self_attention_with_position(layer.self_attn, y, padding_mask, position)
    if layer.norm_first:
        x = x + sa(layer.norm1(x))
        return x + ff(layer.norm2(x))
    x = layer.norm1(x + sa(x))
    return layer.norm2(x + ff(x))


def read_checkpoint(path):
    data = np.load(path)
    meta = json.loads(bytes(data[META]).decode("utf-8"))
    state = {k: torch.from_numpy(np.array(data[k])) for k in data.files if k != META}
    return meta, state


def torch_model(path):
    meta, state = read_checkpoint(path)
    model = TokenClassifier(meta["config"], len(meta["labels"]))
    model.load_state_dict(state, strict=True)
    return model.eval(), meta


def compare(app, ckpt, workdir):
    out = os.path.join(workdir, os.path.basename(ckpt) + ".heldout.npz")
    subprocess.run([app, "--load", ckpt, "--evaluate", out], check=True, stdout=subprocess.DEVNULL)
    ev = np.load(out)
    model, meta = torch_model(ckpt)
    with torch.no_grad():
        logits = model(torch.from_numpy(ev["ids"]), torch.from_numpy(ev["padding_mask"])).numpy()
    real = ~ev["padding_mask"]
    diff = float(np.abs(logits - ev["logits"])[real].max())
    nouns = ev["labels"] != -100
    ours, theirs = ev["logits"].argmax(-1)[nouns], logits.argmax(-1)[nouns]
    same = int((ours == theirs).sum())
    acc_torch = float((theirs == ev["labels"][nouns]).mean())
    ok = diff <= TOL and same == nouns.sum()
    print(
        "%-28s %-10s max |logit diff| %.2e over %d tokens; same prediction for %d/%d nouns; "
        "PyTorch held-out accuracy %.1f%%  %s"
        % (
            os.path.basename(ckpt),
            meta["config"]["position"],
            diff,
            int(real.sum()),
            same,
            int(nouns.sum()),
            100 * acc_torch,
            "OK" if ok else "MISMATCH",
        )
    )
    return ok


def write_checkpoint(path, model, cfg, labels, vocab, extra):
    meta = {
        "format": "xencoder-checkpoint",
        "version": 1,
        "config": cfg,
        "labels": labels,
        "vocab": vocab,
        "extra": extra,
    }
    arrays = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    arrays[META] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    np.savez(path, **arrays)


def make_fixture(outdir):
    """Small models trained in PyTorch (AdamW, a toy word-order task on random ids), saved in
    xencoder's checkpoint format with inputs and PyTorch's logits."""
    os.makedirs(outdir, exist_ok=True)
    for position, seed in (("learned", 1), ("sinusoidal", 2)):
        torch.manual_seed(seed)
        rng = np.random.default_rng(seed)
        V, D, T, B = 10, 8, 6, 16
        cfg = {
            "vocab_size": V,
            "d_model": D,
            "nhead": 2,
            "dim_feedforward": 16,
            "dropout": 0.0,
            "activation": "relu",
            "layer_norm_eps": 1e-5,
            "norm_first": False,
            "num_layers": 2,
            "position": position,
            "max_len": 8,
            "scale_embedding": False,
            "final_norm": True,
            "padding_idx": 0,
            "seed": seed,
        }
        model = TokenClassifier(cfg, 2)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        # toy task: label 0 for the first half of the real tokens, 1 for the rest
        ids = torch.tensor(rng.integers(2, V, size=(B, T)), dtype=torch.int64)
        lengths = rng.integers(3, T + 1, size=B)
        mask = torch.tensor(np.arange(T)[None, :] >= lengths[:, None])
        ids[mask] = 0
        labels = torch.tensor(np.where(np.arange(T)[None, :] < (lengths[:, None] + 1) // 2, 0, 1))
        labels[mask] = -100
        model.train()
        for _ in range(30):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(
                model(ids, mask).reshape(-1, 2), labels.reshape(-1), ignore_index=-100
            )
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            logits = model(ids, mask)
        vocab = ["<pad>", "<unk>"] + ["w%d" % i for i in range(2, V)]
        name = "torch_trained_%s" % position
        write_checkpoint(
            os.path.join(outdir, name + ".npz"),
            model,
            cfg,
            ["first", "second"],
            vocab,
            {
                "generator": "scripts/torch_train_order.py --make-fixture",
                "torch": torch.__version__,
            },
        )
        np.savez(
            os.path.join(outdir, name + "_io.npz"),
            ids=ids.numpy(),
            padding_mask=mask.numpy(),
            logits=logits.numpy().astype(np.float32),
        )
        print("wrote %s (+ _io.npz), final training loss %.4f" % (name + ".npz", float(loss)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkpoints", nargs="*")
    ap.add_argument("--build", default="build")
    ap.add_argument("--make-fixture", metavar="DIR")
    args = ap.parse_args()
    if args.make_fixture:
        make_fixture(args.make_fixture)
        return 0
    app = os.path.join(args.build, "apps", "train_order", "xenc-train-order")
    if not os.path.exists(app):
        app = os.path.join(args.build, "apps", "train_order", "train_order")
    with tempfile.TemporaryDirectory() as tmp:
        ckpts = args.checkpoints
        if not ckpts:
            subprocess.run(
                [app, "--quiet", "--svg-dir", "", "--save", tmp],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            ckpts = sorted(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".npz"))
        ok = all([compare(app, c, tmp) for c in ckpts])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

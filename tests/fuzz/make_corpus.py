#!/usr/bin/env python3
"""Writes the fuzzing seed corpus (tests/fuzz/corpus/<harness>/) and the hand-made regression
inputs of issue 12 (tests/fuzz/regressions/<harness>/issue12_*). Deterministic; every file is a
few KiB at most. Needs only NumPy: /usr/bin/python3 tests/fuzz/make_corpus.py

Inputs found by the fuzzer itself are copied into regressions/ by hand (see tests/README.md);
this script never deletes them."""
import io
import json
import os
import struct
import zipfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(12)


def write(kind, harness, name, data):
    d = os.path.join(HERE, kind, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def npy_bytes(a, version=None):
    b = io.BytesIO()
    if version is None:
        np.save(b, a)
    else:
        np.lib.format.write_array(b, a, version=version)
    return b.getvalue()


def npy_header(dict_text, data=b""):
    """An .npy file with any header text (padded as numpy.lib.format pads it)."""
    h = dict_text.encode()
    h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data


def npz_bytes(arrays, compressed=False):
    b = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(b, **arrays)
    return b.getvalue()


def zip_by_hand(members):
    """members: (name, stored_bytes, method, crc, claimed_size, zip64). APPNOTE 6.3 layout."""
    out, cdir = b"", b""
    for name, data, method, crc, size, zip64 in members:
        offset = len(out)
        name = name.encode()
        extra = struct.pack("<HHQQ", 1, 16, size, len(data)) if zip64 else b""
        s32 = 0xFFFFFFFF if zip64 else size
        c32 = 0xFFFFFFFF if zip64 else len(data)
        ver = 45 if zip64 else 20
        out += (
            struct.pack(
                "<IHHHHHIIIHH",
                0x04034B50,
                ver,
                0,
                method,
                0,
                0x21,
                crc,
                c32,
                s32,
                len(name),
                len(extra),
            )
            + name
            + extra
            + data
        )
        cdir += (
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                ver,
                ver,
                0,
                method,
                0,
                0x21,
                crc,
                c32,
                s32,
                len(name),
                len(extra),
                0,
                0,
                0,
                0,
                offset,
            )
            + name
            + extra
        )
    return (
        out
        + cdir
        + struct.pack(
            "<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(cdir), len(out), 0
        )
    )


def deflated(name, payload):
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    raw = c.compress(payload) + c.flush()
    return (name, raw, 8, zlib.crc32(payload), len(payload), False)


def stored(name, payload):
    return (name, payload, 0, zlib.crc32(payload), len(payload), False)


def encoder_state(layers, D, F, final_norm, prefix=True):
    s = {}
    for i in range(layers):
        p = f"layers.{i}." if prefix else ""
        shapes = {
            "self_attn.in_proj_weight": (3 * D, D),
            "self_attn.in_proj_bias": (3 * D,),
            "self_attn.out_proj.weight": (D, D),
            "self_attn.out_proj.bias": (D,),
            "linear1.weight": (F, D),
            "linear1.bias": (F,),
            "linear2.weight": (D, F),
            "linear2.bias": (D,),
            "norm1.weight": (D,),
            "norm1.bias": (D,),
            "norm2.weight": (D,),
            "norm2.bias": (D,),
        }
        for k, shape in shapes.items():
            s[p + k] = (rng.standard_normal(shape) * 0.3).astype(np.float32)
    if final_norm:
        s["norm.weight"] = np.ones(D, np.float32)
        s["norm.bias"] = np.zeros(D, np.float32)
    return s


def main():
    # ---- seed corpus -------------------------------------------------------------------------
    a23 = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    seeds_npy = {
        "f4_2x3.npy": npy_bytes(a23),
        "f8_3.npy": npy_bytes(np.array([1.5, -2.0, 1e300])),
        "b1_2x2.npy": npy_bytes(np.array([[True, False], [False, True]])),
        "f4_scalar.npy": npy_bytes(np.array(3.0, np.float32)),
        "f4_empty_0x4.npy": npy_bytes(np.zeros((0, 4), np.float32)),
        "f4_fortran.npy": npy_bytes(np.asfortranarray(a23)),
        "f4_big_endian.npy": npy_bytes(a23.astype(">f4")),
        "i8_3.npy": npy_bytes(np.arange(3, dtype=np.int64)),
        "f4_version2.npy": npy_bytes(a23, version=(2, 0)),
        "structured.npy": npy_bytes(np.zeros(2, dtype=[("x", "<f4"), ("y", "<i4")])),
        "f4_nan_inf.npy": npy_bytes(np.array([np.nan, np.inf, -0.0], np.float32)),
    }
    for k, v in seeds_npy.items():
        write("corpus", "npy", k, v)
    write("corpus", "npy", "truncated.npy", seeds_npy["f4_2x3.npy"][:-5])

    write("corpus", "npz", "stored_two.npz", npz_bytes({"a": a23, "b": np.ones(4, np.float32)}))
    write(
        "corpus",
        "npz",
        "deflated_two.npz",
        npz_bytes({"a": a23, "b": np.zeros(64, np.float32)}, True),
    )
    write(
        "corpus",
        "npz",
        "bool_and_f8.npz",
        npz_bytes({"mask": np.array([True, False]), "x": np.ones(3)}),
    )
    write("corpus", "npz", "int_member.npz", npz_bytes({"count": np.arange(3)}))
    write("corpus", "npz", "empty.npz", npz_bytes({}))

    write("corpus", "state_dict", "l1_d4_f8.npz", npz_bytes(encoder_state(1, 4, 8, False)))
    write("corpus", "state_dict", "l2_d4_f8_norm.npz", npz_bytes(encoder_state(2, 4, 8, True)))
    write(
        "corpus",
        "state_dict",
        "single_layer_d2_f4.npz",
        npz_bytes(encoder_state(1, 2, 4, False, prefix=False)),
    )
    write(
        "corpus",
        "state_dict",
        "l1_d2_f2_deflated.npz",
        npz_bytes(encoder_state(1, 2, 2, False), True),
    )

    texts = {
        "sentence.txt": "The cat chased the mouse.",
        "case.txt": "CAFÉ café Café Straße",
        "dash.txt": "cat—chased – mouse-trap",
        "punct_symbols.txt": "«oui» 5€+x, don't! hi\U0001F600 snake_case",
        "scripts.txt": "ΣΊΣΥΦΟΣ नमस्ते ١٢ ＡＢＣ ﬁne",
        "spaces.txt": "a\u00a0b\u3000c\td\ne",
    }
    for k, v in texts.items():
        write("corpus", "tokenizer", k, v.encode())
    write("corpus", "tokenizer", "invalid_utf8.txt", b"cat \xff\xc3 mouse \xed\xa0\x80")

    # ---- issue 12's crafted inputs: regressions ----------------------------------------------
    npy_zeros = npy_bytes(np.zeros(1000, np.float32))
    name, raw, method, crc, size, _ = deflated("a.npy", npy_zeros)
    write(
        "regressions",
        "npz",
        "issue12_claims_4gib.npz",
        zip_by_hand([(name, raw, method, crc, 0xFFFFFFF0, False)]),
    )
    write(
        "regressions",
        "npz",
        "issue12_zip64_claims_1tb.npz",
        zip_by_hand([(name, raw, method, crc, 10**12, True)]),
    )
    small = npy_bytes(np.zeros(4, np.float32))
    write(
        "regressions",
        "npz",
        "issue12_stored_claims_4gib.npz",
        zip_by_hand([("a.npy", small, 0, zlib.crc32(small), 0xFFFFFFF0, False)]),
    )
    write(
        "regressions",
        "npz",
        "issue12_duplicate_member.npz",
        zip_by_hand([stored("a.npy", small), stored("a.npy", small)]),
    )
    write(
        "regressions",
        "npz",
        "issue12_header_contradicts_directory.npz",
        zip_by_hand([(name, raw, method, crc, 20000, False)]),
    )

    write(
        "regressions",
        "npy",
        "issue12_shape_2pow64_plus_2.npy",
        npy_header(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551618, 8), }",
            bytes(64),
        ),
    )
    write(
        "regressions",
        "npy",
        "issue12_shape_product_overflow.npy",
        npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"),
    )
    write(
        "regressions",
        "npy",
        "issue12_unquoted_dtype.npy",
        npy_header("{'descr': <f4, 'fortran_order': False, 'shape': (2,), }", bytes(8)),
    )

    write(
        "regressions",
        "state_dict",
        "issue12_layer_100000_alone.npz",
        npz_bytes({"layers.100000.linear1.weight": np.zeros((4, 2), np.float32)}),
    )
    # With a complete layer 0 beside it, the old loader built all 100,001 layers before checking.
    far = encoder_state(1, 2, 2, False)
    far["layers.100000.linear1.weight"] = np.zeros((2, 2), np.float32)
    write("regressions", "state_dict", "issue12_layer_0_and_layer_100000.npz", npz_bytes(far))
    gap = encoder_state(2, 2, 2, False)
    gap = {k.replace("layers.1.", "layers.7."): v for k, v in gap.items()}
    write("regressions", "state_dict", "issue12_layer_gap.npz", npz_bytes(gap))
    write(
        "regressions",
        "state_dict",
        "issue12_claims_4gib.npz",
        zip_by_hand(
            [
                (
                    name.replace("a.npy", "layers.0.linear1.weight.npy"),
                    raw,
                    method,
                    crc,
                    0xFFFFFFF0,
                    False,
                )
            ]
        ),
    )

    checkpoints()


def checkpoint_bytes(meta_text, state, compressed=False):
    """A checkpoint as save_checkpoint writes it: xenc.meta (uint8 JSON) plus the weights."""
    arrays = dict(state)
    arrays["xenc.meta"] = np.frombuffer(meta_text, np.uint8)
    return npz_bytes(arrays, compressed)


def small_checkpoint(position="none", max_len=4):
    """TokenClassifier: V = 4, D = 4, nhead = 1, F = 8, one layer, C = 2 (names as save_checkpoint)."""
    V, D, C = 4, 4, 2
    config = {
        "activation": "relu",
        "d_model": D,
        "dim_feedforward": 8,
        "dropout": 0.0,
        "final_norm": False,
        "layer_norm_eps": 1e-5,
        "max_len": max_len,
        "nhead": 1,
        "norm_first": False,
        "num_layers": 1,
        "padding_idx": 0,
        "position": position,
        "scale_embedding": False,
        "seed": 0,
        "vocab_size": V,
    }
    meta = {
        "config": config,
        "extra": {},
        "format": "xencoder-checkpoint",
        "labels": ["agent", "patient"],
        "version": 1,
        "vocab": ["<pad>", "<unk>", "cat", "mouse"],
    }
    state = {
        "embedding.weight": (rng.standard_normal((V, D)) * 0.3).astype(np.float32),
        "head.weight": (rng.standard_normal((C, D)) * 0.3).astype(np.float32),
        "head.bias": np.zeros(C, np.float32),
    }
    if position == "learned":
        state["position.weight"] = (rng.standard_normal((max_len, D)) * 0.3).astype(np.float32)
    state.update({"encoder." + k: v for k, v in encoder_state(1, D, 8, False).items()})
    return meta, state


def checkpoints():
    """Seeds and the crafted checkpoints of issue 17 (scaled to stay under 64 KiB each)."""
    dump = lambda m: json.dumps(m, separators=(",", ":")).encode()
    meta, state = small_checkpoint()
    write("corpus", "checkpoint", "none_d4.npz", checkpoint_bytes(dump(meta), state))
    lmeta, lstate = small_checkpoint("learned", 6)
    write(
        "corpus",
        "checkpoint",
        "learned_d4_deflated.npz",
        checkpoint_bytes(dump(lmeta), lstate, True),
    )

    def tampered(name, edit):
        m = json.loads(dump(meta))
        edit(m)
        write(
            "regressions",
            "checkpoint",
            "issue17_" + name + ".npz",
            checkpoint_bytes(dump(m), state),
        )

    tampered("no_config", lambda m: m.pop("config"))
    tampered("vocab_size_minus_1", lambda m: m["config"].update(vocab_size=-1))
    tampered("d_model_minus_8", lambda m: m["config"].update(d_model=-8))
    tampered("ff_32_7", lambda m: m["config"].update(dim_feedforward=32.7))
    tampered("nhead_2pow64_minus_1", lambda m: m["config"].update(nhead=2**64 - 1))
    tampered("nhead_3", lambda m: m["config"].update(nhead=3))
    tampered("label_escape", lambda m: m["labels"].__setitem__(0, "\x1b[31magent"))
    tampered("label_newline", lambda m: m["labels"].__setitem__(1, "pat\nient"))
    nan_state = dict(state)
    nan_state["head.bias"] = np.array([0.0, np.nan], np.float32)
    write(
        "regressions",
        "checkpoint",
        "issue17_nan_weight.npz",
        checkpoint_bytes(dump(meta), nan_state),
    )
    write(
        "regressions",
        "checkpoint",
        "issue17_deep_nesting.npz",
        checkpoint_bytes(b"[" * 5000 + b"]" * 5000, state, True),
    )
    # 40 MB of JSON numbers in xenc.meta (the file had 800 MB): refused by max_meta_bytes
    # before it is inflated; parsed, it would need 20 million JSON values.
    big = b'{"extra":[' + b"0," * 20000000 + b'0],"format":"xencoder-checkpoint"}'
    write(
        "regressions",
        "checkpoint",
        "issue17_meta_40mb_deflated.npz",
        checkpoint_bytes(big, state, True),
    )
    # A 10-million-word vocabulary (50 MB of JSON; the file took 1.37 GB before refusal).
    m = json.loads(dump(meta))
    m["config"]["vocab_size"] = 10000002
    text = dump(m).replace(
        b'"vocab":["<pad>","<unk>","cat","mouse"]',
        b'"vocab":["<pad>","<unk>"' + b',"w"' * 10000000 + b"]",
    )
    write(
        "regressions",
        "checkpoint",
        "issue17_vocab_10m_deflated.npz",
        checkpoint_bytes(text, state, True),
    )


if __name__ == "__main__":
    main()

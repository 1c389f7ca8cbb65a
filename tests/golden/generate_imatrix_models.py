#!/usr/bin/env python3
"""Importance matrices for the real models the tests use (tests/it/importance.rs).

Writes tests/golden/imatrix/:

  minilm.gguf, minilm.dat  an importance matrix of all-MiniLM-L6-v2's first layer, from a
                           forward pass of that layer in numpy float32: 4 sequences of 128
                           token ids drawn at random (numpy's default_rng(20250302), ids
                           1000..29999: no tokenizer is at hand, so the inputs are real
                           embeddings of random tokens), word + position + token-type
                           embeddings, LayerNorm, 12-head self-attention, LayerNorm, GELU
                           (erf) of the intermediate layer. The entries are llama.cpp's
                           names for BERT's layer 0 (the name mapping of io::imatrix::names):
                           blk.0.attn_q/attn_k/attn_v.weight (input: the embeddings),
                           blk.0.attn_output.weight (the attention's context),
                           blk.0.ffn_up.weight (the attention block's output) and
                           blk.0.ffn_down.weight (the GELU's output, 1536 columns). 512
                           tokens, chunk size 128.
  gemma.gguf               an importance matrix for Gemma 3 270M's blk.3.ffn_down.weight
                           (2048 columns) and blk.3.attn_output.weight (1024), from
                           synthetic activations: 256 tokens of N(0, 1) with every 64th
                           column 30 times louder (default_rng(20250303)). Not a real
                           calibration: it checks that a GGUF tensor finds its entry.
  models.json              what libgguf 0.2.2 makes of them: each entry's importance
                           summary, and for encoder.layer.0.output.dense.weight
                           (blk.0.ffn_down.weight) under Q4_K with the importance, the
                           importance-weighted error of libgguf's reconstruction computed in
                           float64 (sum_j a_j (w - w_hat)^2 / sum_j a_j over the matrix), the
                           same without importance, and the FNV-1a 64 hash of libgguf's
                           bytes.

Run from the crate root with QUANTSCOPE_MINILM naming all-MiniLM-L6-v2's
model.safetensors (numpy, safetensors, libgguf==0.2.2 installed):
    QUANTSCOPE_MINILM=.../model.safetensors python3 tests/golden/generate_imatrix_models.py
Deterministic.
"""

from __future__ import annotations

import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "imatrix")
sys.path.insert(0, HERE)
from generate_formats import fnv1a  # noqa: E402
from imatrix_writer import Entry, dat_bytes, gguf_bytes, sums_of_squares  # noqa: E402

SEQS, SEQ_LEN, CHUNK = 4, 128, 128


def layer_norm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return ((x - mu) / np.sqrt(var + eps) * w + b).astype(np.float32)


def gelu(x):
    erf = np.vectorize(math.erf)
    return (0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))).astype(np.float32)


def minilm_inputs(path: str) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    t = load_file(path)
    p = "encoder.layer.0."
    rng = np.random.default_rng(20250302)
    ids = rng.integers(1000, 30000, (SEQS, SEQ_LEN))
    outs = {k: [] for k in ["h", "ctx", "h1", "inter"]}
    for seq in ids:
        e = (t["embeddings.word_embeddings.weight"][seq]
             + t["embeddings.position_embeddings.weight"][:SEQ_LEN]
             + t["embeddings.token_type_embeddings.weight"][0]).astype(np.float32)
        h = layer_norm(e, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
        lin = lambda x, n: (x @ t[p + n + ".weight"].T + t[p + n + ".bias"]).astype(np.float32)  # noqa: E731
        q, k, v = (lin(h, f"attention.self.{n}") for n in ("query", "key", "value"))
        heads, d = 12, 32
        ctx = np.zeros_like(h)
        for i in range(heads):
            s = slice(i * d, (i + 1) * d)
            a = (q[:, s] @ k[:, s].T) / np.float32(math.sqrt(d))
            a = np.exp(a - a.max(-1, keepdims=True))
            a = (a / a.sum(-1, keepdims=True)).astype(np.float32)
            ctx[:, s] = a @ v[:, s]
        h1 = layer_norm(lin(ctx, "attention.output.dense") + h,
                        t[p + "attention.output.LayerNorm.weight"], t[p + "attention.output.LayerNorm.bias"])
        inter = gelu(lin(h1, "intermediate.dense"))
        for k2, val in (("h", h), ("ctx", ctx), ("h1", h1), ("inter", inter)):
            outs[k2].append(val)
    return {k: np.concatenate(v).astype(np.float32) for k, v in outs.items()}, t


def summary(values: np.ndarray) -> dict:
    v = values.astype(np.float64)
    order = sorted(range(v.size), key=lambda c: (-v[c], c))
    top = max(1, math.ceil(v.size / 100))
    return {"columns": int(v.size), "top_column": order[0],
            "top_percent_share": float(v[order[:top]].sum() / v.sum())}


def weighted_mse(w: np.ndarray, w_hat: np.ndarray, a: np.ndarray) -> float:
    e = (w.astype(np.float64) - w_hat.astype(np.float64)) ** 2
    a = a.astype(np.float64)
    return float((e * a).sum() / (a.sum() * w.shape[0]))


def main() -> None:
    import libgguf
    from importlib.metadata import version

    path = os.environ["QUANTSCOPE_MINILM"]
    x, t = minilm_inputs(path)
    tokens = x["h"].shape[0]
    sources = {"blk.0.attn_q.weight": "h", "blk.0.attn_k.weight": "h", "blk.0.attn_v.weight": "h",
               "blk.0.attn_output.weight": "ctx", "blk.0.ffn_up.weight": "h1",
               "blk.0.ffn_down.weight": "inter"}
    entries = {n: Entry(sums_of_squares(x[s]), [tokens]) for n, s in sources.items()}
    files = {
        "minilm.gguf": gguf_bytes(entries, tokens // CHUNK, CHUNK, ["random token ids, seed 20250302"]),
        "minilm.dat": dat_bytes(entries, tokens // CHUNK, CHUNK, "random token ids, seed 20250302"),
    }
    rng = np.random.default_rng(20250303)
    gemma = {}
    for name, cols in (("blk.3.ffn_down.weight", 2048), ("blk.3.attn_output.weight", 1024)):
        g = rng.standard_normal((256, cols)).astype(np.float32)
        g[:, ::64] *= np.float32(30.0)
        gemma[name] = Entry(sums_of_squares(g), [256])
    files["gemma.gguf"] = gguf_bytes(gemma, 2, 128, ["synthetic N(0,1), every 64th column x30, seed 20250303"])
    for n, b in files.items():
        with open(os.path.join(OUT, n), "wb") as f:
            f.write(b)
    read = libgguf.load_imatrix(os.path.join(OUT, "minilm.gguf"))
    a = read["blk.0.ffn_down.weight"]
    w = t["encoder.layer.0.output.dense.weight"].astype(np.float32)
    q4k = libgguf.GGMLQuantizationType.Q4_K
    raw = libgguf.quantize_rows(w, q4k, imatrix=a)
    w_hat = libgguf.dequantize_rows(raw, q4k).reshape(w.shape)
    plain = libgguf.dequantize_rows(libgguf.quantize_rows(w, q4k), q4k).reshape(w.shape)
    fixture = {
        "library": f"libgguf {version('libgguf')}",
        "call": "libgguf.load_imatrix, quantize_rows(w, Q4_K, imatrix=a), dequantize_rows",
        "tokens": tokens,
        "entries": {n: summary(v) for n, v in sorted(read.items())},
        "ffn_down": {
            "tensor": "encoder.layer.0.output.dense.weight",
            "entry": "blk.0.ffn_down.weight",
            "q4_k_bytes": fnv1a(raw.tobytes()),
            "q4_k_imatrix_mse": weighted_mse(w, w_hat, a),
            "q4_k_plain_imatrix_mse": weighted_mse(w, plain, a),
        },
        "gemma": {n: summary(v) for n, v in sorted(libgguf.load_imatrix(os.path.join(OUT, "gemma.gguf")).items())},
    }
    with open(os.path.join(OUT, "models.json"), "w") as f:
        json.dump(fixture, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

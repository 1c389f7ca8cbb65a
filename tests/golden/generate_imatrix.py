#!/usr/bin/env python3
"""Importance-matrix fixtures for quantscope's imatrix reader (tests/it/imatrix.rs).

Writes tests/golden/imatrix/:

  small.gguf, small.dat   the same statistics in both formats llama-imatrix writes
                          (imatrix_writer.py beside this script follows its writer): three
                          dense entries (64, 256 and 32 columns, a few columns 20x louder
                          than the rest) and a two-expert entry whose second expert saw
                          no token (llama-imatrix's "partial data").
  small.json              what libgguf 0.2.2's load_imatrix returns for each file, every
                          float32 written with repr (round-trips exactly), plus the keys
                          the GGUF holds (chunk count, chunk size, datasets).
  small_x.npy             the activations of blk.0.attn_q.weight (40 tokens x 64 columns,
                          float32) the sums were made from: the mean of x^2 per column of
                          these is the entry's importance.
  bad_*.gguf, bad_*.dat   one defect each (see BAD below); small.json records what libgguf
                          makes of each (the value, or its error), beside which quantscope
                          refuses them with a message.

Run from the crate root (numpy and libgguf==0.2.2 installed):
    python3 tests/golden/generate_imatrix.py

Deterministic: a rerun rewrites byte-identical files.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "imatrix")
sys.path.insert(0, HERE)
from imatrix_writer import Entry, dat_bytes, gguf_bytes, gguf_file, sums_of_squares  # noqa: E402

CHUNK_SIZE = 16
DATASETS = ["calibration.txt"]


def activations(rng: np.random.Generator, tokens: int, cols: int, loud: list[int]) -> np.ndarray:
    x = rng.standard_normal((tokens, cols)).astype(np.float32)
    for c in loud:
        x[:, c] *= np.float32(20.0)
    return x


def entries() -> tuple[dict[str, Entry], np.ndarray]:
    rng = np.random.default_rng(20250301)
    xq = activations(rng, 40, 64, [5, 40])
    xd = activations(rng, 40, 256, [3, 100, 101, 255])
    xo = activations(rng, 24, 32, [0])
    e0 = activations(rng, 16, 32, [7])
    moe = np.stack([sums_of_squares(e0), np.zeros(32, dtype=np.float32)])
    return {
        "blk.0.attn_q.weight": Entry(sums_of_squares(xq), [40]),
        "blk.0.ffn_down.weight": Entry(sums_of_squares(xd), [40]),
        "output.weight": Entry(sums_of_squares(xo), [24]),
        "blk.1.ffn_down_exps.weight": Entry(moe, [16, 0]),
    }, xq


def json_float(v) -> float | str:
    v = float(np.float32(v))
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def libgguf_reading(path: str):
    import libgguf
    try:
        got = libgguf.load_imatrix(path)
    except Exception as e:  # noqa: BLE001 - the error is the recorded result
        return {"error": f"{type(e).__name__}: {e}"}
    return {name: [json_float(v) for v in vals] for name, vals in sorted(got.items())}


def one_entry(name: str, sums, counts) -> dict[str, Entry]:
    return {name: Entry(np.asarray(sums, dtype=np.float32), counts)}


def bad_files() -> dict[str, bytes]:
    """One defect each: llama.cpp's loader or quantizer would misuse or refuse these."""
    ok = np.arange(1, 33, dtype=np.float32)
    nan = ok.copy()
    nan[9] = np.float32("nan")
    neg = ok.copy()
    neg[3] = np.float32(-0.5)
    name = "blk.0.attn_q.weight"
    gguf = lambda e: gguf_bytes(e, 1, CHUNK_SIZE, DATASETS)  # noqa: E731
    dat = lambda e: dat_bytes(e, 1, CHUNK_SIZE, DATASETS[0])  # noqa: E731
    # A model: one weight tensor, no statistics.
    model = gguf_file("model", b"", 0, [(name, [32, 2], np.arange(64, dtype=np.float32))])
    no_counts = gguf_bytes(one_entry(name, ok, [16]), 1, CHUNK_SIZE, DATASETS)
    no_counts = no_counts.replace(b"blk.0.attn_q.weight.counts", b"blk.0.attn_q.weight.countz")
    return {
        "bad_zero_counts.gguf": gguf(one_entry(name, ok, [0])),
        "bad_nan.gguf": gguf(one_entry(name, nan, [16])),
        "bad_negative.gguf": gguf(one_entry(name, neg, [16])),
        "bad_model.gguf": model,
        "bad_no_counts.gguf": no_counts,
        "bad_nan.dat": dat(one_entry(name, nan, [16])),
        "bad_negative.dat": dat(one_entry(name, neg, [16])),
    }


def main() -> None:
    import libgguf

    os.makedirs(OUT, exist_ok=True)
    es, xq = entries()
    tokens = max(max(e.counts) for e in es.values())
    files = {
        "small.gguf": gguf_bytes(es, tokens // CHUNK_SIZE, CHUNK_SIZE, DATASETS),
        "small.dat": dat_bytes(es, tokens // CHUNK_SIZE, CHUNK_SIZE, DATASETS[0]),
    }
    files.update(bad_files())
    for name, data in files.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    np.save(os.path.join(OUT, "small_x.npy"), xq)
    # The activations' importance is what the GGUF holds for their entry, bit for bit.
    mean = sums_of_squares(xq) / np.float32(xq.shape[0])
    got = libgguf.load_imatrix(os.path.join(OUT, "small.gguf"))["blk.0.attn_q.weight"]
    assert np.array_equal(mean.view(np.uint32), got.view(np.uint32))
    version = getattr(libgguf, "__version__", None)
    if version is None:
        from importlib.metadata import version as v
        version = v("libgguf")
    fixture = {
        "library": f"libgguf {version}",
        "call": "libgguf.load_imatrix(path)",
        "gguf": {
            "chunk_count": tokens // CHUNK_SIZE,
            "chunk_size": CHUNK_SIZE,
            "datasets": DATASETS,
        },
        "readings": {name: libgguf_reading(os.path.join(OUT, name)) for name in sorted(files)},
    }
    with open(os.path.join(OUT, "small.json"), "w") as f:
        json.dump(fixture, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()

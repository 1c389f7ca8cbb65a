#!/usr/bin/env python3
"""Golden fixtures for quantscope's i-quants and ternary types, made by the references.

Writes tests/golden/iquants/ (schema in README.md beside this file):

  inputs.json       the matrices and importance vectors, as the hex of their little-endian
                    float32 bytes (exact, and a quarter of the size of decimal text).
  <TYPE>.json       for IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_XS, IQ4_NL,
                    TQ1_0, TQ2_0: per matrix and importance vector, each row's bytes from
                    libgguf 0.2.2's quantize_rows (ggml's quantize_<type>, the REF backend, which
                    is ggml-quants.c built without floating-point contraction), and the FNV-1a
                    hash of gguf-py's dequantize of those bytes (asserted equal to libgguf's own
                    dequantize_rows). TQ1_0/TQ2_0 bytes are also asserted equal to gguf-py's
                    quantize.
  bulk.json         hashes of the bytes and values every type gives on the 64x1024 matrix of
                    tests/golden/formats/bulk.json (the same xorshift64* generator), without
                    and with an importance vector from the same generator.
  grids.json        gguf-py's own copies of the codebooks (grid_hex, grid_map, grid_shape per
                    type, ksigns), which tests/it/iquants.rs decodes as gguf-py's init_grid does and
                    compares with src/core/format/iquant/tables.rs.

Types that llama.cpp refuses without an importance matrix (libgguf.quantize_requires_imatrix:
IQ2_XXS, IQ2_XS, IQ1_S) have cases with importance vectors only: libgguf's quantize_rows would
otherwise make one up from the rows' sums of squares, which llama-quantize never does.

Run from the crate root:
    pip install libgguf==0.2.2 gguf==0.19.0 numpy==2.4.6
    python3 tests/golden/generate_iquants.py

Deterministic: a rerun rewrites byte-identical files.
"""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "iquants")
sys.path.insert(0, HERE)
from generate import matrix_a, matrix_b  # noqa: E402
from generate_formats import XorShift, bulk_matrix, fnv1a, matrix_k, write_fixtures  # noqa: E402
from generate_formats import dumps as formats_dumps  # noqa: E402

import gguf  # noqa: E402
import libgguf  # noqa: E402

TYPES = ["IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ4_XS", "IQ4_NL",
         "TQ1_0", "TQ2_0"]
GRID_TYPES = ["IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ1_S"]


def matrix_e() -> np.ndarray:
    """6x256, the edges of the lattice searches.

    row 0 : constant 0.3 (every sort key ties)
    row 1 : one non-zero value (1.0 at column 100), the rest 0
    row 2 : N(0, 1) with values 32..63 zero (a whole 32-value sub-block: IQ3_S then writes the
            following sub-blocks' codes and signs one sub-block early, as ggml does) and values
            96..111 zero (a 16-value sub-block); groups of 8 with odd and even negative counts
    row 3 : subnormal values (about 1e-40) in the first half, about 1e-9 in the second
    row 4 : ties: multiples of 0.5 in [-2, 2]
    row 5 : N(0, 1e4^2) with an outlier of 3e5
    """
    rng = np.random.default_rng(20250311)
    e = np.zeros((6, 256), dtype=np.float32)
    e[0] = np.float32(0.3)
    e[1, 100] = np.float32(1.0)
    e[2] = rng.standard_normal(256).astype(np.float32)
    e[2, 32:64] = 0.0
    e[2, 96:112] = 0.0
    e[2, 0:8] = np.abs(e[2, 0:8])
    e[2, 1] = -e[2, 1]  # one negative in the first group of 8
    e[3, :128] = (rng.standard_normal(128) * 1e-40).astype(np.float32)
    e[3, 128:] = (rng.standard_normal(128) * 1e-9).astype(np.float32)
    e[4] = (rng.integers(-4, 5, 256) / 2.0).astype(np.float32)
    e[5] = (rng.standard_normal(256) * 1e4).astype(np.float32)
    e[5, 200] = np.float32(3e5)
    return e


def importance(cols: int, seed: int) -> dict[str, np.ndarray]:
    """Two per-column weight vectors: `random` (uniform 0.5 .. 2) and `sparse` (the same with
    every 7th column 0, columns 8..15 all 0, and column 3 dominant at 1e4)."""
    rng = np.random.default_rng(seed)
    r = rng.uniform(0.5, 2.0, cols).astype(np.float32)
    s = r.copy()
    s[::7] = 0.0
    s[8:16] = 0.0
    s[3] = np.float32(1e4)
    return {"random": r, "sparse": s}


def bulk_importance(cols: int) -> np.ndarray:
    """0.25 + 4 u per column, u from xorshift64* seeded 0x1A7B1C (exact in float32)."""
    g = XorShift(0x1A7B1C)
    return np.array([0.25 + 4.0 * g.uniform() for _ in range(cols)], dtype=np.float32)


def hex_rows(a: np.ndarray) -> list[str]:
    return [np.ascontiguousarray(r).astype("<f4").tobytes().hex() for r in a]


def block_len(t: str) -> int:
    return libgguf.GGML_QUANT_SIZES[libgguf.GGMLQuantizationType[t]][0]


def quantize(t: str, x: np.ndarray, imp: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """libgguf's bytes and gguf-py's dequantize of them (checked against libgguf's)."""
    qt = libgguf.GGMLQuantizationType[t]
    raw = libgguf.quantize_rows(x, qt, imatrix=imp)
    deq = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType[t]).astype(np.float32)
    ref = np.asarray(libgguf.dequantize_rows(raw, qt, n_per_row=x.shape[1]), dtype=np.float32)
    assert deq.shape == x.shape and np.array_equal(deq.view(np.uint32), ref.reshape(x.shape).view(np.uint32)), t
    if t in ("TQ1_0", "TQ2_0"):
        with np.errstate(all="ignore"):
            py = gguf.quants.quantize(x, gguf.GGMLQuantizationType[t])
        assert np.array_equal(py, raw), f"{t}: gguf-py's quantize differs from libgguf's"
    return raw, deq


def grids() -> dict:
    out = {"ksigns": IQ2_XXS_KSIGNS(), "kvalues_iq4nl": [int(v) for v in gguf.quants.IQ4_NL.kvalues],
           "types": {}}
    for t in GRID_TYPES:
        cls = getattr(gguf.quants, t)
        out["types"][t] = {"grid_shape": list(cls.grid_shape), "grid_map": [int(v) for v in cls.grid_map],
                           "grid_hex": cls.grid_hex.decode()}
    return out


def IQ2_XXS_KSIGNS() -> str:  # noqa: N802 (gguf-py's name)
    return gguf.quants.IQ2_XXS.ksigns.hex()


def dumps(fx: dict) -> str:
    """JSON with one list item per line (lists of strings too), items spaced as json.dumps
    spaces them."""
    return formats_dumps(fx, split=(list, dict, str), row=json.dumps)


def main() -> int:
    os.makedirs(OUT_DIR, exist_ok=True)
    mats = {"k6x512": matrix_k(), "e6x256": matrix_e(), "a8x64": matrix_a(), "b5x96": matrix_b()}
    imps = {name: importance(m.shape[1], 7 + i) for i, (name, m) in enumerate(mats.items())}
    library = f"libgguf {version('libgguf')} (quantize_rows, REF backend), gguf {version('gguf')} (dequantize)"
    out: dict = {
        "inputs.json": {
            "matrices": {n: {"shape": list(m.shape), "rows": hex_rows(m)} for n, m in mats.items()},
            "importance": {n: {k: v.astype("<f4").tobytes().hex() for k, v in d.items()} for n, d in imps.items()},
        }
    }
    for t in TYPES:
        needs = libgguf.quantize_requires_imatrix(libgguf.GGMLQuantizationType[t])
        cases = []
        for name, m in mats.items():
            if m.shape[1] % block_len(t):
                continue
            for imp_name in ([] if needs else [None]) + list(imps[name]):
                imp = None if imp_name is None else imps[name][imp_name]
                raw, deq = quantize(t, m, imp)
                cases.append({"matrix": name, "importance": imp_name,
                              "bytes": [r.tobytes().hex() for r in raw],
                              "dequantized": fnv1a(deq.astype("<f4").tobytes())})
        out[f"{t}.json"] = {
            "library": library,
            "call": f"libgguf.quantize_rows(x, {t}, imatrix=importance); gguf.quants.dequantize(bytes, {t})",
            "format": t, "requires_imatrix": bool(needs), "cases": cases}
    bulk = bulk_matrix()
    bimp = bulk_importance(bulk.shape[1])
    hashes = {}
    for t in TYPES:
        needs = libgguf.quantize_requires_imatrix(libgguf.GGMLQuantizationType[t])
        hashes[t] = {}
        for key, imp in ([] if needs else [("none", None)]) + [("importance", bimp)]:
            raw, deq = quantize(t, bulk, imp)
            hashes[t][key] = {"bytes": fnv1a(raw.tobytes()), "dequantized": fnv1a(deq.astype("<f4").tobytes())}
    out["bulk.json"] = {
        "library": library,
        "matrix": "tests/golden/formats/bulk.json's 64x1024 (xorshift64* from seed 0x5EEDF0F0)",
        "input": fnv1a(bulk.astype("<f4").tobytes()),
        "importance": "f32(0.25 + 4 u) per column, u = (next >> 40) / 2^24 from xorshift64* seeded 0x1A7B1C",
        "importance_hash": fnv1a(bimp.astype("<f4").tobytes()),
        "hash": "FNV-1a 64 of the little-endian bytes: libgguf's blocks and gguf-py's dequantized f32 values",
        "types": hashes}
    out["grids.json"] = {"library": f"gguf {version('gguf')} (gguf.quants: grid_hex, grid_map, grid_shape, "
                                    "IQ2_XXS.ksigns, IQ4_NL.kvalues)", **grids()}
    total = write_fixtures(out, OUT_DIR, 16, dumps)
    print(f"{len(out)} fixtures, {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

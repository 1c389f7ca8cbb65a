#!/usr/bin/env python3
"""Golden fixtures for quantizing with an importance vector, made by libgguf (ggml's own C).

Writes tests/golden/weighted/<type>.json for Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q4_0, Q4_1,
Q5_0, Q5_1 and Q8_0: the bytes of `libgguf.quantize_rows(x, type, imatrix=a)` (ggml's
`quantize_<type>` with `quant_weights`, what `llama-quantize --imatrix` runs), for

  matrices   the inputs of the format fixtures (tests/golden/formats/): 4x256 and 6x512
             (k-quants and legacy types), 8x64 and 5x96 (legacy types): random rows over
             three decades with an outlier, zero, constant, one-signed, tiny and tie rows;
  importance four vectors per width, from an integer generator the Rust test repeats
             (see `importance` below):
               loud      (0.25 + u)^2 with every column c % 37 == 5 400 times louder;
               zeros     loud, with columns c % 5 == 0 and the first 32 columns 0 (a whole
                         block or sub-block of zero importance);
               dominant  1 everywhere, column 7 at 1e4 and column n - 3 at 1e3;
               tiny      loud times 1e-30 (products near f32's smallest normals).

(Q8_0 only the 8x64 and 5x96 matrices: its quantizer does not read the importance), and
bulk.json: FNV-1a 64 hashes of every type's bytes on the 64x1024 bulk matrix of the
format fixtures with the `loud` importance of width 1024.

libgguf 0.2.2 runs ggml's C compiled without floating-point contraction (no fused
multiply-add): its bytes without importance equal ggml's reference fixtures in
tests/golden/formats/ (checked here). A build with FMA (-march=native) differs.

Run from the crate root (numpy and libgguf==0.2.2 installed):
    python3 tests/golden/generate_weighted.py
Deterministic: a rerun rewrites byte-identical files.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "weighted")
FORMATS = os.path.join(HERE, "formats")
sys.path.insert(0, HERE)
from generate_formats import XorShift, bulk_matrix, fnv1a  # noqa: E402

KQUANTS = ["Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"]
LEGACY = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0"]
KINDS = ["loud", "zeros", "dominant", "tiny"]


def importance(kind: str, n: int) -> np.ndarray:
    """The importance vector `kind` for n columns (the Rust test computes the same)."""
    g = XorShift(0x1337_0000 + n)
    out = np.zeros(n, dtype=np.float32)
    for c in range(n):
        u = g.uniform()
        v = (0.25 + u) ** 2
        if c % 37 == 5:
            v *= 400.0
        if kind == "zeros" and (c % 5 == 0 or c < 32):
            v = 0.0
        if kind == "dominant":
            v = 1e4 if c == 7 else 1e3 if c == n - 3 else 1.0
        if kind == "tiny":
            v *= 1e-30
        out[c] = np.float32(v)
    return out


def inputs() -> dict[str, np.ndarray]:
    """The format fixtures' input matrices by name."""
    out = {}
    for f in ("ggml_q4_K.json", "legacy_q4_0.json"):
        with open(os.path.join(FORMATS, f)) as fh:
            for case in json.load(fh)["cases"]:
                out[case["matrix"]] = np.array(case["input"], dtype=np.float32)
    return out


def check_reference(libgguf, mats) -> None:
    """Without importance libgguf gives ggml's reference bytes (no contraction)."""
    for t in KQUANTS:
        with open(os.path.join(FORMATS, f"ggml_{t.lower().replace('_k', '_K')}.json")) as fh:
            for case in json.load(fh)["cases"]:
                got = libgguf.quantize_rows(mats[case["matrix"]], getattr(libgguf.GGMLQuantizationType, t))
                assert [bytes(r).hex() for r in got] == case["bytes"], (t, case["matrix"])


def main() -> None:
    import libgguf
    from importlib.metadata import version

    os.makedirs(OUT, exist_ok=True)
    mats = inputs()
    check_reference(libgguf, mats)
    bulk = bulk_matrix()
    bulk_imp = importance("loud", bulk.shape[1])
    hashes = {}
    for t in KQUANTS + LEGACY:
        qtype = getattr(libgguf.GGMLQuantizationType, t)
        # Q8_0 ignores the importance (ggml's quantize_q8_0 does not read it): the small
        # matrices show that.
        names = (["8x64", "5x96"] if t == "Q8_0" else
                 ["4x256", "6x512"] + ([] if t in KQUANTS else ["8x64", "5x96"]))
        cases = []
        for m in names:
            x = mats[m]
            for kind in KINDS:
                a = importance(kind, x.shape[1])
                got = libgguf.quantize_rows(x, qtype, imatrix=a)
                cases.append({"matrix": m, "importance": kind,
                              "bytes": [bytes(r).hex() for r in got]})
        fx = {
            "library": f"libgguf {version('libgguf')}",
            "call": f"libgguf.quantize_rows(x, GGMLQuantizationType.{t}, imatrix=a)",
            "format": t,
            "cases": cases,
        }
        with open(os.path.join(OUT, f"{t.lower()}.json"), "w") as fh:
            json.dump(fx, fh, indent=1)
            fh.write("\n")
        got = libgguf.quantize_rows(bulk, qtype, imatrix=bulk_imp)
        hashes[t] = fnv1a(got.tobytes())
    with open(os.path.join(OUT, "bulk.json"), "w") as fh:
        json.dump({
            "library": f"libgguf {version('libgguf')}",
            "call": "libgguf.quantize_rows(bulk, type, imatrix=importance('loud', 1024))",
            "shape": list(bulk.shape),
            "input": fnv1a(bulk.tobytes()),
            "importance": fnv1a(bulk_imp.tobytes()),
            "bytes": hashes,
        }, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A small GGUF file of every i-quant and ternary type, for quantscope's stored view.

Writes tests/golden/iquants/iquants.gguf with gguf-py's GGUFWriter: for each of IQ1_S,
IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_XS, IQ4_NL, TQ1_0, TQ2_0 a tensor named
after the type in lower case (`iq4_xs`), 4 rows of 256 (IQ4_NL: 4 rows of 96), holding the
bytes libgguf 0.2.2's quantize_rows gives (ggml's quantize_<type>, with an importance vector,
which IQ2_XXS, IQ2_XS and IQ1_S need), and beside it an F32 tensor `<name>.dequant` holding
gguf-py's gguf.quants.dequantize of those bytes (asserted equal to libgguf's own
dequantize_rows). Row 1 of every tensor is all zeros (collapsed as stored); row 3 spans five
decades.

Run from the crate root:
    pip install libgguf==0.2.2 gguf==0.19.0 numpy
    python3 tests/golden/generate_iquant_gguf.py

Deterministic: a rerun rewrites a byte-identical file.
"""

from __future__ import annotations

import os

import numpy as np

import gguf
import libgguf

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "iquants", "iquants.gguf")

TYPES = ["IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ3_XXS", "IQ3_S", "IQ4_XS", "IQ4_NL",
         "TQ1_0", "TQ2_0"]


def rows(rng: np.random.Generator, cols: int) -> np.ndarray:
    x = rng.normal(size=(4, cols)).astype(np.float32)
    x[1] = 0.0
    x[3] *= np.float32(10.0) ** rng.integers(-3, 2, size=cols).astype(np.float32)
    return x


def main() -> None:
    rng = np.random.default_rng(68)
    w = gguf.GGUFWriter(OUT, "quantscope-fixture")
    for t in TYPES:
        cols = 96 if t == "IQ4_NL" else 256
        x = rows(rng, cols)
        imp = (0.25 + 4.0 * rng.random(cols)).astype(np.float32)
        qt = libgguf.GGMLQuantizationType[t]
        raw = np.asarray(libgguf.quantize_rows(x, qt, imatrix=imp), dtype=np.uint8)
        deq = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType[t]).astype(np.float32)
        ref = np.asarray(libgguf.dequantize_rows(raw, qt, n_per_row=cols), dtype=np.float32)
        assert np.array_equal(deq.reshape(-1).view(np.uint32), ref.reshape(-1).view(np.uint32)), t
        name = t.lower()
        w.add_tensor(name, raw.reshape(4, -1), raw_dtype=gguf.GGMLQuantizationType[t])
        w.add_tensor(name + ".dequant", deq.reshape(4, cols))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()

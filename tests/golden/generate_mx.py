#!/usr/bin/env python3
"""Golden fixtures for the OCP Microscaling (MX) formats, made with ml_dtypes' casts.

Writes tests/golden/mx/*.json:

  inputs.json       the input matrices (shared by every file below)
  <format>.json     mxfp8-e4m3, mxfp8-e5m2, mxfp6-e2m3, mxfp6-e3m2, mxfp4-ocp, mxint8: per
                    block of 32 values along a row, the E8M0 scale byte, each element's code
                    and the reconstruction
  mxfp4_ggml.json   ggml's MXFP4 on the same matrices, run by libgguf 0.2.2
                    (quantize_rows / dequantize_rows), so the test can show where ggml's rule
                    and the OCP rule part

The formula is the OCP Microscaling Formats v1.0 specification's conversion (section 6.3):

    shared_exp = floor(log2(max_i |V_i|)) - emax_elem
    X          = 2^shared_exp                       (stored as E8M0: shared_exp + 127)
    P_i        = quantize_to_element_format(V_i / X), round to nearest even, normal
                 values clamped to the element type's largest magnitude

computed here in numpy float32: floor(log2(amax)) is the exact exponent of amax (np.frexp,
so an amax just below a power of two is not rounded up as a float log2 would), an all-zero
block's exponent is the smallest scale (shared_exp clamped to -127, as the spec's reference
code clamps it), V_i / X is a float32 division, the clamp is np.clip to +-max and the
rounding is ml_dtypes' cast (float8_e4m3fn, float8_e5m2, float6_e2m3fn, float6_e3m2fn,
float4_e2m1fn; the scale through float8_e8m0fnu). MXINT8's element is the spec's INT8: two's
complement with an implicit scale of 2^-6, emax_elem 0; P_i = clip(rint(V_i / X * 64), -127,
127) (round half to even; the largest magnitude is 127/64 = 1.984375 as in the spec's table,
so -128 is not produced). The reconstruction is float32(P_i) * X.

Run from the crate root:
    pip install numpy==2.4.6 ml_dtypes==0.7.0 libgguf==0.2.2
    python3 tests/golden/generate_mx.py

Deterministic: a rerun rewrites byte-identical files.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "mx")
sys.path.insert(0, HERE)
from generate import f32_list, int_list, matrix_a, matrix_c, same_bits  # noqa: E402
from generate_formats import write_fixtures  # noqa: E402

BLOCK = 32
F32_MAX = np.finfo(np.float32).max


def kinds():
    import ml_dtypes as m

    # name: (ml_dtypes element type or None for INT8, emax_elem, largest magnitude)
    return {
        "mxfp8-e4m3": (m.float8_e4m3fn, 8, 448.0),
        "mxfp8-e5m2": (m.float8_e5m2, 15, 57344.0),
        "mxfp6-e2m3": (m.float6_e2m3fn, 2, 7.5),
        "mxfp6-e3m2": (m.float6_e3m2fn, 4, 28.0),
        "mxfp4-ocp": (m.float4_e2m1fn, 2, 6.0),
        "mxint8": (None, 0, 127.0 / 64.0),
    }


# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------


def matrix_edges() -> np.ndarray:
    """8x64: the blocks where a float rule can go wrong.

    row 0 : block 0 the largest f32 among ordinary values; block 1 minus it
    row 1 : block 0 f32 subnormals (down to 2^-149) and zeros; block 1 values near the
            smallest normal f32 (1e-38)
    row 2 : block 0 amax just below 16 (16 - 2^-20: a float32 log2 rounds it to 4.0, the
            exact exponent is 3); block 1 amax just below 2^-100
    row 3 : signed zeros and small negative values that round to a negative zero
    row 4 : block 0 an outlier 2^20 above values of order 1; block 1 one-signed (all
            negative)
    row 5 : block 0 constant 0.1; block 1 all zero
    row 6 : amax exactly a power of two (8), and values at every power of two below it
    row 7 : block 0 the E8M0 scale's floor: amax 2^-130 (shared_exp below -127); block 1
            amax 2^127 exactly
    """
    rng = np.random.default_rng(20251201)
    e = np.zeros((8, 64), dtype=np.float32)
    e[0, :32] = rng.standard_normal(32).astype(np.float32)
    e[0, 5] = F32_MAX
    e[0, 32:] = (rng.standard_normal(32) * 1e30).astype(np.float32)
    e[0, 40] = -F32_MAX
    sub = np.array([2.0 ** -149, -(2.0 ** -149), 3 * 2.0 ** -149, 2.0 ** -140, -(2.0 ** -133),
                    1e-40, -1e-41, 2.0 ** -127], dtype=np.float32)
    e[1, :32] = np.resize(np.concatenate([sub, np.zeros(4, np.float32)]), 32)
    e[1, 32:] = (rng.standard_normal(32) * 1e-38).astype(np.float32)
    e[2, :32] = rng.uniform(-12.0, 12.0, 32).astype(np.float32)
    e[2, 7] = np.float32(16.0 - 2.0 ** -20)
    below = np.float32(np.nextafter(np.float32(2.0 ** -100), np.float32(0)))
    e[2, 32:] = (rng.uniform(-0.5, 0.5, 32) * 2.0 ** -100).astype(np.float32)
    e[2, 50] = -below
    e[3, :32] = np.resize(np.array([0.0, -0.0, -1e-3, 1.0, -1e-4, -0.0, 2e-3, -0.5], np.float32), 32)
    e[3, 32:] = np.resize(np.array([-0.0, 0.0, -3e-6, 0.25, -0.0, -1e-7, 0.0, -0.25], np.float32), 32)
    e[4, :32] = rng.standard_normal(32).astype(np.float32)
    e[4, 9] = np.float32(2.0 ** 20)
    e[4, 32:] = -rng.uniform(0.01, 2.0, 32).astype(np.float32)
    e[5, :32] = np.float32(0.1)
    e[6, :32] = np.resize(np.array([2.0 ** -k for k in range(-3, 29)], np.float32), 32)
    e[6, 32:] = -e[6, :32]
    e[7, :32] = (rng.uniform(-1.0, 1.0, 32) * 2.0 ** -130).astype(np.float32)
    e[7, 0] = np.float32(2.0 ** -130)
    e[7, 32:] = (rng.uniform(-1.0, 1.0, 32) * 2.0 ** 126).astype(np.float32)
    e[7, 33] = np.float32(2.0 ** 127)
    return e


def element_grid(name: str) -> np.ndarray:
    """Every non-negative finite value of the element type."""
    dt, _, vmax = kinds()[name]
    if dt is None:
        return np.arange(0, 128, dtype=np.float32) / np.float32(64)
    v = np.arange(256, dtype=np.uint8)
    bits = {"mxfp6-e2m3": 5, "mxfp6-e3m2": 5, "mxfp4-ocp": 3}.get(name, 7)
    v = v[v < (1 << bits)]
    vals = v.view(dt).astype(np.float32)
    vals = vals[np.isfinite(vals) & (vals <= vmax)]
    return np.unique(vals)


def matrix_ties() -> np.ndarray:
    """6x32: row k is the tie row of the k-th format (in kinds() order): its amax puts X at 1
    (amax = 2^emax_elem), and every other value is a midpoint between two neighbouring
    element values (both signs), which the cast must round to the even one."""
    rng = np.random.default_rng(20251202)
    rows = []
    for name, (_, emax, _) in kinds().items():
        g = element_grid(name)
        mids = (g[:-1] + g[1:]) / np.float32(2)
        pick = rng.choice(mids, 31, replace=len(mids) < 31)
        sign = rng.choice(np.array([-1.0, 1.0], np.float32), 31)
        rows.append(np.concatenate([[np.float32(2.0 ** emax)], pick * sign]).astype(np.float32))
    return np.stack(rows)


def matrices():
    return [("8x64", matrix_a()), ("4x256", matrix_c()), ("edges_8x64", matrix_edges()),
            ("ties_6x32", matrix_ties())]


# --------------------------------------------------------------------------
# The OCP formula
# --------------------------------------------------------------------------


def shared_exponent(amax: np.float32, emax: int) -> int:
    """floor(log2(amax)) - emax_elem, clamped to E8M0's range [-127, 127]."""
    if amax == 0:
        return -127
    _, e = np.frexp(np.float64(amax))  # amax = m * 2^e, 0.5 <= m < 1: exact
    return int(max(-127, min(127, (int(e) - 1) - emax)))


def encode(name: str, x: np.ndarray):
    """(scale bytes, codes, reconstruction) of a matrix whose rows are whole blocks."""
    import ml_dtypes as m

    dt, emax, vmax = kinds()[name]
    rows, cols = x.shape
    scales = np.zeros((rows, cols // BLOCK), dtype=np.int64)
    codes = np.zeros(x.shape, dtype=np.int64)
    deq = np.zeros(x.shape, dtype=np.float32)
    fmax = np.float32(vmax)
    for r in range(rows):
        for b in range(cols // BLOCK):
            blk = x[r, b * BLOCK:(b + 1) * BLOCK]
            se = shared_exponent(np.float32(np.abs(blk).max()), emax)
            big_x = np.float32(2.0 ** se)
            e8 = np.array([big_x], np.float32).astype(m.float8_e8m0fnu)
            assert int(e8.view(np.uint8)[0]) == se + 127 and e8.astype(np.float32)[0] == big_x
            scales[r, b] = se + 127
            with np.errstate(under="ignore"):
                v = (blk / big_x).astype(np.float32)
            clipped = np.clip(v, -fmax, fmax)
            if dt is None:
                q = np.rint(clipped * np.float32(64)).astype(np.float32)
                q = np.clip(q, -127, 127)
                # The stored int8 has one zero: the reconstruction is its value.
                elem = (q.astype(np.int8).astype(np.float32) / np.float32(64)).astype(np.float32)
                c = q.astype(np.int64) & 0xFF
            else:
                qd = clipped.astype(dt)
                elem = qd.astype(np.float32)
                c = qd.view(np.uint8).astype(np.int64)
            out = (elem * big_x).astype(np.float32)
            assert np.all(np.isfinite(out)), f"{name}: a finite block reconstructs to infinity"
            codes[r, b * BLOCK:(b + 1) * BLOCK] = c
            deq[r, b * BLOCK:(b + 1) * BLOCK] = out
    return scales, codes, deq


def ggml_mxfp4(x: np.ndarray):
    import libgguf

    t = libgguf.GGMLQuantizationType.MXFP4
    raw = libgguf.quantize_rows(x, t)
    deq = libgguf.dequantize_rows(raw, t).reshape(x.shape)
    from gguf import GGMLQuantizationType
    from gguf.quants import dequantize, quantize

    assert np.array_equal(quantize(x, GGMLQuantizationType.MXFP4), raw), "gguf-py != libgguf MXFP4"
    assert same_bits(dequantize(raw, GGMLQuantizationType.MXFP4), deq)
    return raw, deq


def main() -> int:
    import ml_dtypes as m

    os.makedirs(OUT_DIR, exist_ok=True)
    mats = matrices()
    out: dict = {
        "inputs.json": {
            "about": "input matrices of the MX fixtures; see generate_mx.py for what each row holds",
            "matrices": [{"name": n, "shape": list(x.shape), "input": f32_list(x)} for n, x in mats],
        }
    }
    lib = (f"numpy {np.__version__} float32 arithmetic, ml_dtypes {md.version('ml_dtypes')} casts "
           f"(round to nearest even; scales through float8_e8m0fnu)")
    for name, (dt, emax, vmax) in kinds().items():
        cases = []
        for label, x in mats:
            scales, codes, deq = encode(name, x)
            cases.append({"matrix": label, "scales": int_list(scales), "codes": int_list(codes),
                          "dequantized": f32_list(deq)})
        elem = dt.__name__ if dt is not None else "int8 (two's complement, implicit scale 2^-6)"
        out[f"{name}.json"] = {
            "library": lib,
            "call": ("OCP MX v1.0 section 6.3: shared_exp = floor(log2(amax)) - emax_elem (exact "
                     "exponent; -127 for an all-zero block; clamped to [-127, 127]); X = 2^shared_exp; "
                     "P = cast(clip(V / X, -max, max)); x_hat = float32(P) * X"
                     + ("; INT8: P = clip(rint(V / X * 64), -127, 127) / 64" if dt is None else "")),
            "format": name, "element": elem, "emax_elem": emax, "max": vmax, "block": BLOCK,
            "cases": cases}
    ggml_cases = []
    for label, x in mats:
        raw, deq = ggml_mxfp4(x)
        ggml_cases.append({"matrix": label, "bytes": [bytes(row).hex() for row in raw],
                           "dequantized": f32_list(deq)})
    out["mxfp4_ggml.json"] = {
        "library": f"libgguf {md.version('libgguf')} (ggml's quantize_row_mxfp4_ref), gguf "
                   f"{md.version('gguf')} quantize giving the same bytes",
        "call": "libgguf.quantize_rows(x, MXFP4) and dequantize_rows",
        "format": "MXFP4", "cases": ggml_cases}
    del m
    total = write_fixtures(out, OUT_DIR, 24)
    print(f"{len(out)} fixtures, {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Golden-fixture generator for quantscope.

Calls the REAL reference libraries on small, fixed-seed float32 matrices and
writes one JSON file per case into this directory (tests/golden/).  The Rust
tests read these files and compare the app's presets against them.

Libraries (versions are read at run time and stored in each fixture's
"library" field; the fixtures in the repository were generated with):
    onnxruntime 1.31.1  (quant_utils.quantize_data, DequantizeLinear session,
                         quantize_matmul_4bits + MatMulNBits session)
    gguf        0.19.0  (gguf-py: gguf.quants.quantize / dequantize)
    torch       2.15.0  (optional: observers + quantize_per_channel/_tensor)
    onnx        1.23.2, numpy 2.4.6, Python 3.11

Install:
    pip install onnxruntime==1.31.1 onnx==1.23.2 gguf==0.19.0 numpy==2.4.6
    pip install torch==2.15.0        # optional; torch fixtures are skipped without it

Run (from the crate root):
    python3 tests/golden/generate.py

The script is deterministic (fixed seeds, no timestamps): rerunning it
rewrites byte-identical files.  Before writing anything it runs a self-check
that re-derives each fixture's "dequantized" values from "blocks" + "codes"
with the library's own dequantization formula and asserts bit equality, so a
broken unpacking of packed bytes cannot slip through.

Fixture schema: see README.md in this directory.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

OUT_DIR = os.path.dirname(os.path.abspath(__file__))

# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------



MASK = (1 << 64) - 1


def fnv1a(data: bytes) -> str:
    """FNV-1a, 64 bits, as hex: the hash the bulk fixtures are checked by."""
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & MASK
    return f"{h:016x}"


def ort_run(graph) -> np.ndarray:
    """Runs an ONNX `graph` that has no inputs (opset 21) on ONNX Runtime's CPU provider
    with every graph optimisation off, and returns its one output."""
    import onnx
    import onnxruntime as ort
    from onnx import helper

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, {})[0]

def _row_stds(rng: np.random.Generator, n: int) -> np.ndarray:
    """n row standard deviations spread log-uniformly over 1000x (1e-3 .. 1)."""
    exps = np.linspace(-3.0, 0.0, n)
    rng.shuffle(exps)
    return (10.0 ** exps).astype(np.float64)


def matrix_a() -> np.ndarray:
    """8x64 (two GGUF blocks of 32 per row).

    row 0..2 : N(0, std^2), std log-uniform over 1000x (row 2 gets an outlier)
    row 3    : constant non-zero (0.3)
    row 4    : all zero
    row 5    : one-signed (all positive)
    row 6    : int8 tie row: multiples of 1/128, |max| = 127/64 in both 32-blocks
               -> ORT int8 symmetric scale = 1/64 exactly, GGUF Q8_0 d = 1/64,
               so every odd multiple of 1/128 lands exactly on a .5 tie
    row 7    : 4-bit tie row: multiples of 1/16 in [-2, 1.75], both ends present
               in each 32-block -> ORT int4/uint4 asymmetric scale 0.25, GGUF
               Q4_0 d = 0.25, Q4_1 d = 0.25 / m = -2: odd multiples of 1/8 tie
    """
    rng = np.random.default_rng(20240601)
    cols = 64
    a = np.zeros((8, cols), dtype=np.float32)
    stds = _row_stds(rng, 4)
    for r in range(3):
        a[r] = (rng.standard_normal(cols) * stds[r]).astype(np.float32)
    a[2, 17] = np.float32(9.0 * stds[2])  # outlier
    a[3] = np.float32(0.3)
    a[4] = 0.0
    a[5] = (rng.uniform(0.2, 1.0, cols) * stds[3]).astype(np.float32)
    k = rng.integers(-253, 254, cols)
    k[0], k[32] = 254, -254  # +-127/64 in each 32-block
    a[6] = (k / 128.0).astype(np.float32)
    k = rng.integers(-32, 29, cols)
    k[3], k[10], k[35], k[50] = -32, 28, -32, 28  # -2 and 1.75 in each block
    a[7] = (k / 16.0).astype(np.float32)
    return a


def matrix_b() -> np.ndarray:
    """5x96 (three GGUF blocks of 32 per row).

    row 0 : N(0, std^2), row 1 : N(0, std^2) with one negative outlier
    row 2 : constant negative (-1.25)
    row 3 : tiny values (std 1e-6): fp16 block scales become subnormal / flush
    row 4 : mixed: block 0 all negative, block 1 all zero, block 2 N(0, std^2)
    stds of rows 0, 1, 4 spread log-uniformly over 1000x.
    """
    rng = np.random.default_rng(20240602)
    cols = 96
    b = np.zeros((5, cols), dtype=np.float32)
    stds = _row_stds(rng, 3)
    b[0] = (rng.standard_normal(cols) * stds[0]).astype(np.float32)
    b[1] = (rng.standard_normal(cols) * stds[1]).astype(np.float32)
    b[1, 70] = np.float32(-12.0 * stds[1])
    b[2] = np.float32(-1.25)
    b[3] = (rng.standard_normal(cols) * 1e-6).astype(np.float32)
    b[4, :32] = (-rng.uniform(0.1, 1.0, 32) * stds[2]).astype(np.float32)
    b[4, 32:64] = 0.0
    b[4, 64:] = (rng.standard_normal(32) * stds[2]).astype(np.float32)
    return b


def matrix_c() -> np.ndarray:
    """4x256 for MatMulNBits (two groups of 128 along each row).

    row 0 : N(0, std^2) both groups
    row 1 : group 0 N(0, std^2), group 1 one-signed (all positive)
    row 2 : group 0 constant negative (-0.75), group 1 all zero
    row 3 : group 0 asymmetric tie group: multiples of 1/16 in [-2, 1.75]
            (scale 0.25, zp 8 -> odd multiples of 1/8 are exact .5 ties);
            group 1 symmetric tie group: -1.5 and +1.5 both present (|max|
            tie) and multiples of 3/32 (scale 0.1875 -> odd multiples tie)
    stds of rows 0, 1 (both groups) spread log-uniformly over 1000x.
    """
    rng = np.random.default_rng(20240603)
    cols, g = 256, 128
    c = np.zeros((4, cols), dtype=np.float32)
    stds = _row_stds(rng, 3)
    c[0] = (rng.standard_normal(cols) * stds[0]).astype(np.float32)
    c[1, :g] = (rng.standard_normal(g) * stds[1]).astype(np.float32)
    c[1, g:] = (rng.uniform(0.1, 1.0, g) * stds[2]).astype(np.float32)
    c[2, :g] = np.float32(-0.75)
    c[2, g:] = 0.0
    k = rng.integers(-32, 29, g)
    k[5], k[77] = -32, 28
    c[3, :g] = (k / 16.0).astype(np.float32)
    k = rng.integers(-16, 17, g)
    k[9], k[100] = 16, -16
    c[3, g:] = (k * (3.0 / 32.0)).astype(np.float32)
    return c


def matrix_d() -> np.ndarray:
    """10x4 for ONNX Runtime's edges (one row per case, quantized per row).

    rows 0..7 : reduce_range ties. ORT forms the scale and zero point from the reduced
                range (z in float64, from the float64 scale) and the codes from the
                float32 scale, then clips to the type's FULL range: a value whose ratio
                lands on a .5 tie just past the reduced range keeps the code outside it.
      row 0   : uint8 (both schemes): +max -> 128 past [0, 127]
      row 1   : int4 / uint4 asymmetric: +max -> 4 past [-4, 3] (8 past [0, 7])
      row 2   : int4 asymmetric: -max -> -5 below [-4, 3]
      row 3   : int4 / uint4 symmetric: +max on a tie -> 4 (8)
      row 4   : int8 asymmetric: +max -> 65 past [-64, 64]
      row 5   : int8 asymmetric: -max -> -65 below [-64, 64]
      row 6   : the issue's uint8 example (0.5, -1, 1) and a 0
      row 7   : the issue's int4 example (3.5, -1, 0.25) and a 0
    row 8     : tiny values (~1e-38): ORT's scale falls below the smallest normal f32,
                so its degenerate rule gives scale 1, zero point 0
    row 9     : the largest f32 beside small values: the reconstruction (q - z) * s
                overflows to infinity
    """
    rows = [
        [-0.0625, 0.0625, 0.03125, -0.03125],
        [-0.1, 0.1, 0.05, -0.05],
        [-0.3, 0.3, 0.15, -0.15],
        [-0.0625, 0.1, 0.05, -0.03125],
        [-27 / 7, 25 / 3, 25 / 6, -27 / 14],
        [-25 / 3, 27 / 7, 27 / 14, -25 / 6],
        [0.5, -1.0, 1.0, 0.0],
        [3.5, -1.0, 0.25, 0.0],
        [1e-38, -2e-38, 5e-39, 0.0],
        [float(np.finfo(np.float32).max), 1.0, -1.0, 0.0],
    ]
    return np.array(rows, dtype=np.float32)


def _tiny_pattern(unit: float, n: int = 32) -> np.ndarray:
    """-2, -1, 0, 1, 2, 3, 4 times `unit`, repeated: exact zeros among tiny values."""
    return np.array([unit * (i % 7 - 2) for i in range(n)], dtype=np.float32)


def matrix_e() -> np.ndarray:
    """4x64 for MatMulNBits with groups of 32: blocks whose scale is subnormal.

    A scale below the smallest normal f32 (values below about 1e-37) has an infinite
    reciprocal, so x * (1/s) is +-inf and 0 * (1/s) is NaN, which MLAS turns into code 0.
    row 0 : group 0 the -2..4 x 1e-44 pattern (scale 4e-45, zero point 5), group 1 x 1e-40
    row 1 : group 0 N(0, 1e-38^2) with two exact zeros, group 1 N(0, 1) (ordinary)
    row 2 : group 0 N(0, 1) (ordinary), group 1 zeros and one 1e-45 (the smallest subnormal)
    row 3 : group 0 non-positive tiny values, group 1 non-negative tiny values
    """
    rng = np.random.default_rng(20240604)
    e = np.zeros((4, 64), dtype=np.float32)
    e[0, :32] = _tiny_pattern(1e-44)
    e[0, 32:] = _tiny_pattern(1e-40)
    e[1, :32] = (rng.standard_normal(32) * 1e-38).astype(np.float32)
    e[1, [3, 20]] = 0.0
    e[1, 32:] = rng.standard_normal(32).astype(np.float32)
    e[2, :32] = rng.standard_normal(32).astype(np.float32)
    e[2, 32 + 11] = np.float32(1e-45)
    e[3, :32] = -np.abs(_tiny_pattern(1e-42))
    e[3, 32:] = np.abs(_tiny_pattern(3e-39))
    return e


def matrix_f() -> np.ndarray:
    """4x64 for gguf-py (two blocks of 32): blocks whose f16 d is 0.

    When the f32 d is subnormal (block absmax below about 1e-37), 1/d is infinite and
    numpy's conversion to an integer type, before the clip, turns every +-inf and NaN into
    0: every code is 0. When the f32 d is normal but below f16's range, the codes are
    ordinary and only the stored d is 0.
    row 0 : both blocks the -2..4 x 1e-44 pattern
    row 1 : block 0 the pattern x 1e-40, block 1 x 1e-9 (normal f32 d, f16 d = 0)
    row 2 : block 0 N(0, 3e-38^2), block 1 N(0, 1) (ordinary)
    row 3 : block 0 zeros and one 1e-45, block 1 non-positive tiny values
    """
    rng = np.random.default_rng(20240605)
    f = np.zeros((4, 64), dtype=np.float32)
    f[0, :32] = _tiny_pattern(1e-44)
    f[0, 32:] = _tiny_pattern(1e-44)
    f[1, :32] = _tiny_pattern(1e-40)
    f[1, 32:] = _tiny_pattern(1e-9)
    f[2, :32] = (rng.standard_normal(32) * 3e-38).astype(np.float32)
    f[2, 32:] = rng.standard_normal(32).astype(np.float32)
    f[3, 7] = np.float32(1e-45)
    f[3, 32:] = -np.abs(_tiny_pattern(1e-42))
    return f


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def f32(x) -> float:
    """Exact float32 value as a Python float (repr round-trips)."""
    return float(np.float32(x))


def json_float(v) -> float | str:
    """A float for JSON: infinities as "inf" / "-inf" (as quantscope's own JSON writes them)."""
    v = float(v)
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    assert not np.isnan(v), "NaN in a fixture"
    return v


def f32_list(arr: np.ndarray):
    return [[json_float(v) for v in row] for row in np.asarray(arr, dtype=np.float32)]


def int_list(arr: np.ndarray):
    return [[int(v) for v in row] for row in np.asarray(arr).astype(np.int64)]


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a = np.ascontiguousarray(a, dtype=np.float32)
    b = np.ascontiguousarray(b, dtype=np.float32)
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


def make_fixture(library, call, preset, overrides, inp, blocks, codes, deq):
    return {
        "library": library,
        "call": call,
        "preset": preset,
        "overrides": overrides,
        "shape": [int(inp.shape[0]), int(inp.shape[1])],
        "input": f32_list(inp),
        "blocks": blocks,
        "codes": int_list(codes),
        "dequantized": f32_list(deq),
    }


def dumps_fixture(fx: dict) -> str:
    """Readable, compact JSON: one matrix row per line."""
    out = ["{"]
    keys = list(fx.keys())
    for i, key in enumerate(keys):
        val = fx[key]
        comma = "," if i + 1 < len(keys) else ""
        if key in ("input", "codes", "dequantized", "blocks"):
            lines = [json.dumps(v, separators=(",", ":")) for v in val]
            body = ",\n    ".join(lines)
            out.append(f'  "{key}": [\n    {body}\n  ]{comma}')
        else:
            out.append(f'  "{key}": {json.dumps(val)}{comma}')
    out.append("}")
    return "\n".join(out) + "\n"


def block(r0, r1, c0, c1, scale, zero_point=0, offset=None):
    return {
        "rows": [int(r0), int(r1)],
        "cols": [int(c0), int(c1)],
        "scale": f32(scale),
        "zero_point": int(zero_point),
        "offset": None if offset is None else f32(offset),
    }


# --------------------------------------------------------------------------
# Self-check: re-derive dequantized values from blocks + codes
# --------------------------------------------------------------------------


def rederive(fx: dict, kind: str) -> np.ndarray:
    """Library dequantization formula, applied per block, in float32.

    kind "zp":     x_hat = float32(q - z) * s        (ORT DequantizeLinear,
                                                    MLAS MatMulNBits, torch)
    kind "gguf":   x_hat = float32(q) * d [+ m]      (gguf-py dequantize_blocks)
    """
    codes = np.array(fx["codes"], dtype=np.int64)
    out = np.full(codes.shape, np.nan, dtype=np.float32)
    seen = np.zeros(codes.shape, dtype=bool)
    for b in fx["blocks"]:
        (r0, r1), (c0, c1) = b["rows"], b["cols"]
        q = codes[r0:r1, c0:c1]
        s = np.float32(b["scale"])
        assert not seen[r0:r1, c0:c1].any(), "overlapping blocks"
        seen[r0:r1, c0:c1] = True
        if kind == "zp":
            with np.errstate(over="ignore"):  # the edge fixtures reconstruct to infinity
                out[r0:r1, c0:c1] = (q - b["zero_point"]).astype(np.float32) * s
        else:
            assert b["zero_point"] == 0
            v = s * q.astype(np.float32)
            if b["offset"] is not None:
                v = v + np.float32(b["offset"])
            out[r0:r1, c0:c1] = v
    assert seen.all(), "blocks do not cover the matrix"
    return out


# --------------------------------------------------------------------------
# ONNX Runtime: quantize_data + DequantizeLinear session
# --------------------------------------------------------------------------


# preset, qtype name, symmetric, reduce_range, granularity
ORT_SPECS_A = [
    ("ort-int8", "INT8", True, False, "channel"),
    ("ort-int8", "INT8", True, False, "tensor"),
    ("ort-int8", "INT8", False, False, "channel"),
    ("ort-int8", "INT8", False, False, "tensor"),
    ("ort-int8", "INT8", True, True, "channel"),
    ("ort-uint8", "UINT8", False, False, "channel"),
    ("ort-uint8", "UINT8", False, False, "tensor"),
    ("ort-uint8", "UINT8", True, False, "channel"),
    ("ort-int4", "INT4", True, False, "channel"),
    ("ort-int4", "INT4", False, False, "channel"),
    ("ort-uint4", "UINT4", False, False, "channel"),
    ("ort-uint4", "UINT4", True, False, "channel"),
]

# Every type and scheme with reduce_range, and each type's default scheme without it.
ORT_SPECS_D = [
    (preset, qtype, sym, rr, "channel")
    for preset, qtype in (("ort-int8", "INT8"), ("ort-uint8", "UINT8"), ("ort-int4", "INT4"), ("ort-uint4", "UINT4"))
    for sym, rr in ((True, True), (False, True), (qtype.startswith("INT"), False))
]

# The reduced ranges (ONNX_INT_TYPE_REDUCED_RANGE), to check that the edge fixtures hold
# codes outside them.
REDUCED = {"INT8": (-64, 64), "UINT8": (0, 127), "INT4": (-4, 3), "UINT4": (0, 7)}


def ort_cases(a: np.ndarray, cases: list, specs: list, suffix: str = ""):
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper
    from onnxruntime.quantization.quant_utils import quantize_data

    lib = f"onnxruntime {ort.__version__}"
    tnames = {
        TensorProto.INT8: "INT8",
        TensorProto.UINT8: "UINT8",
        TensorProto.INT4: "INT4",
        TensorProto.UINT4: "UINT4",
    }

    def dequantize_session(q, scales, zps, qtype, per_channel):
        """Run a real DequantizeLinear (opset 21, CPU EP) on the codes."""
        rows, cols = q.shape
        sdims = [rows] if per_channel else []
        nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=0)]
        inits = [
            helper.make_tensor("x", qtype, [rows, cols], q.astype(np.int64).ravel().tolist()),
            helper.make_tensor("s", TensorProto.FLOAT, sdims, np.asarray(scales, np.float32).ravel().tolist()),
            helper.make_tensor("z", qtype, sdims, np.asarray(zps, np.int64).ravel().tolist()),
        ]
        graph = helper.make_graph(
            nodes, "dq", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, cols])], inits
        )
        return ort_run(graph)

    rows, cols = a.shape
    for preset, qname, sym, rr, gran in specs:
        qtype = getattr(TensorProto, qname)
        if gran == "channel":
            slices = [(r, r + 1, a[r].flatten()) for r in range(rows)]
            how = "per row (as BaseQuantizer.quantize_weight_per_channel_impl)"
        else:
            slices = [(0, rows, a.flatten())]
            how = "on the flattened tensor"
        codes = np.zeros(a.shape, dtype=np.int64)
        blocks, scales, zps = [], [], []
        for r0, r1, data in slices:
            zp, scale, q = quantize_data(data, qtype, sym, reduce_range=rr)
            assert np.asarray(scale).dtype == np.float32
            codes[r0:r1] = np.asarray(q).astype(np.int64).reshape(r1 - r0, cols)
            blocks.append(block(r0, r1, 0, cols, scale, int(np.asarray(zp).astype(np.int64))))
            scales.append(np.float32(scale))
            zps.append(int(np.asarray(zp).astype(np.int64)))
        deq = dequantize_session(codes, scales, zps, qtype, gran == "channel")
        call = (
            f"quantize_data(x, TensorProto.{tnames[qtype]}, symmetric={sym}, reduce_range={rr}) {how}; "
            f"dequantized = onnxruntime InferenceSession DequantizeLinear (opset 21, CPU EP)"
        )
        overrides = {
            "scheme": "symmetric" if sym else "asymmetric",
            "reduce_range": rr,
            "granularity": gran,
        }
        name = f"{preset}_{'sym' if sym else 'asym'}{'_reduce' if rr else ''}_{gran}{suffix}.json"
        fx = make_fixture(lib, call, preset, overrides, a, blocks, codes, deq)
        if rr and suffix:
            # The edge rows must hold codes past the reduced range (and, for signed
            # asymmetric types, below it), or they prove nothing. int8 symmetric cannot:
            # its scale is absmax / 64 and its zero point 0, so every ratio is within 64.
            lo, hi = REDUCED[qname]
            if not (qname == "INT8" and sym):
                assert codes.max() > hi, f"{name}: no code above {hi}"
            if qname.startswith("INT") and not sym:
                assert codes.min() < lo, f"{name}: no code below {lo}"
        cases.append((name, fx, "zp"))


# --------------------------------------------------------------------------
# gguf-py: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1
# --------------------------------------------------------------------------


def gguf_unpack(raw: np.ndarray, qname: str, rows: int, cols: int):
    """Unpack gguf-py's packed rows into (codes, d, m) in the app's convention.

    codes: [rows, cols] int; d, m: [rows, cols // 32] float32 (m None if absent).
    Block layouts (gguf/quants.py):
      Q8_0: f16 d | 32 x int8
      Q4_0: f16 d | 16 B nibbles (low nibble = elem j, high = elem j+16)
      Q4_1: f16 d | f16 m | 16 B nibbles
      Q5_0: f16 d | u32 qh (bit j = 5th bit of elem j) | 16 B nibbles
      Q5_1: f16 d | f16 m | u32 qh | 16 B nibbles
    """
    nb = cols // 32
    bsize = {"Q8_0": 34, "Q4_0": 18, "Q4_1": 20, "Q5_0": 22, "Q5_1": 24}[qname]
    blk = np.ascontiguousarray(raw, dtype=np.uint8).reshape(rows * nb, bsize)
    d = blk[:, 0:2].copy().view(np.float16).astype(np.float32).reshape(rows, nb)
    m = None
    off = 2
    if qname in ("Q4_1", "Q5_1"):
        m = blk[:, 2:4].copy().view(np.float16).astype(np.float32).reshape(rows, nb)
        off = 4
    if qname == "Q8_0":
        q = blk[:, 2:].copy().view(np.int8).astype(np.int64)
    else:
        qh = None
        if qname in ("Q5_0", "Q5_1"):
            qh = blk[:, off:off + 4].copy().view("<u4").astype(np.int64).reshape(-1)
            off += 4
        qs = blk[:, off:off + 16].astype(np.int64)
        q = np.concatenate([qs & 0x0F, qs >> 4], axis=1)  # elems 0..15, 16..31
        if qh is not None:
            bits = (qh[:, None] >> np.arange(32)[None, :]) & 1
            q = q | (bits << 4)
        if qname == "Q4_0":
            q = q - 8
        elif qname == "Q5_0":
            q = q - 16
    return q.reshape(rows, cols), d, m


def gguf_cases(mats: list, cases: list):
    import importlib.metadata as md

    from gguf import GGMLQuantizationType
    from gguf.quants import dequantize, quantize

    lib = f"gguf {md.version('gguf')}"
    ranges = {"Q8_0": (-127, 127), "Q4_0": (-8, 7), "Q4_1": (0, 15), "Q5_0": (-16, 15), "Q5_1": (0, 31)}
    for suffix, x in mats:
        rows, cols = x.shape
        for qname in ("Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1"):
            qt = getattr(GGMLQuantizationType, qname)
            raw = quantize(x, qt)
            deq = dequantize(raw, qt)
            assert deq.dtype == np.float32 and deq.shape == x.shape
            codes, d, m = gguf_unpack(raw, qname, rows, cols)
            lo, hi = ranges[qname]
            assert codes.min() >= lo and codes.max() <= hi
            blocks = []
            for r in range(rows):
                for j in range(cols // 32):
                    blocks.append(block(r, r + 1, 32 * j, 32 * j + 32, d[r, j], 0,
                                        None if m is None else m[r, j]))
            preset = qname.lower()
            formula = "q * d + m" if m is not None else "q * d"
            call = (
                f"gguf.quants.quantize(x, GGMLQuantizationType.{qname}) (blocks of 32 along each row); "
                f"codes/d{'/m' if m is not None else ''} unpacked from the packed bytes; "
                f"dequantized = gguf.quants.dequantize(...) = {formula} with f16 d{'/m' if m is not None else ''}"
            )
            fx = make_fixture(lib, call, preset, {"granularity": "group:32"}, x, blocks, codes, deq)
            # own reconstruction from the unpacked bytes must equal gguf's dequantize
            assert same_bits(rederive(fx, "gguf"), deq), f"gguf unpack mismatch {qname}"
            cases.append((f"{preset}{suffix}.json", fx, "gguf"))


# --------------------------------------------------------------------------
# MLAS / MatMulNBits: quantize_matmul_4bits + MatMulNBits session
# --------------------------------------------------------------------------


def mlas_cases(w: np.ndarray, cases: list, g: int = 128, suffix: str = ""):
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper
    from onnxruntime.capi._pybind_state import quantize_matmul_4bits

    lib = f"onnxruntime {ort.__version__}"
    n, k = w.shape  # our rows = N output channels, cols = K
    kb = (k + g - 1) // g
    b_kn = np.ascontiguousarray(w.T)  # MatMulNBits' B is [K, N]

    def matmulnbits_session(packed, scales, zp, sym):
        """Run com.microsoft MatMulNBits on an identity A: Y = B_hat [K, N]."""
        inits = [
            onnx.numpy_helper.from_array(packed, "B"),
            onnx.numpy_helper.from_array(scales.reshape(-1), "scales"),
        ]
        ins = ["A", "B", "scales"]
        if not sym:
            inits.append(onnx.numpy_helper.from_array(zp.reshape(-1), "zp"))
            ins.append("zp")
        node = helper.make_node("MatMulNBits", ins, ["Y"], domain="com.microsoft",
                                K=k, N=n, bits=4, block_size=g)
        graph = helper.make_graph(
            [node], "mnb",
            [helper.make_tensor_value_info("A", TensorProto.FLOAT, [k, k])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [k, n])],
            inits,
        )
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)]
        )
        model.ir_version = 10
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return sess.run(None, {"A": np.eye(k, dtype=np.float32)})[0]

    for sym in (False, True):
        packed = np.zeros((n, kb, g // 2), dtype=np.uint8)
        scales = np.zeros((n, kb), dtype=np.float32)
        zp = np.zeros((n, (kb + 1) // 2), dtype=np.uint8)
        quantize_matmul_4bits(packed, b_kn, scales, zp, g, n, k, sym)
        # unpack: column n, block j, byte t -> elems 2t (low nibble), 2t+1 (high)
        q = np.stack([packed & 0x0F, packed >> 4], axis=-1).reshape(n, kb * g)[:, :k].astype(np.int64)
        zps = np.stack([zp & 0x0F, zp >> 4], axis=-1).reshape(n, -1)[:, :kb].astype(np.int64)
        if sym:
            assert not zp.any(), "symmetric path wrote zero points"
            zps[:] = 8  # implicit zero point of MatMulNBits without zero_points input
        blocks = [block(r, r + 1, j * g, min(k, (j + 1) * g), scales[r, j], zps[r, j])
                  for r in range(n) for j in range(kb)]
        # MLAS BlockwiseQuantizer::dequantize formula: (q - zp) * scale in float32
        deq = np.zeros((n, k), dtype=np.float32)
        for j in range(kb):
            c0, c1 = j * g, min(k, (j + 1) * g)
            deq[:, c0:c1] = (q[:, c0:c1] - zps[:, j:j + 1]).astype(np.float32) * scales[:, j:j + 1]
        # The real MatMulNBits op on an identity A must give the same values.  It
        # cannot reproduce a -0.0 ((8 - 8) * negative symmetric scale): the matmul
        # sums +0.0 terms, so compare with zeros normalised (-0.0 + 0.0 = +0.0).
        y = np.ascontiguousarray(matmulnbits_session(packed, scales, zp, sym).T)
        assert same_bits(y, deq + np.float32(0.0)), "MatMulNBits session != (q - zp) * scale"
        name = f"int4-g128_{'sym' if sym else 'asym'}{suffix}.json"
        call = (
            f"quantize_matmul_4bits(packed, W.T, scales, zero_points, block_size={g}, N={n}, K={k}, "
            f"is_symmetric={sym}) (MLAS blockwise 4-bit, B=[K,N], blocks along K per column n); "
            f"dequantized = (q - zero_point) * scale in float32 (MLAS dequantize formula), checked equal to "
            f"onnxruntime InferenceSession com.microsoft.MatMulNBits(A=I_K, B, scales"
            f"{'' if sym else ', zero_points'}) transposed (which gives +0.0 where the formula gives -0.0)"
            + ("; symmetric: no zero_points input, implicit zero point 8" if sym else "")
        )
        overrides = {"scheme": "symmetric" if sym else "asymmetric", "granularity": f"group:{g}"}
        fx = make_fixture(lib, call, "int4-g128", overrides, w, blocks, q, deq)
        cases.append((name, fx, "zp"))


# --------------------------------------------------------------------------
# PyTorch (optional)
# --------------------------------------------------------------------------


def torch_cases(a: np.ndarray, cases: list):
    try:
        import torch
        from torch.ao.quantization.observer import MinMaxObserver, PerChannelMinMaxObserver
    except ImportError:
        print("torch not installed: torch fixtures skipped", file=sys.stderr)
        return False
    lib = f"torch {torch.__version__.split('+')[0]}"
    x = torch.from_numpy(a.copy())
    rows, cols = a.shape
    specs = [
        ("torch-qint8", torch.qint8, torch.per_channel_symmetric, "symmetric", "channel"),
        ("torch-qint8", torch.qint8, torch.per_tensor_symmetric, "symmetric", "tensor"),
        ("torch-quint8", torch.quint8, torch.per_channel_affine, "asymmetric", "channel"),
        ("torch-quint8", torch.quint8, torch.per_tensor_affine, "asymmetric", "tensor"),
    ]
    for preset, dtype, qscheme, scheme, gran in specs:
        dname = str(dtype).replace("torch.", "")
        sname = str(qscheme).replace("torch.", "")
        if gran == "channel":
            obs = PerChannelMinMaxObserver(ch_axis=0, dtype=dtype, qscheme=qscheme)
            obs(x)
            scale, zp = obs.calculate_qparams()
            qx = torch.quantize_per_channel(x, scale, zp, 0, dtype)
            s_list = scale.to(torch.float32).numpy()
            z_list = zp.numpy().astype(np.int64)
            blocks = [block(r, r + 1, 0, cols, s_list[r], z_list[r]) for r in range(rows)]
            call = (f"PerChannelMinMaxObserver(ch_axis=0, dtype=torch.{dname}, qscheme=torch.{sname}) + "
                    f"torch.quantize_per_channel(x, scale, zero_point, 0, torch.{dname}); "
                    f"dequantized = q.dequantize()")
        else:
            obs = MinMaxObserver(dtype=dtype, qscheme=qscheme)
            obs(x)
            scale, zp = obs.calculate_qparams()
            assert scale.dtype == torch.float32
            qx = torch.quantize_per_tensor(x, float(scale.item()), int(zp.item()), dtype)
            blocks = [block(0, rows, 0, cols, scale.item(), int(zp.item()))]
            call = (f"MinMaxObserver(dtype=torch.{dname}, qscheme=torch.{sname}) + "
                    f"torch.quantize_per_tensor(x, scale, zero_point, torch.{dname}); "
                    f"dequantized = q.dequantize()")
        codes = qx.int_repr().numpy().astype(np.int64)
        deq = qx.dequantize().numpy()
        overrides = {"scheme": scheme, "reduce_range": False, "granularity": gran}
        name = f"{preset}_{'sym' if scheme == 'symmetric' else 'asym'}_{gran}.json"
        fx = make_fixture(lib, call, preset, overrides, a, blocks, codes, deq)
        cases.append((name, fx, "zp"))
    return True


# --------------------------------------------------------------------------


def main() -> int:
    import warnings

    # torch warns that its quantized tensor API is deprecated; the results are what we want
    warnings.filterwarnings("ignore", message=".*quantize_per_tensor.*deprecated.*")
    a, b, c = matrix_a(), matrix_b(), matrix_c()
    cases: list = []
    ort_cases(a, cases, ORT_SPECS_A)
    ort_cases(matrix_d(), cases, ORT_SPECS_D, "_edges")
    gguf_cases([("", a), ("_5x96", b), ("_tiny", matrix_f())], cases)
    mlas_cases(c, cases)
    mlas_cases(matrix_e(), cases, g=32, suffix="_g32_tiny")
    have_torch = torch_cases(a, cases)

    # self-check: every fixture's dequantized values follow from blocks + codes
    for name, fx, kind in cases:
        got = rederive(fx, kind)
        want = np.array(fx["dequantized"], dtype=np.float32)
        if not same_bits(got, want):
            bad = np.argwhere(got.view(np.uint32) != want.view(np.uint32))
            raise AssertionError(f"{name}: re-derived dequantization differs at {bad[:5].tolist()}")
        assert list(np.array(fx["input"]).shape) == fx["shape"] == list(np.array(fx["codes"]).shape)
        inp = np.array(fx["input"], dtype=np.float64)
        assert np.array_equal(inp.astype(np.float32).astype(np.float64), inp), "input not float32"

    names = set()
    total = 0
    for name, fx, _ in cases:
        assert name not in names, name
        names.add(name)
        text = dumps_fixture(fx)
        assert json.loads(text) == fx
        with open(os.path.join(OUT_DIR, name), "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        total += len(text)
        print(f"{name:40s} {len(text):6d} bytes")
    print(f"{len(cases)} fixtures, {total} bytes, torch fixtures: {'yes' if have_torch else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

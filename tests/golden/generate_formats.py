#!/usr/bin/env python3
"""Golden fixtures for quantscope's core::format module, made by the reference implementations.

Writes tests/golden/formats/*.json (schema in README.md beside this file):

  ggml_<type>.json  k-quants Q2_K..Q6_K, MXFP4, NVFP4: ggml's quantize_row_<type>_ref and
                    dequantize_row_<type> from ggml-quants.c as vendored by ggml-python 0.0.45
                    (vendor/ggml/src), compiled here with gcc -O2 -DNDEBUG into a shared
                    library (with tests/golden/ggml_stubs.c for the four ggml functions it
                    calls) and called through ctypes. gguf-py's dequantize must give the same
                    values bit for bit, and for MXFP4 gguf-py's quantize the same bytes.
  legacy_<type>.json  Q4_0..Q8_0 bytes from gguf-py's quantize, decoded by ggml's
                    dequantize_row_<type> and gguf-py's dequantize (the unpackers' check).
  fp8_<kind>.json   FP8 E4M3/E5M2: each library's formula (DeepSeek-V3 divide, vLLM reciprocal,
                    Transformer Engine inverse scale) in numpy float32 with ml_dtypes casts.
  nf4.json          bitsandbytes 0.50.2 quantize_4bit / dequantize_4bit (nf4, blocksize 64) on
                    CPU, without and with compress_statistics (optional: needs torch and
                    bitsandbytes, see below).
  bulk.json         FNV-1a hashes of the bytes and values the references produce for a
                    64x1024 matrix that the Rust test regenerates from the same integer
                    generator (rows spread over 20 binary decades, outliers, one-signed and
                    half-zero rows), so every encoder is checked on 65536 values.

Run from the crate root:
    pip install gguf==0.19.0 numpy==2.4.6 ml_dtypes==0.6.0     # and gcc
    pip install bitsandbytes==0.50.2                             # optional, pulls torch
    python3 tests/golden/generate_formats.py [--ggml-src DIR]

The ggml source is not in the repository: the script downloads ggml-python's source
distribution with pip into a temporary directory (`pip download ggml-python==0.0.45 --no-deps
--no-binary ggml-python`; `--no-binary :all:` would also build cmake from source for the
sdist's metadata step) and compiles ggml-quants.c there. --ggml-src points at an unpacked
`vendor/ggml` instead. Deterministic: a rerun rewrites byte-identical files.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import subprocess
import sys
import tarfile
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "formats")
sys.path.insert(0, HERE)
from generate import f32_list, fnv1a, int_list, matrix_a, matrix_b, matrix_c, same_bits  # noqa: E402

GGML_VERSION = "0.0.45"
# name: (values per block, bytes per block)
GGML_TYPES = {
    "q2_K": (256, 84), "q3_K": (256, 110), "q4_K": (256, 144), "q5_K": (256, 176),
    "q6_K": (256, 210), "mxfp4": (32, 17), "nvfp4": (64, 36),
    "q4_0": (32, 18), "q4_1": (32, 20), "q5_0": (32, 22), "q5_1": (32, 24), "q8_0": (32, 34),
}
GGUF_NAMES = {"q2_K": "Q2_K", "q3_K": "Q3_K", "q4_K": "Q4_K", "q5_K": "Q5_K", "q6_K": "Q6_K",
              "mxfp4": "MXFP4", "nvfp4": "NVFP4", "q4_0": "Q4_0", "q4_1": "Q4_1",
              "q5_0": "Q5_0", "q5_1": "Q5_1", "q8_0": "Q8_0"}


# --------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------


def matrix_k() -> np.ndarray:
    """6x512 for k-quants (two super-blocks of 256 per row).

    row 0 : N(0, 0.01^2) with one outlier of 40 sigma
    row 1 : super-block 0 one-signed (all positive); super-block 1 constant -0.75
    row 2 : super-block 0 all zero; super-block 1 N(0, 1)
    row 3 : tiny values (std 1e-6): fp16 d and dmin become subnormal or flush
    row 4 : tie row: multiples of 1/16 in [-2, 1.75]
    row 5 : every 32-value sub-block at its own scale, 10^-4 .. 10^0 in turn
    """
    rng = np.random.default_rng(20240617)
    k = np.zeros((6, 512), dtype=np.float32)
    k[0] = (rng.standard_normal(512) * 0.01).astype(np.float32)
    k[0, 77] = np.float32(0.4)
    k[1, :256] = rng.uniform(0.05, 0.8, 256).astype(np.float32)
    k[1, 256:] = np.float32(-0.75)
    k[2, 256:] = rng.standard_normal(256).astype(np.float32)
    k[3] = (rng.standard_normal(512) * 1e-6).astype(np.float32)
    k[4] = (rng.integers(-32, 29, 512) / 16.0).astype(np.float32)
    scales = 10.0 ** -(np.arange(16) % 5)
    k[5] = (rng.standard_normal(512) * np.repeat(scales, 32)).astype(np.float32)
    return k


MASK = (1 << 64) - 1


class XorShift:
    """xorshift64* (the Rust test has the same generator)."""

    def __init__(self, seed: int):
        self.s = seed

    def next(self) -> int:
        s = self.s
        s ^= s >> 12
        s ^= (s << 25) & MASK
        s ^= s >> 27
        self.s = s
        return (s * 0x2545F4914F6CDD1D) & MASK

    def uniform(self) -> float:
        return (self.next() >> 40) / float(1 << 24)


def bulk_matrix(rows=64, cols=1024, seed=0x5EED_F0F0) -> np.ndarray:
    """Rows at scale 2^-(r % 21); values (u1+u2+u3+u4-2) * scale, exact in f64, then cast to
    f32; every value at column % 97 == 13 times 8; rows r % 8 == 5 one-signed (abs); rows
    r % 16 == 7 zero in their first half."""
    g = XorShift(seed)
    out = np.zeros((rows, cols), dtype=np.float32)
    for r in range(rows):
        scale = 2.0 ** -(r % 21)
        for c in range(cols):
            v = (g.uniform() + g.uniform() + g.uniform() + g.uniform() - 2.0) * scale
            if c % 97 == 13:
                v *= 8.0
            if r % 8 == 5:
                v = abs(v)
            if r % 16 == 7 and c < cols // 2:
                v = 0.0
            out[r, c] = np.float32(v)
    return out


# --------------------------------------------------------------------------
# ggml
# --------------------------------------------------------------------------


def ggml_source(arg: str | None, tmp: str) -> str:
    if arg:
        return arg
    subprocess.run([sys.executable, "-m", "pip", "download", f"ggml-python=={GGML_VERSION}",
                    "--no-deps", "--no-binary", "ggml-python", "-d", tmp, "-q"], check=True)
    sdist = glob.glob(os.path.join(tmp, "ggml_python-*.tar.gz"))[0]
    with tarfile.open(sdist) as t:
        t.extractall(tmp, filter="data")
    return glob.glob(os.path.join(tmp, "ggml_python-*", "vendor", "ggml"))[0]


def build_ggml(src: str, tmp: str) -> ctypes.CDLL:
    lib = os.path.join(tmp, "libggml-quants.so")
    subprocess.run(["gcc", "-O2", "-DNDEBUG", "-fPIC", "-shared",
                    f"-I{src}/include", f"-I{src}/src", f"-I{src}/src/ggml-cpu",
                    f"{src}/src/ggml-quants.c", os.path.join(HERE, "ggml_stubs.c"),
                    "-o", lib, "-lm"], check=True)
    return ctypes.CDLL(lib)


def ggml_quantize(lib, name: str, x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float32)
    qk, nbytes = GGML_TYPES[name]
    out = np.zeros(x.size // qk * nbytes, dtype=np.uint8)
    getattr(lib, f"quantize_row_{name}_ref")(
        x.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(x.size))
    return out.reshape(x.shape[0], -1)


def ggml_dequantize(lib, name: str, raw: np.ndarray, shape) -> np.ndarray:
    raw = np.ascontiguousarray(raw, dtype=np.uint8)
    out = np.zeros(shape, dtype=np.float32)
    getattr(lib, f"dequantize_row_{name}")(
        raw.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(out.size))
    return out


def f16(b: np.ndarray) -> int:
    """The little-endian u16 (f16 bits) in two bytes."""
    return int(b[0]) | (int(b[1]) << 8)


def unpack_block(name: str, b: np.ndarray) -> tuple[list, dict]:
    """Codes and metadata of one block (the byte layouts of ggml-common.h)."""
    b = b.astype(np.int64)
    if name in ("q2_K", "q3_K"):
        qs = b[16:80] if name == "q2_K" else b[32:96]
        low = [(qs[32 * (i // 128) + i % 32] >> (2 * ((i % 128) // 32))) & 3 for i in range(256)]
        if name == "q2_K":
            return low, {"d": int(f16(b[80:82])), "dmin": int(f16(b[82:84])),
                         "scales": [int(v & 15) for v in b[:16]], "mins": [int(v >> 4) for v in b[:16]]}
        codes = [low[i] | (((b[i % 32] >> (i // 32)) & 1) << 2) for i in range(256)]
        s = b[96:108]
        sc = []
        for j in range(16):
            lo = s[j] & 15 if j < 8 else s[j - 8] >> 4
            sc.append(int((lo | (((s[8 + j % 4] >> (2 * (j // 4))) & 3) << 4)) - 32))
        return codes, {"d": int(f16(b[108:110])), "dmin": 0, "scales": sc, "mins": [0] * 16}
    if name in ("q4_K", "q5_K"):
        s = b[4:16]
        sc, mn = [], []
        for j in range(8):
            if j < 4:
                sc.append(int(s[j] & 63))
                mn.append(int(s[j + 4] & 63))
            else:
                sc.append(int((s[j + 4] & 15) | ((s[j - 4] >> 6) << 4)))
                mn.append(int((s[j + 4] >> 4) | ((s[j] >> 6) << 4)))
        qs = b[16:144] if name == "q4_K" else b[48:176]
        codes = [(qs[32 * (i // 64) + i % 32] >> (4 * ((i % 64) // 32))) & 15 for i in range(256)]
        if name == "q5_K":
            qh = b[16:48]
            codes = [c | (((qh[i % 32] >> (2 * (i // 64) + (i % 64) // 32)) & 1) << 4)
                     for i, c in enumerate(codes)]
        return codes, {"d": int(f16(b[0:2])), "dmin": int(f16(b[2:4])),
                       "scales": sc + [0] * 8, "mins": mn + [0] * 8}
    if name == "q6_K":
        ql, qh = b[0:128], b[128:192]
        codes = []
        for i in range(256):
            g, l, q = i // 128, i % 32, (i % 128) // 32
            low = (ql[64 * g + l + 32 * (q % 2)] >> (4 * (q // 2))) & 15
            codes.append(int(low | (((qh[32 * g + l] >> (2 * q)) & 3) << 4)))
        sc = [int(v) for v in b[192:208].astype(np.uint8).view(np.int8)]
        return codes, {"d": int(f16(b[208:210])), "dmin": 0, "scales": sc, "mins": [0] * 16}
    if name == "mxfp4":
        return [int(b[1 + i % 16] >> (4 * (i // 16))) & 15 for i in range(32)], {"e": int(b[0])}
    if name == "nvfp4":
        codes = [int(b[4 + 8 * (i // 16) + i % 8] >> (4 * ((i % 16) // 8))) & 15 for i in range(64)]
        return codes, {"scales": [int(v) for v in b[:4]]}
    raise ValueError(name)


def unpack_legacy(name: str, b: np.ndarray) -> tuple[list, dict]:
    b = b.astype(np.int64)
    meta = {"d": int(f16(b[0:2])), "m": None}
    rest = b[2:]
    if name in ("q4_1", "q5_1"):
        meta["m"] = int(f16(b[2:4]))
        rest = b[4:]
    if name == "q8_0":
        return [int(v) for v in rest[:32]], meta
    qh = 0
    if name in ("q5_0", "q5_1"):
        qh = int(rest[0] | (rest[1] << 8) | (rest[2] << 16) | (rest[3] << 24))
        rest = rest[4:]
    codes = [int((rest[i % 16] >> (4 * (i // 16))) & 15) | (((qh >> i) & 1) << 4) for i in range(32)]
    return codes, meta


def ggml_cases(lib, mats, out: dict):
    import importlib.metadata as md

    from gguf import GGMLQuantizationType
    from gguf.quants import dequantize, quantize

    lib_name = (f"ggml-quants.c from ggml-python {GGML_VERSION} (vendor/ggml/src), gcc -O2 -DNDEBUG; "
                f"gguf {md.version('gguf')}")
    for name in ("q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "mxfp4", "nvfp4"):
        qk, nbytes = GGML_TYPES[name]
        gt = getattr(GGMLQuantizationType, GGUF_NAMES[name])
        cases = []
        for label, x in mats:
            if x.shape[1] % qk:
                continue
            raw = ggml_quantize(lib, name, x)
            deq = ggml_dequantize(lib, name, raw, x.shape)
            assert same_bits(dequantize(raw, gt), deq), f"gguf-py dequantize != ggml {name}"
            if name == "mxfp4":
                assert np.array_equal(quantize(x, gt), raw), "gguf-py quantize != ggml mxfp4"
            codes, blocks = [], []
            for r in range(x.shape[0]):
                rc, rb = [], []
                for blk in raw[r].reshape(-1, nbytes):
                    c, m = unpack_block(name, blk)
                    rc += c
                    rb.append(m)
                codes.append(rc)
                blocks.append(rb)
            cases.append({"matrix": label, "shape": list(x.shape), "input": f32_list(x),
                          "codes": int_list(np.array(codes)), "blocks": blocks,
                          "bytes": [bytes(row).hex() for row in raw], "dequantized": f32_list(deq)})
        call = (f"quantize_row_{name}_ref(x, y, rows * cols) then dequantize_row_{name}; "
                f"gguf.quants.dequantize gives the same values"
                + ("; gguf.quants.quantize gives the same bytes" if name == "mxfp4" else ""))
        out[f"ggml_{name}.json"] = {"library": lib_name, "call": call, "format": GGUF_NAMES[name],
                                    "cases": cases}
    for name in ("q4_0", "q4_1", "q5_0", "q5_1", "q8_0"):
        gt = getattr(GGMLQuantizationType, GGUF_NAMES[name])
        cases = []
        for label, x in mats[:2]:
            raw = quantize(x, gt)
            deq = ggml_dequantize(lib, name, raw, x.shape)
            assert same_bits(dequantize(raw, gt), deq), f"gguf-py dequantize != ggml {name}"
            codes, blocks = [], []
            for r in range(x.shape[0]):
                rc, rb = [], []
                for blk in raw[r].reshape(-1, GGML_TYPES[name][1]):
                    c, m = unpack_legacy(name, blk)
                    rc += c
                    rb.append(m)
                codes.append(rc)
                blocks.append(rb)
            cases.append({"matrix": label, "shape": list(x.shape), "input": f32_list(x),
                          "codes": codes, "blocks": blocks,
                          "bytes": [bytes(row).hex() for row in raw], "dequantized": f32_list(deq)})
        out[f"legacy_{name}.json"] = {
            "library": lib_name, "format": GGUF_NAMES[name],
            "call": f"gguf.quants.quantize(x, {GGUF_NAMES[name]}); values = dequantize_row_{name} "
                    f"(ggml) = gguf.quants.dequantize", "cases": cases}


# --------------------------------------------------------------------------
# FP8 (numpy float32 + ml_dtypes casts)
# --------------------------------------------------------------------------


FP8_FORMULAS = {
    "divide": "s = amax / max; q = cast(clip(x / s, -max, max)); x_hat = float32(q) * s "
              "(DeepSeek-V3 act_quant)",
    "reciprocal": "s = amax / max; q = cast(clip(x * (1 / s), -max, max)); x_hat = float32(q) * s "
                  "(vLLM scaled_fp8_quant)",
    "inverse_scale": "s = max / amax; q = cast(clip(x * s, -max, max)); x_hat = float32(q) * (1 / s) "
                     "(Transformer Engine, margin 0)",
}


def fp8_case(x: np.ndarray, dt, formula: str, tile) -> dict:
    import ml_dtypes

    rows, cols = x.shape
    th, tw = tile
    fmax = np.float32(float(ml_dtypes.finfo(dt).max))
    nt_r, nt_c = -(-rows // th), -(-cols // tw)
    scales = np.zeros((nt_r, nt_c), dtype=np.float32)
    codes = np.zeros(x.shape, dtype=np.uint8)
    deq = np.zeros(x.shape, dtype=np.float32)
    for i in range(nt_r):
        for j in range(nt_c):
            blk = x[i * th:(i + 1) * th, j * tw:(j + 1) * tw]
            amax = np.float32(np.abs(blk).max())
            if amax == 0:
                continue  # this module's rule: scale 0, codes 0, values 0
            with np.errstate(all="raise"):
                if formula == "inverse_scale":
                    s = np.float32(fmax / amax)
                    t = blk * s
                    back = np.float32(np.float32(1.0) / s)
                else:
                    s = np.float32(amax / fmax)
                    t = blk / s if formula == "divide" else blk * np.float32(np.float32(1.0) / s)
                    back = s
            q = np.clip(t.astype(np.float32), -fmax, fmax).astype(dt)
            scales[i, j] = s
            codes[i * th:(i + 1) * th, j * tw:(j + 1) * tw] = q.view(np.uint8)
            deq[i * th:(i + 1) * th, j * tw:(j + 1) * tw] = q.astype(np.float32) * back
    return {"tile": [th, tw], "scales": f32_list(scales), "codes": int_list(codes),
            "dequantized": f32_list(deq)}


def fp8_cases(x: np.ndarray, out: dict):
    import importlib.metadata as md

    import ml_dtypes

    rows, cols = x.shape
    layouts = [("tensor", (rows, cols)), ("channel", (1, cols)), ("tiles", (4, 32)), ("tiles", (128, 128))]
    for kind, dt in (("e4m3", ml_dtypes.float8_e4m3fn), ("e5m2", ml_dtypes.float8_e5m2)):
        cases = []
        for formula in FP8_FORMULAS:
            for layout, tile in layouts:
                c = fp8_case(x, dt, formula, tile)
                cases.append({"formula": formula, "layout": layout, **c})
        out[f"fp8_{kind}.json"] = {
            "library": f"numpy {np.__version__} float32 arithmetic, ml_dtypes {md.version('ml_dtypes')} "
                       f"casts to {dt.__name__} (round to nearest even)",
            "call": "; ".join(f"{k}: {v}" for k, v in FP8_FORMULAS.items())
                    + "; amax per tile; a tile whose amax is 0 gets scale 0, codes 0, values 0",
            "format": f"fp8-{kind}", "shape": [rows, cols], "input": f32_list(x), "cases": cases}


# --------------------------------------------------------------------------
# NF4 (bitsandbytes, optional)
# --------------------------------------------------------------------------


def nf4_cases(mats, bulk: np.ndarray, out: dict, bulk_out: dict) -> bool:
    try:
        import bitsandbytes as bnb
        import bitsandbytes.functional as F
        import torch
    except ImportError:
        print("bitsandbytes/torch not installed: nf4 fixtures skipped", file=sys.stderr)
        return False

    def default_blockwise(a: torch.Tensor, code: torch.Tensor, blocksize: int):
        """bitsandbytes' default-backend quantize_blockwise (backends/default/ops.py), verbatim
        in its operations."""
        a_flat = a.reshape(-1).float()
        n = a_flat.numel()
        rem = n % blocksize
        full = n - rem
        blocks = full // blocksize
        a_com = a_flat[:full].reshape(blocks, blocksize)
        absmax = a_com.abs().max(dim=-1)[0]
        scaled = torch.clamp(a_com * (1.0 / absmax.clamp(min=1e-38).view(-1, 1)), -1, 1).reshape(-1)
        if rem:
            am = a_flat[full:].abs().max().clamp(min=1e-38)
            absmax = torch.cat([absmax, am.unsqueeze(0)])
            scaled = torch.cat([scaled, torch.clamp(a_flat[full:] / am, -1, 1)])
        bounds = (code[:-1] + code[1:]) / 2
        q = torch.bucketize(scaled, bounds, out_int32=True).to(torch.uint8)
        return q, absmax

    def run(x: np.ndarray):
        flat = torch.from_numpy(np.ascontiguousarray(x).reshape(-1))
        q, st = F.quantize_4bit(flat, blocksize=64, quant_type="nf4", compress_statistics=False)
        deq = F.dequantize_4bit(q, st).numpy().reshape(-1)
        packed = q.numpy().reshape(-1)
        codes = np.stack([packed >> 4, packed & 15], axis=1).reshape(-1)[: flat.numel()]
        q2, st2 = F.quantize_4bit(flat, blocksize=64, quant_type="nf4", compress_statistics=True)
        assert torch.equal(q2, q)
        offset = st2.offset
        dq_codes, dq_scales = default_blockwise(st.absmax - offset, st2.state2.code, 256)
        native = int((dq_codes != st2.absmax).sum())
        st2.absmax = dq_codes
        st2.state2.absmax = dq_scales
        deq2 = F.dequantize_4bit(q2, st2).numpy().reshape(-1)
        mean64 = np.float32(np.mean(st.absmax.numpy().astype(np.float64)))
        return {
            "codes": codes, "absmax": st.absmax.numpy(), "dequantized": deq, "offset": np.float32(offset.item()),
            "offset_f64_mean": mean64, "dq_codes": dq_codes.numpy(), "dq_scales": dq_scales.numpy(),
            "dq_dequantized": deq2, "native_code_differences": native,
        }

    lib = f"bitsandbytes {bnb.__version__} (CPU), torch {torch.__version__.split('+')[0]}"
    cases = []
    for label, x in mats:
        r = run(x)
        cases.append({
            "matrix": label, "shape": list(x.shape), "input": f32_list(x),
            "codes": [int(v) for v in r["codes"]], "absmax": [float(v) for v in r["absmax"]],
            "dequantized": [float(v) for v in r["dequantized"]], "offset": float(r["offset"]),
            "offset_equals_f64_mean": bool(r["offset"] == r["offset_f64_mean"]),
            "dq_codes": [int(v) for v in r["dq_codes"]], "dq_scales": [float(v) for v in r["dq_scales"]],
            "dq_dequantized": [float(v) for v in r["dq_dequantized"]],
            "native_code_differences": r["native_code_differences"],
        })
    out["nf4.json"] = {
        "library": lib,
        "call": "quantize_4bit(x.flatten(), blocksize=64, quant_type='nf4') and dequantize_4bit; "
                "with compress_statistics=True the offset is bitsandbytes' absmax.mean(), the absmax "
                "codes come from the default backend's quantize_blockwise(absmax - offset, dynamic map, "
                "256) and dq_dequantized from dequantize_4bit with those codes; "
                "native_code_differences counts the codes where the native CPU library's "
                "quantize_blockwise (approximate reciprocal) chose otherwise",
        "format": "NF4", "dynamic_map": [float(v) for v in F.create_dynamic_map().numpy()],
        "cases": cases}
    r = run(bulk)
    bulk_out["NF4"] = {
        "codes": fnv1a(r["codes"].astype(np.uint8).tobytes()),
        "absmax": fnv1a(r["absmax"].astype("<f4").tobytes()),
        "dequantized": fnv1a(r["dequantized"].astype("<f4").tobytes()),
    }
    bulk_out["NF4-dq"] = {
        "offset": float(r["offset"]), "offset_equals_f64_mean": bool(r["offset"] == r["offset_f64_mean"]),
        "dq_codes": fnv1a(r["dq_codes"].astype(np.uint8).tobytes()),
        "dq_scales": fnv1a(r["dq_scales"].astype("<f4").tobytes()),
        "dequantized": fnv1a(r["dq_dequantized"].astype("<f4").tobytes()),
        "native_code_differences": r["native_code_differences"],
    }
    return True


# --------------------------------------------------------------------------


def compact(v) -> str:
    """JSON without spaces."""
    return json.dumps(v, separators=(",", ":"))


def dumps(fx: dict, split=(list, dict), row=compact) -> str:
    """JSON with one matrix row (or one case field) per line: a list whose items are of the
    types `split` puts one item a line, each list item spelled by `row`."""
    def enc(v, indent):
        pad = " " * indent
        if isinstance(v, dict):
            items = [f'{pad}  {json.dumps(k)}: {enc(x, indent + 2).lstrip()}' for k, x in v.items()]
            return pad + "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(v, list) and v and isinstance(v[0], split):
            items = [enc(x, indent + 2) if isinstance(x, dict) else pad + "  " + row(x)
                     for x in v]
            return pad + "[\n" + ",\n".join(items) + "\n" + pad + "]"
        return pad + json.dumps(v, separators=(",", ":"))
    return enc(fx, 0) + "\n"


def write_fixtures(out: dict, out_dir: str, width: int, dump=None) -> int:
    """Writes each fixture of `out` (file name: dict) into `out_dir` with `dump` (`dumps` by
    default), in name order, printing each one's size; returns the bytes written."""
    dump = dump or dumps
    total = 0
    for name in sorted(out):
        text = dump(out[name])
        assert json.loads(text) == json.loads(json.dumps(out[name]))
        with open(os.path.join(out_dir, name), "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        total += len(text)
        print(f"{name:{width}s} {len(text):8d} bytes")
    return total


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ggml-src", help="an unpacked vendor/ggml directory (default: download)")
    args = ap.parse_args()
    os.makedirs(OUT_DIR, exist_ok=True)
    a, b, c, k = matrix_a(), matrix_b(), matrix_c(), matrix_k()
    bulk = bulk_matrix()
    out: dict = {}
    bulk_out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        lib = build_ggml(ggml_source(args.ggml_src, tmp), tmp)
        ggml_cases(lib, [("8x64", a), ("5x96", b), ("4x256", c), ("6x512", k)], out)
        for name in ("q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "mxfp4", "nvfp4"):
            raw = ggml_quantize(lib, name, bulk)
            deq = ggml_dequantize(lib, name, raw, bulk.shape)
            bulk_out[GGUF_NAMES[name]] = {"bytes": fnv1a(raw.tobytes()),
                                          "dequantized": fnv1a(deq.astype("<f4").tobytes())}
    fp8_cases(a, out)
    have_bnb = nf4_cases([("8x64", a), ("5x96", b), ("4x256", c)], bulk, out, bulk_out)
    out["bulk.json"] = {
        "generator": "xorshift64* from seed 0x5EEDF0F0; u = (next >> 40) / 2^24; value = f32((u1 + u2 + u3 "
                     "+ u4 - 2) * 2^-(row % 21)), times 8 at column % 97 == 13, abs on rows % 8 == 5, "
                     "0 in the first half of rows % 16 == 7",
        "shape": list(bulk.shape), "input": fnv1a(bulk.astype("<f4").tobytes()),
        "hash": "FNV-1a 64 of the little-endian bytes: ggml's packed blocks and dequantized f32 values",
        "formats": bulk_out}
    total = write_fixtures(out, OUT_DIR, 24)
    print(f"{len(out)} fixtures, {total} bytes, nf4: {'yes' if have_bnb else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

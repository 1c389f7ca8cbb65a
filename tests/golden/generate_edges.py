#!/usr/bin/env python3
"""Golden fixtures for the edges of the references: made by the REAL libraries on this machine.

Writes tests/golden/edges/*.json, read by tests/it/edges_round2.rs (schema in README.md beside this
file, section "Edge fixtures"):

  torch_mean.json     torch.Tensor.mean() of float32 vectors of 1 .. 1 000 000 values (the NF4
                      absmax values bitsandbytes averages), at several thread counts, checked to
                      be the same under ATEN_CPU_CAPABILITY avx512 (this CPU's default), avx2 and
                      default. The inputs come from an integer hash that the Rust test repeats.
  nf4_dq.json         bitsandbytes quantize_4bit(..., quant_type="nf4", compress_statistics=True)
                      on CPU: the offset (absmax.mean()), the absmax codes and scales and the
                      stored absmax values, on the smallest case that shows the offset's ulp, on
                      generated matrices of 16 .. 66 560 blocks and on MiniLM's six
                      encoder.layer.*.output.dense.weight matrices (hashes only).
  ort_16bit_*.json    onnxruntime quantize_data(x, INT16 / UINT16, symmetric, reduce_range) per
                      row, dequantized by a real DequantizeLinear session.
  torch_reduce_*.json PyTorch observers with reduce_range=True, then torch.quantize_per_channel /
                      quantize_per_tensor (codes clamped to the dtype), or
                      quantized_decomposed.quantize_per_channel / _per_tensor with the observer's
                      quant_min / quant_max, dequantized by fake_quantize_per_*_affine (codes
                      clamped to the observer's range); and the combination torch refuses.
  ggml_fp4_edges.json   libgguf.quantize_rows / dequantize_rows, MXFP4 and NVFP4, on rows that
                      hold the f32 maximum and other values past the scale's reach.
  ggml_kquant_edges.json  the same for Q2_K .. Q6_K on rows with huge, tiny and subnormal values:
                      which super-blocks come back NaN or infinite, the bytes of the others.

libgguf 0.2.2 runs ggml's own C quantizers (quantize_row_<type>_ref without an importance matrix),
built without floating-point contraction and without assertions.

Run from the crate root (torch 2.15 on CPU, bitsandbytes 0.50.2, onnxruntime, onnx, libgguf, gcc):
    pip install bitsandbytes==0.50.2 libgguf==0.2.2 onnxruntime onnx torch==2.15.0 safetensors
    python3 tests/golden/generate_edges.py --minilm PATH/TO/all-MiniLM-L6-v2/model.safetensors \
        --ggml-src PATH/TO/ggml

Without --minilm (or QUANTSCOPE_MINILM) the MiniLM cases are left out; without --ggml-src (a ggml
checkout, whose src/ggml-quants.c is built with assertions) the k-quant cases do not record on
which rows an asserting build aborts. Deterministic: a rerun on the same machine rewrites
byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "edges")
sys.path.insert(0, HERE)
from generate import (  # noqa: E402
    block, dumps_fixture, f32, f32_list, fnv1a, json_float, make_fixture, ort_run, same_bits,
)

# Threads torch is asked to use for bitsandbytes' own runs: quantscope's default assumption
# (`nf4::TORCH_THREADS`).
TORCH_THREADS = 8
GRAIN = 32768  # at::internal::GRAIN_SIZE

# --------------------------------------------------------------------------
# Inputs: an integer hash the Rust test repeats
# --------------------------------------------------------------------------


def splitmix(seed: int, n: int) -> np.ndarray:
    """splitmix64 of seed + i * golden gamma, for i in 0..n (uint64, wrapping)."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def unit(h: np.ndarray) -> np.ndarray:
    """The top 24 bits of each hash as a float64 in [0, 1) (exact)."""
    return (h >> np.uint64(40)).astype(np.float64) / float(1 << 24)


KINDS = ("narrow", "decades", "wide", "outliers", "zeros")


def absmax_like(n: int, kind: str, seed: int) -> np.ndarray:
    """n non-negative float32 values, computed exactly in float64 and rounded to float32 once.

    narrow   0.5 + u / 2                (absmax of similar blocks)
    decades  u * 2^-((h & 255) % 24)   (blocks over seven decades)
    wide     u * 2^-((h & 255) % 96)    (29 decades, still normal f32)
    outliers 1 + u where (h >> 8) % 97 == 0, else u / 128
    zeros    0 where (h >> 8) % 3 == 0, else u
    """
    h = splitmix(seed, n)
    u = unit(h)
    low = (h & np.uint64(255)).astype(np.int64)
    pick = ((h >> np.uint64(8)) & np.uint64(0xFFFF)).astype(np.int64)
    if kind == "narrow":
        v = 0.5 + u / 2
    elif kind == "decades":
        v = np.ldexp(u, -(low % 24))
    elif kind == "wide":
        v = np.ldexp(u, -(low % 96))
    elif kind == "outliers":
        v = np.where(pick % 97 == 0, 1.0 + u, u / 128)
    elif kind == "zeros":
        v = np.where(pick % 3 == 0, 0.0, u)
    else:
        raise ValueError(kind)
    return v.astype(np.float32)


def weights(rows: int, cols: int, seed: int) -> np.ndarray:
    """A weight-like matrix: (u1 + u2 - 1) * 2^-(row % 13), times 16 at column % 211 == 5."""
    h = splitmix(seed, 2 * rows * cols)
    u = unit(h).reshape(rows, cols, 2)
    v = (u[..., 0] + u[..., 1] - 1.0) * np.ldexp(1.0, -(np.arange(rows) % 13))[:, None]
    v[:, np.arange(cols) % 211 == 5] *= 16.0
    return v.astype(np.float32)


def f32_hash(v: np.ndarray) -> str:
    return fnv1a(np.ascontiguousarray(v, dtype="<f4").tobytes())


def sample_points(n: int) -> list[int]:
    return sorted({0, n // 2, n - 1})


# --------------------------------------------------------------------------
# torch's float32 mean
# --------------------------------------------------------------------------

MEAN_LENGTHS = (
    list(range(1, 21))
    + [31, 32, 33, 40, 47, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 1000, 1023, 1024, 1025, 4095, 4096, 4097]
    + [9216, 16385, 32767, 32768, 32769, 65536, 65537, 98305, 262144, 704512, 1000000]
)
MEAN_THREADS = (1, 2, 3, 5, 8, 16)


def mean_inputs() -> list[dict]:
    cases = []
    for i, n in enumerate(MEAN_LENGTHS):
        kinds = KINDS if n >= 9216 else (KINDS[i % len(KINDS)],)
        for k, kind in enumerate(kinds):
            cases.append({"n": n, "kind": kind, "seed": 0xA11CE000 + 16 * i + k})
    return cases


def torch_means(path_in: str, path_out: str):
    """Run in a child process (ATEN_CPU_CAPABILITY is read once, at start-up): the mean of every
    input at every thread count."""
    import torch

    data = np.load(path_in, allow_pickle=True)
    out = {"capability": torch.backends.cpu.get_cpu_capability(), "means": []}
    for x in data:
        t = torch.from_numpy(x)
        row = {}
        for threads in MEAN_THREADS:
            torch.set_num_threads(threads)
            m = t.mean()
            assert m.dtype == torch.float32
            row[str(threads)] = f32(m.item())
        out["means"].append(row)
    with open(path_out, "w", encoding="utf-8") as fh:
        json.dump(out, fh)


def mean_fixture(tmp: str) -> dict:
    import torch

    cases = mean_inputs()
    arrays = [absmax_like(c["n"], c["kind"], c["seed"]) for c in cases]
    path_in = os.path.join(tmp, "means_in.npy")
    obj = np.empty(len(arrays), dtype=object)
    obj[:] = arrays
    np.save(path_in, obj, allow_pickle=True)
    results = []
    for cap in (None, "avx2", "default"):
        env = dict(os.environ)
        env.pop("ATEN_CPU_CAPABILITY", None)
        if cap:
            env["ATEN_CPU_CAPABILITY"] = cap
        path_out = os.path.join(tmp, f"means_{cap}.json")
        subprocess.run([sys.executable, __file__, "--means-child", path_in, path_out], env=env, check=True)
        with open(path_out, encoding="utf-8") as fh:
            results.append(json.load(fh))
    caps = [r["capability"] for r in results]
    for r in results[1:]:
        assert r["means"] == results[0]["means"], f"the mean depends on the capability: {caps}"
    out_cases = []
    differs = 0
    thread_dependent = 0
    for c, x, means in zip(cases, arrays, results[0]["means"]):
        n = c["n"]
        f64_mean = f32(np.float32(np.mean(x.astype(np.float64))))
        if n < GRAIN:
            assert len(set(means.values())) == 1, f"n={n}: threads changed a short mean"
            means = {"1": means["1"]}
        elif len(set(means.values())) > 1:
            thread_dependent += 1
        differs += means["1"] != f64_mean
        idx = sample_points(n)
        out_cases.append({
            **c,
            "head_hash": f32_hash(x[:1024]),
            "samples": [[i, f32(x[i])] for i in idx],
            "mean": means,
            "f64_mean": f64_mean,
        })
    return {
        "library": f"torch {torch.__version__.split('+')[0]} (CPU)",
        "call": "torch.from_numpy(x).mean() after torch.set_num_threads(t), for each t in 'mean'; "
                "the same under ATEN_CPU_CAPABILITY " + ", ".join(caps),
        "capabilities": caps,
        "inputs": "x[i] from h = splitmix64(seed + i * 0x9E3779B97F4A7C15), u = (h >> 40) / 2^24; "
                  "see absmax_like() in generate_edges.py",
        "f64_mean_differs": differs,
        "thread_dependent": thread_dependent,
        "cases": out_cases,
    }


# --------------------------------------------------------------------------
# bitsandbytes NF4 with double quantization
# --------------------------------------------------------------------------


def nf4_fixture(minilm: str | None) -> dict:
    import bitsandbytes as bnb
    import bitsandbytes.functional as F
    import torch

    torch.set_num_threads(TORCH_THREADS)
    code = F.create_dynamic_map()

    def default_blockwise(a: torch.Tensor, blocksize: int):
        """bitsandbytes 0.50.2 backends/default/ops.py lines 180-196 (the default backend's
        quantize_blockwise), in its operations: the exact rule quantscope follows."""
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
        return torch.bucketize(scaled, bounds, out_int32=True).to(torch.uint8), absmax

    def run(x: np.ndarray, full: bool) -> dict:
        flat = torch.from_numpy(np.ascontiguousarray(x).reshape(-1))
        _, st = F.quantize_4bit(flat, blocksize=64, quant_type="nf4", compress_statistics=False)
        q2, st2 = F.quantize_4bit(flat, blocksize=64, quant_type="nf4", compress_statistics=True)
        absmax = st.absmax
        offset = st2.offset
        assert offset.dtype == torch.float32 and torch.equal(offset, absmax.mean())
        dq_codes, dq_scales = default_blockwise(absmax - offset, 256)
        native = int((dq_codes != st2.absmax).sum())
        stored = torch.cat([
            code[dq_codes[i:i + 256].long()] * dq_scales[i // 256] for i in range(0, dq_codes.numel(), 256)
        ]) + offset
        # The same through bitsandbytes' own dequantization of the absmax codes.
        st2.absmax, st2.state2.absmax = dq_codes, dq_scales
        stored_bnb = F.dequantize_blockwise(dq_codes, st2.state2) + offset
        assert same_bits(stored.numpy(), stored_bnb.numpy())
        values = F.dequantize_4bit(q2, st2).numpy().reshape(-1)
        # What the f64 mean rounded to f32 (quantscope's old offset) would store.
        off64 = np.float32(np.mean(absmax.numpy().astype(np.float64)))
        c64, s64 = default_blockwise(absmax - torch.tensor(off64), 256)
        stored64 = torch.cat([
            code[c64[i:i + 256].long()] * s64[i // 256] for i in range(0, c64.numel(), 256)
        ]) + torch.tensor(off64)
        moved = int((stored64.numpy().view(np.uint32) != stored.numpy().view(np.uint32)).sum())
        out = {
            "blocks": int(absmax.numel()),
            "offset": f32(offset.item()),
            "f64_mean": f32(off64),
            "stored_absmax_moved_by_f64_mean": moved,
            "native_code_differences": native,
            "absmax_hash": f32_hash(absmax.numpy()),
            "dq_codes_hash": fnv1a(dq_codes.numpy().astype(np.uint8).tobytes()),
            "dq_scales_hash": f32_hash(dq_scales.numpy()),
            "stored_absmax_hash": f32_hash(stored.numpy()),
        }
        if full:
            out["absmax"] = [f32(v) for v in absmax.numpy()]
            out["dq_codes"] = [int(v) for v in dq_codes.numpy()]
            out["dq_scales"] = [f32(v) for v in dq_scales.numpy()]
            out["stored_absmax"] = [f32(v) for v in stored.numpy()]
            out["dequantized_hash"] = f32_hash(values)
        return out

    cases = []
    tiny = np.zeros((8, 64), dtype=np.float32)
    tiny[0, 0] = 1.0
    tiny[1:, 0] = np.float32(2.0 ** -24)
    r = run(tiny, True)
    assert f32(r["stored_absmax"][1]) == f32(np.float32(-0.0055664033)), r["stored_absmax"]
    cases.append({"matrix": "8x64: zeros, w[0,0] = 1, w[1..8, 0] = 2^-24", "shape": [8, 64], **r})
    for rows, cols, seed in ((4, 256, 0xB0), (96, 640, 0xB1), (384, 1536, 0xB2), (2048, 1152, 0xB3),
                             (4096, 1040, 0xB4)):
        x = weights(rows, cols, seed)
        r = run(x, rows * cols <= 1024)
        cases.append({"matrix": "weights", "shape": [rows, cols], "seed": seed,
                      "input_hash": f32_hash(x[: min(rows, 4)]), **r})
    # Absmax values whose f32 sum overflows: torch's mean is inf, and every value comes back NaN.
    big = np.zeros((4, 64), dtype=np.float32)
    big[0, 0] = big[1, 0] = np.float32(3e38)
    big[2, 1], big[3, 5] = 1.0, -2.0
    flat = torch.from_numpy(big.reshape(-1))
    q2, st2 = F.quantize_4bit(flat, blocksize=64, quant_type="nf4", compress_statistics=True)
    values = F.dequantize_4bit(q2, st2).numpy().reshape(-1)
    assert np.isinf(st2.offset.item())
    cases.append({"matrix": "overflow: 3e38 at (0, 0) and (1, 0), 1 at (2, 1), -2 at (3, 5)", "shape": [4, 64],
                  "offset": json_float(st2.offset.item()), "nan_values": int(np.isnan(values).sum())})
    if minilm:
        from safetensors.numpy import load_file

        tensors = load_file(minilm)
        for layer in range(6):
            name = f"encoder.layer.{layer}.output.dense.weight"
            x = tensors[name].astype(np.float32)
            r = run(x, False)
            cases.append({"matrix": "minilm", "tensor": name, "shape": list(x.shape),
                          "input_hash": f32_hash(x[:4]), **r})
    return {
        "library": f"bitsandbytes {bnb.__version__} (CPU), torch {torch.__version__.split('+')[0]}, "
                   f"torch.set_num_threads({TORCH_THREADS})",
        "call": "quantize_4bit(x.flatten(), blocksize=64, quant_type='nf4', compress_statistics=True): "
                "offset = absmax.mean() (torch, float32); absmax codes and scales by the default "
                "backend's quantize_blockwise(absmax - offset, dynamic map, 256) (the native CPU "
                "library's choice differs in native_code_differences codes); stored absmax = "
                "dequantize_blockwise(codes, state2) + offset",
        "weights": "x[r, c] = f32((u1 + u2 - 1) * 2^-(r % 13)), times 16 at c % 211 == 5, u1, u2 from "
                   "splitmix64(seed + i * 0x9E3779B97F4A7C15) at i = 2 (r * cols + c) and i + 1",
        "cases": cases,
    }


# --------------------------------------------------------------------------
# ONNX Runtime at 16 bits
# --------------------------------------------------------------------------


def matrix_q() -> np.ndarray:
    """8x16 for the integer presets at 16 bits and PyTorch's reduced range.

    row 0 : N(0, 0.01^2)            row 4 : all zero
    row 1 : N(0, 1), one outlier    row 5 : constant 0.3
    row 2 : one-signed (positive)   rows 6, 7 : filled in by each family's own search for a
    row 3 : spread over decades                 row whose codes leave the reduced range
    """
    rng = np.random.default_rng(20250701)
    q = np.zeros((8, 16), dtype=np.float32)
    q[0] = (rng.standard_normal(16) * 0.01).astype(np.float32)
    q[1] = rng.standard_normal(16).astype(np.float32)
    q[1, 5] = np.float32(7.5)
    q[2] = rng.uniform(0.1, 0.9, 16).astype(np.float32)
    q[3] = (rng.standard_normal(16) * 10.0 ** rng.uniform(-4, 0, 16)).astype(np.float32)
    q[5] = np.float32(0.3)
    return q


def candidates():
    """Short rows [lo, hi, lo / 2, hi / 2] over a grid of fractions, in a fixed order."""
    for a in range(1, 40):
        for b in range(1, 40):
            for den in (3, 7, 9, 11, 13):
                lo, hi = -a / den, b / den
                yield np.array([lo, hi, lo / 2, hi / 2], dtype=np.float32)


def padded(row: np.ndarray, cols: int) -> np.ndarray:
    out = np.zeros(cols, dtype=np.float32)
    out[: row.size] = row
    return out


def ort_fixtures() -> dict:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper
    from onnxruntime.quantization.quant_utils import get_qmin_qmax_for_qType, quantize_data

    lib = f"onnxruntime {ort.__version__}"

    def codes_of(row, qtype, sym, rr):
        zp, scale, q = quantize_data(row, qtype, sym, reduce_range=rr)
        return int(np.asarray(zp).astype(np.int64)), np.float32(scale), np.asarray(q).astype(np.int64)

    def dequantize(q, scales, zps, qtype):
        rows, cols = q.shape
        nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=0)]
        inits = [
            helper.make_tensor("x", qtype, [rows, cols], q.ravel().tolist()),
            helper.make_tensor("s", TensorProto.FLOAT, [rows], np.asarray(scales, np.float32).tolist()),
            helper.make_tensor("z", qtype, [rows], list(zps)),
        ]
        graph = helper.make_graph(nodes, "dq", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                                                   [rows, cols])], inits)
        return ort_run(graph)

    out = {}
    for qname, preset in (("INT16", "ort-int8"), ("UINT16", "ort-uint8")):
        qtype = getattr(TensorProto, qname)
        for sym in (True, False):
            for rr in (False, True):
                lo, hi = (int(v) for v in get_qmin_qmax_for_qType(qtype, rr, sym))
                x = matrix_q()
                # rows 6, 7: the first candidates with a code above the code range (and, for a
                # signed asymmetric type, one below it); the padding zeros lie inside it.
                above = next((c for c in candidates() if codes_of(c, qtype, sym, rr)[2].max() > hi), None)
                below = next((c for c in candidates() if codes_of(c, qtype, sym, rr)[2].min() < lo), None)
                if above is not None:
                    x[6] = padded(above, 16)
                if below is not None:
                    x[7] = padded(below, 16)
                codes = np.zeros(x.shape, dtype=np.int64)
                blocks, scales, zps = [], [], []
                for r in range(x.shape[0]):
                    zp, scale, q = codes_of(x[r], qtype, sym, rr)
                    codes[r] = q
                    blocks.append(block(r, r + 1, 0, x.shape[1], scale, zp))
                    scales.append(scale)
                    zps.append(zp)
                deq = dequantize(codes, scales, zps, qtype)
                kind = "sym" if sym else "asym"
                name = f"ort_16bit_{qname.lower()}_{kind}{'_reduce' if rr else ''}.json"
                call = (f"quantize_data(row, TensorProto.{qname}, symmetric={sym}, reduce_range={rr}) per row "
                        f"(code range [{lo}, {hi}]); row 6 holds a code above it"
                        f"{', row 7 one below it' if below is not None else ''}"
                        f"{'' if above is not None else ' (none found: the scheme cannot leave it)'}; "
                        "dequantized = DequantizeLinear (opset 21, CPU EP) session")
                overrides = {"scheme": "symmetric" if sym else "asymmetric", "reduce_range": rr,
                             "granularity": "channel", "bits": 16}
                out[name] = make_fixture(lib, call, preset, overrides, x, blocks, codes, deq)
    return out


# --------------------------------------------------------------------------
# PyTorch observers with reduce_range
# --------------------------------------------------------------------------


def torch_fixtures() -> dict:
    import torch
    import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed)
    from torch.ao.quantization.observer import MinMaxObserver, PerChannelMinMaxObserver

    torch.set_num_threads(TORCH_THREADS)
    lib = f"torch {torch.__version__.split('+')[0]} (CPU)"
    dec = torch.ops.quantized_decomposed
    specs = [
        ("torch-qint8", torch.qint8, "symmetric", "channel"),
        ("torch-qint8", torch.qint8, "symmetric", "tensor"),
        ("torch-qint8", torch.qint8, "asymmetric", "channel"),
        ("torch-quint8", torch.quint8, "asymmetric", "channel"),
        ("torch-quint8", torch.quint8, "asymmetric", "tensor"),
    ]

    def observe(x, dtype, scheme, gran):
        qs = {("symmetric", "channel"): torch.per_channel_symmetric,
              ("asymmetric", "channel"): torch.per_channel_affine,
              ("symmetric", "tensor"): torch.per_tensor_symmetric,
              ("asymmetric", "tensor"): torch.per_tensor_affine}[(scheme, gran)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if gran == "channel":
                obs = PerChannelMinMaxObserver(ch_axis=0, dtype=dtype, qscheme=qs, reduce_range=True)
            else:
                obs = MinMaxObserver(dtype=dtype, qscheme=qs, reduce_range=True)
        obs(x)
        scale, zp = obs.calculate_qparams()
        return obs, qs, scale, zp

    def quantize(x, dtype, scheme, gran, clamp):
        obs, qs, scale, zp = observe(x, dtype, scheme, gran)
        qmin, qmax = obs.quant_min, obs.quant_max
        if clamp == "type":
            if gran == "channel":
                q = torch.quantize_per_channel(x, scale, zp, 0, dtype)
            else:
                q = torch.quantize_per_tensor(x, float(scale.item()), int(zp.item()), dtype)
            return obs, qs, scale, zp, q.int_repr().to(torch.int64), q.dequantize()
        tdt = torch.int8 if dtype == torch.qint8 else torch.uint8
        if gran == "channel":
            codes = dec.quantize_per_channel(x, scale, zp, 0, qmin, qmax, tdt)
            deq = torch.fake_quantize_per_channel_affine(x, scale, zp.to(torch.int32), 0, qmin, qmax)
        else:
            codes = dec.quantize_per_tensor(x, float(scale.item()), int(zp.item()), qmin, qmax, tdt)
            deq = torch.fake_quantize_per_tensor_affine(x, float(scale.item()), int(zp.item()), qmin, qmax)
        return obs, qs, scale, zp, codes.to(torch.int64), deq

    def leaves(row, dtype, scheme, gran, above):
        _, _, _, _, codes, _ = quantize(torch.from_numpy(row.reshape(1, -1)), dtype, scheme, gran, "type")
        obs = observe(torch.from_numpy(row.reshape(1, -1)), dtype, scheme, gran)[0]
        return bool(codes.max() > obs.quant_max) if above else bool(codes.min() < obs.quant_min)

    out = {}
    for preset, dtype, scheme, gran in specs:
        dname = str(dtype).replace("torch.", "")
        x = matrix_q()
        # Rows 6, 7: the first candidates whose torch.quantize_per_* code leaves the observer's
        # reduced range (above; below for qint8 affine), found per row and kept for the tensor case.
        above = next((c for c in candidates() if leaves(c, dtype, scheme, "channel", True)), None)
        assert above is not None, f"{preset} {scheme}: no row leaves the reduced range"
        x[6] = padded(above, 16)
        if dtype == torch.qint8 and scheme == "asymmetric":
            below = next((c for c in candidates() if leaves(c, dtype, scheme, "channel", False)), None)
            assert below is not None
            x[7] = padded(below, 16)
        if gran == "tensor":
            # The tie row sets the tensor's range; the others lie inside it.
            x = np.stack([x[6], x[0] * np.float32(0.01), x[6] * np.float32(0.37), x[4]])
        t = torch.from_numpy(x.copy())
        for clamp in ("type", "range"):
            obs, qs, scale, zp, codes, deq = quantize(t, dtype, scheme, gran, clamp)
            qmin, qmax = obs.quant_min, obs.quant_max
            rows, cols = x.shape
            if gran == "channel":
                s = scale.to(torch.float32).numpy()
                z = zp.numpy().astype(np.int64)
                blocks = [block(r, r + 1, 0, cols, s[r], z[r]) for r in range(rows)]
            else:
                blocks = [block(0, rows, 0, cols, scale.item(), int(zp.item()))]
            c = codes.numpy()
            if clamp == "type":
                assert c.max() > qmax or c.min() < qmin, f"{preset} {gran}: no code outside [{qmin}, {qmax}]"
                fn = ("torch.quantize_per_channel(x, scale, zero_point, 0, torch.{d})" if gran == "channel"
                      else "torch.quantize_per_tensor(x, scale, zero_point, torch.{d})").format(d=dname)
                how = f"{fn} (codes clamped to the dtype); dequantized = q.dequantize()"
            else:
                assert qmin <= c.min() and c.max() <= qmax
                which = "channel" if gran == "channel" else "tensor"
                how = (f"quantized_decomposed.quantize_per_{which}(x, scale, zero_point, "
                       f"{'0, ' if gran == 'channel' else ''}{qmin}, {qmax}, ...) (codes clamped to the "
                       f"observer's range); dequantized = torch.fake_quantize_per_{which}_affine(x, scale, "
                       f"zero_point, {'0, ' if gran == 'channel' else ''}{qmin}, {qmax})")
            obs_name = "PerChannelMinMaxObserver(ch_axis=0, " if gran == "channel" else "MinMaxObserver("
            call = (f"{obs_name}dtype=torch.{dname}, qscheme=torch.{str(qs).replace('torch.', '')}, "
                    f"reduce_range=True) [quant_min {qmin}, quant_max {qmax}] + {how}")
            overrides = {"scheme": scheme, "reduce_range": True, "granularity": gran}
            if clamp == "range":
                overrides["code_clamp"] = "range"
            kind = "sym" if scheme == "symmetric" else "asym"
            name = f"torch_reduce_{dname}_{kind}_{gran}{'_fake' if clamp == 'range' else ''}.json"
            out[name] = make_fixture(lib, call, preset, overrides, x, blocks, c, deq.numpy())
    # The combination torch refuses.
    refused = {}
    for gran, cls, qs in (("channel", PerChannelMinMaxObserver, torch.per_channel_symmetric),
                          ("tensor", MinMaxObserver, torch.per_tensor_symmetric)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cls(dtype=torch.quint8, qscheme=qs, reduce_range=True)
            refused[gran] = None
        except NotImplementedError as e:
            refused[gran] = " ".join(str(e).split())
    assert all(refused.values()), refused
    out["torch_reduce_refused.json"] = {
        "library": lib,
        "call": "PerChannelMinMaxObserver / MinMaxObserver(dtype=torch.quint8, qscheme=per_channel_symmetric "
                "/ per_tensor_symmetric, reduce_range=True)",
        "preset": "torch-quint8",
        "overrides": {"scheme": "symmetric", "reduce_range": True},
        "raises": "NotImplementedError",
        "messages": refused,
    }
    return out


# --------------------------------------------------------------------------
# ggml through libgguf
# --------------------------------------------------------------------------

F32_MAX = float(np.finfo(np.float32).max)


def ggml_rows(libgguf, qtype, x: np.ndarray):
    q = libgguf.quantize_rows(np.ascontiguousarray(x, dtype=np.float32), qtype)
    d = libgguf.dequantize_rows(q, qtype)
    return np.asarray(q, dtype=np.uint8), np.asarray(d, dtype=np.float32)


def log2f_threshold() -> float:
    """The smallest f32 whose log2f is 128.0 (ggml's MXFP4 exponent then becomes 253)."""
    lo = np.float32(2.0 ** 127 * 1.5)
    hi = np.float32(F32_MAX)
    assert np.log2(hi) == np.float32(128.0) and np.log2(lo) < np.float32(128.0)
    lo_i, hi_i = int(lo.view(np.uint32)), int(hi.view(np.uint32))
    while hi_i - lo_i > 1:
        mid = (lo_i + hi_i) // 2
        if np.log2(np.uint32(mid).view(np.float32)) == np.float32(128.0):
            hi_i = mid
        else:
            lo_i = mid
    return float(np.uint32(hi_i).view(np.float32))


def fp4_fixture() -> dict:
    import libgguf

    T = libgguf.GGMLQuantizationType
    big = log2f_threshold()
    rows = []

    def row(desc, vals):
        x = np.zeros(64, dtype=np.float32)
        x[: len(vals)] = np.asarray(vals, dtype=np.float32)
        rows.append((desc, x))

    row("f32 max, 1, then zeros", [F32_MAX, 1.0])
    row("-f32 max, -1, then zeros", [-F32_MAX, -1.0])
    row("the smallest f32 whose log2f is 128, and its neighbour below", [big, -float(np.nextafter(
        np.float32(big), np.float32(0)))])
    row("2^127 * 1.9, 2^127, 2^126 * 1.5 and -2^125", [2.0 ** 127 * 1.9, 2.0 ** 127, -(2.0 ** 126) * 1.5,
                                                         -(2.0 ** 125)])
    row("f32 max in every position of the first 16", [F32_MAX * (1 if i % 2 else -1) for i in range(16)])
    row("NVFP4 saturation: 448 * 6 = 2688 and above", [2688.0, 2689.0, 5000.0, -3000.0, 1e4, 1.0, 0.5])
    row("NVFP4 saturation: 1e30, 1e20, 1", [1e30, 1e20, 1.0, -1e20])
    row("NVFP4: 16 * 448 = 7168 and its neighbours", [7168.0, 7200.0, 7100.0, -7168.0, 2689.0])
    row("a second sub-block at f32 max", [0.5] * 16 + [F32_MAX, 3.0, -1e38])
    row("ordinary values beside a huge sub-block", [1e38] * 16 + [0.25, -0.5, 1.0, 3.0] * 4)
    x = np.stack([r for _, r in rows])
    cases = []
    for name, qtype in (("MXFP4", T.MXFP4), ("NVFP4", T.NVFP4)):
        q, d = ggml_rows(libgguf, qtype, x)
        assert np.isfinite(d).all(), f"{name}: a non-finite reconstruction"
        cases.append({"format": name, "bytes": [bytes(r).hex() for r in q],
                      "dequantized": f32_list(d)})
    return {
        "library": f"libgguf {libgguf_version()} (ggml's quantize_row_<type>_ref, dequantize_row_<type>)",
        "call": "libgguf.quantize_rows(x, MXFP4 / NVFP4), libgguf.dequantize_rows(bytes, type), per row",
        "rows": [d for d, _ in rows],
        "shape": list(x.shape),
        "input": f32_list(x),
        "cases": cases,
    }


def libgguf_version() -> str:
    import importlib.metadata as md

    return md.version("libgguf")


KQUANT_ROWS = [
    ("f32 max at column 3", [["set", 3, F32_MAX]]),
    ("-f32 max at column 300 (second super-block)", [["set", 300, -F32_MAX]]),
    *[(f"all times 2^{k}", [["scale", 2.0 ** k]]) for k in (16, 18, 20, 22, 24, 26, 28, 40, 60, 100)],
    ("all times 1e37", [["scale", 1e37]]),
    *[(f"one value {v:g} at column 40", [["set", 40, v]]) for v in (2.0 ** 22, 2.0 ** 26, 2.0 ** 30, 1e19, 1e30)],
    ("columns 32..64 times 1e-40 (subnormal)", [["scale_cols", 32, 64, 1e-40]]),
    ("columns 16..32 zero but for one 1e-45", [["zero_cols", 16, 32], ["set", 20, 1e-45]]),
    ("all times 1e-40 (subnormal)", [["scale", 1e-40]]),
    ("all times 1e-37 (normal, tiny)", [["scale", 1e-37]]),
    ("zeros with 1e-39 at column 7 and -3e-39 at column 300",
     [["zero_cols", 0, 512], ["set", 7, 1e-39], ["set", 300, -3e-39]]),
]
KQUANT_SEED = 0xC0


def apply_ops(x: np.ndarray, ops) -> np.ndarray:
    """A row's edits, in float32 (the Rust test applies the same)."""
    x = x.copy()
    for op in ops:
        if op[0] == "set":
            x[op[1]] = np.float32(op[2])
        elif op[0] == "scale":
            x = (x * np.float32(op[1])).astype(np.float32)
        elif op[0] == "scale_cols":
            x[op[1]:op[2]] = (x[op[1]:op[2]] * np.float32(op[3])).astype(np.float32)
        elif op[0] == "zero_cols":
            x[op[1]:op[2]] = 0.0
        else:
            raise ValueError(op)
    return x


KQUANT_BYTES = {"Q2_K": 84, "Q3_K": 110, "Q4_K": 144, "Q5_K": 176, "Q6_K": 210}


def build_asserting_ggml(src: str, tmp: str) -> str:
    """ggml-quants.c from a ggml checkout, compiled WITH assertions (no -DNDEBUG), beside
    ggml_stubs.c, into a shared library."""
    lib = os.path.join(tmp, "libggml-quants-assert.so")
    inc = [f"-I{os.path.join(src, d)}" for d in ("include", "src", os.path.join("src", "ggml-cpu"))]
    subprocess.run(["gcc", "-O2", "-fPIC", "-shared", "-ffp-contract=off", *inc, "-o", lib,
                    os.path.join(src, "src", "ggml-quants.c"), os.path.join(HERE, "ggml_stubs.c"), "-lm"],
                   check=True)
    return lib


def asserting_child(lib: str, name: str, path_in: str):
    """Run in a child process: quantize_row_<name>_ref on one row (an abort ends the child)."""
    import ctypes

    x = np.load(path_in).astype(np.float32)
    out = (ctypes.c_uint8 * (KQUANT_BYTES[name] * (x.size // 256)))()
    fn = getattr(ctypes.CDLL(lib), f"quantize_row_{name[:2].lower()}{name[2:]}_ref")
    fn(np.ascontiguousarray(x).ctypes.data_as(ctypes.c_void_p), out, ctypes.c_int64(x.size))


def aborting_rows(lib: str, name: str, x: np.ndarray, tmp: str) -> list[int]:
    """The rows on which ggml's reference built with assertions aborts."""
    rows = []
    for r, row in enumerate(x):
        path_in = os.path.join(tmp, "row.npy")
        np.save(path_in, row)
        run = subprocess.run([sys.executable, __file__, "--assert-child", lib, name, path_in],
                             capture_output=True, text=True)
        if run.returncode != 0:
            assert "Assertion" in run.stderr, run.stderr
            rows.append(r)
    return rows


def kquant_fixture(ggml_src: str | None) -> dict:
    import libgguf

    T = libgguf.GGMLQuantizationType
    base = weights(1, 512, KQUANT_SEED)[0]
    with np.errstate(over="ignore"):
        x = np.stack([apply_ops(base, ops) for _, ops in KQUANT_ROWS])
    assert np.isfinite(x).all()
    cases = []
    tmp_dir = tempfile.TemporaryDirectory()
    tmp = tmp_dir.name
    lib = build_asserting_ggml(ggml_src, tmp) if ggml_src else None
    for name, qtype in (("Q2_K", T.Q2_K), ("Q3_K", T.Q3_K), ("Q4_K", T.Q4_K), ("Q5_K", T.Q5_K),
                        ("Q6_K", T.Q6_K)):
        q, d = ggml_rows(libgguf, qtype, x)
        aborts = aborting_rows(lib, name, x, tmp) if lib else None
        rows = []
        for qr, dr in zip(q, d):
            nan = [int(b) for b in np.flatnonzero((~np.isfinite(dr.reshape(-1, 256))).any(axis=1))]
            rows.append({"nonfinite_super_blocks": nan, "bytes": fnv1a(bytes(qr)),
                         "values": None if nan else f32_hash(dr), "all_zero": bool(not nan and not dr.any())})
        case = {"format": name, "rows": rows}
        if aborts is not None:
            case["aborts_with_assertions"] = aborts
        cases.append(case)
    tmp_dir.cleanup()
    return {
        "library": f"libgguf {libgguf_version()} (ggml's quantize_row_<type>_ref, dequantize_row_<type>)",
        "call": "libgguf.quantize_rows(x, type), libgguf.dequantize_rows(bytes, type), per row; "
                "nonfinite_super_blocks: the super-blocks with a value that comes back NaN or infinite; "
                "bytes and values: FNV-1a 64 of ggml's bytes and of its values (little-endian f32) when "
                "all are finite; all_zero: every value comes back 0; aborts_with_assertions: the rows on "
                "which ggml-quants.c from --ggml-src, built without -DNDEBUG, aborts (an assert fails)",
        "base": f"weights(1, 512, seed {KQUANT_SEED}) (see nf4_dq.json), then each row's edits in float32",
        "rows": [{"about": d, "edits": ops} for d, ops in KQUANT_ROWS],
        "shape": list(x.shape),
        "input_hash": f32_hash(x),
        "cases": cases,
    }


# --------------------------------------------------------------------------


def small(v) -> bool:
    """A value short enough to share its dictionary's line."""
    if isinstance(v, dict):
        return len(v) <= 8 and all(not isinstance(x, (dict, list)) for x in v.values())
    if isinstance(v, list):
        return len(v) <= 8 and all(not isinstance(x, dict) and (not isinstance(x, list) or len(x) <= 4) for x in v)
    return True


def dumps(fx) -> str:
    """JSON with one list of numbers, or one small dictionary, per line."""
    def enc(v, indent):
        pad = " " * indent
        if isinstance(v, dict) and all(small(x) for x in v.values()):
            return pad + json.dumps(v, separators=(", ", ": "))
        if isinstance(v, dict):
            items = [f'{pad}  {json.dumps(k)}: {enc(x, indent + 2).lstrip()}' for k, x in v.items()]
            return pad + "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(v, list) and v and isinstance(v[0], (list, dict)):
            items = [enc(x, indent + 2) if isinstance(x, dict) else pad + "  " + json.dumps(x, separators=(",", ":"))
                     for x in v]
            return pad + "[\n" + ",\n".join(items) + "\n" + pad + "]"
        return pad + json.dumps(v, separators=(",", ":"))
    return enc(fx, 0) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minilm", default=os.environ.get("QUANTSCOPE_MINILM"),
                    help="all-MiniLM-L6-v2's model.safetensors (default: $QUANTSCOPE_MINILM)")
    ap.add_argument("--ggml-src", help="a ggml checkout (src/, include/): also run its k-quant references "
                                        "built with assertions, and record the rows on which they abort")
    ap.add_argument("--means-child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--assert-child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.means_child:
        torch_means(*args.means_child)
        return 0
    if args.assert_child:
        asserting_child(*args.assert_child)
        return 0
    os.makedirs(OUT_DIR, exist_ok=True)
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        out["torch_mean.json"] = mean_fixture(tmp)
    out["nf4_dq.json"] = nf4_fixture(args.minilm)
    out.update(ort_fixtures())
    out.update(torch_fixtures())
    out["ggml_fp4_edges.json"] = fp4_fixture()
    out["ggml_kquant_edges.json"] = kquant_fixture(args.ggml_src)
    total = 0
    for name in sorted(out):
        fx = out[name]
        text = dumps_fixture(fx) if "blocks" in fx else dumps(fx)
        assert json.loads(text) == json.loads(json.dumps(fx))
        with open(os.path.join(OUT_DIR, name), "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        total += len(text)
        print(f"{name:40s} {len(text):8d} bytes")
    print(f"{len(out)} fixtures, {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

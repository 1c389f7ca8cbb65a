#!/usr/bin/env python3
"""Golden fixtures for two-level NVFP4 (E2M1 values, an E4M3 scale per 16 values, one f32
scale per tensor), made by the two libraries that write the hub's NVFP4 checkpoints, run on
CPU tensors.

Writes tests/golden/nvfp4/*.json:

  inputs.json           the input matrices (each is one tensor: the per-tensor scale is its own)
  compressed-tensors.json  compressed-tensors 0.20.1 (llm-compressor's format,
                        `nvfp4-pack-quantized`): the preset scheme "NVFP4"'s weight arguments;
                        global_scale = generate_gparam(x.min(), x.max()) (448 * 6 / amax, a
                        divisor); the per-group scale from calculate_qparams(group min, group
                        max, args, global_scale) (amax / 6 * global_scale, cast to E4M3; a 0
                        becomes 0.125); NVFP4PackedCompressor.compress (x / (scale /
                        global_scale), clamped to +-6, E2M1 round half to even); the
                        reconstruction as .decompress computes it (unpack_fp4_from_uint8, then
                        forward.dequantize: code * (scale / global_scale)), in float32 where
                        .decompress unpacks to bfloat16
  modelopt.json         NVIDIA ModelOpt 0.47.0: NVFP4QTensor.quantize(x, 16) (scale_2 = amax /
                        (6 * 448), a multiplier; the block scale amax / (6 * scale_2), a 0
                        becoming 1, clamped to [2^-9, 448] and cast to E4M3; x / (scale *
                        scale_2) to E2M1 by its bounds, ties to even) and .dequantize (code *
                        (scale * scale_2))

Each case records the per-tensor scale (f32), the E4M3 byte of every block scale, the 4-bit
code of every value (bit 3 the sign) and the reconstruction; an infinite or NaN
reconstruction is recorded as the library gives it (the Rust side refuses such tensors).

Run from the crate root (torch on CPU; ModelOpt is a pure-python wheel whose imports need a
few small packages; a target directory keeps them apart):
    pip install torch==2.15.0 compressed-tensors==0.20.1
    pip install --no-deps --target /tmp/modelopt nvidia-modelopt==0.47.0
    pip install --target /tmp/modelopt-deps omegaconf nvidia-ml-py "pulp<4.0" scipy ninja
    PYTHONPATH=/tmp/modelopt:/tmp/modelopt-deps python3 tests/golden/generate_nvfp4.py

Deterministic: a rerun rewrites byte-identical files.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "nvfp4")
sys.path.insert(0, HERE)
from generate import f32_list, int_list, matrix_a, matrix_c  # noqa: E402
from generate_formats import dumps  # noqa: E402

F32_MAX = np.finfo(np.float32).max


# --------------------------------------------------------------------------
# Inputs: each matrix is a whole tensor, since the top scale is per tensor
# --------------------------------------------------------------------------


def tensor_edges():
    rng = np.random.default_rng(20251203)
    out = []
    out.append(("zeros_2x32", np.zeros((2, 32), np.float32)))
    out.append(("constant_2x32", np.full((2, 32), 0.3, np.float32)))
    pos = rng.uniform(0.01, 2.0, (2, 32)).astype(np.float32)
    out.append(("one_signed_2x32", pos))
    o = (rng.standard_normal((4, 64)) * 0.02).astype(np.float32)
    o[1, 7] = np.float32(40.0)  # every other block's scale falls into E4M3's subnormals or to 0
    out.append(("outlier_4x64", o))
    # Blocks whose E4M3 scale is subnormal or underflows under a tensor amax of 1.
    q = (rng.standard_normal((2, 64)) * 1e-3).astype(np.float32)
    q[0, 0] = np.float32(1.0)
    q[0, 16:32] *= np.float32(1e-2)
    q[0, 32:48] *= np.float32(1e-4)
    q[1, 16:32] = np.float32(0.0)
    q[1, 48:64] *= np.float32(1e-6)
    out.append(("quiet_blocks_2x64", q))
    t = (rng.standard_normal((2, 32)) * 1e-39).astype(np.float32)
    t[0, 3] = np.float32(2.0 ** -149)
    out.append(("tiny_2x32", t))
    s = np.zeros((2, 32), np.float32)
    s[0, :8] = [1e-39, -1e-39, 3e-40, 2.0 ** -140, -(2.0 ** -149), 0.0, -0.0, 1e-38]
    s[1] = (rng.standard_normal(32) * 1e-30).astype(np.float32)
    out.append(("subnormal_2x32", s))
    m = rng.standard_normal((2, 32)).astype(np.float32)
    m[0, 5] = F32_MAX
    m[1, 9] = -F32_MAX
    out.append(("f32max_2x32", m))
    # Tensor amax 2688: the per-tensor scale is 1 in both conventions; block amax 6 * s for
    # an E4M3 value s, so the block scale is s exactly and every other value is s times an
    # E2M1 midpoint (a tie).
    mids = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0], np.float32)
    ties = np.zeros((2, 32), np.float32)
    for b, s_ in enumerate([1.0, 0.5, 448.0, 2.0 ** -6]):
        blk = np.resize(mids, 16) * np.where(np.arange(16) % 3 == 0, -1, 1)
        blk[0] = 6.0
        ties.reshape(-1, 16)[b] = (blk * np.float32(s_)).astype(np.float32)
    ties[1, 16] = np.float32(2688.0)
    out.append(("ties_2x32", ties))
    z = np.resize(np.array([0.0, -0.0, -1e-3, 1.0, -1e-4, -0.0, 2e-3, -0.5], np.float32), (2, 32))
    out.append(("signs_2x32", z.astype(np.float32)))
    return out


def matrices():
    return [("8x64", matrix_a()), ("4x256", matrix_c())] + tensor_edges()


# --------------------------------------------------------------------------
# compressed-tensors
# --------------------------------------------------------------------------


def ct_run(x: np.ndarray) -> dict:
    import torch
    from compressed_tensors.compressors.nvfp4 import NVFP4PackedCompressor
    from compressed_tensors.compressors.nvfp4.helpers import unpack_fp4_from_uint8
    from compressed_tensors.quantization.lifecycle.forward import dequantize
    from compressed_tensors.quantization import preset_name_to_scheme
    from compressed_tensors.quantization.utils.helpers import calculate_qparams, generate_gparam

    scheme = preset_name_to_scheme("NVFP4", ["Linear"])
    args = scheme.weights
    w = torch.from_numpy(x.copy())
    gs = generate_gparam(w.min(), w.max())
    groups = w.reshape(w.shape[0], -1, 16)
    scale, zp = calculate_qparams(groups.amin(dim=-1), groups.amax(dim=-1), args, global_scale=gs)
    sd = {"weight": w.clone(), "weight_scale": scale.clone(), "weight_global_scale": gs.clone(),
          "weight_zero_point": zp}
    comp = NVFP4PackedCompressor.compress(sd, scheme)
    packed = comp["weight_packed"].numpy()
    codes = np.stack([packed & 15, packed >> 4], axis=-1).reshape(x.shape)
    # decompress() unpacks to bfloat16 by default; the same two calls in float32 give the
    # reconstruction at full precision (what a float32 checkpoint load computes).
    unpacked = unpack_fp4_from_uint8(comp["weight_packed"], *x.shape, dtype=torch.float32)
    scale8 = comp["weight_scale"]
    deq = dequantize(x_q=unpacked, scale=scale8.to(torch.float32), args=args,
                     global_scale=comp["weight_global_scale"], dtype=torch.float32).numpy()
    assert scale8.dtype == torch.float8_e4m3fn
    assert torch.equal(scale8.to(torch.float32), scale), "the stored scale is the computed one"
    return {"tensor_scale": float(gs.item()), "scales": scale8.view(torch.uint8).numpy(),
            "codes": codes, "dequantized": deq}


# --------------------------------------------------------------------------
# ModelOpt
# --------------------------------------------------------------------------


def modelopt_run(x: np.ndarray) -> dict:
    import torch
    from modelopt.torch.quantization.qtensor.nvfp4_tensor import NVFP4QTensor

    w = torch.from_numpy(x.copy())
    qt, s, s2 = NVFP4QTensor.quantize(w.clone(), 16)
    packed = qt._quantized_data.numpy()
    codes = np.stack([packed & 15, packed >> 4], axis=-1).reshape(x.shape)
    deq = qt.dequantize(dtype=torch.float32, scale=s, double_scale=s2,
                        block_sizes={-1: 16}).numpy().astype(np.float32)
    assert s.dtype == torch.float8_e4m3fn
    return {"tensor_scale": float(s2.item()), "scales": s.view(torch.uint8).numpy(),
            "codes": codes, "dequantized": deq}


def values(arr: np.ndarray):
    """Reconstructions: finite floats, "inf"/"-inf", or "nan" (the Rust side refuses those)."""
    out = []
    for row in np.asarray(arr, dtype=np.float32):
        out.append([("nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")) if not np.isfinite(v)
                    else float(v) for v in row])
    return out


def main() -> int:
    warnings.filterwarnings("ignore")
    import torch

    torch.manual_seed(0)
    os.makedirs(OUT_DIR, exist_ok=True)
    mats = matrices()
    out: dict = {"inputs.json": {
        "about": "input tensors of the two-level NVFP4 fixtures; see generate_nvfp4.py",
        "matrices": [{"name": n, "shape": list(x.shape), "input": f32_list(x)} for n, x in mats]}}
    torch_v = torch.__version__.split("+")[0]
    for file, run, lib, call in [
        ("compressed-tensors.json", ct_run,
         f"compressed-tensors {md.version('compressed-tensors')}, torch {torch_v} (CPU)",
         "scheme = preset_name_to_scheme('NVFP4'); gs = generate_gparam(x.min(), x.max()); "
         "scale = calculate_qparams(group amin, group amax, scheme.weights, global_scale=gs); "
         "NVFP4PackedCompressor.compress / .decompress"),
        ("modelopt.json", modelopt_run,
         f"nvidia-modelopt {md.version('nvidia-modelopt')}, torch {torch_v} (CPU)",
         "NVFP4QTensor.quantize(x, 16) -> (packed, scale, scale_2); "
         "qtensor.dequantize(float32, scale, double_scale=scale_2, block_sizes={-1: 16})"),
    ]:
        cases = []
        for label, x in mats:
            r = run(x)
            cases.append({"matrix": label, "tensor_scale": r["tensor_scale"],
                          "scales": int_list(r["scales"]), "codes": int_list(r["codes"]),
                          "dequantized": values(r["dequantized"])})
        out[file] = {"library": lib, "call": call, "block": 16, "cases": cases}
    total = 0
    for name in sorted(out):
        text = dumps(out[name])
        with open(os.path.join(OUT_DIR, name), "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        total += len(text)
        print(f"{name:26s} {len(text):8d} bytes")
    print(f"{len(out)} fixtures, {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

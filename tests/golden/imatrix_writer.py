#!/usr/bin/env python3
"""Writes llama.cpp importance matrices the way `llama-imatrix` does, from activations.

Both formats that llama.cpp's `tools/imatrix/imatrix.cpp` writes:

  GGUF (save_imatrix): a GGUF v3 file with `general.type` = "imatrix",
      `imatrix.datasets` (array of strings), `imatrix.chunk_count` (u32) and
      `imatrix.chunk_size` (u32), then per weight tensor NAME, in sorted name order,
      `NAME.in_sum2` (F32, ne = [values per matrix, matrices]: the sum of x^2 of every
      input column over every token) and `NAME.counts` (F32, ne = [1, matrices]: the tokens
      counted). Like ggml's writer, a dimension of 1 at the end is not written (a dense
      tensor's in_sum2 is 1-D, its counts a 1-D tensor of one value). Tensor data aligned
      to 32 bytes.
  legacy .dat (save_imatrix_legacy): int32 entry count; per entry, in sorted name order:
      int32 name length, the name's bytes, int32 ncall = ceil(max(counts) / chunk_size),
      int32 nval, nval float32 values (in_sum2 / count) * ncall (a matrix whose count is 0
      stores 1 * ncall); then int32 chunk count and the dataset name (int32 length, bytes).

The sums follow llama-imatrix's collector: `values[j] += x[j] * x[j]` in float32, token by
token, in token order (numpy float32 arithmetic: no fused multiply-add), and `counts` the
number of tokens. Everything is little-endian.

As a tool:
    python3 tests/golden/imatrix_writer.py --activations X.npy --name blk.0.ffn_down.weight \
        --out imatrix.gguf [--format gguf|dat] [--chunk-size 512] [--dataset calibration.txt]

X is a float32 (or float64/float16) .npy array of shape [tokens, columns]: the inputs the
weight tensor NAME multiplies. --name may be repeated with as many --activations.
"""

from __future__ import annotations

import argparse
import struct

import numpy as np

GGUF_TYPE_UINT32 = 4
GGUF_TYPE_STRING = 8
GGUF_TYPE_ARRAY = 9
GGML_TYPE_F32 = 0
ALIGNMENT = 32


def sums_of_squares(x: np.ndarray) -> np.ndarray:
    """llama-imatrix's accumulation: f32 sums of x^2 per column, one token after another."""
    x = np.asarray(x, dtype=np.float32)
    acc = np.zeros(x.shape[1], dtype=np.float32)
    for row in x:
        acc = acc + row * row
    return acc


class Entry:
    """One weight tensor's statistics: sums per matrix (rows) and tokens per matrix."""

    def __init__(self, sums: np.ndarray, counts: list[int]):
        self.sums = np.ascontiguousarray(sums, dtype=np.float32).reshape(len(counts), -1)
        self.counts = [int(c) for c in counts]


def _string(s: str) -> bytes:
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _pad(n: int) -> int:
    return (n + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def _dims(ne: list[int]) -> list[int]:
    """ggml_n_dims: trailing dimensions of 1 are not written (at least one is)."""
    n = len(ne)
    while n > 1 and ne[n - 1] == 1:
        n -= 1
    return ne[:n]


def gguf_file(general_type: str, kvs: bytes, n_kv: int, tensors: list) -> bytes:
    """A GGUF v3 file: `general.type`, then `n_kv` more key/value pairs already encoded in
    `kvs`, then `tensors` (name, ne, float32 values) as F32 in that order."""
    kv = _string("general.type") + struct.pack("<I", GGUF_TYPE_STRING) + _string(general_type) + kvs
    infos = b""
    data = b""
    for name, ne, values in tensors:
        dims = _dims(ne)
        infos += _string(name) + struct.pack("<I", len(dims))
        infos += b"".join(struct.pack("<q", d) for d in dims)
        infos += struct.pack("<IQ", GGML_TYPE_F32, len(data))
        raw = np.ascontiguousarray(values, dtype="<f4").tobytes()
        data += raw + b"\0" * (_pad(len(raw)) - len(raw))
    head = b"GGUF" + struct.pack("<Iqq", 3, len(tensors), 1 + n_kv) + kv + infos
    head += b"\0" * (_pad(len(head)) - len(head))
    return head + data


def gguf_bytes(entries: dict[str, Entry], chunk_count: int, chunk_size: int,
               datasets: list[str]) -> bytes:
    """save_imatrix: the GGUF imatrix."""
    tensors = []  # (name, ne, data)
    for name in sorted(entries):
        e = entries[name]
        nmat = len(e.counts)
        nval = e.sums.size
        if nval == 0 or nmat == 0:
            continue
        tensors.append((f"{name}.in_sum2", [nval // nmat, nmat], e.sums.reshape(-1)))
        tensors.append((f"{name}.counts", [1, nmat], np.asarray(e.counts, dtype=np.float32)))
    kv = _string("imatrix.datasets") + struct.pack("<IIQ", GGUF_TYPE_ARRAY, GGUF_TYPE_STRING, len(datasets))
    for d in datasets:
        kv += _string(d)
    kv += _string("imatrix.chunk_count") + struct.pack("<II", GGUF_TYPE_UINT32, chunk_count)
    kv += _string("imatrix.chunk_size") + struct.pack("<II", GGUF_TYPE_UINT32, chunk_size)
    return gguf_file("imatrix", kv, 3, tensors)


def dat_bytes(entries: dict[str, Entry], chunk_count: int, chunk_size: int, dataset: str) -> bytes:
    """save_imatrix_legacy: the .dat imatrix (entries without any count are skipped)."""
    stored = [n for n in sorted(entries) if any(c != 0 for c in entries[n].counts)]
    out = struct.pack("<i", len(stored))
    for name in stored:
        e = entries[name]
        b = name.encode("utf-8")
        out += struct.pack("<i", len(b)) + b
        ncall = (max(e.counts) + (chunk_size - 1)) // chunk_size
        nval = e.sums.size
        nmat = len(e.counts)
        out += struct.pack("<ii", ncall, nval)
        flat = e.sums.reshape(-1)
        tmp = np.zeros(nval, dtype=np.float32)
        for i in range(nval):
            count = np.float32(e.counts[i // (nval // nmat)])
            value = flat[i]
            if count == np.float32(0):
                value, count = np.float32(1), np.float32(1)
            tmp[i] = (value / count) * np.float32(ncall)
        out += tmp.astype("<f4").tobytes()
    out += struct.pack("<i", chunk_count)
    d = dataset.encode("utf-8")
    out += struct.pack("<i", len(d)) + d
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--activations", action="append", required=True, help="a [tokens, columns] .npy file")
    p.add_argument("--name", action="append", required=True, help="the weight tensor's (GGUF) name")
    p.add_argument("--out", required=True)
    p.add_argument("--format", choices=["gguf", "dat"], default="gguf")
    p.add_argument("--chunk-size", type=int, default=512)
    p.add_argument("--dataset", default="calibration.txt")
    a = p.parse_args()
    if len(a.activations) != len(a.name):
        p.error("give one --name per --activations")
    entries = {}
    tokens = 0
    for path, name in zip(a.activations, a.name):
        x = np.load(path)
        if x.ndim != 2:
            p.error(f"{path}: expected [tokens, columns], got shape {x.shape}")
        entries[name] = Entry(sums_of_squares(x), [x.shape[0]])
        tokens = max(tokens, x.shape[0])
    chunks = tokens // a.chunk_size
    data = (gguf_bytes(entries, chunks, a.chunk_size, [a.dataset]) if a.format == "gguf"
            else dat_bytes(entries, chunks, a.chunk_size, a.dataset))
    with open(a.out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()

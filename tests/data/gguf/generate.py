"""Writes the GGUF fixtures of tests/gguf*.rs with gguf-py's GGUFWriter (gguf 0.19.0).

    python3 tests/data/gguf/generate.py      # rewrites tests/data/gguf/*.gguf

types.gguf   one tensor of each type quantscope reads or decodes, odd shapes, and for each
             quantized tensor NAME an F32 tensor NAME.dequant holding gguf-py's
             gguf.quants.dequantize of its bytes (what the decoders must give, bit for bit).
             Q4_0..Q8_0 and MXFP4 quantize random rows with gguf-py; the k-quants and NVFP4,
             which gguf-py cannot quantize, are random bytes with finite f16 scales. One row
             of each quantized tensor is all zeros (collapsed as stored).
metadata.gguf  a key of every value type (and arrays of several, one nested), a long
             string array like a tokenizer's, general.alignment = 64, and three small
             float tensors.
"""
import os

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T, GGUFValueType as V
from gguf.quants import dequantize, quantize

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261122)


def random_rows(rows, cols):
    x = rng.normal(0.0, 1.0, (rows, cols)).astype(np.float32)
    x *= np.logspace(-2, 0, rows, dtype=np.float32)[:, None]
    x[1] = 0.0  # a collapsed row
    return x


# Byte offsets (within a block) of each k-quant's f16 fields, from gguf/quants.py.
# NVFP4 has none: its UE4M3 scale bytes are finite whatever their bits.
K_F16 = {T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208],
         T.NVFP4: []}


def random_blocks(qtype, rows, cols):
    block_len, block_bytes = gguf.GGML_QUANT_SIZES[qtype]
    nb = rows * cols // block_len
    raw = rng.integers(0, 256, (nb, block_bytes), dtype=np.uint8)
    for at in K_F16[qtype]:
        d = rng.uniform(1e-4, 2e-2, nb).astype(np.float16)
        raw[:, at:at + 2] = d.view(np.uint8).reshape(nb, 2)
    raw = raw.reshape(rows, cols // block_len * block_bytes)
    raw[1] = 0  # a collapsed row: every scale 0
    return raw


def types():
    w = gguf.GGUFWriter(os.path.join(HERE, "types.gguf"), "quantscope-fixture")
    w.add_string("general.name", "every type")
    w.add_tensor("f32", rng.normal(size=(3, 5)).astype(np.float32))
    w.add_tensor("f16", rng.normal(size=(4, 7)).astype(np.float16))
    bf = quantize(rng.normal(size=(2, 3)).astype(np.float32), T.BF16)
    w.add_tensor("bf16", bf, raw_dtype=T.BF16)
    w.add_tensor("f64", rng.normal(size=(2, 2)).astype(np.float64))
    w.add_tensor("f32_3d", rng.normal(size=(2, 3, 4)).astype(np.float32))
    w.add_tensor("norm", rng.normal(size=(6,)).astype(np.float32))
    shapes = {T.Q4_0: (3, 64), T.Q4_1: (3, 96), T.Q5_0: (5, 32), T.Q5_1: (3, 64),
              T.Q8_0: (4, 96), T.MXFP4: (3, 64)}
    for qtype, (rows, cols) in shapes.items():
        raw = quantize(random_rows(rows, cols), qtype)
        name = qtype.name.lower()
        w.add_tensor(name, raw, raw_dtype=qtype)
        w.add_tensor(name + ".dequant", dequantize(raw, qtype).reshape(rows, cols))
    for qtype, (rows, cols) in {T.Q2_K: (3, 256), T.Q3_K: (3, 512), T.Q4_K: (4, 256),
                                T.Q5_K: (3, 256), T.Q6_K: (3, 512), T.NVFP4: (3, 128)}.items():
        raw = random_blocks(qtype, rows, cols)
        name = qtype.name.lower()
        w.add_tensor(name, raw, raw_dtype=qtype)
        w.add_tensor(name + ".dequant", dequantize(raw, qtype).reshape(rows, cols))
    write(w)


def metadata():
    w = gguf.GGUFWriter(os.path.join(HERE, "metadata.gguf"), "quantscope-fixture")
    w.add_custom_alignment(64)
    w.add_uint8("t.u8", 200)
    w.add_int8("t.i8", -100)
    w.add_uint16("t.u16", 60000)
    w.add_int16("t.i16", -30000)
    w.add_uint32("t.u32", 4000000000)
    w.add_int32("t.i32", -2000000000)
    w.add_float32("t.f32", 0.1)
    w.add_bool("t.bool", True)
    w.add_string("t.string", "héllo \"world\"")
    w.add_uint64("t.u64", 2**63 + 5)
    w.add_int64("t.i64", -(2**62))
    w.add_float64("t.f64", -1e300)
    w.add_array("t.array_f32", [0.5, -1.5, 2.25])
    w.add_array("t.array_nested", [[1, 2], [3, 4, 5]])
    w.add_array("tokenizer.ggml.tokens", [f"tok{i}" for i in range(1000)])
    w.add_tensor("a", rng.normal(size=(2, 3)).astype(np.float32))
    w.add_tensor("b", rng.normal(size=(5,)).astype(np.float16))
    w.add_tensor("c", rng.normal(size=(3, 3)).astype(np.float32))
    write(w)


def write(w):
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    types()
    metadata()

"""Writes the sharded checkpoint of tests/it/sharded.rs with the safetensors package (0.8.0):
two shards and the index Hugging Face's save_pretrained writes beside them.

    python3 tests/data/sharded/generate.py     # rewrites tests/data/sharded/model/*

model-00001-of-00002.safetensors  embed.weight (F16 6x4), layers.0.weight (F32 3x8), layers.0.bias
model-00002-of-00002.safetensors  layers.1.weight (BF16 as raw bytes: 4x8), lm_head.weight (F32 5x4)
model.safetensors.index.json      {"metadata": {"total_size": ..}, "weight_map": {tensor: shard}}
"""
import json
import os

import numpy as np
from safetensors.numpy import save_file

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model")
rng = np.random.default_rng(7)


def bf16(x):
    bits = x.astype(np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def main():
    os.makedirs(HERE, exist_ok=True)
    shards = {
        "model-00001-of-00002.safetensors": {
            "embed.weight": rng.normal(size=(6, 4)).astype(np.float16),
            "layers.0.weight": rng.normal(size=(3, 8)).astype(np.float32),
            "layers.0.bias": rng.normal(size=(3,)).astype(np.float32),
        },
        "model-00002-of-00002.safetensors": {
            "lm_head.weight": rng.normal(size=(5, 4)).astype(np.float32),
        },
    }
    weight_map = {}
    total = 0
    for file, tensors in shards.items():
        save_file(tensors, os.path.join(HERE, file), metadata={"format": "pt"})
        for name, t in tensors.items():
            weight_map[name] = file
            total += t.nbytes
    # BF16 is not a numpy dtype: write its header by hand into the second shard's place.
    second = os.path.join(HERE, "model-00002-of-00002.safetensors")
    w = bf16(rng.normal(size=(4, 8)))
    tensors = {"lm_head.weight": shards["model-00002-of-00002.safetensors"]["lm_head.weight"]}
    header = {"__metadata__": {"format": "pt"}}
    data = b""
    for name, dtype, shape, raw in [
        ("layers.1.weight", "BF16", [4, 8], w.tobytes()),
        ("lm_head.weight", "F32", [5, 4], tensors["lm_head.weight"].tobytes()),
    ]:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(second, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + data)
    weight_map["layers.1.weight"] = "model-00002-of-00002.safetensors"
    total += w.nbytes
    with open(os.path.join(HERE, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}, f, indent=2)


if __name__ == "__main__":
    main()

"""gguf-py's reading of a GGUF file, for tests/it/gemma.rs to compare with (gguf 0.19.0).

    python3 tests/data/gguf/gemma_reference.py MODEL.gguf OUT_DIR

OUT_DIR/tensors.json  every tensor as GGUFReader lists it: name, type name, shape (gguf-py's
                      order, innermost first), n_bytes, data_offset (absolute), in file order;
                      and "decoded": for the smallest 2-D tensor of each of Q4_K, Q6_K, Q5_0
                      and Q8_0, its name and the file NAME.npy holding gguf.quants.dequantize
                      of its bytes (float32, rows x values).
"""
import json
import os
import sys

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize


def main(model, out):
    os.makedirs(out, exist_ok=True)
    r = GGUFReader(model)
    tensors = [
        {
            "name": t.name,
            "type": t.tensor_type.name,
            "shape": [int(d) for d in t.shape],
            "n_bytes": int(t.n_bytes),
            "data_offset": int(t.data_offset),
        }
        for t in r.tensors
    ]
    decoded = {}
    for qtype in ["Q4_K", "Q6_K", "Q5_0", "Q8_0"]:
        of_type = [t for t in r.tensors if t.tensor_type.name == qtype and len(t.shape) == 2]
        if not of_type:
            continue
        t = min(of_type, key=lambda t: t.n_bytes)
        values = dequantize(t.data, t.tensor_type).astype(np.float32)
        values = values.reshape(int(t.shape[1]), int(t.shape[0]))
        file = f"{qtype}.npy"
        np.save(os.path.join(out, file), values)
        decoded[qtype] = {"name": t.name, "file": file}
    with open(os.path.join(out, "tensors.json"), "w") as f:
        json.dump({"tensors": tensors, "decoded": decoded}, f, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:3])

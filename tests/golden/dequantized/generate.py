"""The reconstruction `report --write-dequantized` writes, as gguf-py computes it.

Writes x.npy (4 x 64 f32 from a seeded generator) and x_q4_0.npy, x_q8_0.npy: gguf-py's
quants.dequantize(quants.quantize(x, type), type) for Q4_0 and Q8_0 (gguf-py 0.19.0). Run
once: python3 generate.py; tests/it/terminal.rs compares the files quantscope writes with them
bit for bit.
"""

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import quants

rng = np.random.default_rng(7)
x = rng.standard_normal((4, 64)).astype(np.float32)
np.save("x.npy", x)
for name, t in [("q4_0", T.Q4_0), ("q8_0", T.Q8_0)]:
    back = quants.dequantize(quants.quantize(x, t), t).astype(np.float32)
    np.save(f"x_{name}.npy", back)

#!/usr/bin/env python3
"""Times quantscope's core::format against ggml's reference quantizers, on the same matrix,
in one run, and prints a markdown table.

The matrix (4096x4096 f32 by default, written as .npy under --dir) has rows that are normal
with standard deviations log-uniform over three decades (1e-3 to 1) and a 12-sigma outlier in
every 997 values, so block scales differ by orders of magnitude within and across rows.

  quantscope  `examples/format_timing` (release build): per format, the whole analysis work
              (quantize, dequantize, MAE/RMSE/max error/SQNR in f64, collapsed rows, levels
              used), rows in parallel on every core; the time of the second of two runs in
              one process (the first warms the caches and the thread pool).
  ggml        quantize_row_<type>_ref alone, one thread, from ggml-quants.c of ggml-python
              0.0.45 compiled with gcc -O2 -DNDEBUG (the library tests/golden/generate_formats.py
              builds), called through ctypes on the same array.

Both are timed in interleaved rounds (each round times every runner once, after one warm-up
of each), so a slow spell of a shared machine falls on all of them alike; each column is the
median over the rounds.

Usage: python3 benches/compare_formats.py [--n 4096] [--reps 5] [--dir /tmp/quantscope-compare]
       [--ggml-src DIR] [--no-build]
Needs: numpy, gcc, pip (to download ggml-python's sdist), cargo.
"""

import argparse
import ctypes
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "golden"))
from generate_formats import GGML_TYPES, build_ggml, ggml_source  # noqa: E402

FORMATS = [("Q2_K", "q2_K"), ("Q3_K", "q3_K"), ("Q4_K", "q4_K"), ("Q5_K", "q5_K"),
           ("Q6_K", "q6_K"), ("MXFP4", "mxfp4"), ("NVFP4", "nvfp4")]
SEED = 20240601


def matrix(n: int) -> np.ndarray:
    rng = np.random.default_rng(SEED)
    std = 10.0 ** (-3.0 * rng.random(n))
    m = rng.standard_normal((n, n))
    m[:, 500::997] = 12.0
    return (m * std[:, None]).astype(np.float32)


def ggml_runner(lib, name: str, m: np.ndarray):
    qk, nbytes = GGML_TYPES[name]
    out = np.zeros(m.size // qk * nbytes, dtype=np.uint8)
    f = getattr(lib, f"quantize_row_{name}_ref")

    def run() -> float:
        t = time.perf_counter()
        f(m.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p), ctypes.c_int64(m.size))
        return (time.perf_counter() - t) * 1e3

    return run


def quantscope_runner(exe: Path, path: Path, fmt: str):
    def run() -> float:
        r = subprocess.run([str(exe), str(path), fmt], capture_output=True, text=True, check=True)
        return float(r.stdout.split()[1])

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/quantscope-compare"))
    ap.add_argument("--ggml-src")
    ap.add_argument("--no-build", action="store_true", help="use the example as built")
    a = ap.parse_args()

    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "--quiet", "--example", "format_timing"],
                       cwd=ROOT, check=True)
    exe = ROOT / "target" / "release" / "examples" / "format_timing"
    a.dir.mkdir(parents=True, exist_ok=True)
    m = matrix(a.n)
    path = a.dir / f"formats_{a.n}x{a.n}.npy"
    np.save(path, m)
    with tempfile.TemporaryDirectory() as tmp:
        lib = build_ggml(ggml_source(a.ggml_src, tmp), tmp)
        runners = {}
        for fmt, name in FORMATS:
            runners[fmt, "ggml"] = ggml_runner(lib, name, m)
            runners[fmt, "qs"] = quantscope_runner(exe, path, fmt)
        for run in runners.values():
            run()
        times = {k: [] for k in runners}
        for _ in range(a.reps):
            for k, run in runners.items():
                times[k].append(run())
    ms = {k: statistics.median(v) for k, v in times.items()}
    cpu = platform.processor()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    print(f"\n**Machine:** {os.cpu_count()} CPUs ({cpu}); medians of {a.reps} interleaved rounds.  ")
    print(f"**Matrix:** {a.n}x{a.n} f32, rows normal with standard deviations log-uniform in "
          f"[1e-3, 1], a 12-sigma outlier every 997 values, seed {SEED}.\n")
    print("| format | ggml quantize_row_*_ref alone (1 thread, -O2) | quantscope: quantize + dequantize + metrics "
          "(all cores) | ggml / quantscope |")
    print("|---|---:|---:|---:|")
    for fmt, _ in FORMATS:
        g, q = ms[fmt, "ggml"], ms[fmt, "qs"]
        print(f"| {fmt} | {g:.0f} ms | {q:.0f} ms | {g / q:.1f}x |")


if __name__ == "__main__":
    main()

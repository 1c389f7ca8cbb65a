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

  libgguf     with --iquants: the i-quants and ternary types (IQ1_S .. IQ4_NL, TQ1_0,
              TQ2_0) against libgguf 0.2.2's quantize_rows (ggml's quantize_<type>, what
              llama-quantize runs; it splits the rows over every core), both with the same
              importance vector
              (0.25 + 4 u per column, seed IMP_SEED) for the types whose reference reads one,
              since IQ2_XXS, IQ2_XS and IQ1_S are refused without.

              Beside it, the encoders alone on both sides: quantscope's `benches/importance.rs
              bytes` (every row encoded into ggml's bytes, all cores, nothing else: what
              quantize_rows returns), whose bytes are checked equal to libgguf's. For the
              ternary types this is the fair comparison: both encoders take about 0.1 s, and
              the dequantization and metrics would otherwise be most of quantscope's time.

  ladder      with --ladder: the whole format ladder, every preset and format but the
              IQ2/IQ1 lattice searches (`quantscope report FILE --formats LIST --no-ladder
              --timings`, its "analyse" time: every entry quantized, dequantized and
              measured, all cores) against one libgguf.quantize_rows(W, Q4_K) call.

Both are timed in interleaved rounds (each round times every runner once, after one warm-up
of each), so a slow spell of a shared machine falls on all of them alike; each column is the
median over the rounds.

Usage: python3 benches/compare_formats.py [--n 4096] [--reps 5] [--dir /tmp/quantscope-compare]
       [--ggml-src DIR] [--no-build] [--iquants [--types IQ4_XS,...]] [--ladder]
Needs: numpy, gcc, pip (to download ggml-python's sdist), cargo; with --iquants, libgguf 0.2.2
instead of gcc and ggml-python.
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
IQUANTS = ["IQ1_S", "IQ1_M", "TQ1_0", "IQ2_XXS", "TQ2_0", "IQ2_XS", "IQ2_S", "IQ3_XXS",
           "IQ3_S", "IQ4_XS", "IQ4_NL"]
IMP_SEED = 68


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


def quantscope_runner(exe: Path, path: Path, fmt: str, imp: Path | None = None):
    args = [str(exe)] + (["--importance", str(imp)] if imp else []) + [str(path), fmt]

    def run() -> float:
        r = subprocess.run(args, capture_output=True, text=True, check=True)
        return float(r.stdout.split()[1])

    return run


def libgguf_runner(name: str, m: np.ndarray, imp: np.ndarray | None, keep: dict | None = None):
    import libgguf

    qt = libgguf.GGMLQuantizationType[name]

    def run() -> float:
        t = time.perf_counter()
        out = libgguf.quantize_rows(m, qt, imatrix=imp)
        ms = (time.perf_counter() - t) * 1e3
        if keep is not None:
            keep[name] = np.asarray(out).tobytes()
        return ms

    return run


def importance_exe() -> Path:
    """benches/importance.rs's program, built (with --no-build, the newest one)."""
    found = sorted((ROOT / "target" / "release" / "deps").glob("importance-*"),
                   key=lambda p: p.stat().st_mtime)
    found = [p for p in found if p.suffix == "" and os.access(p, os.X_OK)]
    if not found:
        sys.exit("no executable for benches/importance.rs: cargo bench --no-run --bench importance")
    return found[-1]


def encoder_runner(exe: Path, path: Path, imp: Path, name: str, out: Path):
    def run() -> float:
        env = dict(os.environ, QS_BYTES_DIR=str(out))
        r = subprocess.run([str(exe), "bytes", str(path), str(imp), name], capture_output=True,
                           text=True, check=True, env=env)
        return float(r.stdout.split()[1])

    return run


def reads_importance(name: str) -> bool:
    return name.startswith("IQ")


def iquants(a, exe: Path, m: np.ndarray, path: Path) -> None:
    imp = (0.25 + 4.0 * np.random.default_rng(IMP_SEED).random(a.n)).astype(np.float32)
    imp_path = a.dir / f"importance_{a.n}.npy"
    np.save(imp_path, imp[None, :])
    runners = {}
    types = [t for t in IQUANTS if not a.types or t in a.types.split(",")]
    enc = importance_exe()
    ref_bytes: dict = {}
    for t in types:
        w = reads_importance(t)
        runners[t, "ref"] = libgguf_runner(t, m, imp if w else None, ref_bytes)
        runners[t, "enc"] = encoder_runner(enc, path, imp_path, t, a.dir)
        runners[t, "qs"] = quantscope_runner(exe, path, t, imp_path if w else None)
    # No warm-up round: the lattice searches take seconds a call, and format_timing times
    # the second of two runs in its process.
    times = {k: [] for k in runners}
    for _ in range(a.reps):
        for k, run in runners.items():
            times[k].append(run())
    ms = {k: statistics.median(v) for k, v in times.items()}
    best = {k: min(v) for k, v in times.items()}
    same = {t: (a.dir / f"{t}.bin").read_bytes() == ref_bytes.get(t) for t in types}
    header(a)
    print("| type | importance | libgguf 0.2.2 quantize_rows (all cores) | quantscope's encoder "
          "alone (all cores) | ratio | quantscope: quantize + dequantize + metrics (all cores) "
          "| ratio | bytes equal |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for t in types:
        g, e, q = ms[t, "ref"], ms[t, "enc"], ms[t, "qs"]
        w = "yes" if reads_importance(t) else "not read"
        print(f"| {t} | {w} | {g:.0f} ms ({best[t, 'ref']:.0f}) | {e:.0f} ms ({best[t, 'enc']:.0f}) "
              f"| {g / e:.1f}x | {q:.0f} ms ({best[t, 'qs']:.0f}) | {g / q:.1f}x "
              f"| {'yes' if same[t] else 'NO'} |")
    print("\nMedians, bests in parentheses.")


# The IQ2/IQ1 lattice searches, left out of the ladder's timing (they follow it with
# progress in the explorer).
LATTICE = {"iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s"}


def ladder(a, m: np.ndarray, path: Path) -> None:
    exe = ROOT / "target" / "release" / "quantscope"
    listing = subprocess.run([str(exe), "report", "--list-presets"], capture_output=True,
                             text=True, check=True).stdout
    names = []
    for line in listing.splitlines():
        if line.startswith("Clipping"):
            break
        word = line.split(" ", 1)[0]
        if word and not line.startswith("Formats") and word not in LATTICE:
            names.append(word)
    args = [str(exe), "report", str(path), "--formats", ",".join(names), "--no-ladder",
            "--timings", "--format", "json", "--output", os.devnull]

    def ours() -> float:
        r = subprocess.run(args, capture_output=True, text=True, check=True)
        return float(r.stderr.split("analyse ")[1].split(" ms")[0])

    runners = {"ladder": ours, "q4_k": libgguf_runner("Q4_K", m, None)}
    for run in runners.values():
        run()
    times = {k: [] for k in runners}
    for _ in range(a.reps):
        for k, run in runners.items():
            times[k].append(run())
    header(a)
    print(f"The ladder's {len(names)} entries: {', '.join(names)}.\n")
    print("| what | best | median |")
    print("|---|---:|---:|")
    for k, label in [("q4_k", "libgguf.quantize_rows(W, Q4_K), one call"),
                     ("ladder", "quantscope, the whole format ladder (`analyse`)")]:
        print(f"| {label} | {min(times[k]):.0f} ms | {statistics.median(times[k]):.0f} ms |")
    r = statistics.median(times["ladder"]) / statistics.median(times["q4_k"])
    print(f"\nladder / Q4_K call (medians): {r:.2f}x")


def header(a) -> None:
    cpu = platform.processor()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    print(f"\n**Machine:** {os.cpu_count()} CPUs ({cpu}); medians of {a.reps} interleaved round(s).  ")
    print(f"**Matrix:** {a.n}x{a.n} f32, rows normal with standard deviations log-uniform in "
          f"[1e-3, 1], a 12-sigma outlier every 997 values, seed {SEED}.\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/quantscope-compare"))
    ap.add_argument("--ggml-src")
    ap.add_argument("--no-build", action="store_true", help="use the example as built")
    ap.add_argument("--iquants", action="store_true",
                    help="time the i-quants and ternary types against libgguf instead")
    ap.add_argument("--types", help="with --iquants, a comma-separated subset (IQ4_XS,TQ2_0)")
    ap.add_argument("--ladder", action="store_true",
                    help="time the whole format ladder against one libgguf Q4_K call instead")
    a = ap.parse_args()

    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "--quiet", "--example", "format_timing",
                        "--bin", "quantscope"], cwd=ROOT, check=True)
        if a.iquants:
            subprocess.run(["cargo", "bench", "--no-run", "--quiet", "--bench", "importance"],
                           cwd=ROOT, check=True)
    exe = ROOT / "target" / "release" / "examples" / "format_timing"
    a.dir.mkdir(parents=True, exist_ok=True)
    m = matrix(a.n)
    path = a.dir / f"formats_{a.n}x{a.n}.npy"
    np.save(path, m)
    if a.iquants:
        iquants(a, exe, m, path)
        return
    if a.ladder:
        ladder(a, m, path)
        return
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
    header(a)
    print("| format | ggml quantize_row_*_ref alone (1 thread, -O2) | quantscope: quantize + dequantize + metrics "
          "(all cores) | ggml / quantscope |")
    print("|---|---:|---:|---:|")
    for fmt, _ in FORMATS:
        g, q = ms[fmt, "ggml"], ms[fmt, "qs"]
        print(f"| {fmt} | {g:.0f} ms | {q:.0f} ms | {g / q:.1f}x |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Times quantscope's work with importance against the references, on the same arrays, in
one run, and prints markdown tables: importance-weighted k-quants against libgguf, the
output error against numpy's product, and the peak memory of `report --activations`.

Matrices (4096x4096 f32 by default, written as .npy under --dir):
  gaussian  standard normal rows (seed 20240602, as benches/compare.py);
  decades   rows normal with standard deviations log-uniform in [1e-3, 1] (seed 20240601,
            as benches/compare.py), so row spreads differ by three decades.
Activations X: --tokens tokens (512) of standard normal inputs, one column in 128 twenty
times louder (seed 20240603); the importance vector is the mean of x^2 per column (f32).

  weighted k-quants  quantscope: every row encoded with the importance (codes, packed scales
             and the row's reconstruction), rows in parallel on all cores and on one
             (RAYON_NUM_THREADS=1), the timed run after a warm-up in a fresh process of
             `benches/importance.rs`; libgguf 0.2.2: `libgguf.quantize_rows(W, type,
             imatrix=a)`, one call, in this process. The bytes of both are compared once.
  output error  quantscope: `OutputStage::errors` of W's Q4_K report with X, the call after
             the one that also forms ||X w_i||^2: one product of X by (W - W^)^T in f32
             (matrixmultiply), squares and sums in f64, rows in blocks on all cores; numpy:
             `X @ E.T` alone on the same arrays (E = W - W^ from libgguf's Q4_K), numpy's BLAS.
  peak memory  `/usr/bin/time -v` maximum resident set of `quantscope report W.npy --preset
             q4_k --no-ladder --format json` without and with `--activations X.npy`, and
             with --big-tokens, activations larger than the 512 MiB quantscope reads whole.

Every time is taken in --rounds interleaved rounds (each round runs every runner once, after
one warm-up of each); the tables give the best and the median over the rounds. The machine
may be shared: the best is the least disturbed run, the median says how disturbed it was.

Usage: python3 benches/compare_importance.py [--n 4096] [--tokens 512] [--rounds 5]
       [--dir /tmp/quantscope-importance] [--no-build] [--big-tokens 40000]
Needs: numpy, libgguf 0.2.2, cargo, GNU time.
"""

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import libgguf

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "quantscope"
TYPES = ["Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"]
SEED = 20240601


def qtype(name: str):
    return getattr(libgguf.GGMLQuantizationType, name)


def decades(n: int) -> np.ndarray:
    rng = np.random.default_rng(SEED)
    std = 10.0 ** (-3.0 * rng.random(n))
    return (rng.standard_normal((n, n)) * std[:, None]).astype(np.float32)


def gaussian(n: int) -> np.ndarray:
    rng = np.random.default_rng(SEED + 1)
    return rng.standard_normal((n, n)).astype(np.float32)


def activations(tokens: int, n: int, seed: int = SEED + 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((tokens, n)).astype(np.float32)
    x[:, 64::128] *= 20.0
    return x


def build() -> Path:
    """Builds the release binary and the timing program; the program's path."""
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    out = subprocess.run(
        ["cargo", "bench", "--no-run", "--bench", "importance", "--message-format=json"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "importance" \
                and msg.get("executable"):
            return Path(msg["executable"])
    sys.exit("no executable for benches/importance.rs")


def program(no_build: bool) -> Path:
    if not no_build:
        return build()
    found = sorted((ROOT / "target" / "release" / "deps").glob("importance-*"),
                   key=lambda p: p.stat().st_mtime)
    found = [p for p in found if os.access(p, os.X_OK) and p.suffix == ""]
    if not found:
        sys.exit("no built timing program: run without --no-build")
    return found[-1]


def qs(exe: Path, args: list, env=None) -> dict:
    """Runs the timing program once; its `NAME VALUE` lines."""
    r = subprocess.run([str(exe), *args], capture_output=True, text=True, check=True,
                       env={**os.environ, **(env or {})})
    return {k: float(v) for k, v in (line.split() for line in r.stdout.splitlines())}


def rounds(runners: dict, n: int) -> dict:
    """Each runner's times (ms) over `n` rounds, after one warm-up of each."""
    for run in runners.values():
        run()
    times = {k: [] for k in runners}
    for _ in range(n):
        for k, run in runners.items():
            times[k].append(run())
            time.sleep(0.05)
    return times


def timed(f):
    def run() -> float:
        t = time.perf_counter()
        f()
        return (time.perf_counter() - t) * 1e3
    return run


def peak_mib(args: list) -> float:
    r = subprocess.run(["/usr/bin/time", "-v", str(BIN), *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"quantscope {' '.join(args)} failed: {r.stderr[-2000:]}")
    kb = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    return int(kb.group(1)) / 1024 if kb else float("nan")


def best_med(xs: list) -> str:
    return f"{min(xs):.0f} ms (median {statistics.median(xs):.0f})"


def weighted_kquants(exe: Path, name: str, w: np.ndarray, path: Path, a_path: Path, a: np.ndarray,
                     n_rounds: int, out_dir: Path) -> None:
    # The bytes once: quantscope's packed rows against libgguf's.
    subprocess.run([str(exe), "encode", str(path), str(a_path), *TYPES], check=True,
                   capture_output=True, env={**os.environ, "QS_BYTES_DIR": str(out_dir)})
    equal = {}
    for t in TYPES:
        ref = libgguf.quantize_rows(w, qtype(t), imatrix=a)
        ours = np.fromfile(out_dir / f"{t}.bin", dtype=np.uint8)
        equal[t] = np.array_equal(ours, np.asarray(ref).view(np.uint8).ravel())
        (out_dir / f"{t}.bin").unlink()
    runners = {}
    cpu = {}
    for t in TYPES:
        runners[t, "qs"] = lambda t=t: qs(exe, ["encode", str(path), str(a_path), t])[t]
        runners[t, "qs1"] = lambda t=t: qs(exe, ["encode", str(path), str(a_path), t],
                                            {"RAYON_NUM_THREADS": "1"})[t]

        def gg(t=t):
            c, s = time.process_time(), time.perf_counter()
            libgguf.quantize_rows(w, qtype(t), imatrix=a)
            wall = time.perf_counter() - s
            cpu[t] = (time.process_time() - c) / wall
            return wall * 1e3
        runners[t, "gg"] = gg
    times = rounds(runners, n_rounds)
    print(f"\n**{name}**, importance-weighted k-quants ({w.shape[0]}x{w.shape[1]} f32); "
          f"best of {n_rounds} interleaved rounds (median):\n")
    print("| type | libgguf.quantize_rows(imatrix=a) | quantscope, all cores | ratio (best) "
          "| quantscope, 1 thread | ratio (best) | bytes equal |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for t in TYPES:
        g, q, q1 = times[t, "gg"], times[t, "qs"], times[t, "qs1"]
        print(f"| {t} | {best_med(g)} | {best_med(q)} | {min(g) / min(q):.1f}x | {best_med(q1)} "
              f"| {min(g) / min(q1):.1f}x | {'yes' if equal[t] else 'NO'} |")
    print(f"\nlibgguf's CPU time / wall time in its last call: "
          + ", ".join(f"{t} {cpu[t]:.2f}" for t in TYPES))


def output_error(exe: Path, name: str, w: np.ndarray, path: Path, x: np.ndarray, x_path: Path,
                 n_rounds: int) -> None:
    q = libgguf.quantize_rows(w, qtype("Q4_K"))
    w_hat = np.asarray(libgguf.dequantize_rows(q, qtype("Q4_K")), dtype=np.float32).reshape(w.shape)
    e = np.ascontiguousarray(w - w_hat)
    firsts = []

    def ours():
        r = qs(exe, ["output", str(path), str(x_path), "q4_k"])
        firsts.append(r["first"])
        ours.mse = r["output_mse"]
        return r["output"]
    runners = {"qs": ours, "np": timed(lambda: x @ e.T)}
    times = rounds(runners, n_rounds)
    y = (x @ e.T).astype(np.float64)
    mse = float(np.mean(y * y))
    print(f"\n**{name}**, output error of Q4_K with {x.shape[0]} tokens ({w.shape[0]}x{w.shape[1]}); "
          f"best of {n_rounds} interleaved rounds (median):\n")
    print("| what | time | against numpy |")
    print("|---|---:|---:|")
    g = times["np"]
    print(f"| numpy `X @ E.T` alone | {best_med(g)} | 1.0x |")
    print(f"| quantscope, one product of X by (W - W^)^T and its sums | {best_med(times['qs'])} "
          f"| {min(times['qs']) / min(g):.2f}x |")
    print(f"| quantscope, first call (also X·W^T for the signal) | {best_med(firsts)} "
          f"| {min(firsts) / min(g):.2f}x |")
    print(f"\noutput MSE: quantscope {ours.mse:.6e}, numpy in f64 from the f32 product {mse:.6e}")


def memory(name: str, path: Path, x_path: Path, big: Path | None) -> None:
    base = ["report", str(path), "--preset", "q4_k", "--no-ladder", "--format", "json"]
    rows = [("weights only", peak_mib(base)),
            (f"--activations ({x_path.name})", peak_mib(base + ["--activations", str(x_path)]))]
    if big is not None:
        rows.append((f"--activations ({big.name}, {big.stat().st_size / 2**20:.0f} MiB)",
                     peak_mib(base + ["--activations", str(big)])))
    print(f"\n**{name}**, peak resident memory of `quantscope report --preset q4_k --no-ladder`:\n")
    print("| run | peak RSS |")
    print("|---|---:|")
    for label, mib in rows:
        print(f"| {label} | {mib:.0f} MiB |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--tokens", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/quantscope-importance"))
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--big-tokens", type=int, default=0,
                    help="also measure memory with this many tokens of activations (written to "
                         "--dir, removed afterwards); 40000 at n=4096 is 625 MiB")
    ap.add_argument("--only", choices=["encode", "output", "memory"], action="append")
    a = ap.parse_args()
    only = set(a.only or ["encode", "output", "memory"])
    exe = program(a.no_build)
    a.dir.mkdir(parents=True, exist_ok=True)
    x = activations(a.tokens, a.n)
    x_path = a.dir / f"x_{a.tokens}x{a.n}.npy"
    np.save(x_path, x)
    imp = np.mean(x * x, axis=0, dtype=np.float32)
    a_path = a.dir / f"a_{a.n}.npy"
    np.save(a_path, imp[None, :])
    big = None
    if "memory" in only and a.big_tokens:
        big = a.dir / f"x_{a.big_tokens}x{a.n}.npy"
        mm = np.lib.format.open_memmap(big, mode="w+", dtype=np.float32, shape=(a.big_tokens, a.n))
        for s in range(0, a.big_tokens, 4096):
            mm[s:s + 4096] = activations(min(4096, a.big_tokens - s), a.n, SEED + 3 + s)
        del mm
    cpu = platform.processor()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    print(f"**Machine:** {os.cpu_count()} CPUs ({cpu}); numpy {np.__version__}.")
    try:
        for name, make in [("gaussian", gaussian), ("decades", decades)]:
            w = make(a.n)
            path = a.dir / f"{name}_{a.n}.npy"
            np.save(path, w)
            if "encode" in only:
                weighted_kquants(exe, name, w, path, a_path, imp, a.rounds, a.dir)
            if "output" in only:
                output_error(exe, name, w, path, x, x_path, a.rounds)
            if "memory" in only:
                memory(name, path, x_path, big)
            path.unlink()
    finally:
        if big is not None:
            big.unlink()


if __name__ == "__main__":
    main()

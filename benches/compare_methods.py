#!/usr/bin/env python3
"""GPTQ and AWQ's scale search on one layer: quantscope against the reference code on CPU torch.

On the same weights W ([rows, cols], float32) and activations X ([tokens, cols]), in one run:

- GPTQ: IST-DASLab/gptq's `GPTQ.add_batch` and `GPTQ.fasterquant` (blocksize 128, percdamp
  0.01, one group per output channel, no act-order) with its `Quantizer` (4 bits,
  asymmetric, per channel), against `quantscope report W.npy --activations X.npy --method
  gptq -b 4 --scheme asymmetric -g channel`;
- AWQ: llm-awq's `get_act_scale` and `_search_module_scale` (20 ratios) with
  `pseudo_quantize_tensor` (4 bits, zero point, groups of 128) on an `nn.Linear`, against
  `... --method awq -b 4 -g group:128`.

quantscope's time of a method is its `report --timings` analyse time less that of the same
call without `--method` (which reads the activations and measures round to nearest's output
error either way), best and median of the rounds; the reference's is the call itself, torch
on every core (`torch.get_num_threads()` is printed). The output MSE of both sides is
printed too, so the rows compare the same work. Two matrices: **gaussian** (standard
normal) and **decades** (row r scaled by 10^-(r mod 4), spreads that differ by decades as
real weights' do); the activations are standard normal with four loud columns (x20).

Run from the crate root, with checkouts of the two reference repositories (the same ones
tests/golden/generate_methods.py runs):

    python3 benches/compare_methods.py --awq DIR --gptq DIR [--rows 4096 --cols 4096
        --tokens 512 --rounds 3 --no-build --only gptq|awq]

torch is needed here only, never by CI.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "golden"))
from generate_methods import load_awq, load_gptq, output_mse  # noqa: E402

BIN = os.path.join(ROOT, "target", "release", "quantscope")
ANALYSE = re.compile(r"analyse ([0-9.]+) ms")


def matrices(rows: int, cols: int, tokens: int) -> tuple[dict, np.ndarray]:
    rng = np.random.default_rng(20261208)
    gaussian = rng.standard_normal((rows, cols), dtype=np.float32)
    decades = gaussian * np.power(10.0, -(np.arange(rows) % 4), dtype=np.float32)[:, None]
    x = rng.standard_normal((tokens, cols), dtype=np.float32)
    x[:, [3, cols // 3, cols // 2, cols - 5]] *= 20.0
    return {"gaussian": gaussian, "decades": decades.astype(np.float32)}, x


def quantscope(w_path: str, x_path: str, flags: list[str]) -> tuple[float, dict]:
    """The analyse time (ms) of one report call, and its JSON."""
    out = subprocess.run([BIN, "report", w_path, "--activations", x_path, "--no-ladder",
                          "--timings", "-f", "json", *flags],
                         capture_output=True, text=True, check=True)
    m = ANALYSE.search(out.stderr)
    assert m, out.stderr
    return float(m.group(1)), json.loads(out.stdout)


def reference_gptq(g, q, w: np.ndarray, x: np.ndarray) -> tuple[float, float]:
    W, X = torch.from_numpy(w), torch.from_numpy(x)
    lin = torch.nn.Linear(w.shape[1], w.shape[0], bias=False)
    with torch.no_grad():
        lin.weight.copy_(W)
    t = time.perf_counter()
    gp = g.GPTQ(lin)
    gp.quantizer = q.Quantizer()
    gp.quantizer.configure(4, perchannel=True, sym=False, mse=False)
    gp.add_batch(X.reshape(x.shape[0], 1, x.shape[1]), None)
    with contextlib.redirect_stdout(io.StringIO()):
        gp.fasterquant(blocksize=128, percdamp=0.01, groupsize=-1, actorder=False)
    ms = (time.perf_counter() - t) * 1e3
    return ms, output_mse(X, W, lin.weight.detach())


def reference_awq(ns: dict, w: np.ndarray, x: np.ndarray) -> tuple[float, float]:
    W, X = torch.from_numpy(w), torch.from_numpy(x)
    env = dict(ns)

    def w_quantize_func(p):
        return env["pseudo_quantize_tensor"](p, n_bit=4, zero_point=True, q_group_size=128).detach()

    env["w_quantize_func"] = w_quantize_func
    exec(ns["_search_source"], env)
    lin = torch.nn.Linear(w.shape[1], w.shape[0], bias=False)
    with torch.no_grad():
        lin.weight.copy_(W)
    t = time.perf_counter()
    with torch.no_grad():
        s = env["_search_module_scale"](lin, [lin], X)
    ms = (time.perf_counter() - t) * 1e3
    w_hat = env["pseudo_quantize_tensor"](W * s.view(1, -1), n_bit=4, zero_point=True,
                                          q_group_size=128) / s.view(1, -1)
    return ms, output_mse(X, W, w_hat)


def method_mse(report: dict, name: str) -> float:
    for m in report["methods"]["weights"]:
        if m["method"] == name:
            return m["output_mse"]
    raise KeyError(name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--awq", required=True, help="a checkout of mit-han-lab/llm-awq")
    ap.add_argument("--gptq", required=True, help="a checkout of IST-DASLab/gptq")
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=4096)
    ap.add_argument("--tokens", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", choices=["gptq", "awq"])
    ap.add_argument("--no-build", action="store_true", help="use target/release as it is")
    ap.add_argument("--bin", help="this quantscope binary instead (implies --no-build)")
    args = ap.parse_args()
    global BIN
    if args.bin:
        BIN, args.no_build = args.bin, True
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    torch.cuda.synchronize = lambda *a, **k: None  # fasterquant calls it; CPU here
    g, q = load_gptq(args.gptq)
    ns, _ = load_awq(args.awq)
    ws, x = matrices(args.rows, args.cols, args.tokens)
    methods = [m for m in ("gptq", "awq") if args.only in (None, m)]
    flags = {"gptq": ["-b", "4", "--scheme", "asymmetric", "-g", "channel"],
             "awq": ["-b", "4", "-g", "group:128"]}
    print(f"W {args.rows}x{args.cols}, X {args.tokens}x{args.cols}; torch {torch.__version__} "
          f"on {torch.get_num_threads()} threads; {args.rounds} rounds; load {os.getloadavg()[0]:.1f}")
    print("| matrix | method | reference | quantscope | ratio | output MSE (reference / quantscope) |")
    print("|---|---|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        x_path = os.path.join(tmp, "x.npy")
        np.save(x_path, x)
        for kind, w in ws.items():
            w_path = os.path.join(tmp, f"{kind}.npy")
            np.save(w_path, w)
            for method in methods:
                ref, ours, mse_ref, mse_ours = [], [], None, None
                for _ in range(args.rounds):
                    # interleaved, so that a change in the machine's load meets both sides
                    base, _ = quantscope(w_path, x_path, flags[method])
                    with_method, report = quantscope(w_path, x_path,
                                                     [*flags[method], "--method", method])
                    ours.append(with_method - base)
                    mse_ours = method_mse(report, method)
                    if method == "gptq":
                        ms, mse_ref = reference_gptq(g, q, w, x)
                    else:
                        ms, mse_ref = reference_awq(ns, w, x)
                    ref.append(ms)
                best_ref, best_ours = min(ref), min(ours)
                print(f"| {kind} | {method.upper()} | {best_ref:.0f} ms (median "
                      f"{statistics.median(ref):.0f}) | {best_ours:.0f} ms (median "
                      f"{statistics.median(ours):.0f}) | {best_ref / best_ours:.2f}x | "
                      f"{mse_ref:.4g} / {mse_ours:.4g} |", flush=True)
    print(f"load after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Times quantscope's analysis against ONNX Runtime and numpy doing the same quantization,
on the same matrices, in one run, and prints a markdown table.

For each matrix (written as .npy under --dir, fixed seed):

  quantscope   `quantscope report FILE --no-ladder --timings --format json --preset P`: the
               `analyse` time from stderr (one configuration), and the same with the full
               granularity ladder. Median of --reps runs (each a fresh process).
  ORT graph    QuantizeLinear -> DequantizeLinear -> Sub -> Abs -> ReduceMean, and
               Mul(e, e) -> ReduceMean, with per-row scales/zero points (ort-int8: axis 0,
               int8 symmetric; int4-g128: opset-21 blocked uint4 with block_size 128 along
               axis 1). Scales are computed beforehand in numpy and stored as initializers;
               session creation is not timed. Median of --reps runs.
  numpy        the same math: round(x / s) + z, clip, (q - z) * s, mean |e| and mean e^2.
  in process   the criterion bench `<case>_no-ladder`: `analyse` on a matrix already in
               memory, repeated in one process (as the ORT and numpy columns are timed).
  read         numpy's sum of the matrix, and quantscope's own read baseline (the criterion
               bench `read_sum`, a sequential sum), the floor any analysis pays.
  clipping     ort-int8 with `--clip percentile:99.9` and `--clip mse`, one configuration and
               the full ladder (fresh processes, the `analyse` time), each set against the
               unclipped run of the same kind.
  load         the `load` time `quantscope report --timings` gives for the .npy file, against
               numpy's warm `np.load` of the same file; with the criterion benches, also
               `load_npy_f32` (the bench's matrix of the same size, loaded in process).
  ORT, scales  ort-int8 on that matrix and on a plain gaussian one of the same size: a graph
               that also forms the scales, Abs -> ReduceMax over each row -> Div by 127 ->
               (a zero scale replaced by 1) -> QuantizeLinear -> DequantizeLinear (axis 0) ->
               Sub -> Abs -> ReduceMean, and Mul -> ReduceMean -> Sqrt, with the session's
               graph optimisations off (so the Q/DQ pair is not fused), against
               `quantscope report --no-ladder` (fresh processes, the `analyse` time).

The fresh-process, ONNX Runtime, numpy and numpy-sum timings are taken in interleaved
rounds (each round times every one of them once, after one warm-up run of each), so that a
slow spell of a shared machine falls on all of them alike rather than on whichever was being
timed; each column is the median over the rounds. Each round takes them in its own shuffled
order (seeded, so a run can be repeated): in a fixed order each command always followed the
same one, and the same fresh quantscope command came out 1-3 ms slower after numpy's sum
than after ONNX Runtime's graph, a bias that fell on one ratio and not the other. The
clipping table and the "ORT, scales" table also give each round's own ratio (both timed in
that round): their median and the range of the middle half of the rounds, which show how far
the machine's moment moves the ratio. The criterion benches run after that.

Then peak resident memory of `quantscope report FILE` with and without the ladder
(`/usr/bin/time -v`).

Usage: python3 benches/compare.py [--n 4096] [--reps 7] [--dir /tmp/quantscope-compare]
       [--no-criterion]   (skip the criterion benches; they take a few minutes)
       [--no-build]       (use the release binary already built)
       [--thp]            (also time quantscope with GLIBC_TUNABLES=glibc.malloc.hugetlb=1:
                           glibc asks for transparent huge pages, so a fresh process pays a
                           few hundred page faults instead of ~20 000 for its 64 + 16 MiB)
Needs: numpy, onnx, onnxruntime, ml_dtypes (pip); cargo; GNU time (apt-get install time).
"""

import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "quantscope"
SEED = 20240601


def matrix(n: int) -> np.ndarray:
    """Rows normal with standard deviations log-uniform in [1e-3, 1], as real weight rows."""
    rng = np.random.default_rng(SEED)
    std = 10.0 ** (-3.0 * rng.random(n))
    return (rng.standard_normal((n, n)) * std[:, None]).astype(np.float32)


def gaussian(n: int) -> np.ndarray:
    """Plain standard normal rows (one spread for the whole matrix)."""
    rng = np.random.default_rng(SEED + 1)
    return rng.standard_normal((n, n)).astype(np.float32)


def timer(f):
    """A function that runs `f` once and returns how long it took, in ms."""

    def run() -> float:
        t = time.perf_counter()
        f()
        return (time.perf_counter() - t) * 1e3

    return run


# Seconds of rest after each timed run, outside the timing. ONNX Runtime's intra-op threads
# keep spinning for a while after `run` returns, waiting for more work; on a machine with few
# cores they would otherwise take CPU from whatever is timed next (in the "scales" rows, a
# fresh quantscope process started right after the ONNX Runtime graph took 13.8-15.2 ms
# against 10.7-12.8 ms for the same command timed after numpy's sum in the same rounds).
REST = 0.05


def interleaved(runners: dict, reps: int) -> dict:
    """Every round's ms of each runner (a function returning its own time in ms), timed in
    `reps` rounds of one run of each, each round in its own shuffled order (seeded), after one
    warm-up run of each; each run followed by a rest of REST seconds."""
    for run in runners.values():
        run()
        time.sleep(REST)
    times = {key: [] for key in runners}
    keys = list(runners)
    order = random.Random(SEED)
    for _ in range(reps):
        order.shuffle(keys)
        for key in keys:
            times[key].append(runners[key]())
            time.sleep(REST)
    return times


def quartiles(xs: list) -> tuple:
    """The first quartile, median and third quartile of `xs`."""
    if len(xs) < 2:
        return xs[0], xs[0], xs[0]
    q1, q2, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    return q1, q2, q3


# ------------------------------------------------------------------------------ parameters


def int8_params(m: np.ndarray):
    """ONNX Runtime quantize_data, int8 symmetric per channel: s = 2*absmax/254 (f64), z = 0."""
    absmax = np.abs(m).max(axis=1).astype(np.float64)
    s = (2.0 * absmax / 254.0).astype(np.float32)
    s[s < np.finfo(np.float32).tiny] = 1.0
    return s, np.zeros(m.shape[0], np.int8), -128, 127


def g128_params(m: np.ndarray):
    """uint4 asymmetric in groups of 128 along rows, range widened to include 0 (MLAS style)."""
    n, k = m.shape
    b = m.reshape(n, k // 128, 128)
    lo = np.minimum(b.min(axis=2), 0.0)
    hi = np.maximum(b.max(axis=2), 0.0)
    s = ((hi - lo) / np.float32(15.0)).astype(np.float32)
    s[s == 0] = 1.0
    z = np.clip(np.round(-lo / s), 0, 15).astype(np.uint8)
    return s, z, 0, 15


# ------------------------------------------------------------------------------ ORT


def ort_session(m: np.ndarray, case: str):
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    n, k = m.shape
    if case == "ort-int8":
        s, z, _, _ = int8_params(m)
        qtype, attrs = TensorProto.INT8, {"axis": 0}
        zp = helper.make_tensor("Z", qtype, z.shape, z.tolist())
    else:
        s, z, _, _ = g128_params(m)
        qtype, attrs = TensorProto.UINT4, {"axis": 1, "block_size": 128}
        zp = helper.make_tensor("Z", qtype, z.shape, z.flatten().tolist())
    scale = helper.make_tensor("S", TensorProto.FLOAT, s.shape, s.flatten().tolist())
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [n, k])
    outs = [
        helper.make_tensor_value_info("mae", TensorProto.FLOAT, []),
        helper.make_tensor_value_info("mse", TensorProto.FLOAT, []),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["X", "S", "Z"], ["Q"], **attrs),
        helper.make_node("DequantizeLinear", ["Q", "S", "Z"], ["D"], **attrs),
        helper.make_node("Sub", ["D", "X"], ["E"]),
        helper.make_node("Abs", ["E"], ["A"]),
        helper.make_node("ReduceMean", ["A"], ["mae"], keepdims=0),
        helper.make_node("Mul", ["E", "E"], ["E2"]),
        helper.make_node("ReduceMean", ["E2"], ["mse"], keepdims=0),
    ]
    graph = helper.make_graph(nodes, case, [x], outs, initializer=[scale, zp])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10  # what onnxruntime 1.31 accepts
    onnx.checker.check_model(model)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return lambda: sess.run(None, {"X": m})


def ort_session_with_scales(m: np.ndarray):
    """ort-int8 with the scales formed in the graph (absmax / 127 per row, 0 replaced by 1),
    then Q/DQ along axis 0 and the error reductions; graph optimisations off."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    n, k = m.shape
    f32 = TensorProto.FLOAT
    init = [
        helper.make_tensor("axes", TensorProto.INT64, [1], [1]),
        helper.make_tensor("c127", f32, [], [127.0]),
        helper.make_tensor("zero", f32, [], [0.0]),
        helper.make_tensor("one", f32, [], [1.0]),
        helper.make_tensor("flat", TensorProto.INT64, [1], [n]),
        helper.make_tensor("Z", TensorProto.INT8, [n], [0] * n),
    ]
    nodes = [
        helper.make_node("Abs", ["X"], ["A"]),
        helper.make_node("ReduceMax", ["A", "axes"], ["M"], keepdims=1),
        helper.make_node("Div", ["M", "c127"], ["S0"]),
        helper.make_node("Equal", ["S0", "zero"], ["IsZero"]),
        helper.make_node("Where", ["IsZero", "one", "S0"], ["S1"]),
        helper.make_node("Reshape", ["S1", "flat"], ["S"]),
        helper.make_node("QuantizeLinear", ["X", "S", "Z"], ["Q"], axis=0),
        helper.make_node("DequantizeLinear", ["Q", "S", "Z"], ["D"], axis=0),
        helper.make_node("Sub", ["D", "X"], ["E"]),
        helper.make_node("Abs", ["E"], ["AE"]),
        helper.make_node("ReduceMean", ["AE"], ["mae"], keepdims=0),
        helper.make_node("Mul", ["E", "E"], ["E2"]),
        helper.make_node("ReduceMean", ["E2"], ["mse"], keepdims=0),
        helper.make_node("Sqrt", ["mse"], ["rmse"]),
    ]
    x = helper.make_tensor_value_info("X", f32, [n, k])
    outs = [helper.make_tensor_value_info(o, f32, []) for o in ("mae", "rmse")]
    graph = helper.make_graph(nodes, "ort-int8-scales", [x], outs, initializer=init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return lambda: sess.run(None, {"X": m})


# ------------------------------------------------------------------------------ numpy


def numpy_work(m: np.ndarray, case: str):
    if case == "ort-int8":
        s, z, qmin, qmax = int8_params(m)
        s, z = s[:, None], z.astype(np.float32)[:, None]

        def run():
            q = np.clip(np.round(m / s) + z, qmin, qmax)
            e = (q - z) * s - m
            return np.abs(e).mean(dtype=np.float64), (e * e).mean(dtype=np.float64)

        return run
    s, z, qmin, qmax = g128_params(m)
    n, k = m.shape
    b = m.reshape(n, k // 128, 128)
    s, z = s[:, :, None], z.astype(np.float32)[:, :, None]

    def run():
        q = np.clip(np.round(b / s) + z, qmin, qmax)
        e = (q - z) * s - b
        return np.abs(e).mean(dtype=np.float64), (e * e).mean(dtype=np.float64)

    return run


# ------------------------------------------------------------------------------ quantscope


THP_ENV = {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}


def quantscope_run(path: Path, preset: str, ladder: bool, env=None, clip=None, stage="analyse"):
    """A function that runs `quantscope report` once (a fresh process) and returns the time
    it reports for `stage` (`analyse` or `load`), in ms."""
    args = [str(BIN), "report", str(path), "--timings", "--format", "json", "--preset", preset]
    if not ladder:
        args.append("--no-ladder")
    if clip:
        args += ["--clip", clip]
    run_env = {**os.environ, **env} if env else None

    def run() -> float:
        r = subprocess.run(args, capture_output=True, text=True, check=True, env=run_env)
        hit = re.search(stage + r" ([0-9.]+) ms", r.stderr)
        if not hit:
            sys.exit(f"no {stage} time in: {r.stderr!r}")
        return float(hit.group(1))

    return run


CLIPS = ["percentile:99.9", "mse"]


def peak_rss_mib(path: Path, ladder: bool) -> float:
    args = ["/usr/bin/time", "-v", str(BIN), "report", str(path), "--preset", "ort-int8"]
    if not ladder:
        args.append("--no-ladder")
    r = subprocess.run(args, capture_output=True, text=True, check=True)
    kb = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    return int(kb.group(1)) / 1024 if kb else float("nan")


def criterion_ms(n: int, name: str):
    """The criterion bench `name` at n x n, in ms (middle estimate), or None."""
    r = subprocess.run(
        ["cargo", "bench", "--bench", "analyse", "--", f"^{n}x{n}/{name}$"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    hit = re.search(re.escape(name) + r"\s+time:\s+\[[^\]]*?([0-9.]+) (ms|µs|us|s) ([0-9.]+) (ms|µs|us|s)", r.stdout)
    if not hit:
        return None
    value, unit = float(hit.group(3)), hit.group(4)
    return value * {"ms": 1.0, "µs": 1e-3, "us": 1e-3, "s": 1e3}[unit]


def machine() -> str:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import onnxruntime

    return (
        f"{os.cpu_count()} CPUs ({cpu}), {platform.system()} {platform.release()}; "
        f"numpy {np.__version__}, onnxruntime {onnxruntime.__version__}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/quantscope-compare"))
    ap.add_argument("--no-criterion", action="store_true")
    ap.add_argument("--thp", action="store_true")
    ap.add_argument("--no-build", action="store_true")
    a = ap.parse_args()

    if not a.no_build:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    a.dir.mkdir(parents=True, exist_ok=True)
    m = matrix(a.n)
    path = a.dir / f"weights_{a.n}x{a.n}.npy"
    np.save(path, m)
    g = gaussian(a.n)
    gpath = a.dir / f"gaussian_{a.n}x{a.n}.npy"
    np.save(gpath, g)

    cases = ["ort-int8", "int4-g128"]
    runners = {"sum": timer(lambda: m.sum())}
    for case in cases:
        runners[case, "one"] = quantscope_run(path, case, False)
        runners[case, "ladder"] = quantscope_run(path, case, True)
        runners[case, "ort"] = timer(ort_session(m, case))
        runners[case, "numpy"] = timer(numpy_work(m, case))
        if a.thp:
            runners[case, "one-thp"] = quantscope_run(path, case, False, THP_ENV)
            runners[case, "ladder-thp"] = quantscope_run(path, case, True, THP_ENV)
    for clip in CLIPS:
        runners["clip", clip, "one"] = quantscope_run(path, "ort-int8", False, clip=clip)
        runners["clip", clip, "ladder"] = quantscope_run(path, "ort-int8", True, clip=clip)
    runners["load"] = quantscope_run(path, "ort-int8", False, stage="load")
    runners["np.load"] = timer(lambda: np.load(path))
    for name, mat, file in (("decades", m, path), ("gaussian", g, gpath)):
        runners["scales", name, "ort"] = timer(ort_session_with_scales(mat))
        runners["scales", name, "ours"] = quantscope_run(file, "ort-int8", False)
    times = interleaved(runners, a.reps)
    ms = {key: statistics.median(t) for key, t in times.items()}
    numpy_sum = ms["sum"]
    rust_read = None if a.no_criterion else criterion_ms(a.n, "read_sum")

    rows = []
    for case in cases:
        ort_ms, np_ms = ms[case, "ort"], ms[case, "numpy"]
        warm = None if a.no_criterion else criterion_ms(a.n, f"{case}_no-ladder")
        rows.append((case, ms[case, "one"], ms[case, "ladder"], ort_ms, np_ms, warm))
        if a.thp:
            one, ladder = ms[case, "one-thp"], ms[case, "ladder-thp"]
            rows.append((f"{case} (THP)", one, ladder, ort_ms, np_ms, warm))

    print(f"\n**Machine:** {machine()}  ")
    print(f"**Matrix:** {a.n}x{a.n} f32 ({m.nbytes / 2**20:.0f} MiB), rows normal with standard "
          f"deviations log-uniform in [1e-3, 1], seed {SEED}; medians of {a.reps} interleaved rounds.\n")
    print("| preset | quantscope, one config (fresh process) | in process | full ladder "
          "| ladder / one | ONNX Runtime graph | ORT / quantscope (fresh, in process) "
          "| numpy | numpy / quantscope | in process / numpy sum | in process / Rust read |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for case, one, ladder, ort_ms, np_ms, warm in rows:
        best = warm or one
        rust = f"{best / rust_read:.2f}x" if rust_read else "n/a"
        warm_text = f"{warm:.1f} ms" if warm else "n/a"
        warm_ratio = f"{ort_ms / warm:.2f}x" if warm else "n/a"
        print(f"| {case} | {one:.1f} ms | {warm_text} | {ladder:.1f} ms | {ladder / one:.1f}x "
              f"| {ort_ms:.1f} ms | {ort_ms / one:.2f}x, {warm_ratio} | {np_ms:.1f} ms "
              f"| {np_ms / one:.1f}x | {best / numpy_sum:.2f}x | {rust} |")
    rust_text = f"{rust_read:.1f} ms" if rust_read else "not measured (--no-criterion)"
    if a.thp:
        print("\n(THP) rows: quantscope run with GLIBC_TUNABLES=glibc.malloc.hugetlb=1; "
              "ONNX Runtime and numpy columns repeat the default rows.")
    print(f"\nPlain read of the matrix: numpy `sum` {numpy_sum:.1f} ms; quantscope's criterion "
          f"`read_sum` (sequential f32 sum) {rust_text}.\n")

    def per_round(over: tuple, under: tuple) -> str:
        q1, q2, q3 = quartiles([o / u for o, u in zip(times[over], times[under])])
        return f"{q2:.1f}x ({q1:.1f}-{q3:.1f}x)"

    one, ladder = ms["ort-int8", "one"], ms["ort-int8", "ladder"]
    print("| `ort-int8` (fresh process, analyse) | one config | / unclipped one config "
          "| full ladder | ladder / its one config | per round: median (middle half) |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| no clipping | {one:.1f} ms | 1.0x | {ladder:.1f} ms | {ladder / one:.1f}x "
          f"| {per_round(('ort-int8', 'ladder'), ('ort-int8', 'one'))} |")
    for clip in CLIPS:
        c1, cl = ms["clip", clip, "one"], ms["clip", clip, "ladder"]
        print(f"| `--clip {clip}` | {c1:.1f} ms | {c1 / one:.1f}x | {cl:.1f} ms | {cl / c1:.1f}x "
              f"| {per_round(('clip', clip, 'ladder'), ('clip', clip, 'one'))} |")
    load, np_load = ms["load"], ms["np.load"]
    warm_load = None if a.no_criterion else criterion_ms(a.n, "load_npy_f32")
    warm_text = (f"; in process (criterion `load_npy_f32`, its own copy of a matrix of the same "
                 f"size and kind) {warm_load:.1f} ms ({warm_load / np_load:.2f}x)" if warm_load else "")
    print(f"\nLoad of the {m.nbytes / 2**20:.0f} MiB .npy file: quantscope {load:.1f} ms "
          f"(`report --timings`), numpy's warm `np.load` {np_load:.1f} ms "
          f"({load / np_load:.2f}x){warm_text}.\n")

    print("| `ort-int8`, scales formed by both | quantscope (fresh process, analyse) "
          "| ONNX Runtime graph with scales, optimisations off | ORT / quantscope "
          "| per round: median (middle half) |")
    print("|---|---:|---:|---:|---:|")
    for name in ("decades", "gaussian"):
        ours, ort_ms = ms["scales", name, "ours"], ms["scales", name, "ort"]
        per_round = [o / q for o, q in zip(times["scales", name, "ort"],
                                           times["scales", name, "ours"])]
        q1, q2, q3 = quartiles(per_round)
        print(f"| {name} | {ours:.1f} ms | {ort_ms:.1f} ms | {ort_ms / ours:.2f}x "
              f"| {q2:.2f}x ({q1:.2f}-{q3:.2f}x) |")
    print()

    print("| `quantscope report` (ort-int8, table output) | peak resident memory | / tensor bytes |")
    print("|---|---:|---:|")
    tensor_mib = m.nbytes / 2**20
    for ladder in (True, False):
        rss = peak_rss_mib(path, ladder)
        label = "with the ladder" if ladder else "`--no-ladder`"
        print(f"| {label} | {rss:.0f} MiB | {rss / tensor_mib:.2f}x |")
    print(json.dumps({"rows": rows, "numpy_sum_ms": numpy_sum, "rust_read_ms": rust_read}),
          file=sys.stderr)


if __name__ == "__main__":
    main()

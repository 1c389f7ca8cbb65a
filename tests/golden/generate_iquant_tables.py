#!/usr/bin/env python3
"""Writes src/core/format/iquant/tables.rs: the codebooks of llama.cpp's i-quants.

The tables are read from the C source of the reference, never typed by hand:

  csrc/kernels/cpu/common/tables.cpp   (libgguf 0.2.2: ggml-common.h's tables, the ones its
                                        encoders and decoders use) for kmask_iq2xs,
                                        ksigns_iq2xs, kvalues_iq4nl, iq2xxs_grid, iq2xs_grid,
                                        iq2s_grid, iq3xxs_grid, iq3s_grid, iq1s_grid;
  csrc/quantize/iq_tables.cpp          the encoders' compact grids (kgrid_2bit_256, ...,
                                        kgrid_1bit_2048, kgrid_256, kgrid_512, as in ggml's
                                        iq2xs_init_impl / iq3xs_init_impl), which are not
                                        written out: the script asserts that each one is the
                                        decode grid of the same index with every byte replaced
                                        by its level (the encoder derives them that way, see
                                        iquant/lattice.rs).

With --ggml-common PATH it reads llama.cpp's ggml/src/ggml-common.h (GGML_TABLE_BEGIN
syntax) for the first group instead. The Rust test `codebooks_equal_gguf_py_grid_hex`
(tests/it/iquants.rs) compares the written tables with gguf-py's own `grid_hex` copies.

Run from the crate root:
    python3 tests/golden/generate_iquant_tables.py [--src DIR] [--ggml-common PATH]

Without --src the script runs `pip download libgguf==0.2.2 --no-deps --no-binary libgguf`
into a temporary directory and unpacks it there. Deterministic: a rerun writes the same file.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "src", "core", "format", "iquant", "tables.rs")
LIBGGUF = "0.2.2"

# name in C: (Rust name, Rust type, length, what it is)
TABLES = {
    "kmask_iq2xs": ("KMASK_IQ2XS", "u8", 8, "ggml's `kmask_iq2xs`: the bit of value `j` in a sign byte."),
    "ksigns_iq2xs": ("KSIGNS_IQ2XS", "u8", 128,
                     "ggml's `ksigns_iq2xs`: 7 stored sign bits to the 8 signs of a group (bit `j` "
                     "set: value `j` is negative); the eighth bit makes the count of negatives even."),
    "kvalues_iq4nl": ("KVALUES_IQ4NL", "i8", 16, "ggml's `kvalues_iq4nl`: the 16 non-linear IQ4_NL / IQ4_XS levels."),
    "iq2xxs_grid": ("IQ2XXS_GRID", "u64", 256,
                    "ggml's `iq2xxs_grid`: IQ2_XXS's 256 points of 8 magnitudes (bytes 0x08, 0x19, 0x2b), "
                    "value `j` in byte `j`."),
    "iq2xs_grid": ("IQ2XS_GRID", "u64", 512, "ggml's `iq2xs_grid`: IQ2_XS's 512 points of 8 magnitudes."),
    "iq2s_grid": ("IQ2S_GRID", "u64", 1024, "ggml's `iq2s_grid`: IQ2_S's 1024 points of 8 magnitudes."),
    "iq3xxs_grid": ("IQ3XXS_GRID", "u32", 256,
                    "ggml's `iq3xxs_grid`: IQ3_XXS's 256 points of 4 magnitudes (bytes 4, 12, .., 52, 62)."),
    "iq3s_grid": ("IQ3S_GRID", "u32", 512, "ggml's `iq3s_grid`: IQ3_S's 512 points of 4 odd magnitudes 1..15."),
    "iq1s_grid": ("IQ1S_GRID", "u64", 2048,
                  "ggml's `iq1s_grid`: IQ1_S and IQ1_M's 2048 points of 8 values -1, 0, 1 (int8 bytes)."),
}

# encoder grid: (decode grid, byte -> level)
KGRIDS = {
    "kgrid_2bit_256": ("iq2xxs_grid", 8, 2, {0x08: 0, 0x19: 1, 0x2B: 2}),
    "kgrid_2bit_512": ("iq2xs_grid", 8, 2, {0x08: 0, 0x19: 1, 0x2B: 2}),
    "kgrid_2bit_1024": ("iq2s_grid", 8, 2, {0x08: 0, 0x19: 1, 0x2B: 2}),
    "kgrid_1bit_2048": ("iq1s_grid", 8, 2, {0xFF: 0, 0x00: 1, 0x01: 2}),
    "kgrid_256": ("iq3xxs_grid", 4, 3, {b: i for i, b in enumerate([4, 12, 20, 28, 36, 44, 52, 62])}),
    "kgrid_512": ("iq3s_grid", 4, 3, {2 * i + 1: i for i in range(8)}),
}


def c_number(tok: str) -> int:
    tok = tok.strip().rstrip("uUlL")
    return int(tok, 16) if tok.lower().startswith(("0x", "-0x")) else int(tok)


def read_tables(text: str) -> dict[str, list[int]]:
    """Every `type name[N] = { ... };` and `GGML_TABLE_BEGIN(type, name, N) ... GGML_TABLE_END()`."""
    text = re.sub(r"//[^\n]*", "", text)
    out = {}
    for m in re.finditer(r"\b(?:const\s+)?u?int(?:8|16|32|64)_t\s+(\w+)\s*\[[^\]]*\]\s*=\s*\{(.*?)\};", text, re.S):
        out[m.group(1)] = [c_number(t) for t in m.group(2).split(",") if t.strip()]
    for m in re.finditer(r"GGML_TABLE_BEGIN\(\s*\w+\s*,\s*(\w+)\s*,\s*\w+\s*\)(.*?)GGML_TABLE_END\(\)", text, re.S):
        out[m.group(1)] = [c_number(t) for t in m.group(2).split(",") if t.strip()]
    return out


def libgguf_source(arg: str | None, tmp: str) -> str:
    if arg:
        return arg
    subprocess.run([sys.executable, "-m", "pip", "download", f"libgguf=={LIBGGUF}", "--no-deps",
                    "--no-binary", "libgguf", "-d", tmp, "-q"], check=True)
    sdist = glob.glob(os.path.join(tmp, f"libgguf-{LIBGGUF}.tar.gz"))[0]
    with tarfile.open(sdist) as t:
        t.extractall(tmp, filter="data")
    return os.path.join(tmp, f"libgguf-{LIBGGUF}")


def check_kgrids(tables: dict[str, list[int]], kgrids: dict[str, list[int]]) -> None:
    for kname, (gname, width, bits, level) in KGRIDS.items():
        grid, compact = tables[gname], kgrids[kname]
        assert len(grid) == len(compact), kname
        for i, (g, k) in enumerate(zip(grid, compact)):
            derived = 0
            for j in range(width):
                derived |= level[(g >> (8 * j)) & 0xFF] << (bits * j)
            assert derived == k, f"{kname}[{i}] = {k} but {gname}[{i}] gives {derived}"


def rust_const(cname: str, values: list[int]) -> str:
    name, ty, n, doc = TABLES[cname]
    assert len(values) == n, f"{cname}: {len(values)} values, expected {n}"
    per_line, fmt = {
        "u8": (16, lambda v: f"{v:3d}"),
        "i8": (16, lambda v: f"{v:4d}"),
        "u32": (8, lambda v: f"0x{v:08x}"),
        "u64": (8, lambda v: f"0x{v:016x}"),
    }[ty]
    if ty == "i8":
        values = [v - 256 if v > 127 else v for v in values]
    lines = []
    for i in range(0, n, per_line):
        lines.append("    " + ", ".join(fmt(v) for v in values[i:i + per_line]) + ",")
    doc = "\n".join("/// " + line for line in textwrap.wrap(doc, 92))
    return f"{doc}\n#[rustfmt::skip]\npub const {name}: [{ty}; {n}] = [\n" + "\n".join(lines) + "\n];\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", help="an unpacked libgguf-0.2.2 source distribution")
    ap.add_argument("--ggml-common", help="llama.cpp's ggml/src/ggml-common.h, for the decode tables")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = libgguf_source(args.src, tmp)
        tables_cpp = os.path.join(src, "csrc", "kernels", "cpu", "common", "tables.cpp")
        with open(os.path.join(src, "csrc", "quantize", "iq_tables.cpp")) as f:
            kgrids = read_tables(f.read())
        with open(args.ggml_common or tables_cpp) as f:
            tables = read_tables(f.read())
    origin = ("llama.cpp's ggml/src/ggml-common.h" if args.ggml_common
              else f"libgguf {LIBGGUF}'s csrc/kernels/cpu/common/tables.cpp")
    check_kgrids(tables, kgrids)
    body = "\n".join(rust_const(c, tables[c]) for c in TABLES)
    header = (
        "//! The codebooks of llama.cpp's i-quants, as ggml's `ggml-common.h` defines them.\n"
        "//!\n"
        "//! GENERATED by `tests/golden/generate_iquant_tables.py` from\n"
        "//! " + origin + "; do not edit. The encoders' compact grids\n"
        "//! (`kgrid_*` in `iq2xs_init_impl` / `iq3xs_init_impl`) are the same points, one level\n"
        "//! per value; the script checks that before writing.\n"
        "\n"
        "#![expect(\n"
        "    clippy::unreadable_literal,\n"
        "    reason = \"generated: the reference's hexadecimal notation, a byte per value\"\n"
        ")]\n"
        "\n"
    )
    with open(OUT, "w") as f:
        f.write(header + body)
    print(f"wrote {os.path.relpath(OUT)} from {origin}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# Scan throughput and peak memory on files, against a plain sequential read of the same
# files in the same run (a benchmark, not a test: it prints figures, it asserts nothing).
#
#   bash benches/scan_files.sh [GB] [GGUF]
#
# 1. Writes GB (default 2) GiB of f16 tensors (4096 x 4096, random normal) as a sharded
#    safetensors checkpoint (shards of 512 MiB and their index) under target/bench-files/.
# 2. Reads every shard once with `cat > /dev/null` (the plain sequential read), then runs
#    `quantscope scan` on the checkpoint with the default preset, each under /usr/bin/time -v:
#    wall time, GB/s over the bytes of the files, and peak resident memory.
# 3. With GGUF (default target/gemma/gemma-3-270m-q4_k_m.gguf when present), the same for
#    `scan GGUF`.
# The page cache is left as it is: the first pass warms it, so both passes read from memory
# when the files fit (say so when quoting the figures).
set -euo pipefail
cd "$(dirname "$0")/.."
GB="${1:-2}"
GGUF="${2:-target/gemma/gemma-3-270m-q4_k_m.gguf}"
DIR=target/bench-files
cargo build --release --quiet
BIN=target/release/quantscope

python3 - "$DIR" "$GB" <<'PY'
import json, os, sys
import numpy as np

out, gb = sys.argv[1], float(sys.argv[2])
os.makedirs(out, exist_ok=True)
rows = cols = 4096
per_tensor = rows * cols * 2
per_shard = 16  # 512 MiB
total = int(gb * 2**30 // per_tensor)
rng = np.random.default_rng(1)
weight_map = {}
names = [f"layers.{i}.weight" for i in range(total)]
shards = [names[i:i + per_shard] for i in range(0, total, per_shard)]
for s, chunk in enumerate(shards):
    file = f"model-{s + 1:05d}-of-{len(shards):05d}.safetensors"
    path = os.path.join(out, file)
    for n in chunk:
        weight_map[n] = file
    if os.path.exists(path):
        continue
    header, offset = {}, 0
    for n in chunk:
        header[n] = {"dtype": "F16", "shape": [rows, cols], "data_offsets": [offset, offset + per_tensor]}
        offset += per_tensor
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path + ".part", "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text)
        for n in chunk:
            x = rng.standard_normal((rows, cols), dtype=np.float32) * 0.02
            f.write(x.astype(np.float16).tobytes())
    os.replace(path + ".part", path)
with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
    json.dump({"weight_map": weight_map}, f)
PY

measure() { # label bytes command...
    local label=$1 bytes=$2
    shift 2
    local log
    log=$(mktemp)
    /usr/bin/time -v "$@" >/dev/null 2>"$log"
    python3 - "$label" "$bytes" "$log" <<'PY'
import re, sys
label, size, log = sys.argv[1], int(sys.argv[2]), open(sys.argv[3]).read()
wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", log).group(1)
secs = sum(float(p) * 60**i for i, p in enumerate(reversed(wall.split(":"))))
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", log).group(1))
print(f"{label:34} {size / 1e9:6.2f} GB  {secs:7.2f} s  {size / 1e9 / secs:6.2f} GB/s  peak {rss / 1024:7.1f} MiB")
PY
    rm -f "$log"
}

command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
shards=("$DIR"/*.safetensors)
bytes=$(cat "${shards[@]}" | wc -c)
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GiB"
echo "files: ${#shards[@]} shards of 4096 x 4096 f16 tensors in $DIR"
measure "sequential read (cat > /dev/null)" "$bytes" cat "${shards[@]}"
measure "scan (lesson preset, all cores)" "$bytes" "$BIN" scan "$DIR"
measure "scan --jobs 1" "$bytes" "$BIN" scan "$DIR" --jobs 1
if [ -s "$GGUF" ]; then
    gbytes=$(wc -c <"$GGUF")
    measure "sequential read of $(basename "$GGUF")" "$gbytes" cat "$GGUF"
    measure "scan $(basename "$GGUF")" "$gbytes" "$BIN" scan "$GGUF"
fi

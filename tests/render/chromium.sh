#!/usr/bin/env bash
# Opens an HTML report in headless Chromium as tests/it/render.rs does: a screenshot to PNG,
# and the page's console messages (a blocked load or a script error shows up there).
# Exits 1 when there is a console message.
#
#   tests/render/chromium.sh REPORT.html OUT.png [WIDTH [HEIGHT]]
#
# Keep the PNGs out of the repository (target/ is ignored).
set -euo pipefail
[ -f "$1" ] || { echo "no such file: $1" >&2; exit 2; }
page=$(realpath "$1")
png=$(realpath -m "$2")
width=${3:-1280}
height=${4:-2400}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome) || {
    echo "chromium not found: apt-get install chromium" >&2
    exit 2
}
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
log=$("$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --enable-logging=stderr --v=0 --user-data-dir="$profile" \
    --window-size="$width,$height" --screenshot="$png" "file://$page" 2>&1 >/dev/null || true)
if grep ':CONSOLE' <<<"$log"; then
    exit 1
fi
echo "$png: no console messages"

#!/usr/bin/env bash
# Reads a PDF report with poppler as tests/it/render.rs does: its page count and size
# (pdfinfo), its text (pdftotext, to OUTDIR/report.txt) and one PNG per page (pdftoppm,
# OUTDIR/page-N.png).
#
#   tests/render/pdf.sh REPORT.pdf OUTDIR
set -euo pipefail
pdf=$1
out=$2
mkdir -p "$out"
pdfinfo "$pdf" | grep -E '^(Pages|Page size):'
pdftotext -layout "$pdf" "$out/report.txt"
pdftoppm -r 80 -png "$pdf" "$out/page"
ls "$out"

#!/usr/bin/env bash
# Builds the GEMM timeline harness from a generated gemm.cu (bench/NOTES.md, session 23), three
# times: against kittens as shipped (gemm.plain, timed only), against the traced copy of the
# LCF template (gemm.traced, bench/attention/timeline/patch_lcf.py) and against that copy with
# the finer stamps of a block's start added (gemm.start, patch_start.py).
#
#   GEN=<folder with gemm.cu and gemm.h> BIN=<folder> bench/gemm/timeline/build.sh
#   $BIN/gemm.traced M N K trace.bin; python3 bench/gemm/timeline/analyze.py trace.bin
set -euo pipefail
cd "$(dirname "$0")/../../.."
GEN=$(cd "${GEN:?set GEN}" && pwd)
BIN=${BIN:?set BIN}
mkdir -p "$BIN"
W=$(mktemp -d)
python3 bench/attention/timeline/patch_lcf.py kittens/include "$W/inc"
cp -r "$W/inc" "$W/start"
python3 bench/gemm/timeline/patch_start.py "$W/start"
FLAGS=(-gencode=arch=compute_90a,code=sm_90a -std=c++20 -O3 --expt-relaxed-constexpr
       -Iruntime/include "-I$GEN" -DKERNEL_CU="\"gemm.cu\"" bench/gemm/timeline/harness.cu)
nvcc "${FLAGS[@]}" -Ikittens/include -DNO_TRACE -o "$BIN/gemm.plain" &
plain=$!
nvcc "${FLAGS[@]}" -I"$W/inc" -o "$BIN/gemm.traced"
wait $plain
nvcc "${FLAGS[@]}" -I"$W/start" -o "$BIN/gemm.start"
rm -rf "$W"

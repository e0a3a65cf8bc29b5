#!/usr/bin/env bash
# Builds the GEMM timeline harness from a generated gemm.cu (bench/NOTES.md, sessions 23 and 28),
# four times: against kittens as shipped (gemm.plain, timed only), against the traced copy of the
# LCF template (gemm.traced, bench/attention/timeline/patch_lcf.py), against that copy with the
# finer stamps of a block's start added (gemm.start, patch_start.py), and with those and the
# first stages' arrival seen by an otherwise idle producer thread (gemm.arrival,
# patch_arrival.py). KITTENS names another kittens include folder to trace (a probe's patched
# copy); the default is the shipped one. EVENTS=<mask> builds the traced binaries with
# -DLCF_EVENTS=<mask>: 0xff40 keeps the clock64 stamps and drops the %globaltimer reads on the
# way to the first stage, which cost hundreds of cycles each there (bench/NOTES.md, session 28).
#
#   GEN=<folder with gemm.cu and gemm.h> BIN=<folder> [KITTENS=<include>] [EVENTS=<mask>] \
#     bench/gemm/timeline/build.sh
#   [PRE=none|touch|flush] $BIN/gemm.traced M N K trace.bin; python3 bench/gemm/timeline/analyze.py trace.bin
set -euo pipefail
cd "$(dirname "$0")/../../.."
GEN=$(cd "${GEN:?set GEN}" && pwd)
BIN=${BIN:?set BIN}
KITTENS=${KITTENS:-kittens/include}
mkdir -p "$BIN"
W=$(mktemp -d)
python3 bench/attention/timeline/patch_lcf.py "$KITTENS" "$W/inc"
cp -r "$W/inc" "$W/start"
python3 bench/gemm/timeline/patch_start.py "$W/start"
cp -r "$W/start" "$W/arrival"
python3 bench/gemm/timeline/patch_arrival.py "$W/arrival"
TRACE_FLAGS=()
[ -n "${EVENTS:-}" ] && TRACE_FLAGS=(-DLCF_EVENTS="$EVENTS")
FLAGS=(-gencode=arch=compute_90a,code=sm_90a -std=c++20 -O3 --expt-relaxed-constexpr
       -Iruntime/include "-I$GEN" -DKERNEL_CU="\"gemm.cu\"" bench/gemm/timeline/harness.cu)
nvcc "${FLAGS[@]}" -I"$KITTENS" -DNO_TRACE -o "$BIN/gemm.plain" &
plain=$!
nvcc "${FLAGS[@]}" -I"$W/inc" "${TRACE_FLAGS[@]}" -o "$BIN/gemm.traced"
wait $plain
nvcc "${FLAGS[@]}" -I"$W/start" "${TRACE_FLAGS[@]}" -o "$BIN/gemm.start" &
start=$!
nvcc "${FLAGS[@]}" -I"$W/arrival" "${TRACE_FLAGS[@]}" -o "$BIN/gemm.arrival"
wait $start
rm -rf "$W"

#!/usr/bin/env bash
# ncu's speed-of-light and memory sections for the generated GEMM and cuBLAS's kernel at
# one shape, operands left warm in L2 as in the benchmark's loop (bench/NOTES.md):
#   OUT=<dir> bench/gemm/profile_pair.sh LIB M N K
set -u
lib=$1; M=$2; N=$3; K=$4
for who in ours cublas; do
  if [[ $who == ours ]]; then k=regex:^kernel; else k=regex:nvjet; fi
  ncu --launch-skip 1 --launch-count 1 -k "$k" --cache-control none \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy \
    python3 bench/gemm/profile_pair.py "$lib" "$M" "$N" "$K" > "$OUT/gemm-${M}x${N}x${K}-$who.txt" 2>&1
done

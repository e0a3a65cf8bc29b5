#!/usr/bin/env bash
# On a machine with an sm_90 GPU: build the GEMM kernels tkc generated from
# kernels-spec/gemm.yaml, check them against a double-precision reference,
# run them under compute-sanitizer, and benchmark them against cuBLAS.
#
#   GEN=<folder with gemm.cu and gemm.h> OUT=<results folder> COMMIT=<id> scripts/device-gemm.sh
#
# QUICK=1 benchmarks two shapes only; COLD_L2=1 evicts the L2 before every timed run.
#
# The generated files come from `tkc kernels-spec/gemm.yaml -o $GEN/gemm.cu`
# (tkc itself need not be built on the GPU machine).
set -uo pipefail
cd "$(dirname "$0")/.."
GEN=${GEN:-.gen}
OUT=${OUT:-build/device-gemm}
BIN=${BIN:-/tmp/tkc-device-gemm}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
mkdir -p "$OUT" "$BIN"
flags=(-gencode=arch=compute_90a,code=sm_90a -std=c++20 -O3 --expt-relaxed-constexpr
       -Ikittens/include -Iruntime/include "-I$GEN" -Itest/GPU/gemm/Inputs)
status=0

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
nvcc "${flags[@]}" "$GEN/gemm.cu" test/GPU/gemm/Inputs/gemm_check.cu -o "$BIN/gemm_check" &
nvcc "${flags[@]}" -shared -Xcompiler -fPIC "$GEN/gemm.cu" bench/gemm/tkc_gemm_ext.cu \
  -o "$BIN/libtkcgemm.so" &
wait || status=1

echo "== correctness"
"$BIN/gemm_check" | tee "$OUT/gemm_check.log" | grep -v "^ok" || status=1
tail -n 1 "$OUT/gemm_check.log"

echo "== compute-sanitizer (small shapes)"
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool "$tool" --error-exitcode 99 "$BIN/gemm_check" 1 quick \
    > "$OUT/sanitizer-$tool.log" 2>&1
  rc=$?
  echo "$tool: exit $rc; $(grep -E 'ERROR SUMMARY|passed, ' "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
  [ $rc -eq 0 ] || status=1
done

echo "== benchmark against cuBLAS"
python3 bench/gemm/run.py --lib "$BIN/libtkcgemm.so" --out "$OUT/gemm-bench.json" \
  --commit "$COMMIT" ${QUICK:+--quick} ${COLD_L2:+--cold-l2} || status=1
exit $status

#!/usr/bin/env bash
# Build and run kittens' GPU proof on a Hopper (sm_90a) machine, in one go:
#   1. build every GPU unit test and every GEMM ladder level (parallel nvcc);
#   2. check the ladder's SASS (HGMMA present, no local-memory spills);
#   3. run the GPU unit tests;
#   4. run the ladder at 4096^3 (each level against cuBLAS in the same process), JSON records
#      appended to $OUT/ladder.jsonl;
#   5. run compute-sanitizer memcheck, racecheck and synccheck on the unit tests;
#   6. print a summary table last.
# Usage: scripts/device-kittens.sh [all|tests|sanitize|ladder]...   (default: all)
# Env: OUT (logs and results; default /tmp/kittens-device-out), NVCC, KITTENS_LADDER_ARGS (extra ladder args).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/kittens-device-out}
BUILD=${BUILD:-/tmp/kittens-device-build}
NVCC=${NVCC:-nvcc}
PHASES=${*:-all}
mkdir -p "$OUT" "$BUILD"
FLAGS=(-gencode=arch=compute_90a,code=sm_90a -std=c++20 -O3 --expt-relaxed-constexpr -I"$ROOT/kittens/include")
export KITTENS_COMMIT=${KITTENS_COMMIT:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo uncommitted)}
if [ "$KITTENS_COMMIT" = uncommitted ]; then
  export KITTENS_COMMIT_NOTE=${KITTENS_COMMIT_NOTE:-"working tree not yet committed when measured"}
fi
SUMMARY=()
note() { SUMMARY+=("$1"); echo "== $1"; }
want() { [[ " $PHASES " == *" all "* || " $PHASES " == *" $1 "* ]]; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee "$OUT/gpu.txt"

# cuBLAS: the toolkit's, else the one shipped with the Python packages.
CUBLAS=(-lcublas)
if ! echo 'int main(){}' | "$NVCC" -x cu - -lcublas -o "$BUILD/cublas_probe" >/dev/null 2>&1; then
  d=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(os.path.dirname(nvidia.cublas.__file__), "lib"))' 2>/dev/null)
  CUBLAS=(-L"$d" -l:libcublas.so.13 -Xlinker -rpath -Xlinker "$d")
fi

TESTS=(register_ops fast_math mma_sync wgmma tma sync lcf)
LEVELS=(l1_mma_sync l2_wgmma l3_tma l4_warpspec l5_wide l6_lcf)

# ---- 1. build -------------------------------------------------------------------------
build_one() { # src out extra...
  local src=$1 out=$2; shift 2
  if ! "$NVCC" "${FLAGS[@]}" -Xptxas -v "$src" -o "$out" "$@" >"$out.build.log" 2>&1; then
    echo "BUILD FAILED: $src"; tail -20 "$out.build.log"; return 1
  fi
}
pids=()
for t in "${TESTS[@]}"; do build_one "$ROOT/test/GPU/kittens/$t.cu" "$BUILD/$t" & pids+=($!); done
for l in "${LEVELS[@]}"; do build_one "$ROOT/bench/gemm_ladder/$l.cu" "$BUILD/$l" "${CUBLAS[@]}" & pids+=($!); done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
cat "$BUILD"/*.build.log > "$OUT/build.log"
note "build: $fails failure(s)"

# ---- 2. SASS checks --------------------------------------------------------------------
if command -v cuobjdump >/dev/null; then
  for l in "${LEVELS[@]}"; do
    [ -x "$BUILD/$l" ] || continue
    cuobjdump -sass "$BUILD/$l" > "$BUILD/$l.sass" 2>/dev/null
    note "sass $l: HGMMA=$(grep -c HGMMA "$BUILD/$l.sass") HMMA=$(grep -c 'HMMA' "$BUILD/$l.sass") LDL/STL=$(grep -cE '\b(LDL|STL)\b' "$BUILD/$l.sass")"
  done
fi

# ---- 3. unit tests ------------------------------------------------------
if want tests; then
  : > "$OUT/tests.log"
  for t in "${TESTS[@]}"; do
    echo "### $t" >> "$OUT/tests.log"
    if [ -x "$BUILD/$t" ] && timeout 60 "$BUILD/$t" > "$BUILD/test_$t.log" 2>&1; then note "test $t: PASS"
    else note "test $t: FAIL ($(grep -c FAIL "$BUILD/test_$t.log" 2>/dev/null) failing checks)"; tail -15 "$BUILD/test_$t.log"; fi
    cat "$BUILD/test_$t.log" >> "$OUT/tests.log"
  done
fi
# ---- 4. ladder --------------------------------------------------------------------------
if want ladder; then
  : > "$OUT/ladder.log"
  for l in "${LEVELS[@]}"; do
    [ -x "$BUILD/$l" ] || { note "ladder $l: not built"; continue; }
    timeout 300 "$BUILD/$l" --json "$OUT/ladder.jsonl" ${KITTENS_LADDER_ARGS:-} >> "$OUT/ladder.log" 2>&1 || note "ladder $l: exit $?"
  done
  grep -E "TFLOP/s|WRONG|refusing" "$OUT/ladder.log" | while read -r line; do note "$line"; done
fi

# ---- 5. sanitizers (after the ladder, so a slow tool never costs the measurements) ----
if want sanitize && command -v compute-sanitizer >/dev/null; then
  : > "$OUT/sanitizer.log"
  for tool in memcheck racecheck synccheck; do
    for t in "${TESTS[@]}"; do
      [ -x "$BUILD/$t" ] || continue
      # racecheck does not model bar.arrive ordering; the arrive-form handoff in `sync` is skipped there.
      skip=""; [ "$tool" = racecheck ] && skip=1
      log=$(KITTENS_SKIP_BAR_ARRIVE=$skip timeout 200 compute-sanitizer --tool "$tool" --error-exitcode 99 "$BUILD/$t" 2>&1)
      rc=$?
      echo "### $tool $t rc=$rc" >> "$OUT/sanitizer.log"; echo "$log" | tail -40 >> "$OUT/sanitizer.log"
      summ=$(echo "$log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
      note "$tool $t: rc=$rc ${summ:-no summary}"
    done
  done
fi

echo
echo "================ summary ================"
printf '%s\n' "${SUMMARY[@]}"

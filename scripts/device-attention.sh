#!/usr/bin/env bash
# Attention forward and backward on a machine with an sm_90 GPU, torch and nvcc 13 (no tkc
# build dependencies needed there):
#
#   scripts/device-attention.sh prepare          # here, after building tkc: fills .gen-py/
#   OUT=<folder> COMMIT=<id> scripts/device-attention.sh [check] [bench]   # there (default: both)
#
# `prepare` is scripts/device-python.sh prepare: tkc installed into .gen-py with
# the libraries it loads (carry .gen-py to the GPU machine). Without .gen-py,
# a build/bin/tkc that runs there is used. Kernels are compiled by tkc.load
# against this tree's kittens and runtime headers, once, into one cache that
# both steps share.
#   check: python/gpu_tests/test_attention.py, every instantiation of
#          kernels-spec/attention_fwd.yaml (and the sliding-window and
#          soft-capping variants where their specs exist) against an fp32 torch
#          reference; log in $OUT/attention-check.log;
#   sanitize: python/gpu_tests/attention_sanitize.py under compute-sanitizer's
#          memcheck, racecheck and synccheck (every kernel once, N=193); logs in
#          $OUT/attention-sanitize-*.log;
#   bench: bench/attention/run.py, the FlashAttention-3 protocol against torch
#          SDPA's cuDNN and FlashAttention-2 backends; records in
#          $OUT/attention-bench.json, log in $OUT/attention-bench.log;
#   variants: bench/attention/variants.py, the variant specs (ALiBi, sinks, offset, bias) against
#          FlexAttention, paired and with the L2 evicted; records in
#          $OUT/attention-variants{,-cold}.json, logs beside them.
#   backward: python/gpu_tests/test_attention_bwd.py (the backward specs, the variants'
#          included) and python/gpu_tests/test_functional.py (tkc.functional.attention);
#          logs in $OUT/attention-bwd-check.log and $OUT/functional-check.log;
#   backward-sanitize: the backward specs' kernels once each (N=193) under memcheck,
#          racecheck and synccheck, built first outside the sanitizer; logs in
#          $OUT/attention-bwd-sanitize-*.log;
#   backward-bench: bench/attention/backward.py, the backward and then forward and backward
#          together against SDPA's cuDNN and FlashAttention-2; $OUT/attention-bwd{,-fwd-bwd}.json;
#   train: bench/train/train_gpt.py eager and compiled, tkc against SDPA;
#          $OUT/train-gpt{,-compiled}.json and logs.
# QUICK=1 runs fewer sequence lengths in both; COLD_L2=1 evicts the L2 before every
# timed run of the benchmark.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

if [[ "${1:-}" == "prepare" ]]; then
  exec scripts/device-python.sh prepare
fi

OUT=${OUT:-build/device-attention}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
steps=${*:-check bench}
mkdir -p "$OUT"

if [[ -x .gen-py/bin/tkc ]]; then
  export TKC_EXECUTABLE="$PWD/.gen-py/bin/tkc"
elif build/bin/tkc --version >/dev/null 2>&1; then
  export TKC_EXECUTABLE="$PWD/build/bin/tkc"
else
  echo "no tkc here: run '$0 prepare' where tkc is built, and carry .gen-py" >&2
  exit 1
fi
export TKC_INCLUDE_DIR="$PWD/kittens/include:$PWD/runtime/include"
export TKC_CACHE_DIR=${TKC_CACHE_DIR:-$(mktemp -d)}
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
quick=(${QUICK:+--quick})

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
"$TKC_EXECUTABLE" --version
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'

failed=()
if [[ " $steps " == *" check "* ]]; then
  echo "== correctness (cache: $TKC_CACHE_DIR)"
  python3 python/gpu_tests/test_attention.py "${quick[@]}" 2>&1 | tee "$OUT/attention-check.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=(check)
fi
if [[ " $steps " == *" sanitize "* ]]; then
  echo "== compute-sanitizer (memcheck, racecheck, synccheck) on N=193"
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 3 \
      python3 python/gpu_tests/attention_sanitize.py 2>&1 | tee "$OUT/attention-sanitize-$tool.log"
    [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=("sanitize-$tool")
  done
fi
if [[ " $steps " == *" bench "* ]]; then
  echo "== benchmark against torch SDPA (cuDNN, FlashAttention-2)"
  python3 bench/attention/run.py --out "$OUT/attention-bench.json" --commit "$COMMIT" \
    "${quick[@]}" ${COLD_L2:+--cold-l2} 2>&1 | tee "$OUT/attention-bench.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=(bench)
fi
if [[ " $steps " == *" variants "* ]]; then
  echo "== variants against FlexAttention, paired, then with the L2 evicted"
  python3 bench/attention/variants.py --out "$OUT/attention-variants.json" --commit "$COMMIT" \
    "${quick[@]}" 2>&1 | tee "$OUT/attention-variants.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=(variants)
  python3 bench/attention/variants.py --out "$OUT/attention-variants-cold.json" \
    --commit "$COMMIT" --cold-l2 "${quick[@]}" 2>&1 | tee "$OUT/attention-variants-cold.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=(variants-cold)
fi
if [[ " $steps " == *" backward "* ]]; then
  echo "== backward and tkc.functional correctness (cache: $TKC_CACHE_DIR)"
  python3 python/gpu_tests/test_attention_bwd.py "${quick[@]}" 2>&1 |
    tee "$OUT/attention-bwd-check.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=(backward)
  python3 python/gpu_tests/test_functional.py 2>&1 | tee "$OUT/functional-check.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=(functional)
fi
if [[ " $steps " == *" backward-sanitize "* ]]; then
  echo "== the backward under compute-sanitizer on N=193"
  python3 python/gpu_tests/test_attention_bwd.py --prebuild || failed+=(backward-prebuild)
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 3 \
      python3 python/gpu_tests/test_attention_bwd.py --one-each 2>&1 |
      tee "$OUT/attention-bwd-sanitize-$tool.log"
    [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=("backward-sanitize-$tool")
  done
fi
if [[ " $steps " == *" backward-bench "* ]]; then
  echo "== the backward against torch SDPA (cuDNN, FlashAttention-2)"
  python3 bench/attention/backward.py --out "$OUT/attention-bwd.json" --commit "$COMMIT" \
    "${quick[@]}" ${COLD_L2:+--cold-l2} 2>&1 | tee "$OUT/attention-bwd.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=(backward-bench)
  python3 bench/attention/backward.py --with-forward --out "$OUT/attention-bwd-fwd-bwd.json" \
    --commit "$COMMIT" "${quick[@]}" ${COLD_L2:+--cold-l2} 2>&1 |
    tee "$OUT/attention-bwd-fwd-bwd.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=(backward-bench-fwd-bwd)
fi
if [[ " $steps " == *" train "* ]]; then
  echo "== a GPT trained with tkc attention and with SDPA"
  python3 bench/train/train_gpt.py --out "$OUT/train-gpt.json" --commit "$COMMIT" 2>&1 |
    tee "$OUT/train-gpt.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=(train)
  python3 bench/train/train_gpt.py --compile --out "$OUT/train-gpt-compiled.json" \
    --commit "$COMMIT" 2>&1 | tee "$OUT/train-gpt-compiled.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || failed+=(train-compiled)
fi
if ((${#failed[@]})); then
  echo "device-attention: FAILED: ${failed[*]}"
  exit 1
fi
echo "device-attention: all passed"

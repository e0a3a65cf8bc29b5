#!/usr/bin/env bash
# A/B of two builds of tkc's kernels on a machine with an sm_90 GPU, torch and nvcc 13:
# bench/ab.py, base against new, GEMM and attention forward, paired (bench/timing.py).
#
# Here, where tkc builds (no GPU needed), prepare both sides:
#
#   git worktree add /tmp/tkc-base <base-commit>                 # the base's sources
#   cmake -S /tmp/tkc-base -B /tmp/tkc-base/build -G Ninja -DCMAKE_BUILD_TYPE=Release
#   cmake --build /tmp/tkc-base/build --target tkc
#   scripts/device-ab.sh prepare /tmp/tkc-base/build .gen-py-base   # the base side
#   scripts/device-ab.sh prepare build .gen-py                       # the new side (this tree)
#
# `prepare BUILD DEST` runs `scripts/device-python.sh prepare BUILD DEST`: tkc
# installed into DEST/prefix (binary, kittens and runtime headers) with every library it
# loads in DEST/lib and a wrapper DEST/bin/tkc that runs it with them; then, from the
# sources BUILD was configured from, DEST/gen/gemm.cu and gemm.h (that tkc on that tree's
# kernels-spec/gemm.yaml), that tree's test/GPU/gemm/Inputs/gemm_variants.h and
# kernels-spec/attention_fwd.yaml, and DEST/commit. So the base side is the base commit's
# own compiler, specs and headers. DEST=.gen-py keeps the layout scripts/device-python.sh
# and scripts/device-attention.sh use. Carry both folders to the GPU machine (.gen-py is
# git-ignored; .gen-py-base is not, so name it in the run's carry or add it to .gitignore).
#
# There:
#
#   OUT=<folder> scripts/device-ab.sh [bench/ab.py options: --only gemm|attention, --quick,
#                                      --rounds N, --cold-l2]
#
# builds the two GEMM libraries (bench/gemm/tkc_gemm_ext.cu with $GEN_BASE/gemm.cu and
# with $GEN_NEW/gemm.cu, nvcc flags as scripts/device-gemm.sh, each side against its own
# headers) and runs bench/ab.py; table on stdout and in $OUT/ab.log, records in
# $OUT/ab.json. Env (defaults from the prepared folders BASE=.gen-py-base, NEW=.gen-py):
# TKC_BASE, TKC_NEW (tkc executables), GEN_BASE, GEN_NEW (folders with gemm.cu),
# BASE_COMMIT, COMMIT (the ids the records carry), BIN (build folder).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

if [[ "${1:-}" == "prepare" ]]; then
  set -e
  build=${2:?usage: $0 prepare BUILD DEST}
  dest=${3:?usage: $0 prepare BUILD DEST}
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
  [[ -d "$src/kernels-spec" ]] || { echo "no sources for $build (CMakeCache.txt)" >&2; exit 1; }
  # tkc and the libraries it loads, with a wrapper that runs it (as for .gen-py).
  scripts/device-python.sh prepare "$build" "$dest"
  mkdir -p "$dest/gen"
  "$dest/bin/tkc" "$src/kernels-spec/gemm.yaml" -o "$dest/gen/gemm.cu"
  cp "$src/test/GPU/gemm/Inputs/gemm_variants.h" "$src/kernels-spec/attention_fwd.yaml" "$dest/gen/"
  { git -C "$src" describe --always --dirty --abbrev=7 2>/dev/null || echo unknown; } > "$dest/commit"
  echo "$dest: $("$dest/bin/tkc" --version | head -n 1), commit $(cat "$dest/commit"), $(du -sh "$dest" | cut -f1)"
  exit 0
fi

BASE=${BASE:-.gen-py-base}
NEW=${NEW:-.gen-py}
TKC_BASE=${TKC_BASE:-$BASE/bin/tkc}
TKC_NEW=${TKC_NEW:-$NEW/bin/tkc}
GEN_BASE=${GEN_BASE:-$BASE/gen}
GEN_NEW=${GEN_NEW:-$NEW/gen}
BASE_COMMIT=${BASE_COMMIT:-$(cat "$BASE/commit" 2>/dev/null || echo base)}
COMMIT=${COMMIT:-$(cat "$NEW/commit" 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)}
OUT=${OUT:-build/device-ab}
BIN=${BIN:-/tmp/tkc-device-ab}
mkdir -p "$OUT" "$BIN"
export PYTHONUNBUFFERED=1

# Each side's kittens and runtime headers: its prepared prefix, else this tree's.
includes() { # prepared folder -> -I options
  if [[ -d "$1/prefix/include/kittens" ]]; then echo "-I$1/prefix/include"
  else echo "-Ikittens/include -Iruntime/include"; fi
}
for f in "$GEN_BASE/gemm.cu" "$GEN_NEW/gemm.cu" "$TKC_BASE" "$TKC_NEW"; do
  [[ -e "$f" ]] || { echo "device-ab: no $f: run '$0 prepare' for both sides first" >&2; exit 1; }
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
args=(--base-commit "$BASE_COMMIT" --commit "$COMMIT" --out "$OUT/ab.json" "$@")
if [[ " $* " != *" attention "* ]]; then
  pids=()
  for side in base new; do
    if [[ $side == base ]]; then gen=$GEN_BASE inc=$(includes "$BASE")
    else gen=$GEN_NEW inc=$(includes "$NEW"); fi
    # shellcheck disable=SC2086 # $inc is one or two -I options
    nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++20 -O3 --expt-relaxed-constexpr \
      $inc "-I$gen" -Itest/GPU/gemm/Inputs -shared -Xcompiler -fPIC \
      "$gen/gemm.cu" bench/gemm/tkc_gemm_ext.cu -o "$BIN/libtkcgemm-$side.so" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do
    wait "$pid" || { echo "device-ab: a GEMM library did not build" >&2; exit 1; }
  done
  args+=(--base-lib "$BIN/libtkcgemm-base.so" --new-lib "$BIN/libtkcgemm-new.so")
fi
if [[ " $* " != *" gemm "* ]]; then
  args+=(--base-tkc "$TKC_BASE" --new-tkc "$TKC_NEW")
  [[ -f "$BASE/gen/attention_fwd.yaml" ]] && args+=(--base-spec "$BASE/gen/attention_fwd.yaml")
  [[ -d "$BASE/prefix/include" ]] && args+=(--base-include "$BASE/prefix/include")
  [[ -d "$NEW/prefix/include" ]] && args+=(--new-include "$NEW/prefix/include")
fi
python3 bench/ab.py "${args[@]}" 2>&1 | tee "$OUT/ab.log"
exit "${PIPESTATUS[0]}"

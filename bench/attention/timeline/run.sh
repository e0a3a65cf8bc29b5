#!/usr/bin/env bash
# Task timelines of the attention kernels on an sm_90a GPU (bench/NOTES.md, session 15):
#
#   TKC=<tkc> OUT=<folder> bench/attention/timeline/run.sh "D causal B H N" ...
#   python3 bench/attention/timeline/analyze.py <folder>/D64_c0_N1024.bin
#
# For each (D, causal) the launcher tkc emits from kernels-spec/attention_fwd.yaml is built
# twice: against kittens as shipped (timed only) and against a copy whose LCF template records
# when each warpgroup reaches each point of a task (patch_lcf.py); the traced one is timed too
# (the points cost ~1-4 %) and writes <folder>/D<D>_c<causal>_N<N>.bin.
set -euo pipefail
cd "$(dirname "$0")/../../.."
TKC=${TKC:-build/bin/tkc}
OUT=${OUT:?set OUT}
W=$(mktemp -d)
mkdir -p "$OUT"
python3 bench/attention/timeline/patch_lcf.py kittens/include "$W/inc"
FLAGS=(-gencode=arch=compute_90a,code=sm_90a -std=c++20 -O3 --expt-relaxed-constexpr -Iruntime/include -I"$W")
for cfg in "$@"; do
  read -r D C B H N <<<"$cfg"
  c=$([[ $C == 1 ]] && echo true || echo false)
  name=D${D}_c$C
  if [[ ! -x $W/$name.traced ]]; then
    "$TKC" kernels-spec/attention_fwd.yaml --param D=$D --param causal=$c -o "$W/$name.cu"
    fn=attention_fwd_D$D$([[ $C == 1 ]] && echo _causal || true)
    common=(-DKERNEL_CU="\"$name.cu\"" -DHEAD_D=$D -DCAUSAL=$C -DLAUNCHER=tkc::kernels::$fn bench/attention/timeline/harness.cu)
    nvcc "${FLAGS[@]}" -Ikittens/include -DNO_TRACE "${common[@]}" -o "$W/$name.plain"
    nvcc "${FLAGS[@]}" -I"$W/inc" "${common[@]}" -o "$W/$name.traced"
  fi
  echo "plain:  $("$W/$name.plain" "$B" "$H" "$N" /dev/null | head -1)"
  echo "traced: $("$W/$name.traced" "$B" "$H" "$N" "$OUT/${name}_N$N.bin" | head -1)"
done
rm -rf "$W"

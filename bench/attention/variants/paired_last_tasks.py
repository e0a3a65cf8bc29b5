"""Probe edit (not shipped): where a non-causal head's rows leave one lone 64-row block
after its tasks of three (ceil(N / 64) % 3 == 1, e.g. N = 1024, 4096, 16384), its last four
blocks run as two tasks of two warpgroups each instead of a task of three and a task of one.

A lone warpgroup runs its stages at well under three warpgroups' rate per row (traced at
N = 1024: a lone task takes 0.52 (D = 64) to 0.67 (D = 128) of a full one's time for a third of
its rows); two warpgroups may keep closer to full rate. The task count is unchanged; a third
warpgroup of a two-block task idles (no stages computed, nothing stored).

Results in bench/results/attention_lazy_max_probe_h100_2026-11-23.log.

Applied to the generated file by bench/attention/tkc-edit with VPY=<this file>; only the
non-causal kernels are edited.
"""
import re, sys

from generated_cuda import struct_span  # beside this file

path = sys.argv[1]
src = open(path).read()

helpers = """
// Probe (paired_last_tasks.py): the first 64-row block of task i, and whether warpgroup wg
// has rows of its own in it.
static __device__ __forceinline__ int tkc_full_tasks(int N) {
  const int R = (N + 63) / 64, T = (N + 191) / 192;
  return (3 * T - R == 2 && T >= 2) ? T - 2 : T;
}
static __device__ __forceinline__ int tkc_rb(int i, int N) {
  const int full = tkc_full_tasks(N);
  return i < full ? 3 * i : 3 * full + 2 * (i - full);
}
static __device__ __forceinline__ bool tkc_idle(int i, int wg, int N) {
  return (i >= tkc_full_tasks(N) && wg >= 2) || (long long)(tkc_rb(i, N) + wg) * 64 >= N;
}
"""

names = [n for n in re.findall(r"^struct (attention_fwd_D\d+\w*)_kernel \{", src, re.M) if "causal" not in n]
total = 0
for name in names:
    a, b = struct_span(src, name)
    seg = src[a:b]
    n0 = seg.count("args.common.i * 3 + tkc_wg")
    seg = seg.replace("(long long)(args.common.i * 3 + tkc_wg) * 64 >= args.globals.N",
                      "tkc_idle(args.common.i, tkc_wg, args.globals.N)")
    seg = seg.replace("args.next_common.i * 3 + tkc_wg",
                      "tkc_rb(args.next_common.i, args.globals.N) + tkc_wg")
    seg = seg.replace("args.common.i * 3 + tkc_wg", "tkc_rb(args.common.i, args.globals.N) + tkc_wg")
    seg = seg.replace("(long long)args.common.i * 192 + tkc_row",
                      "(long long)tkc_rb(args.common.i, args.globals.N) * 64 + tkc_row")
    if "args.common.i * 3" in seg or "args.common.i * 192" in seg or n0 == 0:
        sys.exit(f"paired_last_tasks: unexpected row arithmetic left in {name}")
    src = src[:a] + seg + src[b:]
    total += 1
first = re.search(r"^struct attention_fwd_D", src, re.M).start()
src = src[:first] + helpers + "\n" + src[first:]
open(path, "w").write(src)
print(f"paired_last_tasks: {total} kernels edited", file=sys.stderr)

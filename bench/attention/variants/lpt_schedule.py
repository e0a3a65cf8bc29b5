"""Probe edit (not shipped): causal tasks assigned to blocks by their modelled length.

The causal kernels hand round r's task ordinals r*G .. r*G + G-1 to the G blocks in
serpentine order. Tasks differ in length (a task's loop stops at its last row), and a block
gets 23 or 24 of them at N = 1024 whatever they cost; the timelines showed 5-6 % of
block-time idle at the end (session 15). Here a one-thread kernel, run once per problem
shape before the first launch, assigns the ordinals in the same order, each to the block
whose modelled load is least (list scheduling; a task of s stages weighs 4 s + 3, the
+3 for its setup and finish), into a table the kernel's common_setup reads instead of
serpentine_task. Every ordinal is assigned once, so results are unchanged (the probe
checks them).

Applied to the generated file by bench/attention/tkc-edit with VPY=<this file>.
"""
import re, sys

from generated_cuda import struct_span  # beside this file

path = sys.argv[1]
src = open(path).read()

PROBE = r'''
#include <cstdio>
#include <cstdlib>
namespace tkc_probe {
constexpr int kMaxBlocks = 256, kMaxPer = 96;
__device__ int sched[kMaxBlocks * kMaxPer];
__global__ void build(int per_i, int n_i, int N, int lead, int step, int rows, int blocks) {
  long long load[kMaxBlocks];
  int count[kMaxBlocks];
  for (int b = 0; b < blocks; ++b) {
    load[b] = 0;
    count[b] = 0;
  }
  const long long total = (long long)per_i * n_i;
  for (long long t = 0; t < total; ++t) {
    const int i = n_i - 1 - (int)(t / per_i);
    const long long end = (long long)(i + 1) * rows - (long long)lead * 64;
    const long long extent = end < N ? end : N;
    const long long len = ((extent + step - 1) / step) * 4 + 3;
    int best = 0;
    for (int b = 1; b < blocks; ++b)
      if (load[b] < load[best]) best = b;
    if (count[best] >= kMaxPer - 1) __trap();
    sched[best * kMaxPer + count[best]++] = (int)t;
    load[best] += len;
  }
  for (int b = 0; b < blocks; ++b) sched[b * kMaxPer + count[b]] = -1;
}
inline void ensure(int per_i, int n_i, int N, int lead, int step, long long tasks, cudaStream_t stream) {
  static long long key[7] = {-1, -1, -1, -1, -1, -1, -1};
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const int blocks = (int)(tasks < sms ? tasks : sms);
  const long long now[7] = {per_i, n_i, N, lead, step, blocks, 192};
  bool same = true;
  for (int k = 0; k < 7; ++k) same = same && key[k] == now[k];
  if (same) return;
  if (blocks > kMaxBlocks) { fprintf(stderr, "lpt probe: too many blocks\n"); abort(); }
  build<<<1, 1, 0, stream>>>(per_i, n_i, N, lead, step, 192, blocks);
  for (int k = 0; k < 7; ++k) key[k] = now[k];
}
} // namespace tkc_probe
'''

anchor = "// attention_fwd_"
first = src.index("\n" + anchor) + 1
src = src[:first] + PROBE + "\n" + src[first:]

names = re.findall(r"^struct (attention_fwd_D\d+_causal\w*)_kernel \{", src, re.M)
assert names, "no causal kernel"
for name in names:
    a, b = struct_span(src, name)
    seg = src[a:b]
    old = "const int task = kittens::serpentine_task(args.task_iter, gridDim.x, blockIdx.x);"
    assert seg.count(old) == 1, name
    new = ("const int task = args.task_iter < tkc_probe::kMaxPer - 1\n"
           "        ? tkc_probe::sched[blockIdx.x * tkc_probe::kMaxPer + args.task_iter] : -1;\n"
           "    if (task < 0) {\n      args.num_iters = -1;\n      return;\n    }")
    seg = seg.replace(old, new)
    step = int(re.search(r"using k_tile = kittens::st_bf<(\d+), ", seg).group(1))
    assert "(long long)(args.common.i + 1) * 192 -" in seg, name  # tasks of 192 rows
    src = src[:a] + seg + src[b:]
    call = f"return launch_persistent<{name}_kernel>(globals, tasks, stream,"
    assert src.count(call) == 1, name
    src = src.replace(call, "tkc_probe::ensure(globals.b_count * globals.h_count, globals.i_count, "
                            f"globals.N, globals.i_lead, {step}, tasks, stream);\n  " + call)
open(path, "w").write(src)

"""Probe edit: causal tasks taken in pairs of one head, long with short (built in 8cb10cc as
kittens::paired_task; the emitter takes it for fewer counts than this probe, see CudaEmitter.cpp).

A causal head's end-aligned tasks need stages growing with `i`, so with an even count task
i and task i_count - 1 - i together need about the same at every i (N = 1024, 128-key
stages: 8 + 1, 7 + 2, 5 + 4); with an odd count the pairs are (i_count - 1 - j, j + 1) and
task 0, the head's shortest, is left alone. A block's tasks come in such pairs: in round r
a block takes pair (r / 2) * G + blockIdx.x, pairs numbered head-major (a head's pairs go to
neighbouring blocks, which run them at once and read its keys and values from L2 together),
its long task first. The pairs left after the last full round go one to a block; the lone
tasks come last, first to the blocks without a left-over pair. With PAIR_MAX_COUNT set, only
where i_count is at most that (the shipped order elsewhere).

Applied to the generated file by bench/attention/tkc-edit with VPY=<this file>.
"""
import os, re, sys

HELPER = r'''
// Probe: the block's task in round t of the paired order (see bench/attention/variants/paired_order.py).
__device__ __forceinline__ bool tkc_paired_task(int t, int G, int k, int heads, int c, int &head, int &i) {
  const int P = c / 2, o = c % 2; // pairs a head; an odd count leaves task 0 alone
  const long long total = (long long)heads * P;
  const int full = static_cast<int>(total / G);
  if (t < 2 * full) {
    const long long p = (long long)(t >> 1) * G + k;
    head = static_cast<int>(p / P);
    const int j = static_cast<int>(p % P);
    i = (t & 1) ? j + o : c - 1 - j;
    return true;
  }
  const int R = static_cast<int>(total - (long long)full * G);
  int q = t - 2 * full;
  if (k < R) {
    if (q < 2) {
      const long long p = (long long)full * G + k;
      head = static_cast<int>(p / P);
      const int j = static_cast<int>(p % P);
      i = (q & 1) ? j + o : c - 1 - j;
      return true;
    }
    q -= 2;
  }
  if (c % 2 == 0) return false;
  const int rank = k >= R ? k - R : (G - R) + k;
  const long long m = (long long)q * G + rank;
  if (m >= heads) return false;
  head = static_cast<int>(m);
  i = 0;
  return true;
}
'''

path = sys.argv[1]
src = open(path).read()
pat = re.compile(r"const int task = kittens::serpentine_task\(args\.task_iter, gridDim\.x, blockIdx\.x\);.*?(?=const long long end =)", re.S)
limit = os.environ.get("PAIR_MAX_COUNT")
paired = '''int tkc_head, tkc_i;
    if (!tkc_paired_task(args.task_iter, gridDim.x, blockIdx.x,
                         args.globals.b_count * args.globals.h_count, args.globals.i_count, tkc_head, tkc_i)) {
      args.num_iters = -1; // no task left for this block
      return;
    }
    args.common.h = tkc_head % args.globals.h_count;
    args.common.b = tkc_head / args.globals.h_count;
    args.common.i = tkc_i;
    '''


def edit(m):
    if not limit:
        return paired
    return f"if (args.globals.i_count <= {int(limit)}) {{\n    {paired}}} else {{\n    {m.group(0)}}}\n    "


src, n = pat.subn(edit, src)
if n == 0:
    sys.exit("paired_order: no serpentine common_setup found")
src = src.replace("namespace {\n", "namespace {\n" + HELPER, 1)
open(path, "w").write(src)
print(f"paired_order: {n} kernels", file=sys.stderr)

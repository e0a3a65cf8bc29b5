# Variant (probe only, see NOTES session 22): tasks handed out as blocks become free. Each block
# claims its task_iter-th task from a global counter (one atomicAdd; the first thread of the
# block that needs it claims, the others read it from a shared-memory table); the last block to
# find no task left resets the counter for the next launch (one stream at a time: a probe).
# Non-causal: the rotated order's ordinals in sequence (head-major, 'i' fastest). Causal with at
# most 16 tasks a head (the paired order's range): head-major, each head's tasks longest first.
# DYN_CTL=1 builds the control: the same claim through the table, of the shipped static orders'
# tasks (rotated; paired, encoded so that the decoding gives its head and i), no global counter:
# what the table and the values it keeps live cost by themselves.
import os, re, sys
ctl = os.environ.get("DYN_CTL") == "1"
p = sys.argv[1]; s = open(p).read()
fn = r'''
__device__ int tkc_dyn_next = 0, tkc_dyn_done = 0;
__shared__ int tkc_dyn_tab[128];
// The producer's first thread claims: task 0 and 1 at its first task, task_iter + 1 at each
// later one (consumers read the next task at the start of the current one); every other thread
// waits for the table entry.
__device__ __forceinline__ void tkc_dyn_claim(int task_iter, int total, int count) {
  int v = CLAIM;
  if (v >= total) {
    v = total;
    if (atomicAdd(&tkc_dyn_done, 1) == (int)gridDim.x - 1) {
      atomicExch(&tkc_dyn_next, 0);
      atomicExch(&tkc_dyn_done, 0);
    }
  }
  *(volatile int *)&tkc_dyn_tab[task_iter & 127] = v;
}
__device__ __forceinline__ int tkc_dyn_task(int task_iter, int total, int count = 0) {
  if (task_iter == 0) { // every thread's first call: clear the table, then meet
    for (int x = threadIdx.x; x < 128; x += blockDim.x) tkc_dyn_tab[x] = -2;
    __syncthreads();
  }
  if (threadIdx.x == blockDim.x - 128) {
    if (task_iter == 0) tkc_dyn_claim(0, total, count);
    if (tkc_dyn_tab[task_iter & 127] < total) tkc_dyn_claim(task_iter + 1, total, count);
  }
  volatile int *e = &tkc_dyn_tab[task_iter & 127];
  int v;
  while ((v = *e) == -2) {}
  return v;
}
__device__ __forceinline__ bool tkc_dyn_paired(int task_iter, int heads, int count, int &head, int &i) {
  const int o = tkc_dyn_task(task_iter, heads * count, count);
  if (o >= heads * count) return false;
  head = o / count;
  i = count - 1 - o % count;
  return true;
}
'''
n1 = len(re.findall(r"kittens::rotated_task\(args\.task_iter, gridDim\.x, blockIdx\.x\)", s))
s = re.sub(r"kittens::rotated_task\(args\.task_iter, gridDim\.x, blockIdx\.x\);\n(\s*)if \(task >= ([^)]*)\)",
           r"tkc_dyn_task(args.task_iter, \2);\n\1if (task >= \2)", s)
n2 = s.count("kittens::paired_task(args.task_iter, gridDim.x, blockIdx.x,")
s = s.replace("kittens::paired_task(args.task_iter, gridDim.x, blockIdx.x,", "tkc_dyn_paired(args.task_iter,")
assert "kittens::rotated_task(" not in s and "kittens::paired_task(" not in s
claim = "atomicAdd(&tkc_dyn_next, 1)"
if ctl:
    claim = ("(count == 0 ? kittens::rotated_task(task_iter, gridDim.x, blockIdx.x) : "
             "[&] { int h_ = 0, i_ = 0; return kittens::paired_task(task_iter, gridDim.x, blockIdx.x, "
             "total / count, count, h_, i_) ? h_ * count + count - 1 - i_ : total; }())")
fn = fn.replace("CLAIM", claim)
idx = s.rfind("#include"); idx = s.index("\n", idx) + 1
s = s[:idx] + fn + s[idx:]
open(p, "w").write(s); print("dyn_sched: %d rotated, %d paired" % (n1, n2), file=sys.stderr)

#!/usr/bin/env python3
"""Copies kittens' headers to DEST and adds timestamps to the LCF template: the
leader thread of each warpgroup (and the producer's) records %globaltimer at the
points of a task named below into `kittens::lcf::lcf_trace`, one row of 16 per
(block, task_iter < 48, warpgroup). A diagnostic build only; the shipped template
is untouched.

    patch_lcf.py KITTENS_INCLUDE DEST

Events (consumer warpgroup w, column):
  0 top of the task   1 setup done   2 first stage arrived   3 first compute done
  4 stages done       5 finish done  6 compute_iters         7 SM id
  and on task 0's row only: 8 the block's end (its last store read)  9 the kernel's entry
Producer (row 3): 0 task start, 1 first load issued, 4 last load issued; 9 on task 0: entry.
Columns 10-14 repeat entry, first stage arrived, stages done, finish done and the end in
the multiprocessor's clock64 cycles (entry and end on task 0's row only); column 15 holds the
clock64 cycles a warpgroup waited for its stages after the task's first. Producer columns 5 and
6: clock64 before and after its wait for the previous task's finish to release the stages the
finish block aliases.
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402

patch = LcfPatch(sys.argv[2], copy_from=sys.argv[1])
edit = patch.edit

edit("/// The LCF kernel. Launch with", """__device__ unsigned long long lcf_trace[132 * 48 * 4 * 16];
__device__ __forceinline__ unsigned long long lcf_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#ifndef LCF_EVENTS
#define LCF_EVENTS 0xffff // -DLCF_EVENTS=<mask of columns> keeps only those stamps (lighter)
#endif
#define LCF_T(task, w, ev, val)                                                                   \\
  do {                                                                                            \\
    if (((LCF_EVENTS >> (ev)) & 1) && (threadIdx.x & 127) == 0 && (task) < 48 && blockIdx.x < 132) \\
      ::kittens::lcf::lcf_trace[((blockIdx.x * 48 + (task)) * 4 + (w)) * 16 + (ev)] = (val);      \\
  } while (0)
/// The LCF kernel. Launch with""")
edit("""  shared_allocator alloc(lcf_smem_raw);
""", """  {
    const int w = warpgroupid() < TR::NUM_CONSUMER_WARPGROUPS ? warpgroupid() : 3;
    LCF_T(0, w, 9, lcf_now());
    LCF_T(0, w, 10, (unsigned long long)clock64());
  }
  shared_allocator alloc(lcf_smem_raw);
""")
edit("""      for (; it < num_iters && it < TR::SAFE_STAGES; ++it) load_stage(it);""",
     """      for (; it < num_iters && it < TR::SAFE_STAGES; ++it) {
        load_stage(it);
        if (it == 0) LCF_T(task_iter, 3, 1, lcf_now());
      }""")
edit("""    release_finish(); // the block's last store must have read the finish block before it exits
""", """    release_finish(); // the block's last store must have read the finish block before it exits
    {
      const int w = warpgroupid(); // not inside LCF_T: warpgroupid() shuffles across the warp
      LCF_T(0, w, 8, lcf_now());
      LCF_T(0, w, 14, (unsigned long long)clock64());
    }
""")
edit("""      producer_setup_args<K> sa{{common, task_iter, num_iters, g, scratch}, state};""",
     """      LCF_T(task_iter, 3, 0, lcf_now());
      producer_setup_args<K> sa{{common, task_iter, num_iters, g, scratch}, state};""")
edit("""      for (; it < num_iters; ++it) load_stage(it);
""", """      for (; it < num_iters; ++it) load_stage(it);
      LCF_T(task_iter, 3, 4, lcf_now());
""")
edit("""        wait(finish_finished, (task_iter & 1) ^ 1);
        for (; it < num_iters; ++it) load_stage(it);""", """        LCF_T(task_iter, 3, 5, (unsigned long long)clock64());
        wait(finish_finished, (task_iter & 1) ^ 1);
        LCF_T(task_iter, 3, 6, (unsigned long long)clock64());
        for (; it < num_iters; ++it) load_stage(it);""")
edit("""      const int first = it;
      for (; it < compute_iters; ++it) {
        const int s = TR::slot(ring_base, it);
        wait(inputs_arrived[s], ph.full(s));""", """      const int first = it;
      unsigned long long lcf_waited = 0;
      for (; it < compute_iters; ++it) {
        const int s = TR::slot(ring_base, it);
        constexpr bool lcf_waits = ((LCF_EVENTS >> 15) & 1) != 0; // light builds leave the clock alone
        const unsigned long long lcf_w0 = lcf_waits ? clock64() : 0;
        wait(inputs_arrived[s], ph.full(s));
        if (lcf_waits && it != first) lcf_waited += clock64() - lcf_w0;""")
edit("""      const int wg = warpgroupid();
      consumer_setup_args<K> sa""", """      const int wg = warpgroupid();
      LCF_T(task_iter, wg, 0, lcf_now());
      consumer_setup_args<K> sa""")
edit("""      if (compute_iters > num_iters) compute_iters = num_iters;""",
     """      if (compute_iters > num_iters) compute_iters = num_iters;
      LCF_T(task_iter, wg, 1, lcf_now());
      LCF_T(task_iter, wg, 6, (unsigned long long)compute_iters);
      { unsigned sm; asm volatile("mov.u32 %0, %%smid;" : "=r"(sm)); LCF_T(task_iter, wg, 7, (unsigned long long)sm); }""")
edit("""        ph.flip_full(s);
        semaphore *prev""", """        ph.flip_full(s);
        if (it == first) LCF_T(task_iter, wg, 2, lcf_now());
        if (it == first) LCF_T(task_iter, wg, 11, (unsigned long long)clock64());
        semaphore *prev""")
edit("""        K::consumer::compute(xa);
""", """        K::consumer::compute(xa);
        if (it == first) LCF_T(task_iter, wg, 3, lcf_now());
""")
edit("""      release_unread(it, num_iters);
      // Every consumer""", """      release_unread(it, num_iters);
      LCF_T(task_iter, wg, 4, lcf_now());
      LCF_T(task_iter, wg, 12, (unsigned long long)clock64());
      LCF_T(task_iter, wg, 15, lcf_waited);
      // Every consumer""")
edit("""      K::consumer::finish(fa);
""", """      K::consumer::finish(fa);
      LCF_T(task_iter, wg, 5, lcf_now());
      LCF_T(task_iter, wg, 13, (unsigned long long)clock64());
""")
patch.write()

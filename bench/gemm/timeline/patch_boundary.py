#!/usr/bin/env python3
"""Adds clock64 stamps of a task boundary to the gemm_none kernel of a generated gemm.cu
(split-finish form; bench/NOTES.md session 29), for the harness built with
-DNO_TRACE -DTRACE_SYMBOL=bnd_trace against the shipped kittens (no other stamps, no
%globaltimer reads). Each consumer warpgroup's first thread writes, per (block, task < 48,
warpgroup), 16 columns:

   0 the task's last compute call entered (its last stage has arrived; in the form of 0876eb3,
     since reverted, the call that computes both split stages, as column 10)
   1 its left half's products done (mma_async_wait<SPLIT_STAGES>)
   2 its left half's store issued (store_part<0>)
   3 the right half's products done, the held stages about to be released
   4 finish entered                5 the left store has read the staging tile (wait_staging_read)
   6 the right half's store issued (finish done)
   7 the task's first compute call entered (its first stage has arrived)
   8 that call's products done     9 the second compute call entered
  10 the first split stage's call entered (the stage before the last)
  11 the call three stages before the last entered

    python3 patch_boundary.py GEMM_CU; analyze_boundary.py trace.bin
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "variants"))
from kernel_patch import KernelPatch  # noqa: E402

k = KernelPatch(sys.argv[1])
k.head = k.head.replace("namespace {\n", """namespace {
__device__ unsigned long long bnd_trace[132 * 48 * 2 * 16];
// warpgroupid() shuffles across the warp: computed by every lane, outside the one-lane branch.
#define BND_T(task, col)                                                                          \\
  do {                                                                                            \\
    const int bnd_w = kittens::warpgroupid();                                                     \\
    const unsigned long long bnd_t = clock64();                                                   \\
    if ((threadIdx.x & 127) == 0 && (task) < 48 && blockIdx.x < 132 && bnd_w < 2)                 \\
      bnd_trace[((blockIdx.x * 48 + (task)) * 2 + bnd_w) * 16 + (col)] = bnd_t;                   \\
  } while (0)
""", 1)
# The split stages' wait for their left halves, as emitted with one call a split stage, or with
# both in the first one's call (0876eb3 to its revert, dc5ff9f; columns 0 and 10 then stamp the
# same call).
LEFT_DONE = ("// the left half is done" if "// the left half is done" in k.kernel
             else "// the left halves are done")
LAST_CALL = ("args.iter == args.num_iters - 1" if LEFT_DONE == "// the left half is done"
             else "args.iter == split")
k.edit("""      const int split = args.num_iters - SPLIT_STAGES; // the first split stage
""", """      const int split = args.num_iters - SPLIT_STAGES; // the first split stage
      if (args.iter == 0) BND_T(args.task_iter, 7);
      if (args.iter == 1) BND_T(args.task_iter, 9);
      if (args.iter == split) BND_T(args.task_iter, 10);
      if (args.iter == args.num_iters - 3) BND_T(args.task_iter, 11);
      if (%s && args.num_iters > SPLIT_STAGES) BND_T(args.task_iter, 0);
""" % LAST_CALL)
k.edit("""        kittens::warpgroup::mma_async_wait<0>();
        if (kittens::laneid() == 0)
          kittens::arrive(args.inputs_finished); // this warp is done with the stage
""", """        kittens::warpgroup::mma_async_wait<0>();
        if (args.iter == 0) BND_T(args.task_iter, 8);
        if (kittens::laneid() == 0)
          kittens::arrive(args.inputs_finished); // this warp is done with the stage
""")
k.edit("""      kittens::warpgroup::mma_async_wait<SPLIT_STAGES>(); %s
      store_part<0>(args, args.state.acc[0], args.finish.result);
      kittens::warpgroup::mma_async_wait<0>();
""" % LEFT_DONE, """      kittens::warpgroup::mma_async_wait<SPLIT_STAGES>(); %s
      BND_T(args.task_iter, 1);
      store_part<0>(args, args.state.acc[0], args.finish.result);
      BND_T(args.task_iter, 2);
      kittens::warpgroup::mma_async_wait<0>();
      BND_T(args.task_iter, 3);
""" % LEFT_DONE)
k.edit("""      if (args.num_iters <= SPLIT_STAGES)
        store_part<0>(args, args.state.acc[0], args.finish.result);
      wait_staging_read();
      store_part<1>(args, args.state.acc[1], args.finish.result);
""", """      BND_T(args.task_iter, 4);
      if (args.num_iters <= SPLIT_STAGES)
        store_part<0>(args, args.state.acc[0], args.finish.result);
      wait_staging_read();
      BND_T(args.task_iter, 5);
      store_part<1>(args, args.state.acc[1], args.finish.result);
      BND_T(args.task_iter, 6);
""")
k.write()
print("gemm_none: task-boundary stamps in bnd_trace")

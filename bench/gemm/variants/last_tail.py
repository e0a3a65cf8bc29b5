"""Probe edit of a generated gemm.cu with split-finish (bench/NOTES.md session 27): the block's
last task ends differently from its other tasks.

With split-finish as emitted, every task holds its last 2 stages: the last stage issues the
right half's products of both, stores the left half through the warpgroup's finish block while
they run, and finish stores the right half through the same block once the left half's store
has read it. At 2048^3 (one task a block, all 128 blocks ending together) the left half's
4 MiB take ~1,600 cycles to leave at L2's write rate, longer than the ~1,000 cycles of the
right half's products, and the right half waits for that read before it is staged
(results/gemm_timeline_h100_2026-11-26_cf3d6db.txt: 2,688 cycles from the last stage to the
end). In the block's last task nothing is loaded after its stages, so here:

  HOLD   the last task holds its last HOLD stages (2..4) instead of 2, so the right half's
         products of all of them (HOLD x ~512 cycles) cover the left half's store;
  STAGE  1: the right half is staged in a held stage (warpgroup w's in the stage of
         `split + w`) once both warpgroups are past their products (a named barrier), and its
         store is issued at once, without waiting for the left half's read; 0: as emitted.
  ORDER  1: warpgroup 1 issues its right half's products only after warpgroup 0 has issued
         its own (a named barrier), so that warpgroup 0's right half is done ~HOLD x 256
         cycles before the last product and its store leaves under warpgroup 1's products
         (with STAGE 0 only).

    python3 last_tail.py GEMM_CU HOLD STAGE [ORDER]
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_patch import KernelPatch  # noqa: E402
import last_task  # noqa: E402

hold, stage = int(sys.argv[2]), int(sys.argv[3])
order = int(sys.argv[4]) if len(sys.argv) > 4 else 0
assert 2 <= hold <= 4 and stage in (0, 1) and order in (0, 1) and not (stage and order)
k = KernelPatch(sys.argv[1])
last_task.declare(k, hold, stage, "the block's last task holds this many")
held = "".join("""        auto &held%d = args.input_at(split + %d);
        kittens::warpgroup::mma_AB(args.state.acc[1],
                                   held%d.a.subtile<64, 64>(kittens::warpgroupid(), 0),
                                   held%d.b.subtile<64, 128>(0, 1));
""" % (i, i, i, i) for i in range(hold))
k.edit("""      const int split = args.num_iters - SPLIT_STAGES; // the first split stage
""", """      const bool last_task = long_tail(args.task_iter, args.num_iters, args.globals);
      const int split = args.num_iters - (last_task ? HOLD_LAST : SPLIT_STAGES);
""")
k.edit("""      // The task's last stage: the right half of every held stage, and the left half stored while
""", """      if (last_task) {
%s%s%s%s      }
      // The task's last stage: the right half of every held stage, and the left half stored while
""" % ("        if (kittens::warpgroupid() == 1) kittens::named_sync(5, 256); // after warpgroup 0's issue\n" if order else "",
       held,
       "        if (kittens::warpgroupid() == 0) kittens::named_arrive(5, 256);\n" if order else "",
       last_task.ending("split", hold)))
last_task.finish_skips_staged(k)
k.write()
print("gemm_none: the block's last task holds %d stages%s%s" % (
    hold, ", its right half staged in a held stage" if stage else "",
    ", warpgroup 0's right half first" if order else ""))

"""Probe edit (not shipped; bench/NOTES.md session 25): in a block's last task, warpgroup 1
computes its last SPLIT stages only after warpgroup 0 has finished all of its products.
Shipped, both warpgroups reach the block's last product within ~500 cycles of each other, so
their finishes and their stores (64 KiB a block, 8 MiB over the 128 blocks at 2048^3, all at
nearly the same moment) start only once the tensor pipe has gone idle: ~3,000 cycles from the
last finish to the end of the store's read (gemm_timeline_h100_2026-11-23_d8da638_variants.txt).
Here warpgroup 0 runs its last SPLIT stages alone, then finishes and stores its half of the
tile while warpgroup 1 runs its last SPLIT stages alone: half the bytes leave under products.
The held stages stay in the ring a little longer, which the last task can afford (it has no
next task for the producer to load).

    python3 wg_tail.py gemm.cu [SPLIT]     (SPLIT: 1..3 stages, default 2)
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_patch import KernelPatch  # noqa: E402

split = int(sys.argv[2]) if len(sys.argv) > 2 else 2
assert 1 <= split <= 3
patch = KernelPatch(sys.argv[1])
patch.edit("""    struct consumer_state {
      accumulator acc;
    };""", """    struct consumer_state {
      accumulator acc;
      bool last; // the block's last task: the warpgroups' last stages one after the other
    };""")
patch.edit("""      if (args.num_iters == 0)
        kittens::zero(args.state.acc);
    }""", """      if (args.num_iters == 0)
        kittens::zero(args.state.acc);
      args.state.last = args.next_num_iters < 0 && args.num_iters > %d;
    }""" % split)
patch.edit("""      auto a_rows = args.input.a.subtile<64, 64>(kittens::warpgroupid(), 0);
      kittens::warpgroup::mma_AB(args.state.acc, a_rows, args.input.b, args.iter > 0);
      kittens::warpgroup::mma_async_wait<0>();
      if (kittens::laneid() == 0)
        kittens::arrive(args.inputs_finished); // this warp is done with the stage
""", """      const bool last = args.state.last;
      if (last && kittens::warpgroupid() == 1 && args.iter == args.num_iters - %d)
        kittens::named_sync(5, 256); // after warpgroup 0's last products
      auto a_rows = args.input.a.subtile<64, 64>(kittens::warpgroupid(), 0);
      kittens::warpgroup::mma_AB(args.state.acc, a_rows, args.input.b, args.iter > 0);
      kittens::warpgroup::mma_async_wait<0>();
      if (kittens::laneid() == 0)
        kittens::arrive(args.inputs_finished); // this warp is done with the stage
      if (last && kittens::warpgroupid() == 0 && args.iter == args.num_iters - 1)
        kittens::named_arrive(5, 256);
""" % split)
patch.write()
print("gemm_none: in the last task, warpgroup 1's last %d stage(s) after warpgroup 0's" % split)

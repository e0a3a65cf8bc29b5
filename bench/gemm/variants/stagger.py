"""Probe edit (not shipped; bench/NOTES.md session 24): gemm_none's two consumer warpgroups
half a k-step apart. Shipped, both wait for the same stage and issue their products together,
so the tensor pipe works on both at once and both finish a task together: their finishes (and
at the block's end, their stores) leave the pipe idle at the same time. Here warpgroup 1 issues
the block's first products only after warpgroup 0's first products have completed (a named
barrier, once a block). If the pipe runs each warpgroup's products in the order they were
issued, warpgroup 0 stays ahead by one warpgroup's k-step (~512 cycles) from then on, and its
finish overlaps warpgroup 1's last products.

    python3 stagger.py gemm.cu
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_patch import KernelPatch  # noqa: E402

patch = KernelPatch(sys.argv[1])
old = """      auto a_rows = args.input.a.subtile<64, 64>(kittens::warpgroupid(), 0);
      kittens::warpgroup::mma_AB(args.state.acc, a_rows, args.input.b, args.iter > 0);
      kittens::warpgroup::mma_async_wait<0>();
"""
new = """      const bool first = args.task_iter == 0 && args.iter == 0;
      if (first && kittens::warpgroupid() == 1) kittens::named_sync(3, 256);
      auto a_rows = args.input.a.subtile<64, 64>(kittens::warpgroupid(), 0);
      kittens::warpgroup::mma_AB(args.state.acc, a_rows, args.input.b, args.iter > 0);
      kittens::warpgroup::mma_async_wait<0>();
      if (first && kittens::warpgroupid() == 0) kittens::named_arrive(3, 256);
"""
patch.edit(old, new)
patch.write()
print("gemm_none: warpgroup 1 starts after warpgroup 0's first products")

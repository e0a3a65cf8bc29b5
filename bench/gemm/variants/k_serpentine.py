"""Probe edit of a generated gemm.cu (bench/NOTES.md session 27): each block walks K forward in
its even tasks and backward in its odd ones.

All blocks walk K from 0 up in every task, so in step across the GPU; a wave of tasks reads the
whole of B (at 4096^3 with the grouped order, ~41 MB of operands a wave) before the next wave
asks for B's first slices again, which the L2 has then evicted first (ncu, session 25: 186.6 MB
read from DRAM at 4096^3 against cuBLAS's 150.3 MB, where A, B and C are 96 MB). Walking back
in the next wave asks first for the slices read last. Blocks stay in step within a wave (every
block's task_iter-th task walks the same way). The consumers do not use k.

    python3 k_serpentine.py GEMM_CU
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_patch import KernelPatch  # noqa: E402

k = KernelPatch(sys.argv[1])
k.edit("""      if (kittens::warpgroup::laneid() == 0) {
        kittens::expect_bytes(args.inputs_arrived, 49152);
        kittens::tma::load_async(args.input.a, args.globals.A, {0, 0, args.common.m, args.iter},
                                 args.inputs_arrived);
        kittens::tma::load_async(args.input.b, args.globals.B, {0, 0, args.iter, args.common.n},
                                 args.inputs_arrived);""", """      if (kittens::warpgroup::laneid() == 0) {
        const int k = (args.task_iter & 1) ? args.num_iters - 1 - args.iter : args.iter;
        kittens::expect_bytes(args.inputs_arrived, 49152);
        kittens::tma::load_async(args.input.a, args.globals.A, {0, 0, args.common.m, k},
                                 args.inputs_arrived);
        kittens::tma::load_async(args.input.b, args.globals.B, {0, 0, k, args.common.n},
                                 args.inputs_arrived);""")
k.write()
print("gemm_none: K walked backward in a block's odd tasks")

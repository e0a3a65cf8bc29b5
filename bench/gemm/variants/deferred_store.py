"""Probe edit (not shipped; bench/NOTES.md session 24): gemm_none's finish keeps its result in
registers and writes it out under the next task's first products. Shipped, a warpgroup's finish
converts its accumulator, writes the 32 KiB to shared memory and issues the TMA store before it
goes on to its next task, while the tensor pipe has only the other warpgroup's products (or none)
to run. Here finish only converts the accumulator to bf16 pairs (64 registers, beside the 128 of
the accumulator); the next task's first compute issues its products and then, while they run,
writes the pairs to the finish block and issues the store. The block's last task stores in its
finish as before. release_finish is unchanged: after the first compute, by when the store has
had the products' time to read the block.

    python3 deferred_store.py gemm.cu
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_patch import KernelPatch  # noqa: E402

patch = KernelPatch(sys.argv[1])
edit = patch.edit

edit("""    struct consumer_state {
      accumulator acc;
    };""", """    struct consumer_state {
      accumulator acc;
      kittens::rt_bf<16, 256> staged; // the last finish's result, not yet in shared memory
      bool pending;                   // staged awaits its store
      result_tile *finish;            // where it goes
      int m, n;                       // and its tile
    };""")
edit("""      kittens::warpgroup::mma_AB(args.state.acc, a_rows, args.input.b, args.iter > 0);
      kittens::warpgroup::mma_async_wait<0>();""", """      kittens::warpgroup::mma_AB(args.state.acc, a_rows, args.input.b, args.iter > 0);
      if (args.state.pending) {
        store_staged(args.state, args.globals);
        args.state.pending = false;
      }
      kittens::warpgroup::mma_async_wait<0>();""")
patch.replace_between("    __device__ static void finish(kittens::lcf::consumer_finish_args<gemm_none_kernel> &args) {",
                      "    __device__ static void\n    release_finish", """    __device__ static void store_staged(layout::consumer_state &state,
                                        const layout::globals &globals) {
      const int wg = kittens::warpgroupid();
      kittens::warpgroup::store(*state.finish, state.staged);
      kittens::fence_async_shared(); // make the stores visible to TMA
      kittens::warpgroup::sync(1 + wg);
      if (kittens::warpgroup::laneid() == 0) {
        kittens::tma::store_async(globals.C, *state.finish, {0, 0, state.m * 2 + wg, state.n});
        kittens::tma::store_commit_group(); // its read is waited for in release_finish
      }
    }
    __device__ static void finish(kittens::lcf::consumer_finish_args<gemm_none_kernel> &args) {
      kittens::copy(args.state.staged, args.state.acc);
      args.state.finish = &args.finish.result;
      args.state.m = args.common.m;
      args.state.n = args.common.n;
      args.state.pending = args.next_num_iters > 0;
      if (!args.state.pending) store_staged(args.state, args.globals);
    }
""")
patch.write()
print("gemm_none: stores deferred to the next task's first products")

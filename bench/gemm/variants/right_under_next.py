"""Probe edit of a generated gemm.cu with split-finish (bench/NOTES.md session 29): a task's right
half is stored under the next task's first products instead of between the tasks.

As emitted, a task's last stage stores the left half while the right half's products run, and
finish then waits for the left store's read, writes the right half to the staging tile and
issues its store; only then does the next task's first product issue. At 4096^3 a task boundary
costs ~2,570 cycles past the tensor floor (results/gemm_timeline_h100_2026-11-26_74b9fc3.txt),
and the right half's finish (~860 a task) sits wholly on it. Here a task that is not the
block's last leaves its right half in the accumulator (finish only records its tile); the next
task's first stage issues its left half's product (acc[0], which the left store has already
read) and, while it runs, stores the previous right half (acc[1]) through the staging tile,
then issues its own right half's product. The staging tile is reused only after the
warpgroup's own wait for the previous store's read (wait_staging_read before every write), so
release_finish no longer waits for it; the block's last task waits for its last store's read
in finish.

With `apart`, the first stage that stores the previous right half is a path of its own, so that
the other stages' two products have no branch between them (the first build put the store in a
branch between them and lost 1-3 % at the multi-task shapes).

With `packed` (which implies `apart`), finish converts the right half to bf16 in registers
(`right`, 32 a thread) and the next task's first stage stores those: `apart` alone reads the
fp32 accumulator beside the product in flight, and ptxas waits for that product first (C7517).

    python3 right_under_next.py GEMM_CU [apart|packed]
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_patch import KernelPatch  # noqa: E402

packed = len(sys.argv) > 2 and sys.argv[2] == "packed"
apart = packed or (len(sys.argv) > 2 and sys.argv[2] == "apart")
k = KernelPatch(sys.argv[1])
k.edit("""  template <int P, class Args>
  __device__ static void store_part(Args &args, accumulator &acc, result_tile &staging) {""",
       """  template <int P, class Args, class RT>
  __device__ static void store_part(Args &args, const RT &acc, result_tile &staging, int m, int n) {""")
k.edit("""{0, 0, args.common.m * 2 + wg, args.common.n * 2 + P});""", """{0, 0, m * 2 + wg, n * 2 + P});""")
k.edit("""      accumulator acc[2];
""", """      accumulator acc[2];
      int right_m; // the tile whose right half is stored under the next task's first products
      int right_n;
%s""" % ("      kittens::rt_bf<16, 128> right; // that right half in bf16 (packed)\n" if packed else ""))
STORE_PREV = """          // The previous task's right half, stored while this stage's left half runs.
          wait_staging_read();
          store_part<1>(args, args.state.%s, args.finish.result, args.state.right_m,
                        args.state.right_n);
""" % ("right" if packed else "acc[1]")
if apart:
    k.edit("""      if (args.num_iters <= SPLIT_STAGES || args.iter < split) {
""", """      if (args.iter == 0 && args.task_iter > 0) {
        kittens::warpgroup::mma_AB(args.state.acc[0], a_rows, args.input.b.subtile<64, 128>(0, 0),
                                   false);
%s        kittens::warpgroup::mma_AB(args.state.acc[1], a_rows, args.input.b.subtile<64, 128>(0, 1),
                                   false);
        kittens::warpgroup::mma_async_wait<0>();
        if (kittens::laneid() == 0)
          kittens::arrive(args.inputs_finished); // this warp is done with the stage
        return;
      }
      if (args.num_iters <= SPLIT_STAGES || args.iter < split) {
""" % STORE_PREV.replace("\n  ", "\n").replace("          //", "        //", 1))
else:
    k.edit("""        kittens::warpgroup::mma_AB(args.state.acc[0], a_rows, args.input.b.subtile<64, 128>(0, 0),
                                   args.iter > 0);
        kittens::warpgroup::mma_AB(args.state.acc[1], a_rows, args.input.b.subtile<64, 128>(0, 1),
                                   args.iter > 0);
""", """        kittens::warpgroup::mma_AB(args.state.acc[0], a_rows, args.input.b.subtile<64, 128>(0, 0),
                                   args.iter > 0);
        if (args.iter == 0 && args.task_iter > 0) {
%s        }
        kittens::warpgroup::mma_AB(args.state.acc[1], a_rows, args.input.b.subtile<64, 128>(0, 1),
                                   args.iter > 0);
""" % STORE_PREV)
k.edit("""      kittens::warpgroup::mma_async_wait<SPLIT_STAGES>(); // the left half is done
      store_part<0>(args, args.state.acc[0], args.finish.result);
""", """      kittens::warpgroup::mma_async_wait<SPLIT_STAGES>(); // the left half is done
      wait_staging_read(); // the previous task's right half, stored at this task's first stage
      store_part<0>(args, args.state.acc[0], args.finish.result, args.common.m, args.common.n);
""")
k.edit("""      if (args.num_iters <= SPLIT_STAGES)
        store_part<0>(args, args.state.acc[0], args.finish.result);
      wait_staging_read();
      store_part<1>(args, args.state.acc[1], args.finish.result);
""", """      if (args.num_iters <= SPLIT_STAGES) {
        wait_staging_read();
        store_part<0>(args, args.state.acc[0], args.finish.result, args.common.m, args.common.n);
      }
      if (args.next_num_iters >= 0) { // the next task's first stage stores the right half
        args.state.right_m = args.common.m;
        args.state.right_n = args.common.n;
%s        return;
      }
      wait_staging_read();
      store_part<1>(args, args.state.acc[1], args.finish.result, args.common.m, args.common.n);
      wait_staging_read(); // the block's last store has read the staging tile before it exits
""" % ("        kittens::copy(args.state.right, args.state.acc[1]);\n" if packed else ""))
k.edit("""      if (kittens::warpgroup::laneid() == 0) {
        kittens::tma::store_async_read_wait<0>();
        kittens::arrive(args.finish_finished,""", """      if (kittens::warpgroup::laneid() == 0) {
        kittens::arrive(args.finish_finished,""")
k.write()
print("gemm_none: each task's right half stored under the next task's first products%s" %
      (" (packed in finish)" if packed else " (apart)" if apart else ""))

"""Probe edit (bench/NOTES.md session 29): a task's two split stages computed in one call of
compute, without draining the tensor pipe between them.

As emitted (split-finish over the last 2 stages), the call for the first split stage issues
that stage's left-half products and waits for them (ptxas serialises products left in flight
across the template's stage loop), and the call for the last stage issues the last left half
and both right halves. The boundary stamps (results/gemm_boundary_h100_2026-11-27_76992a4.txt)
put the first split stage at ~954 cycles for 512 cycles of products at 4096^3, 4096 x 14336
and 16384 x 4096^2: both warpgroups drain the pipe there. Here the call for the first split
stage issues its left half, waits for the last stage to arrive (while that runs), issues the
last stage's left half and both right halves, stores the left half once the left halves are
done (under the right halves), and releases both stages; the template's call for the last
stage does nothing. Session 27's tail_one_call.py held four stages of the block's last task
this way and lost: stages arrived one per ~1,030 cycles at 2048^3 and the pipe idled before
each; with two stages the wait for the last overlaps the first's 512 cycles of products.

kittens: consumer_compute_args gains wait_arrived_at(it), a wait for a later stage of the task
to arrive (it < iter + INPUT_STAGES), at the parity the template will wait at; the template's
own wait for that stage then returns at once.

    python3 split_one_call.py KITTENS_INCLUDE DEST GEMM_CU
"""
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", ".."))
from kernel_patch import KernelPatch  # noqa: E402
import wait_ahead  # noqa: E402

include, dest, gemm_cu = sys.argv[1:4]
wait_ahead.patch_kittens(include, dest)

for kernel in ("gemm_none", "gemm_none_sk"):
    k = KernelPatch(gemm_cu, kernel)
    k.edit("""      // A split stage (never the task's first): its left half now; the stage stays held for the
      // right half.
      kittens::warpgroup::mma_AB(args.state.acc[0], a_rows, args.input.b.subtile<64, 128>(0, 0));
      if (args.iter < args.num_iters - 1) {
        kittens::warpgroup::mma_async_wait<0>();
        return;
      }
      // The task's last stage: the right half of every held stage, and the left half stored while
      // those products run (no loop around them: ptxas would serialise a product in flight across
      // its back edge).
      auto &held0 = args.input_at(split + 0);""", """      // The split stages, both in the first one's call: its left half, then (once the last
      // stage is in) the last one's, then the right halves of both.
      if (args.iter > split)
        return; // computed in the call for stage `split`
      kittens::warpgroup::mma_AB(args.state.acc[0], a_rows, args.input.b.subtile<64, 128>(0, 0));
      args.wait_arrived_at(split + 1);
      kittens::warpgroup::mma_AB(args.state.acc[0],
                                 args.input_at(split + 1).a.subtile<64, 64>(kittens::warpgroupid(), 0),
                                 args.input_at(split + 1).b.subtile<64, 128>(0, 0));
      auto &held0 = args.input_at(split + 0);""")
    k.edit("""      kittens::warpgroup::mma_async_wait<SPLIT_STAGES>(); // the left half is done""",
           """      kittens::warpgroup::mma_async_wait<SPLIT_STAGES>(); // the left halves are done""")
    k.write()
print("kittens: wait_arrived_at; gemm_none and gemm_none_sk: both split stages in one call")

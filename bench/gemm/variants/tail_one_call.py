"""Probe edit (bench/NOTES.md session 27): the block's last task computes its last HOLD stages in
one call of compute, without draining the tensor pipe between them.

last_tail.py held the last task's last 4 stages with one call of compute per stage, each
computing the stage's left half and waiting for it (ptxas serialises products left in flight
across the template's stage loop): the pipe drained after every 512 cycles of products, and the
last stages grew by ~700 cycles, what the earlier end saved. Here, in the call for the first
held stage, compute issues that stage's left-half products, then waits for each later held stage
to arrive and issues its left half (no wait for products in between), then the right halves of
all of them; it stores the left half once those are done, while the right halves run. The
template's calls for the later held stages do nothing.

kittens: consumer_compute_args gains wait_arrived_at(it), a wait for a later stage of the task
to arrive (it < iter + INPUT_STAGES), at the parity the template will wait at; the template's own
wait for that stage then returns at once.

    python3 tail_one_call.py KITTENS_INCLUDE DEST GEMM_CU HOLD STAGE
        (STAGE 1: the right half staged in a held stage once both warpgroups are past their
        products, and stored at once; 0: through the finish block after the left half's read)
"""
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", ".."))
from kernel_patch import KernelPatch  # noqa: E402
import wait_ahead  # noqa: E402
import last_task  # noqa: E402

include, dest, gemm_cu, hold, stage = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
assert 2 <= hold <= 4 and stage in (0, 1)
wait_ahead.patch_kittens(include, dest)

k = KernelPatch(gemm_cu)
last_task.declare(k, hold, stage, "the block's last task's stages in one call")
left = "".join("""        args.wait_arrived_at(first + %d);
        kittens::warpgroup::mma_AB(args.state.acc[0],
                                   args.input_at(first + %d).a.subtile<64, 64>(kittens::warpgroupid(), 0),
                                   args.input_at(first + %d).b.subtile<64, 128>(0, 0));
""" % (j, j, j) for j in range(1, hold))
right = "".join("""        kittens::warpgroup::mma_AB(args.state.acc[1],
                                   args.input_at(first + %d).a.subtile<64, 64>(kittens::warpgroupid(), 0),
                                   args.input_at(first + %d).b.subtile<64, 128>(0, 1));
""" % (j, j) for j in range(hold))
k.edit("""      auto a_rows = args.input.a.subtile<64, 64>(kittens::warpgroupid(), 0);
      const int split = args.num_iters - SPLIT_STAGES; // the first split stage
""", """      auto a_rows = args.input.a.subtile<64, 64>(kittens::warpgroupid(), 0);
      if (long_tail(args.task_iter, args.num_iters, args.globals) &&
          args.iter >= args.num_iters - HOLD_LAST) {
        const int first = args.num_iters - HOLD_LAST;
        if (args.iter > first)
          return; // computed in the call for stage `first`
        kittens::warpgroup::mma_AB(args.state.acc[0], a_rows, args.input.b.subtile<64, 128>(0, 0));
%s%s%s      }
      const int split = args.num_iters - SPLIT_STAGES; // the first split stage
""" % (left, right, last_task.ending("first", hold)))
last_task.finish_skips_staged(k)
k.write()
print("kittens: wait_arrived_at; gemm_none: the block's last task's last %d stages in one call%s" % (
    hold, ", its right half staged in a held stage" if stage else ""))

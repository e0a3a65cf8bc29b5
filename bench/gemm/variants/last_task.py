"""Shared by last_tail.py and tail_one_call.py (bench/NOTES.md session 27): the pieces of a
generated split-finish gemm_none that make the block's last task end apart from its others."""


def declare(k, hold, stage, hold_comment):
    """HOLD_LAST, STAGE_IN_STAGE and long_tail() (whether a task is the block's last and long
    enough), after SPLIT_STAGES in the kernel's struct."""
    k.edit("""  static constexpr int SPLIT_STAGES = 2;
""", """  static constexpr int SPLIT_STAGES = 2;
  static constexpr int HOLD_LAST = %d;          // %s
  static constexpr bool STAGE_IN_STAGE = %s; // its right half staged in a held stage
  __device__ static bool long_tail(int task_iter, int num_iters, const layout::globals &g) {
    return num_iters > HOLD_LAST &&
           (task_iter + 1) * int(gridDim.x) + int(blockIdx.x) >= g.m_count * g.n_count;
  }
""" % (hold, hold_comment, "true" if stage else "false"))


def ending(first, hold):
    """Compute's end of the last task once every held stage's products are issued (the left
    half's first): the left half stored while the right half's run, then the right half staged
    in held stage `first + warpgroup` and stored (STAGE_IN_STAGE), or the held stages released
    for finish to store it. `first` names the first held stage."""
    release = "".join("          kittens::arrive(args.inputs_finished_at(%s + %d));\n" % (first, j)
                      for j in range(hold))
    return """        kittens::warpgroup::mma_async_wait<HOLD_LAST>(); // the left half is done
        store_part<0>(args, args.state.acc[0], args.finish.result);
        kittens::warpgroup::mma_async_wait<0>();
        if constexpr (STAGE_IN_STAGE) {
          kittens::named_sync(4, 256); // both warpgroups are past every product on the held stages
          store_part<1>(args, args.state.acc[1],
                        *reinterpret_cast<result_tile *>(&args.input_at(%s + kittens::warpgroupid())));
        } else if (kittens::laneid() == 0) {
%s        }
        return;
""" % (first, release)


def finish_skips_staged(k):
    """finish stores nothing where compute staged and stored both halves."""
    k.edit("""      if (args.num_iters > SPLIT_STAGES) {
        wait_staging_read();
""", """      if (STAGE_IN_STAGE && long_tail(args.task_iter, args.num_iters, args.globals))
        return; // compute stored both halves
      if (args.num_iters > SPLIT_STAGES) {
        wait_staging_read();
""")

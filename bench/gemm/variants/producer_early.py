"""Probe edit (bench/NOTES.md session 28), on kittens with EARLY_STAGES: the semaphores and task 0's
early stages from the producer warpgroup's first thread instead of thread 0, and the consumers'
first two common_setups before the block-wide barrier. With EARLY_STAGES at 76992a4 every warp
waits at the barrier (~1,000 cycles) for thread 0's first-time code, and the consumers then
need ~1,060 cycles more (setmaxnreg, two common_setups, setup) while the copy has landed by
~1,700. Here the consumers compute task 0's and task 1's tiles while they wait at the barrier,
and thread 0's warpgroup is no longer held at setmaxnreg by the copy's issue. The barrier moves
into each branch (the producer's before its setmaxnreg, the consumers' after their tiles).

    python3 producer_early.py KITTENS_INCLUDE DEST [COPY]   (COPY 0: patch DEST in place)
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402

copy = len(sys.argv) < 4 or sys.argv[3] != "0"
patch = LcfPatch(sys.argv[2], copy_from=sys.argv[1] if copy else None)
patch.edit("""  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {""", """  if (threadIdx.x == TR::NUM_CONSUMER_WARPGROUPS * WARPGROUP_THREADS) {
    for (int s = 0; s < S; ++s) {""")
patch.edit("""  named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);

  typename TR::common_state common{};
  if (warpgroupid() == TR::NUM_CONSUMER_WARPGROUPS) { // the producer warpgroup (last)
    warpgroup::decrease_registers<TR::PRODUCER_REGISTERS>();
""", """  typename TR::common_state common{};
  if (warpgroupid() == TR::NUM_CONSUMER_WARPGROUPS) { // the producer warpgroup (last)
    named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
    warpgroup::decrease_registers<TR::PRODUCER_REGISTERS>();
""")
patch.edit("""    warpgroup::increase_registers<TR::CONSUMER_REGISTERS>();
""", "")
patch.edit("""      common_args<K> ca{common, 0, num_iters, g, scratch};
      K::common_setup(ca);
    }
""", """      common_args<K> ca{common, 0, num_iters, g, scratch};
      K::common_setup(ca);
    }
    int lcf_first_next_iters = -1;
    { common_args<K> na1{next, 1, lcf_first_next_iters, g, scratch}; K::common_setup(na1); }
    named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
    warpgroup::increase_registers<TR::CONSUMER_REGISTERS>();
""")
patch.edit("""      common_args<K> na{next, task_iter + 1, next_iters, g, scratch};
      K::common_setup(na);
""", """      common_args<K> na{next, task_iter + 1, next_iters, g, scratch};
      if (task_iter == 0) next_iters = lcf_first_next_iters; else
      K::common_setup(na);
""")
patch.write()
print("kittens: early stages from the producer's first thread, the consumers' first tiles before the barrier")

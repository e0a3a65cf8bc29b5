"""Probe edit (bench/NOTES.md session 28): the producer's way to its first copies shortened. Shipped,
the producer computes task 0's tile (common_setup, ~270 cycles of code run the first time) after
the block-wide barrier and setmaxnreg, then waits on each of the first stages' empty semaphores,
which are fresh. Here an idle producer thread (warp 1's lane 0) initialises the semaphores, the
producer warpgroup computes task 0's tile while it does (before the barrier), and the first
task's first ring-full of stages is loaded without the empty waits (the slots are free).

    python3 pre_barrier.py KITTENS_INCLUDE DEST [COPY]   (COPY 0: patch DEST in place)
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from first_task import first_task_edits  # noqa: E402

copy = len(sys.argv) < 4 or sys.argv[3] != "0"
patch = LcfPatch(sys.argv[2], copy_from=sys.argv[1] if copy else None)
patch.edit("""  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) {""", """  if (threadIdx.x == TR::NUM_CONSUMER_WARPGROUPS * WARPGROUP_THREADS + 32) {
    for (int s = 0; s < S; ++s) {""")
patch.edit("""  named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);

  typename TR::common_state common{};
""", """  typename TR::common_state common{};
  int lcf_first_iters = -1;
  if (warpgroupid() == TR::NUM_CONSUMER_WARPGROUPS) {
    common_args<K> ca{common, 0, lcf_first_iters, g, scratch};
    K::common_setup(ca);
  }
  named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);

""")
first_task_edits(patch)
patch.write()
print("kittens: the producer's task 0 tile before the barrier, no empty waits on fresh slots")

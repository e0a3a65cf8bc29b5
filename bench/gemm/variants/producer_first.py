"""Probe edit (bench/NOTES.md session 28): the producer's way to its first copies shortened. Shipped,
the producer warpgroup passes the block-wide barrier (~350 cycles, thread 0 initialising the
semaphores), then gives its registers back (~140), computes task 0's tile (common_setup, ~270 of
code run the first time) and waits on each of the first stages' empty semaphores, which are
fresh (~150). Here it computes task 0's tile and gives its registers back before the barrier
(while thread 0 initialises), meets the others at the barrier in its own branch (so that only
its own values are live at setmaxnreg), and loads the first task's first ring-full of stages
without the empty waits (the slots are free).

    python3 producer_first.py KITTENS_INCLUDE DEST [COPY]   (COPY 0: patch DEST in place)
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from first_task import first_task_edits  # noqa: E402

copy = len(sys.argv) < 4 or sys.argv[3] != "0"
patch = LcfPatch(sys.argv[2], copy_from=sys.argv[1] if copy else None)
patch.edit("""  named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);

  typename TR::common_state common{};
  if (warpgroupid() == TR::NUM_CONSUMER_WARPGROUPS) { // the producer warpgroup (last)
    warpgroup::decrease_registers<TR::PRODUCER_REGISTERS>();
""", """  typename TR::common_state common{};
  if (warpgroupid() == TR::NUM_CONSUMER_WARPGROUPS) { // the producer warpgroup (last)
    int lcf_first_iters = -1;
    {
      common_args<K> ca{common, 0, lcf_first_iters, g, scratch};
      K::common_setup(ca);
    }
    warpgroup::decrease_registers<TR::PRODUCER_REGISTERS>();
    named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
""")
patch.edit("""    warpgroup::increase_registers<TR::CONSUMER_REGISTERS>();
""", """    named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
    warpgroup::increase_registers<TR::CONSUMER_REGISTERS>();
""")
first_task_edits(patch)
patch.write()
print("kittens: the producer's task 0 tile and setmaxnreg before the barrier, no empty waits on fresh slots")

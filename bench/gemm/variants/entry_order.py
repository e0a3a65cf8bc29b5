"""Probe edit (bench/NOTES.md session 28): setmaxnreg before the block-wide barrier. Shipped, every
warp waits at the barrier for thread 0's semaphore initialisation (~210 cycles) and only then
changes its register count (~160 cycles more on the way to the first copy and to the consumers'
setup). Here each warpgroup changes its register count first and meets the others at the barrier in
its own branch (thread 0 after the initialisation), so that both overlap the wait.

    python3 entry_order.py KITTENS_INCLUDE DEST [COPY]   (COPY 0: patch DEST in place)
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402

copy = len(sys.argv) < 4 or sys.argv[3] != "0"
patch = LcfPatch(sys.argv[2], copy_from=sys.argv[1] if copy else None)
patch.edit("""    warpgroup::increase_registers<TR::CONSUMER_REGISTERS>();
    typename TR::consumer_state state{};
""", """    warpgroup::increase_registers<TR::CONSUMER_REGISTERS>();
    named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
    typename TR::consumer_state state{};
""")
patch.edit("""  named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);

  typename TR::common_state common{};
  if (warpgroupid() == TR::NUM_CONSUMER_WARPGROUPS) { // the producer warpgroup (last)
    warpgroup::decrease_registers<TR::PRODUCER_REGISTERS>();
""", """  typename TR::common_state common{};
  if (warpgroupid() == TR::NUM_CONSUMER_WARPGROUPS) { // the producer warpgroup (last)
    warpgroup::decrease_registers<TR::PRODUCER_REGISTERS>();
    named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
""")
patch.write()
print("kittens: setmaxnreg before the block-wide barrier")

"""Probe edit (bench/NOTES.md session 28), applied after early_loads.py: thread 0's warp arrives at
the block-wide barrier as soon as the semaphores are initialised and only then issues task 0's
first stages, so that the other warps do not wait at the barrier for that code (~800 cycles run
for the first time, which held every warp in session 25's early loads). Warp 0's warpgroup still
meets it at setmaxnreg.

    python3 early_arrive.py DEST   (DEST: a kittens copy patched by early_loads.py)
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402

patch = LcfPatch(sys.argv[1])
patch.edit("""    asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory");
    // Task 0's first stages, before anyone else is past the barrier.
""", """    asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory");
  }
  if (threadIdx.x < WARP_THREADS) named_arrive(LCF_BARRIER_ALL, TR::NUM_THREADS);
  if (threadIdx.x == 0) {
    // Task 0's first stages, the others past the barrier already.
""")
patch.edit("""  named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
""", """  if (threadIdx.x >= WARP_THREADS) named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
""")
patch.write()
print("kittens: thread 0's warp arrives at the barrier before it issues the first stages")

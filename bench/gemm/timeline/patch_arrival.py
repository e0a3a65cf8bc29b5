#!/usr/bin/env python3
"""When the block's first stages land, seen by a thread that does nothing else (applied after
patch_start.py; bench/NOTES.md session 28). Warp 1 of the producer warpgroup issues no copies;
the whole warp waits, on entering the producer's branch, for the first phase of each of the first four
stages' arrival semaphores, and its lane 0 stamps clock64 as each completes. (The whole warp:
a lone lane waiting while the rest of its warp runs on may be scheduled only after the rest has
run the producer's loop to its end, and then wait for a phase that never comes.) Task slot 47, producer row 3:
  7..10 stage 0..3 arrived (as this thread saw it)   11 the thread began waiting
A stage that landed before the thread began waiting reads as that moment.

    patch_arrival.py DEST   (DEST as given to patch_lcf.py and patch_start.py)
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402

patch = LcfPatch(sys.argv[1])
patch.edit("""    int ring_base = 0; // the slot of the task's first stage (see RING_START)
""", """    if (threadIdx.x / 32 == TR::NUM_CONSUMER_WARPGROUPS * WARPGROUP_WARPS + 1 && blockIdx.x < 132) {
      unsigned long long *row = &lcf_trace[((blockIdx.x * 48 + 47) * 4 + 3) * 16];
      if (laneid() == 0) row[11] = (unsigned long long)clock64();
      for (int s = 0; s < S && s < 4; ++s) {
        wait(inputs_arrived[s], 0);
        if (laneid() == 0) row[7 + s] = (unsigned long long)clock64();
      }
      return; // not into the producer's loop, whose waits it would now run phases behind
    }
    int ring_base = 0; // the slot of the task's first stage (see RING_START)
""")
patch.write()

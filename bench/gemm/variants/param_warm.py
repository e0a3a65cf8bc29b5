"""Probe edit (bench/NOTES.md session 28): the kernel's parameters read once at the start by the
producer's idle warps. In the shipped SASS the producer's first copy waits on an LDC of the B
map's chunk_copies (a parameter word read there for the first time), and the common_setup of
both sides reads the grid's parameters for the first time too. Here, past the barrier and
setmaxnreg, warps 1-3 of the producer warpgroup load every 4-byte word of the globals and keep
their xor in shared memory, so that the later reads find the parameters in the constant cache.

    python3 param_warm.py KITTENS_INCLUDE DEST [COPY]   (COPY 0: patch DEST in place)
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402

copy = len(sys.argv) < 4 or sys.argv[3] != "0"
patch = LcfPatch(sys.argv[2], copy_from=sys.argv[1] if copy else None)
patch.edit("""    warpgroup::decrease_registers<TR::PRODUCER_REGISTERS>();
""", """    warpgroup::decrease_registers<TR::PRODUCER_REGISTERS>();
    if (warpgroup::warpid() != 0) {
      __shared__ int lcf_param_sink;
      const int *words = reinterpret_cast<const int *>(&g);
      int x = 0;
      for (int i = warpgroup::laneid() - WARP_THREADS; i < int(sizeof(g) / 4); i += WARPGROUP_THREADS - WARP_THREADS)
        x ^= words[i];
      if (x == 0x1234567) lcf_param_sink = x;
    }
""")
patch.write()
print("kittens: the producer's idle warps read the parameters once at the start")

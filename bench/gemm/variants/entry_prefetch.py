"""Probe edit (bench/NOTES.md session 27): the producer warpgroup's first thread prefetches the
kernel's TMA descriptors (prefetch.tensormap) at the block's entry, beside thread 0's semaphore
initialisation, where prefetch_maps.py did it in producer::setup (~1,000 cycles after the
entry, ~300 before the first copies). Start stamps at 2048^3 (74b9fc3): the producer's
expect and two copies take ~500 cycles to issue, ~1,270 -> 1,766 after the entry.

    python3 entry_prefetch.py KITTENS_INCLUDE DEST GEMM_CU
"""
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", ".."))
from kernel_patch import KernelPatch  # noqa: E402
from lcf_patch import LcfPatch  # noqa: E402

lcf = LcfPatch(sys.argv[2], copy_from=sys.argv[1])
lcf.edit("""    fence_semaphore_init();
  }
  named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
""", """    fence_semaphore_init();
  }
  if constexpr (requires { K::entry_prefetch(g); })
    if (threadIdx.x == TR::NUM_CONSUMER_WARPGROUPS * WARPGROUP_THREADS) K::entry_prefetch(g);
  named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
""")
lcf.write()
k = KernelPatch(sys.argv[3])
k.edit("""  static constexpr int SPLIT_STAGES = 2;
""", """  static constexpr int SPLIT_STAGES = 2;
  __device__ static void entry_prefetch(const layout::globals &g) {
    kittens::tma::prefetch(g.A);
    kittens::tma::prefetch(g.B);
    kittens::tma::prefetch(g.C);
  }
""")
k.write()
print("kittens + gemm_none: the TMA descriptors prefetched at the entry by the producer's first thread")

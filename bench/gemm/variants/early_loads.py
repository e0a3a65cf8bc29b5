"""Probe edit (bench/NOTES.md sessions 25 and 28; since 76992a4 kittens' EARLY_STAGES does this for
kernels that ask, so apply it only to a kittens copy from before): the block's first copies issued by
thread 0 right after it initialises the semaphores. Shipped, the producer warpgroup issues them
after the block-wide barrier, setmaxnreg, task 0's common_setup and the first empty waits:
~1,500 cycles after the entry at 2048^3 (gemm_timeline_h100_2026-11-23_d8da638_variants.txt),
against ~230 for the semaphores. Here thread 0 runs task 0's common_setup and producer::load for
its first EARLY stages before the barrier; the producer then waits on and flips those stages'
empty phases as before but does not load them again. For kernels whose producer::setup does
nothing and whose load issues from warpgroup lane 0 only (the GEMM). Copies kittens to DEST and
patches the LCF template there.

    python3 early_loads.py KITTENS_INCLUDE DEST [EARLY]     (default 1)
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402

early = int(sys.argv[3]) if len(sys.argv) > 3 else 1
patch = LcfPatch(sys.argv[2], copy_from=sys.argv[1])
patch.edit("""    fence_semaphore_init();
  }
  if constexpr (detail::has_block_entry<K>) {""", """    fence_semaphore_init();
    asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory");
    // Task 0's first stages, before anyone else is past the barrier.
    typename TR::common_state c0{};
    int n0 = -1;
    common_args<K> ca{c0, 0, n0, g, scratch};
    K::common_setup(ca);
    typename TR::producer_state ps{};
    for (int it = 0; it < n0 && it < EARLY_LOADS; ++it) {
      producer_load_args<K> la{{c0, 0, n0, g, scratch}, ps, stage(it), inputs_arrived[it], it};
      K::producer::load(la);
    }
  }
  if constexpr (detail::has_block_entry<K>) {""")
patch.edit("""        wait(inputs_finished[s], ph.empty(s));
        ph.flip_empty(s);
        producer_load_args<K>""", """        wait(inputs_finished[s], ph.empty(s));
        ph.flip_empty(s);
        if (task_iter == 0 && it < EARLY_LOADS) return; // thread 0 issued it at the entry
        producer_load_args<K>""")
patch.edit("""inline constexpr int LCF_BARRIER_ALL = 15;""", """inline constexpr int LCF_BARRIER_ALL = 15;
inline constexpr int EARLY_LOADS = %d;""" % early)
patch.write()
print("kittens: the first %d stage(s) of task 0 issued by thread 0 at the entry" % early)

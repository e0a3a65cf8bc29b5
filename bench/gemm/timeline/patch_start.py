#!/usr/bin/env python3
"""Finer clock64 stamps of a block's start, on top of the traced LCF template (applied after
bench/attention/timeline/patch_lcf.py to its copy; bench/NOTES.md session 23). They go to task
slot 47, which a block reaches only with 48 tasks or more, so analyze.py prints them for any
GEMM shape here. Columns (clock64 cycles), on the producer's row (3) and the consumers' (0, 1):
  0 entry   1 semaphores initialised (thread 0; row 0)   2 past the block-wide barrier
  3 past setmaxnreg   4 task 0's common_setup done
  producer: 5 past the first stage's empty wait   6 first stage's copies issued
  consumers: 5 the next task's common_setup done   6 consumer::setup done

    patch_start.py DEST   (DEST as given to patch_lcf.py)
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402

patch = LcfPatch(sys.argv[1])
edit = patch.edit
C = "(unsigned long long)clock64()"
# Its own stamp macro, which -DLCF_EVENTS does not thin out (these columns of slot 47 are not
# the task events the mask names).
edit("""/// The LCF kernel. Launch with""", """#define LCF_TS(task, w, ev, val)                                                                  \\
  do {                                                                                            \\
    if ((threadIdx.x & 127) == 0 && blockIdx.x < 132)                                             \\
      ::kittens::lcf::lcf_trace[((blockIdx.x * 48 + (task)) * 4 + (w)) * 16 + (ev)] = (val);      \\
  } while (0)
/// The LCF kernel. Launch with""")
edit("""    LCF_T(0, w, 10, (unsigned long long)clock64());
  }""", """    LCF_T(0, w, 10, (unsigned long long)clock64());
    LCF_TS(47, w, 0, %s);
  }""" % C)
edit("""    fence_semaphore_init();
""", """    fence_semaphore_init();
    LCF_TS(47, 0, 1, %s);
""" % C)
# Past the block-wide barrier (a probe may meet at it in each branch: every place is stamped).
patch.edit_each("""named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
""", """named_sync(LCF_BARRIER_ALL, TR::NUM_THREADS);
  { const int w = warpgroupid() < TR::NUM_CONSUMER_WARPGROUPS ? warpgroupid() : 3; LCF_TS(47, w, 2, %s); }
""" % C)
edit("""    warpgroup::decrease_registers<TR::PRODUCER_REGISTERS>();
""", """    warpgroup::decrease_registers<TR::PRODUCER_REGISTERS>();
    LCF_TS(47, 3, 3, %s);
""" % C)
edit("""      K::common_setup(ca);
      if (num_iters < 0) break;
""", """      K::common_setup(ca);
      if (task_iter == 0) LCF_TS(47, 3, 4, %s);
      if (num_iters < 0) break;
""" % C)
edit("""        wait(inputs_finished[s], ph.empty(s));
        ph.flip_empty(s);
""", """        wait(inputs_finished[s], ph.empty(s));
        if (task_iter == 0 && it == 0) LCF_TS(47, 3, 5, %s);
        ph.flip_empty(s);
""" % C)
edit("""        if (it == 0) LCF_T(task_iter, 3, 1, lcf_now());""", """        if (it == 0) LCF_T(task_iter, 3, 1, lcf_now());
        if (it == 0 && task_iter == 0) LCF_TS(47, 3, 6, %s);""" % C)
edit("""    warpgroup::increase_registers<TR::CONSUMER_REGISTERS>();
""", """    warpgroup::increase_registers<TR::CONSUMER_REGISTERS>();
    { const int w = warpgroupid(); LCF_TS(47, w, 3, %s); }
""" % C)
edit("""      common_args<K> ca{common, 0, num_iters, g, scratch};
      K::common_setup(ca);
""", """      common_args<K> ca{common, 0, num_iters, g, scratch};
      K::common_setup(ca);
      { const int w = warpgroupid(); LCF_TS(47, w, 4, %s); }
""" % C)
edit("""      K::common_setup(na);
""", """      K::common_setup(na);
      if (task_iter == 0) { const int w = warpgroupid(); LCF_TS(47, w, 5, %s); }
""" % C)
edit("""      K::consumer::setup(sa);
""", """      K::consumer::setup(sa);
      if (task_iter == 0) LCF_TS(47, wg, 6, %s);
""" % C)
patch.write()

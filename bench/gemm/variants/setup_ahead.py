"""Probe edit (not shipped; bench/NOTES.md session 23): the consumers compute the state of the
task after next (common_setup for task_iter + 2) during the current task, after its first
computed stage, instead of the next task's at the top of each task. The GEMM timeline puts
~2,000 cycles between a warpgroup's last stage of a task and its next task's first stage, with
both warpgroups off the tensor pipe for ~1,700 of them; common_setup (two integer divisions)
sits on that boundary. Copies kittens to DEST and patches the LCF template there.

    python3 setup_ahead.py KITTENS_INCLUDE DEST
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402

patch = LcfPatch(sys.argv[2], copy_from=sys.argv[1])
edit = patch.edit
edit("""    for (int task_iter = 0; num_iters >= 0; ++task_iter) {
      int next_iters = -1;
      common_args<K> na{next, task_iter + 1, next_iters, g, scratch};
      K::common_setup(na);
""", """    int next_iters = -1;
    {
      common_args<K> na{next, 1, next_iters, g, scratch};
      K::common_setup(na);
    }
    typename TR::common_state after{}; // the task after next
    for (int task_iter = 0; num_iters >= 0; ++task_iter) {
      int after_iters = -1;
      bool after_known = false;
      auto know_after = [&] {
        if (!after_known) {
          common_args<K> aa{after, task_iter + 2, after_iters, g, scratch};
          K::common_setup(aa);
          after_known = true;
        }
      };
""")
edit("""        K::consumer::compute(xa);
""", """        K::consumer::compute(xa);
        if (it == first) know_after();
""")
edit("""      // Every consumer must be done reading""", """      know_after();
      // Every consumer must be done reading""")
edit("""      common = next;
      num_iters = next_iters;
""", """      common = next;
      num_iters = next_iters;
      next = after;
      next_iters = after_iters;
""")
patch.write()

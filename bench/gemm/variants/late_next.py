"""Probe edit (bench/NOTES.md session 27): the consumers compute the block's next task
(common_setup for task_iter + 1) after the task's stages instead of before its setup. Only for
kernels whose consumer::setup reads neither `next_common` nor `next_num_iters` (the GEMM); the
finish still gets next_num_iters. Start stamps at 2048^3 (74b9fc3): the consumers' second
common_setup takes ~480 cycles before their first stage, code run the first time.

    python3 late_next.py KITTENS_INCLUDE DEST [COPY]   (COPY 0: patch DEST in place)
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402

copy = len(sys.argv) < 4 or sys.argv[3] != "0"
patch = LcfPatch(sys.argv[2], copy_from=sys.argv[1] if copy else None)
patch.edit("""      int next_iters = -1;
      common_args<K> na{next, task_iter + 1, next_iters, g, scratch};
      K::common_setup(na);
      int compute_iters""", """      int next_iters = -1;
      int compute_iters""")
patch.edit("""      release_unread(it, num_iters);
""", """      {
        common_args<K> na{next, task_iter + 1, next_iters, g, scratch};
        K::common_setup(na);
      }
      release_unread(it, num_iters);
""")
patch.write()
print("kittens: the consumers' next task computed after the task's stages")

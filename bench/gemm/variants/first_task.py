"""Shared by pre_barrier.py and producer_first.py (bench/NOTES.md session 28): the producer's
loop edits both make once task 0's tile is computed before the barrier into `lcf_first_iters` —
task 0 takes its stage count from there instead of calling common_setup again, and its first
ring-full of stages is loaded without the empty waits (the slots are fresh)."""


def first_task_edits(patch):
    patch.edit("""      common_args<K> ca{common, task_iter, num_iters, g, scratch};
      K::common_setup(ca);
      if (num_iters < 0) break;""", """      common_args<K> ca{common, task_iter, num_iters, g, scratch};
      if (task_iter == 0) num_iters = lcf_first_iters; else
      K::common_setup(ca);
      if (num_iters < 0) break;""")
    patch.edit("""        wait(inputs_finished[s], ph.empty(s));
        ph.flip_empty(s);""", """        if (task_iter > 0 || it >= S) // the first task's first ring-full: fresh slots
        wait(inputs_finished[s], ph.empty(s));
        ph.flip_empty(s);""")

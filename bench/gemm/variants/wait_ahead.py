"""Shared by tail_one_call.py and split_one_call.py (bench/NOTES.md, sessions 27 and 29): the
kittens edit that gives consumer_compute_args `wait_arrived_at(it)`, a wait for a later stage of
the task to arrive (it < iter + INPUT_STAGES) at the parity the template will wait at, so that
the template's own wait for that stage returns at once. In kittens from 0876eb3 until its revert
(dc5ff9f); the edit's anchors are the template without it."""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402


def patch_kittens(include, dest):
    lcf = LcfPatch(dest, copy_from=include)
    lcf.edit("""  typename traits<K>::finish_block &finish;
};
template <class K> struct consumer_finish_args""", """  typename traits<K>::finish_block &finish;
  semaphore *ring_arrived;
  uint32_t ring_full_bits;
  /// Waits until the task's stage `it` (iter < it < iter + INPUT_STAGES) has arrived.
  KITTENS_DEVICE void wait_arrived_at(int it) const {
    const int s = traits<K>::slot(ring_base, it);
    wait(ring_arrived[s], (ring_full_bits >> s) & 1);
  }
};
template <class K> struct consumer_finish_args""")
    lcf.edit("""inputs, inputs_finished, ring_base, finish_of(TR::FINISH_PER_WARPGROUP ? wg : 0)};""",
             """inputs, inputs_finished, ring_base, finish_of(TR::FINISH_PER_WARPGROUP ? wg : 0),
                                    inputs_arrived, ph.bits};""")
    lcf.write()

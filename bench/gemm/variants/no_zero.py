"""Probe edit (bench/NOTES.md session 28): no accumulator zeroing on the consumers' way to their
first stage. In the shipped SASS of gemm_none the consumers run 64 CS2R (kittens value-initialises
consumer_state) and 128 FSEL (setup's `if (num_iters == 0) zero(acc)`, if-converted) between the
block-wide barrier and their first stage's wait: ~200 of its ~330 instructions, all run for the
first time there. The launcher refuses K < 1, so every task has a stage, and the first stage's
product overwrites the accumulator (scale-d off at iter 0): neither zeroing is needed. Copies
kittens to DEST_INC with consumer_state (and producer_state) default-initialised, and patches
gemm_none's setup in GEMM_CU to trap on a task without stages instead of zeroing.

    python3 no_zero.py KITTENS_INCLUDE DEST_INC GEMM_CU
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lcf_patch import LcfPatch  # noqa: E402
from kernel_patch import KernelPatch  # noqa: E402

patch = LcfPatch(sys.argv[2], copy_from=sys.argv[1])
patch.edit("    typename TR::consumer_state state{};\n", "    typename TR::consumer_state state;\n")
patch.edit("    typename TR::producer_state state{};\n", "    typename TR::producer_state state;\n")
patch.write()
k = KernelPatch(sys.argv[3])
k.edit("""      if (args.num_iters == 0) {
        kittens::zero(args.state.acc[0]);
        kittens::zero(args.state.acc[1]);
      }""", """      if (args.num_iters == 0)
        __trap();""")
k.write()
print("no accumulator zeroing before the first stage")

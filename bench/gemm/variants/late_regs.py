"""Probe edit (bench/NOTES.md session 28): setmaxnreg off the way to the first stage. Shipped, both
sides change their register count right after the block-wide barrier (~140-160 cycles there),
before the producer's first copies and the consumers' setup. Here the producer warpgroup gives
its registers back only after its first task's first stages are issued, and the consumer
warpgroups take theirs just before they wait for their first stage: their setup runs within
the launch's allocation. Copies kittens to DEST and patches the LCF template there.

    python3 late_regs.py KITTENS_INCLUDE DEST [COPY]   (COPY 0: patch DEST in place)
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from lcf_patch import LcfPatch  # noqa: E402

copy = len(sys.argv) < 4 or sys.argv[3] != "0"
patch = LcfPatch(sys.argv[2], copy_from=sys.argv[1] if copy else None)
patch.edit("""    warpgroup::decrease_registers<TR::PRODUCER_REGISTERS>();
""", """    bool lcf_regs_given = false;
""")
patch.edit("""      ring_base = next_ring_base(ring_base, num_iters);
    }
  } else {""", """      ring_base = next_ring_base(ring_base, num_iters);
    }
    if (!lcf_regs_given) warpgroup::decrease_registers<TR::PRODUCER_REGISTERS>(); // no task
  } else {""")
patch.edit("""      for (; it < num_iters && it < TR::SAFE_STAGES; ++it) load_stage(it);
""", """      for (; it < num_iters && it < TR::SAFE_STAGES; ++it) load_stage(it);
      if (!lcf_regs_given) {
        warpgroup::decrease_registers<TR::PRODUCER_REGISTERS>();
        lcf_regs_given = true;
      }
""")
patch.edit("""    warpgroup::increase_registers<TR::CONSUMER_REGISTERS>();
""", """    bool lcf_regs_taken = false;
""")
patch.edit("""      const int first = it;
""", """      if (!lcf_regs_taken) {
        warpgroup::increase_registers<TR::CONSUMER_REGISTERS>();
        lcf_regs_taken = true;
      }
      const int first = it;
""")
patch.write()
print("kittens: setmaxnreg after the producer's first stages and before the consumers' first wait")

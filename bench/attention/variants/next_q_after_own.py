"""Probe edit (not shipped; bench/NOTES.md session 23): each warpgroup issues the load of its
next task's q tile after its own q has arrived (after setup's wait) instead of beside it.
At a block's first task both copies were requested at once: with 132 blocks that is 2 x 6 MiB
of q (D = 128) in the launch's first burst, ahead of and among the first key/value stages,
so the first products waited ~3.5 us for data (timeline, session 23). Later tasks' own q has
long arrived, so there the load goes out as before. Usage: python3 next_q_after_own.py X.cu"""
import re, sys
path = sys.argv[1]
src = open(path).read()
pat = re.compile(r"(\n        if \(args\.next_num_iters >= 0\) \{\n.*?\n        \}\n)(      \}\n)(.*?)"
                 r"(      kittens::wait\(args\.setup_arrived, args\.setup_phase\);\n)", re.S)
def edit(m):
    load = m.group(1).replace("\n        ", "\n          ")
    return (m.group(2) + m.group(3) + m.group(4) + "      if (kittens::warpgroup::laneid() == 0) {"
            + load.rstrip("\n") + "\n      }\n")
src, n = pat.subn(lambda m: "\n" + edit(m), src)
assert n > 0, "no kernel loads q ahead"
open(path, "w").write(src)
print("next_q_after_own: %d kernels edited" % n, file=sys.stderr)

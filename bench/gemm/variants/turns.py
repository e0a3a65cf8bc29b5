"""Probe edit (not shipped): the two consumer warpgroups issue their products in turns
(warpgroup 0's stage k, then warpgroup 1's stage k, then warpgroup 0's stage k + 1, ...),
ordered by two named barriers (3: warpgroup 0 may issue, 4: warpgroup 1 may issue), so that
their groups alternate on the tensor pipe and warpgroup 0 ends each task one group ahead.
Warpgroup 1 gives warpgroup 0 the first turn at the block's first task.
Usage: python3 turns.py gemm.cu"""
import re, sys
path = sys.argv[1]
src = open(path).read()
setup_re = re.compile(r"(static void\s+setup\(kittens::lcf::consumer_setup_args<\w+> &args\) \{\n)")
src, n1 = setup_re.subn(r"\1      if (args.task_iter == 0 && kittens::warpgroupid() == 1)\n"
                        r"        kittens::named_arrive(3, 256); // warpgroup 0 takes the first turn\n", src)
mma_re = re.compile(r"(\n(\s*)(kittens::warpgroup::mma_ABt?\(args\.state\.acc, a_rows, [^;]*;))")
src, n2 = mma_re.subn(r"\n\2kittens::named_sync(3 + kittens::warpgroupid(), 256); // my turn"
                      r"\n\2\3"
                      r"\n\2kittens::named_arrive(4 - kittens::warpgroupid(), 256); // the other's turn", src)
assert n1 == n2 and n1 > 0, (n1, n2)
open(path, "w").write(src)
print("turns in", n1, "kernels")

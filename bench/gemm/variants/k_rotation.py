"""Probe edit (not shipped): each block's producer starts the K loop of its task at slice
(blockIdx.x mod k_count) and wraps around, so that blocks of one wave do not all read the
same K slice of A and B at the same moment (the consumers only accumulate; the order of the
sum changes, the result within rounding). Usage: python3 k_rotation.py gemm.cu"""
import re, sys
path = sys.argv[1]
src = open(path).read()
load_re = re.compile(r"(static void\s+load\(kittens::lcf::producer_load_args<\w+> &args\) \{\n)"
                     r"(.*?)(\n    \}\n)", re.S)
def edit(m):
    body = m.group(2).replace("args.iter", "tkc_k")
    return (m.group(1) + "      const int tkc_k = (args.iter + (int)blockIdx.x) % args.globals.k_count;\n"
            + body + m.group(3))
src, n = load_re.subn(edit, src)
assert n > 0
open(path, "w").write(src)
print("k rotation in", n, "kernels")

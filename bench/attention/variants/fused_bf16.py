"""Probe edit on top of fused_exp_sum.py: the exponential written straight into the bf16
operand of P.V in the fused pass (no f32 p, no separate conversion pass) for full tiles."""
import re, sys
path = sys.argv[1]
src = open(path).read()
decl = re.compile(r"\n([ \t]*)kittens::rt_bf<16, (\d+)> tkc_p_bf16;\n[ \t]*kittens::copy\(tkc_p_bf16, p\);\n")
n = 0
def fix(block):
    global n
    m = decl.search(block)
    if not m or 'auto &tkc_pair = p.tiles' not in block: return block
    ind, c = m.group(1), m.group(2)
    block = block[:m.start()] + "\n" + block[m.end():]
    block = block.replace(f"kittens::rt_fl<16, {c}> p;\n", f"kittens::rt_fl<16, {c}> p;\n{ind}kittens::rt_bf<16, {c}> tkc_p_bf16;\n", 1)
    block, k1 = re.subn(r"auto &tkc_pair = p\.tiles\[tkc_e\.i\]\[tkc_e\.j\]\.data\[tkc_e\.k\];\n([ \t]*)\(tkc_e\.h \? tkc_pair\.y : tkc_pair\.x\) = tkc_x;",
        r"auto &tkc_pb = tkc_p_bf16.tiles[tkc_e.i][tkc_e.j].data[tkc_e.k];\n\1(tkc_e.h ? tkc_pb.y : tkc_pb.x) = __float2bfloat16(tkc_x);", block, count=1)
    block, k2 = re.subn(r"(\[&\]\(const kittens::element &tkc_e\) \{ return kittens::at\(p, tkc_e\); \}, tkc_limit\);\n)",
        r"\1" + ind + "  kittens::copy(tkc_p_bf16, p);\n", block, count=1)
    assert k1 == 1 and k2 == 1, (k1, k2)
    n += 1
    return block
parts = re.split(r"(?=\n    compute\(kittens::lcf::consumer_compute_args)", src)
src = "".join(fix(p) for p in parts)
assert n > 0
open(path, "w").write(src)
print("bf16 operand written in the fused pass in", n, "kernels", file=sys.stderr)

"""Probe edit (not shipped): o's rescale skipped where it multiplies by exactly one.

`o = o * exp2(m - m_new) + p @ v` multiplies every element of o (32 or 64 registers a
thread at D = 64 / 128) by its row's factor each stage, though the factor is exactly 1
wherever no row maximum of the warp moved. Here each thread tests its rows' factors, and the
warp skips the multiplies when none differs from 1 (a warp vote; exact: the skipped products
were by 1.0). With the exact running maximum, warps skip more often as rows grow longer;
with a lazy one (SPEC_NEW=variants/attention_lazy_rescale.yaml) almost every stage after a
row's first.

Results in bench/results/attention_lazy_max_probe_h100_2026-11-23.log.

Applied to the generated file by bench/attention/tkc-edit with VPY=<this file>.
"""
import re, sys

path = sys.argv[1]
src = open(path).read()
pat = re.compile(
    r"(?P<ind>[ \t]*)kittens::apply\(args\.state\.o, \[&\]\(const kittens::element &tkc_e\) \{\s*"
    r"return \(kittens::at\(args\.state\.o, tkc_e\) \* kittens::at\((?P<r>\w+), tkc_e\)\);\s*\}\);")


def edit(m):
    # kittens' own vote, as tkc emits it from D = 128 (where this adds a second, redundant one:
    # the recorded runs include it there).
    return (f"{m.group('ind')}if (kittens::warp_any_differs({m.group('r')}, 1.0f))\n"
            f"{m.group('ind')}  {m.group(0).strip()}")


src, n = pat.subn(edit, src)
if n == 0:
    sys.exit("skip_unit_rescale: no rescale of o found")
open(path, "w").write(src)
print(f"skip_unit_rescale: {n} rescales guarded", file=sys.stderr)

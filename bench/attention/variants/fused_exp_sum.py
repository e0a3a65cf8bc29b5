"""Probe edit (not shipped; bench/NOTES.md session 12): in the kernels' full key tiles, the
exponentials of p and their row sum in one loop (each element's exp2 followed by its add),
instead of 64 MUFU.EX2 back to back and then the sum, so that ptxas may issue the adds in
the MUFU's gaps. The last, partial tile keeps the two passes. Applied by
bench/attention/variants/tkc-fused to every kernel of the spec."""
import re, sys
path = sys.argv[1]
src = open(path).read()
pat = re.compile(
    r"(?P<ind>[ \t]*)kittens::rt_fl<16, (?P<cols>\d+)> p;\n"
    r"[ \t]*kittens::apply\(p, \[&\]\(const kittens::element &tkc_e\) \{\n"
    r"[ \t]*return (?P<expr>kittens::fast::exp2\([^;]*\));\n"
    r"[ \t]*\}\);\n"
    r"[ \t]*row_vector t1;\n"
    r"[ \t]*\{\n"
    r"[ \t]*auto tkc_f = \[&\]\(const kittens::element &tkc_e\) \{ return kittens::at\(p, tkc_e\); \};\n"
    r"(?P<comment>(?:[ \t]*//.*\n)*)"
    r"[ \t]*const int tkc_limit = (?P<limit>[^;]*);\n"
    r"[ \t]*if \(tkc_limit >= \d+\)\n"
    r"[ \t]*kittens::row_reduce_elements<kittens::rt_fl<16, \d+>>\(t1, kittens::base_ops::add\{\}, 0\.0f,\n"
    r"[ \t]*tkc_f\);\n"
    r"[ \t]*else\n"
    r"[ \t]*kittens::row_reduce_elements<kittens::rt_fl<16, \d+>>\(t1, kittens::base_ops::add\{\}, 0\.0f,\n"
    r"[ \t]*tkc_f, tkc_limit\);\n"
    r"[ \t]*\}\n")

def repl(m):
    i, c, e, lim = m.group("ind"), m.group("cols"), m.group("expr"), m.group("limit")
    return (f"{i}kittens::rt_fl<16, {c}> p;\n"
            f"{i}row_vector t1;\n"
            f"{i}{{\n"
            f"{i}  auto tkc_p = [&](const kittens::element &tkc_e) {{ return {e}; }};\n"
            f"{i}  const int tkc_limit = {lim};\n"
            f"{i}  if (tkc_limit >= {c}) {{\n"
            f"{i}    kittens::row_reduce_elements<kittens::rt_fl<16, {c}>>(t1, kittens::base_ops::add{{}}, 0.0f,\n"
            f"{i}      [&](const kittens::element &tkc_e) {{\n"
            f"{i}        const float tkc_x = tkc_p(tkc_e);\n"
            f"{i}        auto &tkc_pair = p.tiles[tkc_e.i][tkc_e.j].data[tkc_e.k];\n"
            f"{i}        (tkc_e.h ? tkc_pair.y : tkc_pair.x) = tkc_x;\n"
            f"{i}        return tkc_x;\n"
            f"{i}      }});\n"
            f"{i}  }} else {{\n"
            f"{i}    kittens::apply(p, tkc_p);\n"
            f"{i}    kittens::row_reduce_elements<kittens::rt_fl<16, {c}>>(t1, kittens::base_ops::add{{}}, 0.0f,\n"
            f"{i}      [&](const kittens::element &tkc_e) {{ return kittens::at(p, tkc_e); }}, tkc_limit);\n"
            f"{i}  }}\n"
            f"{i}}}\n")

src, n = pat.subn(repl, src)
assert n > 0, "no p / rowsum pair found"
open(path, "w").write(src)
print("fused exp2 and row sum in", n, "kernels", file=sys.stderr)

"""Probe edit (not shipped): the wide non-causal D = 64 kernel (192-key stages) takes its
last stages at 128 keys, so that a task covers N with less of the last tile masked away.

At N = 2048 the wide kernel computes 11 tiles of 192 (2112 keys, 64 masked); here 10 wide
and 1 narrow. At 4096: 22 wide (4224, 128 masked) against 20 wide and 2 narrow (4096).
The launcher picks the stage counts (a wide, b narrow) that cover N at the least cost,
a narrow stage priced NARROW_PRICE (default 0.7) of a wide one. A narrow stage is loaded
into a wide slot as a 192-row box at its first key (the rows past 128 are loaded but not
read; past N TMA fills zeros), and computed by the narrow kernel's own compute body on
128-row views of the slot's K and V (a row prefix of a 64-column swizzled tile has the
same layout as the shorter tile). MIXED_FROM=<n> also moves the launcher's switch to the
wide kernel from N >= 2048 to N >= n.

Applied to the generated file by bench/attention/tkc-edit with VPY=<this file>.
"""
import os, re, sys

from generated_cuda import body_of, struct_span  # beside this file

path = sys.argv[1]
src = open(path).read()
W, NW = "attention_fwd_D64_wide_true", "attention_fwd_D64_wide_false"
if f"struct {W}_kernel {{" not in src or f"struct {NW}_kernel {{" not in src:
    sys.exit(0)
price = float(os.environ.get("NARROW_PRICE", "0.7"))
nk = int(os.environ.get("NARROW_KEYS", "128"))  # 128, or 64: the narrow body cut to 64 keys
assert nk in (64, 128)



na, nb = struct_span(src, NW)
narrow_body = body_of(src[na:nb], f"compute(kittens::lcf::consumer_compute_args<{NW}_kernel> &args)")
assert narrow_body.count("args.input.k") == 1 and narrow_body.count("args.input.v") == 1, "unexpected narrow body"
narrow_body = narrow_body.replace("args.input.k", "tkc_nk").replace("args.input.v", "tkc_nv")
n_iter = narrow_body.count("(long long)args.iter * 128")
narrow_body = narrow_body.replace("(long long)args.iter * 128", "tkc_key0")
if nk == 64:
    for a, b in (("rt_fl<16, 128>", "rt_fl<16, 64>"), ("rt_bf<16, 128>", "rt_bf<16, 64>"),
                 ("tkc_limit >= 128", "tkc_limit >= 64"), ("tkc_key0) < 128", "tkc_key0) < 64")):
        assert a in narrow_body, a
        narrow_body = narrow_body.replace(a, b)
    assert "128" not in narrow_body, "a width left at 128"
assert "args.iter" not in narrow_body and n_iter >= 3, "unexpected use of the stage index"

wa, wb = struct_span(src, W)
seg = src[wa:wb]
# 1. globals: how many stages are wide.
j = "      int j_count; // stages of a task over all of N (N / 192)\n"
assert seg.count(j) == 1
seg = seg.replace(j, j + f"      int j_wide; // probe: stages 0 .. j_wide - 1 hold 192 keys, the rest {nk}\n")
# 2. producer: every stage through one row-offset load (two load paths in the producer's
# 24 registers spill); a narrow stage's keys start at 192 j_wide + nk (iter - j_wide).
lh = f"load(kittens::lcf::producer_load_args<{W}_kernel> &args) {{\n"
assert seg.count(lh) == 1
la = seg.index(lh) + len(lh)
lb = seg.index("\n    }\n", la) + 1
seg = seg[:la] + f"""      if (kittens::warpgroup::laneid() == 0) {{
        const int tkc_row = args.iter < args.globals.j_wide
                                ? args.iter * 192
                                : args.globals.j_wide * 192 + (args.iter - args.globals.j_wide) * {nk};
        const int tkc_hk = args.common.h / (args.globals.H / args.globals.H_kv);
        kittens::expect_bytes(args.inputs_arrived, 49152);
        tkc_probe_load_rows(args.input.k, args.globals.K, args.common.b, tkc_hk, tkc_row, args.inputs_arrived);
        tkc_probe_load_rows(args.input.v, args.globals.V, args.common.b, tkc_hk, tkc_row, args.inputs_arrived);
      }}
""" + seg[lb:]
# 3. consumer: narrow stages through the narrow kernel's compute body.
ch = f"    __device__ static void\n    compute(kittens::lcf::consumer_compute_args<{W}_kernel> &args) {{\n"
assert seg.count(ch) == 1
seg = seg.replace(ch, f"""    __device__ static void
    narrow_compute(kittens::lcf::consumer_compute_args<{W}_kernel> &args) {{
      auto &tkc_nk = *reinterpret_cast<kittens::st_bf<{nk}, 64> *>(&args.input.k);
      auto &tkc_nv = *reinterpret_cast<kittens::st_bf<{nk}, 64> *>(&args.input.v);
      const long long tkc_key0 =
          (long long)args.globals.j_wide * 192 + (long long)(args.iter - args.globals.j_wide) * {nk};
{narrow_body}    }}
""" + ch + """      if (args.iter >= args.globals.j_wide) {
        narrow_compute(args);
        return;
      }
""")
assert "(long long)args.iter * 192" in seg
src = src[:wa] + seg + src[wb:]

# 4. the launcher: the cheapest cover of N.
jl = "  globals.j_count = static_cast<int>((N + 192 - 1) / 192);\n"
la = src.index(f"tkc::runtime::Status {W}(")
lb = src.index(jl, la)
src = src[:lb] + f"""  {{ // probe: a stages of 192 keys and b of 128, the cheapest cover of N
    long long best_a = (N + 191) / 192, best_b = 0;
    double best = (double)best_a;
    for (long long a = N / 192; a >= 0 && a >= N / 192 - 3; --a) {{
      const long long r = N - 192 * a, b = r > 0 ? (r + {nk - 1}) / {nk} : 0;
      const double c = (double)a + {price} * (double)b;
      if (c < best - 1e-9) {{ best = c; best_a = a; best_b = b; }}
    }}
    globals.j_wide = static_cast<int>(best_a);
    globals.j_count = static_cast<int>(best_a + best_b);
  }}
""" + src[lb + len(jl):]

# 5. the row-offset load, once, after the includes.
inc = "#include <string>\n"
assert src.count(inc) == 1
src = src.replace(inc, inc + """
// probe: a swizzled tile's rows from element row row0 (tile_map coordinates are in tiles).
template <class ST>
__device__ inline void tkc_probe_load_rows(ST &dst, const kittens::tile_map<ST> &m, int b, int d, int row0,
                                           kittens::semaphore &bar) {
  static_assert(ST::swizzle_bytes != 0, "probe: swizzled tiles only");
  // (the 5-D form: 64 bf16 columns are one 128-byte swizzle chunk, so chunk_copies is 0; a
  // __trap() check here made ptxas spill in the whole kernel)
  asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];\\n" ::"r"(kittens::smem_addr(&dst)),
               "l"(reinterpret_cast<uint64_t>(&m.map)), "r"(0), "r"(row0), "r"(0), "r"(d), "r"(b),
               "r"(kittens::smem_addr(&bar)) : "memory");
}
""", 1)

mf = os.environ.get("MIXED_FROM")
if mf:
    d = src.index("tkc::runtime::Status attention_fwd_D64(")
    t = "  if (N >= 2048)\n    return " + W + "("
    k = src.index(t, d)
    src = src[:k] + f"  if (N >= {int(mf)})\n    return " + W + "(" + src[k + len(t):]
open(path, "w").write(src)

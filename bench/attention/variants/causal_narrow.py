"""Probe edit (not shipped): in a causal kernel, a warpgroup computes its last stage at a
narrower width when its rows need no more of that stage's keys.

A warpgroup's loop stops at its own last row (64-row granular) while stages hold BKV keys
(128 or 176), so its last stage is often mostly past its rows: computed, then masked. Here
compute first works out how many of the stage's keys the warpgroup's rows can see,
u = min(end of its rows, N) - first key of the stage, and when u <= w for a width w in
NKS (64 and/or 128, below BKV) runs a body compiled at w on a prefix view of the stage
(subtile views of the stage's first w rows). The
w = 64 body is the 128-key causal body cut to 64 keys; the w = 128 body (for 176-key
stages) is the 128-key kernel's own.

NOINLINE=1 keeps the narrow bodies out of line (calls), so that compute's own code is
unchanged but for the test.

Applied to the generated file by bench/attention/tkc-edit with VPY=<this file>.
"""
import os, re, sys

from generated_cuda import body_of, struct_span  # beside this file

path = sys.argv[1]
src = open(path).read()
widths = sorted(int(x) for x in os.environ.get("NKS", "64").split(","))
# NOINLINE=1: the narrow bodies as calls, not inlined into compute
noinline = "__noinline__ " if os.environ.get("NOINLINE") == "1" else ""



names = re.findall(r"^struct (attention_fwd_D\d+_causal\w*)_kernel \{", src, re.M)
if not names:
    sys.exit(0)
info = {}
for n in names:
    a, b = struct_span(src, n)
    seg = src[a:b]
    m = re.search(r"using k_tile = kittens::st_bf<(\d+), (\d+)>;", seg)
    bkv, d = int(m.group(1)), int(m.group(2))
    info[n] = (bkv, d, body_of(seg, f"compute(kittens::lcf::consumer_compute_args<{n}_kernel> &args)"))
src128 = {d: body for n, (bkv, d, body) in info.items() if bkv == 128}


def narrowed(body, w):
    body = body.replace("args.input.k", "tkc_nk").replace("args.input.v", "tkc_nv")
    body = body.replace("(long long)args.iter * 128", "tkc_key0").replace("args.iter * 128", "tkc_key0")
    assert "args.iter" not in body, "unexpected use of the stage index"
    if w == 64:
        for x, y in (("rt_fl<16, 128>", "rt_fl<16, 64>"), ("rt_bf<16, 128>", "rt_bf<16, 64>"),
                     ("tkc_limit >= 128", "tkc_limit >= 64"), ("tkc_key0) < 128", "tkc_key0) < 64"),
                     ("{0, 0, 0, 0, 0, 127}", "{0, 0, 0, 0, 0, 63}")):
            assert x in body, x
            body = body.replace(x, y)
        assert "128" not in body, "a width left at 128"
    return body


done = 0
for n, (bkv, d, body) in info.items():
    ws = [w for w in widths if w < bkv]
    if not ws:
        continue
    a, b = struct_span(src, n)
    seg = src[a:b]
    funcs, disp = "", ""
    for w in ws:
        nb = narrowed(src128[d], w)
        funcs += f"""    {noinline}__device__ static void
    narrow_compute_{w}(kittens::lcf::consumer_compute_args<{n}_kernel> &args, const long long tkc_key0) {{
      using tkc_kt = std::remove_reference_t<decltype(args.input.k)>;
      using tkc_view = kittens::st_view<kittens::bf16, {w}, {d}, tkc_kt::swizzle_bytes, tkc_kt::rows, tkc_kt::cols>;
      const tkc_view tkc_nk{{args.input.k.data, 0, 0}}, tkc_nv{{args.input.v.data, 0, 0}};
{nb}    }}
"""
        disp += f"""        if (tkc_u <= {w}) {{
          narrow_compute_{w}(args, tkc_k0);
          return;
        }}
"""
    ch = f"    __device__ static void\n    compute(kittens::lcf::consumer_compute_args<{n}_kernel> &args) {{\n"
    assert seg.count(ch) == 1
    seg = seg.replace(ch, funcs + ch + f"""      {{
        const long long tkc_k0 = (long long)args.iter * {bkv};
        const long long tkc_e0 = (long long)args.common.i * 192 + (kittens::warpgroupid() + 1) * 64 -
                                 args.globals.i_lead * 64;
        const long long tkc_u = (tkc_e0 < args.globals.N ? tkc_e0 : args.globals.N) - tkc_k0;
{disp}      }}
""")
    src = src[:a] + seg + src[b:]
    done += 1
open(path, "w").write(src)
print("causal_narrow: %d kernel(s), widths %s" % (done, widths), file=sys.stderr)

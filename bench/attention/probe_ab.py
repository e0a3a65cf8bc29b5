#!/usr/bin/env python3
"""A/B probe of a change to the generated attention kernels, before it is built
into tkc: the shipped spec built by plain tkc ($TKC_EXECUTABLE, cache $BASEC)
and through bench/attention/tkc-edit with $VSED / $VPERL (cache $NEWC), both
checked against SDPA (rel. Frobenius error <= 1e-2, every row written), then
timed in pairs (bench/timing.py). Prints base time / new time (> 1: new faster)
per configuration, FA3 protocol sizes.

    TKC_EXECUTABLE=... TKC_INCLUDE_DIR=... PYTHONPATH=python BASEC=$(mktemp -d) \
    NEWC=$(mktemp -d) VSED='s#...#...#' [DS=64,128] [CAUSAL=0,1] [NS=...] \
    [SPEC_NEW=other.yaml] python3 bench/attention/probe_ab.py

SPEC_NEW builds the new side from another spec (the edits still apply); EDIT_TOOL names
another wrapper in place of tkc-edit (e.g. variants/tkc-chunk).
"""
import math, os, statistics, sys, threading
from pathlib import Path
import torch
import torch.nn.functional as F
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python")); sys.path.insert(0, str(ROOT / "bench"))
import tkc
from timing import paired_times
spec = Path(os.environ.get("SPEC", ROOT / "kernels-spec" / "attention_fwd.yaml"))
Ds = [int(x) for x in os.environ.get("DS", "64,128").split(",")]
Ns = [int(x) for x in os.environ.get("NS", "512,1024,2048,4096,8192,16384").split(",")]
CAUS = [c == "1" for c in os.environ.get("CAUSAL", "0,1").split(",")]
mods = {}
os.environ["TKC_REAL"] = os.environ["TKC_EXECUTABLE"]
spec_new = Path(os.environ.get("SPEC_NEW", spec))
def ld(name, exe, cache, spec):
    mods[name] = tkc.load(spec, tkc=str(exe), cache_dir=cache, params={"D": Ds}, verbose=False)
ts = [threading.Thread(target=ld, args=("base", os.environ["TKC_EXECUTABLE"], os.environ["BASEC"], spec)),
      threading.Thread(target=ld, args=("new", os.environ.get("EDIT_TOOL", ROOT / "bench/attention/tkc-edit"), os.environ["NEWC"], spec_new))]
[t.start() for t in ts]; [t.join() for t in ts]
def pick(mod):
    out = {}
    for k in mod.kernels.values():
        d = next(a for a in k.info.arguments if a.name == "Q").dims[-1]
        out[(d, k.params.get("causal") == "true")] = k
    return out
kb, kn = pick(mods["base"]), pick(mods["new"])
torch.manual_seed(1)
for D in Ds:
    H = 2048 // D
    for causal in CAUS:
        row = []
        for N in Ns:
            B = 16384 // N
            Q, K, V = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            outs = []
            for k in (kb[(D, causal)], kn[(D, causal)]):
                O = torch.full((B, H, N, D), float("nan"), device="cuda", dtype=torch.bfloat16)
                L = torch.full((B, H, N), float("nan"), device="cuda", dtype=torch.float32)
                outs.append((O, L))
            ref = F.scaled_dot_product_attention(Q, K, V, is_causal=causal)
            fns = []
            for k, (O, L) in zip((kb[(D, causal)], kn[(D, causal)]), outs):
                ptrs = [t.data_ptr() for t in (Q, K, V, O, L)]
                sizes = [{"B": B, "H": H, "N": N, "H_kv": H}[s] for s in k.info.sizes]
                st = torch.cuda.current_stream().cuda_stream
                sc = [1 / math.sqrt(D) if x.name == "scale" else x.default for x in k.info.scalars]  # others: their defaults
                fns.append(lambda k=k, p=ptrs, s=sizes, st=st, sc=sc: k.launch(p, s, st, sc))
                fns[-1](); torch.cuda.synchronize()
                err = (torch.linalg.norm(O.float() - ref.float()) / torch.linalg.norm(ref.float())).item()
                bad = (torch.isnan(O).any(-1) | torch.isnan(L)).sum().item()
                if bad or err > 1e-2:
                    print("FAIL D=%d causal=%s N=%d err=%.2e unwritten=%d" % (D, causal, N, err, bad), flush=True)
            tb, tn = paired_times(fns[0], fns[1], rounds=int(os.environ.get("ROUNDS", 30)), warmup=10)
            r = statistics.median(b / n for b, n in zip(tb, tn))
            fl = 4.0 * B * H * N * N * D / (2 if causal else 1)
            row.append("N=%d %.3f (%.0f->%.0f TF)" % (N, r, fl / statistics.median(tb) / 1e9, fl / statistics.median(tn) / 1e9))
            del Q, K, V, outs
        print("D=%d causal=%d new/base: %s" % (D, causal, "  ".join(row)), flush=True)

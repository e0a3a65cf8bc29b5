#!/usr/bin/env python3
"""Probe (bench/NOTES.md, session 11): D = 128 non-causal attention with two consumer
warpgroups in FlashAttention-3's structure (edit.py: K and V in separate stages, the
intra-warpgroup overlap, optionally turns and the early rescale), against cuDNN and the
shipped three-warpgroup kernel in one process. Each output is checked against SDPA
(O) and, up to N = 4096, a float32 log-sum-exp (L), after poisoning both with NaN.

    TKC_EXECUTABLE=... TKC_INCLUDE_DIR=... PYTHONPATH=python python3 bench/attention/fa3/probe.py

VARIANTS=b128_s6_T,... picks the edits (see edit.py); NS=512,... the sequence lengths.
"""
import math, os, statistics, sys, tempfile, threading
from pathlib import Path
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "python")); sys.path.insert(0, str(ROOT / "bench"))
import tkc
from timing import paired_times
tk = Path(os.environ["TKC_EXECUTABLE"])
os.environ["TKC_REAL"] = str(tk)
variants = os.environ.get("VARIANTS", "b128_s6,b128_s6_T,b128_s6_T_E,b176_s4_T,b176_s4_T_E").split(",")
mods, errors = {}, []


def ld(name):
    try:
        if name == "base3":
            mods[name] = tkc.load(ROOT / "kernels-spec/attention_fwd.yaml", tkc=str(tk), cache_dir=tempfile.mkdtemp(),
                                  params={"D": 128, "causal": False}, verbose=False)
        else:
            cache = tempfile.mkdtemp(prefix="fa3_%s_" % name)
            mods[name] = tkc.load(HERE / "attention_2wg.yaml", tkc=str(HERE / "tkc-fa3"), cache_dir=cache,
                                  params={"D": 128, "causal": False}, verbose=False)
    except Exception as e:  # reported below; the other variants still run
        errors.append("%s: %s" % (name, e))


ts = [threading.Thread(target=ld, args=(n,)) for n in ["base3"] + variants]
[t.start() for t in ts]; [t.join() for t in ts]
for e in errors:
    print("BUILD FAILED", e[:2000], flush=True)
ks = {n: next(iter(mods[n].kernels.values())) for n in ["base3"] + variants if n in mods}
torch.manual_seed(3)
D, H = 128, 16
for N in [int(x) for x in os.environ.get("NS", "512,1024,2048,4096,8192,16384").split(",")]:
    B = 16384 // N
    Q, K, V = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ref = F.scaled_dot_product_attention(Q, K, V)
    lref = None
    if N <= 4096:
        lref = torch.logsumexp((Q.float() @ K.float().transpose(-1, -2)) / math.sqrt(D), dim=-1)
    fns, keep, bad_names = {}, [], []
    for n, k in ks.items():
        O = torch.full((B, H, N, D), float("nan"), device="cuda", dtype=torch.bfloat16)
        L = torch.full((B, H, N), float("nan"), device="cuda")
        keep += [O, L]
        p = [t.data_ptr() for t in (Q, K, V, O, L)]
        s = [{"B": B, "H": H, "N": N, "H_kv": H}[x] for x in k.info.sizes]
        st = torch.cuda.current_stream().cuda_stream
        fns[n] = (lambda k=k, p=p, s=s, st=st: k.launch(p, s, st, [1 / math.sqrt(D)]))
        fns[n](); torch.cuda.synchronize()
        err = (torch.linalg.norm(O.float() - ref.float()) / torch.linalg.norm(ref.float())).item()
        unwritten = (torch.isnan(O).any(-1) | torch.isnan(L)).sum().item()
        lerr = (L - lref).abs().max().item() if lref is not None else 0.0
        if unwritten or err > 1e-2 or lerr > 1e-2:
            print("FAIL %s N=%d err %.2e lse %.2e unwritten %d" % (n, N, err, lerr, unwritten), flush=True)
            bad_names.append(n)
        else:
            print("ok %s N=%d err %.2e lse %.2e" % (n, N, err, lerr), flush=True)
    out = []
    fl = 4.0 * B * H * N * N * D
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        cud = lambda: F.scaled_dot_product_attention(Q, K, V)
        for n in ks:
            if n in bad_names:
                continue
            to, tb = paired_times(fns[n], cud, rounds=30, warmup=10)
            out.append("%s %.0f TF %.3f" % (n, fl / statistics.median(to) / 1e9, statistics.median(b / o for o, b in zip(to, tb))))
    for n in ks:
        if n == "base3" or n in bad_names:
            continue
        to, tb = paired_times(fns[n], fns["base3"], rounds=30, warmup=10)
        out.append("%s/base3 %.3f" % (n, statistics.median(b / o for o, b in zip(to, tb))))
    print("N=%d  %s" % (N, "  ".join(out)), flush=True)
    del Q, K, V, keep, ref, lref

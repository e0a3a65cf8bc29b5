#!/usr/bin/env python3
"""Probe (bench/NOTES.md, session 8): the D = 128 non-causal attention kernel with the
next score product issued before the previous block's P·V is waited for (intra-warpgroup
overlap, a hand edit of the generated CUDA by edit.py), against the shipped kernel and
cuDNN, in one process. Variants: base3 (shipped, three warpgroups), plain2 / plain2s3 (two
warpgroups, two / three stages), ov2 / ov2s3 (the same with the overlap), ov2s3t (with the
warpgroups also issuing in turns). PD=64 instead compares the shipped D = 64 kernel with
its overlapped edit (ov3). DROP=name,... leaves variants out.

    TKC_EXECUTABLE=... TKC_INCLUDE_DIR=... PYTHONPATH=python python3 bench/attention/overlap/probe.py
"""
import math, os, statistics, sys, threading, tempfile
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
PD = int(os.environ.get("PD", "128"))
specs = {"base3": (ROOT / "kernels-spec/attention_fwd.yaml", tk), "plain2": (HERE / "attention_2wg.yaml", tk),
         "ov2": (HERE / "attention_2wg.yaml", HERE / "tkc-overlap"),
         "plain2s3": (HERE / "attention_2wg_3stages.yaml", tk), "ov2s3": (HERE / "attention_2wg_3stages.yaml", HERE / "tkc-overlap"),
         "ov2s3t": (HERE / "attention_2wg_3stages.yaml", HERE / "tkc-overlap-turns")}
for drop in os.environ.get("DROP", "").split(","):
    specs.pop(drop, None)
mods = {}
def ld(n):
    s, t = specs[n]
    mods[n] = tkc.load(s, tkc=str(t), cache_dir=tempfile.mkdtemp(), params={"D": PD, "causal": False}, verbose=False)
if PD == 64:
    os.environ["OV_KERNEL"] = "attention_fwd_D64_kernel"
    specs = {"base3": specs["base3"], "ov3": (ROOT / "kernels-spec/attention_fwd.yaml", HERE / "tkc-overlap")}
ts = [threading.Thread(target=ld, args=(n,)) for n in specs]; [t.start() for t in ts]; [t.join() for t in ts]
ks = {n: next(iter(m.kernels.values())) for n, m in mods.items()}
torch.manual_seed(3)
D = PD; H = 2048 // PD
for N in [int(x) for x in os.environ.get("NS", "512,1024,2048,4096,8192,16384").split(",")]:
    B = 16384 // N
    Q, K, V = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    ref = F.scaled_dot_product_attention(Q, K, V)
    fns = {}
    keep = []
    for n, k in ks.items():
        O = torch.full((B, H, N, D), float("nan"), device="cuda", dtype=torch.bfloat16)
        L = torch.full((B, H, N), float("nan"), device="cuda")
        keep += [O, L]
        p = [t.data_ptr() for t in (Q, K, V, O, L)]; s = [{"B": B, "H": H, "N": N, "H_kv": H}[x] for x in k.info.sizes]
        st = torch.cuda.current_stream().cuda_stream
        fns[n] = (lambda k=k, p=p, s=s, st=st: k.launch(p, s, st, [1 / math.sqrt(D)]))
        fns[n](); torch.cuda.synchronize()
        err = (torch.linalg.norm(O.float() - ref.float()) / torch.linalg.norm(ref.float())).item()
        bad = (torch.isnan(O).any(-1) | torch.isnan(L)).sum().item()
        if bad or err > 1e-2:
            print("FAIL %s N=%d err %.2e unwritten %d" % (n, N, err, bad), flush=True)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        cud = lambda: F.scaled_dot_product_attention(Q, K, V)
        out = []
        fl = 4.0 * B * H * N * N * D
        for n in ks:
            to, tb = paired_times(fns[n], cud, rounds=30, warmup=10)
            out.append("%s %.0f TF ratio %.3f" % (n, fl / statistics.median(to) / 1e9, statistics.median(b / o for o, b in zip(to, tb))))
        best = "ov3" if PD == 64 else "ov2s3t"
        to, tb = paired_times(fns[best], fns["base3"], rounds=30, warmup=10)
        out.append("%s/base3 %.3f" % (best, statistics.median(b / o for o, b in zip(to, tb))))
    print("N=%d  %s" % (N, "  ".join(out)), flush=True)
    del Q, K, V, keep, ref

#!/usr/bin/env python3
"""Sliding-window attention from two builds of tkc, side by side: the kernels of
kernels-spec/attention_sliding_window.yaml emitted by $TKC_BASE and by $TKC_EXECUTABLE,
each checked against SDPA with the window as a boolean mask (relative Frobenius error
<= 1e-2, every row written), then timed in pairs (bench/timing.py) at the
FlashAttention-3 protocol sizes. Prints base time / new time (> 1: new faster) and the
new kernel's TF/s counting only the visible keys (4 D per query-key pair).

    TKC_EXECUTABLE=... TKC_BASE=... TKC_INCLUDE_DIR=... PYTHONPATH=python \\
    [SPEC_BASE=older.yaml] [WINDOWS=256,1024] [DS=64,128] [NS=1024,...] \
    python3 bench/attention/window_probe.py

SPEC_BASE: the base side's spec, where the older tkc does not read the current one.
"""
import math, os, statistics, sys, tempfile
from pathlib import Path
import torch
import torch.nn.functional as F
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python")); sys.path.insert(0, str(ROOT / "bench"))
import tkc
from timing import paired_times

spec = ROOT / "kernels-spec" / "attention_sliding_window.yaml"
Ds = [int(x) for x in os.environ.get("DS", "64,128").split(",")]
Ns = [int(x) for x in os.environ.get("NS", "1024,2048,4096,8192,16384").split(",")]
windows = [int(x) for x in os.environ.get("WINDOWS", "256,1024").split(",")]
spec_base = Path(os.environ.get("SPEC_BASE", spec))
builds = {side: tkc.load(path, tkc=exe, cache_dir=tempfile.mkdtemp(), params={"D": Ds},
                         verbose=False)
          for side, exe, path in (("base", os.environ["TKC_BASE"], spec_base),
                                  ("new", os.environ["TKC_EXECUTABLE"], spec))}


def by_head_dim(module):
    return {next(a for a in k.info.arguments if a.name == "Q").dims[-1]: k
            for k in module.kernels.values()}


kernels = {side: by_head_dim(m) for side, m in builds.items()}
torch.manual_seed(1)
for D in Ds:
    H = 2048 // D
    for W in windows:
        row = []
        for N in Ns:
            B = 16384 // N
            Q, K, V = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            i = torch.arange(N, device="cuda")
            mask = (i[None, :] <= i[:, None]) & (i[None, :] > i[:, None] - W)
            ref = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask).float()
            fns = []
            for side in ("base", "new"):
                k = kernels[side][D]
                O = torch.full((B, H, N, D), float("nan"), device="cuda", dtype=torch.bfloat16)
                L = torch.full((B, H, N), float("nan"), device="cuda", dtype=torch.float32)
                fn = lambda k=k, O=O, L=L: k(Q, K, V, out=(O, L), window=float(W))
                fn(); torch.cuda.synchronize()
                err = (torch.linalg.norm(O.float() - ref) / torch.linalg.norm(ref)).item()
                bad = (torch.isnan(O).any(-1) | torch.isnan(L)).sum().item()
                if bad or err > 1e-2:
                    print("FAIL %s D=%d W=%d N=%d err=%.2e unwritten=%d" % (side, D, W, N, err, bad),
                          flush=True)
                fns.append(fn)
            t_base, t_new = paired_times(fns[0], fns[1], rounds=20, warmup=5)
            ratio = statistics.median(b / n for b, n in zip(t_base, t_new))
            pairs = sum(min(r + 1, W) for r in range(N))
            flops = 4.0 * B * H * D * pairs
            row.append("N=%d %.2f (%.0f TF)" % (N, ratio, flops / statistics.median(t_new) / 1e9))
            del Q, K, V, ref, mask
        print("D=%d window=%d base/new: %s" % (D, W, "  ".join(row)), flush=True)

#!/usr/bin/env python3
"""Probe (bench/NOTES.md, session 8): does filling the grid's last round of tasks matter?
The non-causal kernel and cuDNN, paired, at shapes whose task count is or is not a multiple
of 132 (an H100's multiprocessors).

    TKC_EXECUTABLE=... TKC_INCLUDE_DIR=... PYTHONPATH=python python3 bench/attention/fill_probe.py
"""
import math, statistics, sys
from pathlib import Path
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python")); sys.path.insert(0, str(ROOT / "bench"))
import tkc
from timing import paired_times
mod = tkc.load(ROOT / "kernels-spec/attention_fwd.yaml", params={"D": [64, 128], "causal": False}, verbose=False)
ks = {}
for k in mod.kernels.values():
    ks[next(a for a in k.info.arguments if a.name == "Q").dims[-1]] = k
def tasks(B, H, N): return B * H * math.ceil(N / 192)
cases = [(128, 16384, 1, 16), (128, 16384, 1, 66), (128, 16384, 1, 33), (128, 8192, 2, 16), (128, 8192, 6, 22),
         (128, 4096, 4, 16), (128, 4096, 3, 22), (64, 4096, 4, 32), (64, 4096, 3, 44), (64, 1024, 16, 32), (64, 1024, 22, 32)]
for D, N, B, H in cases:
    k = ks[D]
    Q, K, V = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    O = torch.empty(B, H, N, D, device="cuda", dtype=torch.bfloat16); L = torch.empty(B, H, N, device="cuda")
    p = [t.data_ptr() for t in (Q, K, V, O, L)]; s = [{"B": B, "H": H, "N": N, "H_kv": H}[x] for x in k.info.sizes]
    st = torch.cuda.current_stream().cuda_stream
    ours = lambda: k.launch(p, s, st, [1 / math.sqrt(D)])
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        base = lambda: F.scaled_dot_product_attention(Q, K, V)
        to, tb = paired_times(ours, base, rounds=30, warmup=10)
    fl = 4.0 * B * H * N * N * D
    t = tasks(B, H, N)
    print("D=%d N=%d B=%d H=%d tasks=%d rounds=%.2f  tkc %.0f TF  cudnn %.0f TF  ratio %.3f" % (
        D, N, B, H, t, t / 132, fl / statistics.median(to) / 1e9, fl / statistics.median(tb) / 1e9,
        statistics.median(b / o for o, b in zip(to, tb))), flush=True)

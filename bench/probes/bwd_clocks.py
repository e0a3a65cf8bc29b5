#!/usr/bin/env python3
"""SM clock and power under the attention backward kernel and under SDPA's cuDNN backward:
each runs back to back for a few seconds while nvidia-smi samples the GPU.

    PYTHONPATH=python python3 bench/probes/bwd_clocks.py [--d 128] [--n 2048] [--seconds 4]

B x N = 16384 tokens and hidden 2048, as bench/attention/backward.py; ours is the kernel
alone with dQ zeroed before each launch (L and Delta zeros: its work does not depend on
them), cuDNN's the autograd backward of SDPA's output. Prints each side's mean SM clock
(MHz) and power (W) over its last half, and its launches a second.
"""
import argparse
import math
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import tkc  # noqa: E402

TOKENS, HIDDEN = 16384, 2048


def sample(fn, seconds):
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw",
                            "--format=csv,noheader,nounits", "-lms", "100"],
                           stdout=subprocess.PIPE, text=True)
    start, runs = time.time(), 0
    while time.time() - start < seconds:
        for _ in range(10):
            fn()
        runs += 10
        torch.cuda.synchronize()
    elapsed = time.time() - start
    smi.terminate()
    rows = [line.split(",") for line in smi.communicate()[0].splitlines() if "," in line]
    rows = rows[len(rows) // 2:]
    clock = sum(float(r[0]) for r in rows) / len(rows)
    power = sum(float(r[1]) for r in rows) / len(rows)
    return clock, power, runs / elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d", type=int, default=128, choices=(64, 128))
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--seconds", type=float, default=4.0)
    args = ap.parse_args()
    D, N = args.d, args.n
    B, H = max(1, TOKENS // N), HIDDEN // D
    kernel = next(k for k in tkc.load(ROOT / "kernels-spec" / "attention_bwd.yaml").kernels.values()
                  if int(k.params["D"]) == D and k.params["gqa"] == "false"
                  and k.params["causal"] == "false")
    scale = 1 / math.sqrt(D)
    Q, K, V, dO = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16)
                   for _ in range(4))
    q, k, v = (t.detach().requires_grad_() for t in (Q, K, V))
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        out = F.scaled_dot_product_attention(q, k, v, scale=scale)
    L = torch.zeros(B, H, N, device="cuda", dtype=torch.float32)
    Delta = torch.zeros(B, H, N, device="cuda", dtype=torch.float32)
    dQ = torch.empty(B, H, N, D, device="cuda", dtype=torch.float32)
    dK, dV = (torch.empty(B, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    named = dict(Q=Q, K=K, V=V, dO=dO, L=L, Delta=Delta, dQ=dQ, dK=dK, dV=dV)
    pointers = [named[a.name].data_ptr() for a in kernel.info.arguments]
    sizes = [{"B": B, "H": H, "N": N, "H_kv": H}[s] for s in kernel.info.sizes]
    stream = torch.cuda.current_stream().cuda_stream

    def ours():
        dQ.zero_()
        kernel.launch(pointers, sizes, stream, [scale])

    def cudnn():
        torch.autograd.grad(out, (q, k, v), dO, retain_graph=True)

    print("%s, B=%d H=%d N=%d D=%d non-causal" % (torch.cuda.get_device_name(), B, H, N, D))
    for side, fn in (("tkc", ours), ("cuDNN", cudnn), ("tkc", ours), ("cuDNN", cudnn)):
        clock, power, rate = sample(fn, args.seconds)
        print("  %-6s SM clock %6.0f MHz  power %5.0f W  %7.1f runs/s" % (side, clock, power, rate),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""One configuration of the attention backward kernel and of SDPA's cuDNN backward, a few
launches each, for a profiler to pick up.

    PYTHONPATH=python python3 bench/probes/bwd_profile.py [--d 128] [--n 4096] [--causal]
        [--launches 2] [--spec-dir DIR]

B x N = 16384 tokens and hidden 2048, as bench/attention/backward.py. The kernel is
attention_bwd.yaml's (no grouped heads) with dQ zeroed before each launch; cuDNN's runs
through torch.autograd.grad of SDPA's output. Launches alternate, ours first, so that
`ncu -k regex:'attention_bwd_D|flash_bprop' --launch-skip 2 --launch-count 2` profiles the
second of each. Nothing is timed or checked here (bench/attention/backward.py does both).
"""
import argparse
import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import tkc  # noqa: E402

TOKENS, HIDDEN = 16384, 2048


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d", type=int, default=128, choices=(64, 128))
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--launches", type=int, default=2)
    ap.add_argument("--spec-dir", type=Path, default=ROOT / "kernels-spec")
    args = ap.parse_args()
    D, N = args.d, args.n
    B, H = max(1, TOKENS // N), HIDDEN // D
    kernel = next(k for k in tkc.load(args.spec_dir / "attention_bwd.yaml").kernels.values()
                  if int(k.params["D"]) == D and k.params["gqa"] == "false"
                  and (k.params["causal"] == "true") == args.causal)
    scale = 1 / math.sqrt(D)
    Q, K, V, dO = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16)
                   for _ in range(4))
    q, k, v = (t.detach().requires_grad_() for t in (Q, K, V))
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=args.causal, scale=scale)
    # L and Delta need only be finite for a profile: the kernel's work does not depend on them.
    L = torch.zeros(B, H, N, device="cuda", dtype=torch.float32)
    Delta = torch.zeros(B, H, N, device="cuda", dtype=torch.float32)
    dQ = torch.empty(B, H, N, D, device="cuda", dtype=torch.float32)
    dK, dV = (torch.empty(B, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    named = dict(Q=Q, K=K, V=V, dO=dO, L=L, Delta=Delta, dQ=dQ, dK=dK, dV=dV)
    pointers = [named[a.name].data_ptr() for a in kernel.info.arguments]
    sizes = [{"B": B, "H": H, "N": N, "H_kv": H}[s] for s in kernel.info.sizes]
    stream = torch.cuda.current_stream().cuda_stream
    for _ in range(args.launches):
        dQ.zero_()
        kernel.launch(pointers, sizes, stream, [scale])
        torch.autograd.grad(out, (q, k, v), dO, retain_graph=True)
    torch.cuda.synchronize()
    print("%s: B=%d H=%d N=%d D=%d %s, %d launches each"
          % (kernel.name, B, H, N, D, "causal" if args.causal else "non-causal", args.launches))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Where a whole attention backward's time goes, kernel by kernel: ours (Delta, dQ's zeroing,
the kernel, dQ's conversion to bf16) against SDPA's cuDNN backward, under torch.profiler.

    PYTHONPATH=python python3 bench/probes/bwd_breakdown.py [--d 128] [--n 2048 --n 4096]
        [--causal] [--runs 20] [--spec-dir DIR] [--base-tkc TKC --base-include DIR]

B x N = 16384 tokens and hidden 2048, as bench/attention/backward.py. Prints each device
kernel's mean time a run (microseconds) and each side's sum; nothing is checked here
(bench/attention/backward.py checks and times the same calls). --base-tkc adds a side:
the same specs built with another tkc executable (and its kittens headers,
--base-include), to compare two builds of the compiler in one process.
"""
import argparse
import math
import sys
from collections import defaultdict
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import tkc  # noqa: E402

TOKENS, HIDDEN = 16384, 2048


def kernel_times(fn, runs):
    """Mean device time a run of each kernel fn launches, in microseconds."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            fn()
        torch.cuda.synchronize()
    times = defaultdict(float)
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            times[event.name[:90]] += event.device_time / runs
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d", type=int, default=128, choices=(64, 128))
    ap.add_argument("--n", type=int, action="append")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--spec-dir", type=Path, default=ROOT / "kernels-spec")
    ap.add_argument("--base-tkc", default=None, help="another tkc executable: a side of its own")
    ap.add_argument("--base-include", default=None, help="that tkc's kittens headers")
    args = ap.parse_args()
    D = args.d

    def kernels(**toolchain):
        kernel = next(k for k in tkc.load(args.spec_dir / "attention_bwd.yaml",
                                          **toolchain).kernels.values()
                      if int(k.params["D"]) == D and k.params["gqa"] == "false"
                      and (k.params["causal"] == "true") == args.causal)
        delta = next(k for k in tkc.load(args.spec_dir / "attention_bwd_delta.yaml",
                                         **toolchain).kernels.values()
                     if int(k.params["D"]) == D)
        return kernel, delta

    builds = [("tkc", kernels())]
    if args.base_tkc:
        builds.append(("base", kernels(tkc=args.base_tkc, include_dirs=[args.base_include])))
    print(torch.cuda.get_device_name())
    for N in args.n or (1024, 2048, 4096, 16384):
        B, H = max(1, TOKENS // N), HIDDEN // D
        scale = 1 / math.sqrt(D)
        Q, K, V, dO = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16)
                       for _ in range(4))
        q, k, v = (t.detach().requires_grad_() for t in (Q, K, V))
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=args.causal, scale=scale)
        O = out.detach()
        # L need only be finite: the kernel's work does not depend on its values.
        L = torch.zeros(B, H, N, device="cuda", dtype=torch.float32)
        Delta = torch.empty(B, H, N, device="cuda", dtype=torch.float32)
        dQ = torch.empty(B, H, N, D, device="cuda", dtype=torch.float32)
        dK, dV = (torch.empty(B, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        named = dict(Q=Q, K=K, V=V, O=O, dO=dO, L=L, Delta=Delta, dQ=dQ, dK=dK, dV=dV)
        sizes = {"B": B, "H": H, "N": N, "H_kv": H}
        stream = torch.cuda.current_stream().cuda_stream

        def launch(k, scalars):
            k.launch([named[a.name].data_ptr() for a in k.info.arguments],
                     [sizes[s] for s in k.info.sizes], stream, scalars)

        def ours(kernel, delta):
            def run():
                launch(delta, [])
                dQ.zero_()
                launch(kernel, [scale])
                return dQ.to(torch.bfloat16)
            return run

        def cudnn():
            torch.autograd.grad(out, (q, k, v), dO, retain_graph=True)

        print("\nB=%d H=%d N=%d D=%d %s" % (B, H, N, D, "causal" if args.causal else "non-causal"))
        sides = [(name, ours(*ks)) for name, ks in builds] + [("cuDNN", cudnn)]
        for side, fn in sides:
            times = kernel_times(fn, args.runs)
            for name, t in sorted(times.items(), key=lambda kv: -kv[1]):
                print("  %-6s %9.1f us  %s" % (side, t, name))
            print("  %-6s %9.1f us  total" % (side, sum(times.values())))
        del Q, K, V, dO, q, k, v, out, O, L, Delta, dQ, dK, dV, named
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())

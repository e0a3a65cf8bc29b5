#!/usr/bin/env python3
"""Does where the output lies change a paired GEMM time? (bench/NOTES.md session 27)

An A/A pair of probe_ab.py (the same library as base and new, each side writing its own C)
read 1.015 at 2048^3, where the kernels are identical. This probe repeats, at each shape, with
output buffers allocated afresh each repetition (a spacer of random size between them):
  sep    A/A, each side writing its own C
  same   A/A, both sides writing the same C
  cb     ours into C1 against torch.matmul returning a fresh tensor (as bench/gemm/run.py)
  cbout  ours into C1 against torch.matmul(out=C1)
each the median of per-round ratios (bench/timing.py, ROUNDS rounds).

    python3 bench/gemm/placement.py --lib libtkcgemm.so [--reps 4] [--shapes MxNxK,...]
"""
import argparse, os, statistics, sys
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from run import Gemm, parse_shapes  # noqa: E402
from timing import paired_times  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--reps", type=int, default=4)
ap.add_argument("--rounds", type=int, default=100)
ap.add_argument("--shapes", default="2048x2048x2048,4096x4096x4096")
args = ap.parse_args()
g = Gemm(args.lib)
torch.manual_seed(0)


def ratio(a, b):
    t_a, t_b = paired_times(a, b, rounds=args.rounds, warmup=10)
    return statistics.median(y / x for x, y in zip(t_a, t_b))


for M, N, K in parse_shapes(args.shapes):
    A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    rows = []
    for rep in range(args.reps):
        spacer = torch.empty(int(torch.randint(1, 64, ()).item()) << 20, device="cuda", dtype=torch.uint8)
        C1 = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        spacer2 = torch.empty(int(torch.randint(1, 64, ()).item()) << 20, device="cuda", dtype=torch.uint8)
        C2 = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        ours1 = lambda: g("gemm_none", A, B, C1)
        ours2 = lambda: g("gemm_none", A, B, C2)
        r = (ratio(ours1, ours2), ratio(ours1, ours1), ratio(ours1, lambda: torch.matmul(A, B)),
             ratio(ours1, lambda: torch.matmul(A, B, out=C1)))
        rows.append(r)
        print("%dx%dx%d rep %d  sep %.3f  same %.3f  cb %.3f  cbout %.3f" % ((M, N, K, rep) + r), flush=True)
        del spacer, spacer2, C1, C2
    print("%dx%dx%d spread (max-min)  sep %.3f  same %.3f  cb %.3f  cbout %.3f" % (
        (M, N, K) + tuple(max(c) - min(c) for c in zip(*rows))), flush=True)
    del A, B
    torch.cuda.empty_cache()

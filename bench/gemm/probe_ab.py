#!/usr/bin/env python3
"""A/B probe of a change to the generated GEMM: two builds of bench/gemm/tkc_gemm_ext.cu
with a generated gemm.cu each (--base, --new), both checked against an fp32 reference
(relative Frobenius error <= 1e-2, output poisoned first), then timed in pairs
(bench/timing.py) at the six anchor shapes: base time / new time (> 1: new faster), and
each against cuBLAS (torch.matmul) in its own pairs.

    python3 bench/gemm/probe_ab.py --base libbase.so --new libnew.so [--variant gemm_none]
        [--shapes MxNxK,...]   (other shapes; each line also gives the median times in us)
        [--same-out]           (every side timed writing one output buffer, cuBLAS by out=)
"""
import argparse, os, statistics, sys
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from run import Gemm, parse_shapes, rel_err  # noqa: E402
from timing import paired_times  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--base", required=True)
ap.add_argument("--new", required=True)
ap.add_argument("--variant", default="gemm_none")
ap.add_argument("--rounds", type=int, default=100)
ap.add_argument("--shapes", help="MxNxK,... instead of the six anchor shapes")
ap.add_argument("--same-out", action="store_true",
                help="time every side (base, new, cuBLAS through out=) writing one output buffer")
args = ap.parse_args()
shapes = parse_shapes(args.shapes)
base, new = Gemm(args.base), Gemm(args.new)
torch.manual_seed(0)
for M, N, K in shapes:
    A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    ref = A.float() @ B.float()
    outs = {}
    for name, g in (("base", base), ("new", new)):
        C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        g(args.variant, A, B, C)
        torch.cuda.synchronize()
        err = rel_err(C, ref)
        if not err <= 1e-2:
            print("FAIL %s %dx%dx%d rel_err=%.2e" % (name, M, N, K, err), flush=True)
        outs[name] = C
    del ref
    # Checked apart; timed, optionally, into one buffer (where the output lies moves a short
    # launch's time, bench/NOTES.md session 27).
    shared = outs["new"]
    run = {name: (lambda g=g, C=shared if args.same_out else outs[name]: g(args.variant, A, B, C))
           for name, g in (("base", base), ("new", new))}
    cublas = (lambda: torch.matmul(A, B, out=shared)) if args.same_out else (lambda: torch.matmul(A, B))
    t_new, t_base = paired_times(run["new"], run["base"], rounds=args.rounds, warmup=10)
    r = statistics.median(b / n for b, n in zip(t_base, t_new))
    vs, us = [], []
    for name in ("base", "new"):
        t_ours, t_cb = paired_times(run[name], cublas, rounds=args.rounds, warmup=10)
        vs.append(statistics.median(c / o for c, o in zip(t_cb, t_ours)))
        us += [1e3 * statistics.median(t_ours), 1e3 * statistics.median(t_cb)]
    print("%dx%dx%d new/base %.3f  vs cuBLAS: base %.3f new %.3f  (us: base %.2f new %.2f cuBLAS %.2f)"
          % (M, N, K, r, vs[0], vs[1], us[0], us[2], (us[1] + us[3]) / 2), flush=True)
    del A, B, outs

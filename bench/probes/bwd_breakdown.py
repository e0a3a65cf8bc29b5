#!/usr/bin/env python3
"""Where a whole attention backward's time goes, kernel by kernel: ours (Delta, dQ's zeroing,
the kernel, dQ's conversion to bf16) against SDPA's cuDNN backward, under torch.profiler.

    PYTHONPATH=python python3 bench/probes/bwd_breakdown.py [--d 128] [--n 2048 --n 4096]
        [--causal] [--runs 20] [--spec-dir DIR] [--base-tkc TKC --base-include DIR]

B x N = 16384 tokens and hidden 2048, as bench/attention/backward.py (bwd_problem.py).
Prints each device kernel's mean time a run (microseconds) and each side's sum; nothing is
checked here (bench/attention/backward.py checks and times the same calls). --base-tkc adds
a side: the same specs built with another tkc executable (and its kittens headers,
--base-include), to compare two builds of the compiler in one process.
"""
import argparse
import sys
from collections import defaultdict
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bwd_problem import ROOT, Problem, backward_kernels  # noqa: E402


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
    builds = [("tkc", backward_kernels(args.spec_dir, args.d, args.causal))]
    if args.base_tkc:
        builds.append(("base", backward_kernels(args.spec_dir, args.d, args.causal,
                                                tkc=args.base_tkc,
                                                include_dirs=[args.base_include])))
    print(torch.cuda.get_device_name())
    for N in args.n or (1024, 2048, 4096, 16384):
        p = Problem(args.d, N, args.causal)
        print("\n" + p.describe())
        sides = [(name, lambda ks=ks: p.ours_whole(*ks)) for name, ks in builds]
        for side, fn in sides + [("cuDNN", p.cudnn)]:
            times = kernel_times(fn, args.runs)
            for name, t in sorted(times.items(), key=lambda kv: -kv[1]):
                print("  %-6s %9.1f us  %s" % (side, t, name))
            print("  %-6s %9.1f us  total" % (side, sum(times.values())))
        del p
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())

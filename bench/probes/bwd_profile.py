#!/usr/bin/env python3
"""One configuration of the attention backward kernel and of SDPA's cuDNN backward, a few
launches each, for a profiler to pick up.

    PYTHONPATH=python python3 bench/probes/bwd_profile.py [--d 128] [--n 4096] [--causal]
        [--launches 2] [--spec-dir DIR]

B x N = 16384 tokens and hidden 2048, as bench/attention/backward.py (bwd_problem.py). The
kernel is attention_bwd.yaml's (no grouped heads) with dQ zeroed before each launch; cuDNN's
runs through torch.autograd.grad of SDPA's output. Launches alternate, ours first: profile
the second of each with `ncu --kernel-name-base demangled -k regex:attention_bwd_D
--launch-skip 1 --launch-count 1` and `ncu -k regex:bprop --launch-skip 1 --launch-count 1`.
Nothing is timed or checked here (bench/attention/backward.py does both).
"""
import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bwd_problem import ROOT, Problem, backward_kernels  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d", type=int, default=128, choices=(64, 128))
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--launches", type=int, default=2)
    ap.add_argument("--spec-dir", type=Path, default=ROOT / "kernels-spec")
    args = ap.parse_args()
    kernel, _ = backward_kernels(args.spec_dir, args.d, args.causal)
    p = Problem(args.d, args.n, args.causal)
    for _ in range(args.launches):
        p.ours(kernel)
        p.cudnn()
    torch.cuda.synchronize()
    print("%s: %s, %d launches each" % (kernel.name, p.describe(), args.launches))
    return 0


if __name__ == "__main__":
    sys.exit(main())

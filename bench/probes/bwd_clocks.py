#!/usr/bin/env python3
"""SM clock and power under the attention backward kernel and under SDPA's cuDNN backward:
each runs back to back for a few seconds while nvidia-smi samples the GPU.

    PYTHONPATH=python python3 bench/probes/bwd_clocks.py [--d 128] [--n 2048] [--causal]
        [--seconds 4] [--spec-dir DIR]

B x N = 16384 tokens and hidden 2048, as bench/attention/backward.py (bwd_problem.py); ours
is the kernel alone with dQ zeroed before each launch, cuDNN's the autograd backward of
SDPA's output. Prints each side's mean SM clock (MHz) and power (W) over the last half of
its run, and its runs a second; the sides take turns twice (the first cuDNN turn can be
bound by the host while its graph warms up). At the power limit a kernel's clock is what
its energy a cycle leaves it.
"""
import argparse
import subprocess
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bwd_problem import ROOT, Problem, backward_kernels  # noqa: E402


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
    if not rows:
        raise RuntimeError("nvidia-smi gave no samples")
    clock = sum(float(r[0]) for r in rows) / len(rows)
    power = sum(float(r[1]) for r in rows) / len(rows)
    return clock, power, runs / elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d", type=int, default=128, choices=(64, 128))
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--spec-dir", type=Path, default=ROOT / "kernels-spec")
    args = ap.parse_args()
    kernel, _ = backward_kernels(args.spec_dir, args.d, args.causal)
    p = Problem(args.d, args.n, args.causal)
    print("%s, %s" % (torch.cuda.get_device_name(), p.describe()))
    for side, fn in (("tkc", lambda: p.ours(kernel)), ("cuDNN", p.cudnn)) * 2:
        clock, power, rate = sample(fn, args.seconds)
        print("  %-6s SM clock %6.0f MHz  power %5.0f W  %7.1f runs/s" % (side, clock, power, rate),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The SM clock and board power while the generated GEMM runs, and while cuBLAS does.

    python3 bench/gemm/clock_probe.py --lib libtkcgemm.so [--variant gemm_none] [--seconds 0.6]
        [--shapes MxNxK,...]

An H100 under a long GEMM runs power-limited, below its boost clock (the GEMM timelines'
clock64 against %globaltimer: ~1.69 GHz at 2048^3, ~1.44 GHz at 8192^3; bench/NOTES.md,
session 24), so a kernel that spends less energy a k-step runs at a higher clock. For each shape
this runs each side back to back for --seconds, three times alternating, while nvidia-smi samples
clocks.sm and power.draw every 20 ms, and prints per side the time a launch (CUDA events over
the whole phase), and the median clock and power of the samples inside the phase (its first
100 ms left out). Inputs are random normal bf16 (not zeros), checked against fp32 first.
"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import Gemm, parse_shapes, rel_err  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--variant", default="gemm_none")
ap.add_argument("--seconds", type=float, default=0.6)
ap.add_argument("--shapes", help="MxNxK,... instead of the six anchor shapes")
args = ap.parse_args()
shapes = parse_shapes(args.shapes)
gemm = Gemm(args.lib)

sampler = subprocess.Popen(
    ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw", "--format=csv,noheader,nounits",
     "-i", str(torch.cuda.current_device()), "-lms", "20"],
    stdout=subprocess.PIPE, text=True)
phases = []  # (shape, side, start, end, ms a launch)


def run_phase(shape, side, fn):
    fn()
    torch.cuda.synchronize()
    # Launches for about --seconds, from a short timed run.
    start_ev, end_ev = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start_ev.record()
    for _ in range(5):
        fn()
    end_ev.record()
    torch.cuda.synchronize()
    count = max(10, int(args.seconds * 1e3 / (start_ev.elapsed_time(end_ev) / 5)))
    t0 = time.time()
    start_ev.record()
    for _ in range(count):
        fn()
    end_ev.record()
    torch.cuda.synchronize()
    t1 = time.time()
    phases.append((shape, side, t0, t1, start_ev.elapsed_time(end_ev) / count))


torch.manual_seed(0)
for M, N, K in shapes:
    A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
    C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    gemm(args.variant, A, B, C)
    torch.cuda.synchronize()
    err = rel_err(C, A.float() @ B.float())
    if not err <= 1e-2:
        print("FAIL %dx%dx%d rel_err=%.2e" % (M, N, K, err), flush=True)
    for _ in range(3):
        run_phase((M, N, K), "ours", lambda: gemm(args.variant, A, B, C))
        run_phase((M, N, K), "cuBLAS", lambda: torch.matmul(A, B))
    del A, B, C
time.sleep(0.1)
sampler.terminate()
samples = []
for line in sampler.stdout.read().splitlines():
    try:
        stamp, clock, power = (x.strip() for x in line.split(","))
        t = datetime.datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f").timestamp()
        samples.append((t, float(clock), float(power)))
    except ValueError:
        continue

for M, N, K in shapes:
    line = "%dx%dx%d" % (M, N, K)
    for side in ("ours", "cuBLAS"):
        ph = [p for p in phases if p[0] == (M, N, K) and p[1] == side]
        inside = [s for s in samples for p in ph if p[2] + 0.1 <= s[0] <= p[3]]
        ms = statistics.median(p[4] for p in ph)
        if inside:
            line += "  %s: %.2f us, %.0f MHz, %.0f W (%d samples)" % (
                side, 1e3 * ms, statistics.median(s[1] for s in inside),
                statistics.median(s[2] for s in inside), len(inside))
        else:
            line += "  %s: %.2f us, no samples" % (side, 1e3 * ms)
    print(line, flush=True)

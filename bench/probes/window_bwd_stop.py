#!/usr/bin/env python3
"""The sliding-window backward with and without its loop's stop, paired in one process.

    PYTHONPATH=python python3 bench/probes/window_bwd_stop.py --base-spec OLD.yaml
        [--out results.json] [--commit ID]

OLD.yaml is a version of kernels-spec/attention_bwd_sliding_window.yaml (say, one whose
loop walks to the end of N); the shipped spec is the other side. Both run on the same
random inputs (B x N = 16384 tokens, hidden 2048, D 64 and 128, no grouped heads) at N 4096
and 16384 with windows 256 and 1024; first both sides' dQ, dK, dV are compared (relative
Frobenius error at most 1e-2 each, outputs poisoned with NaN where stored), then timed with
bench/timing.py's paired protocol. The ratio is the base's time over the shipped kernel's;
TFLOP/s count the window's band only: 2.5 x 4 B H D (sum over queries of the keys it sees).
"""
import argparse
import datetime
import math
import subprocess
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
import tkc  # noqa: E402
from timing import HIDDEN, ROUNDS, TOKENS, WARMUP, paired_rates, write_records  # noqa: E402

SPEC = ROOT / "kernels-spec" / "attention_bwd_sliding_window.yaml"


def band_flops(B, H, N, D, window):
    seen = sum(min(window, q + 1) for q in range(N))
    return 2.5 * 4.0 * B * H * D * seen


def rel(a, b):
    return (torch.linalg.norm(a.float() - b.float()) / torch.linalg.norm(b.float())).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-spec", type=Path, required=True)
    ap.add_argument("--out", default=None)
    ap.add_argument("--commit", default=None)
    args = ap.parse_args()
    commit = args.commit or subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short",
                                            "HEAD"], capture_output=True,
                                           text=True).stdout.strip()
    gpu = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    print("%s, torch %s, commit %s" % (gpu, torch.__version__, commit), flush=True)
    gen = torch.Generator(device="cuda").manual_seed(20261128)
    records, problems = [], []
    for D in (64, 128):
        new = tkc.load(SPEC, D=D, gqa=False).kernel(D=D, gqa=False)
        old = tkc.load(args.base_spec, D=D, gqa=False).kernel(D=D, gqa=False)
        H = HIDDEN // D
        for N in (4096, 16384):
            B = TOKENS // N
            for window in (256, 1024):
                scale = 1 / math.sqrt(D)
                Q, K, V, dO = (torch.randn(B, H, N, D, device="cuda", generator=gen).bfloat16()
                               for _ in range(4))
                L = torch.randn(B, H, N, device="cuda", generator=gen).abs() + 5
                Delta = torch.randn(B, H, N, device="cuda", generator=gen) * 0.1
                outs = {}
                for side, kernel in (("new", new), ("old", old)):
                    dQ = torch.zeros(B, H, N, D, device="cuda")
                    dK, dV = (torch.full((B, H, N, D), float("nan"), device="cuda",
                                         dtype=torch.bfloat16) for _ in range(2))
                    kernel(Q=Q, K=K, V=V, dO=dO, L=L, Delta=Delta,
                           out={"dQ": dQ, "dK": dK, "dV": dV}, scale=scale, window=window)
                    outs[side] = (dQ, dK, dV)
                torch.cuda.synchronize()
                errs = [rel(a, b) for a, b in zip(outs["new"], outs["old"])]
                what = "D=%d B=%d H=%d N=%d window=%d" % (D, B, H, N, window)
                if not all(e <= 1e-2 for e in errs):
                    problems.append("%s: dQ, dK, dV rel %s" % (what, errs))
                    print("FAIL %s: rel %s; not timed" % (what, errs), flush=True)
                    continue
                bufs = {s: (torch.zeros_like(outs[s][0]), outs[s][1], outs[s][2]) for s in outs}

                def run(side, kernel):
                    dQ, dK, dV = bufs[side]
                    return lambda: kernel(Q=Q, K=K, V=V, dO=dO, L=L, Delta=Delta,
                                          out={"dQ": dQ, "dK": dK, "dV": dV}, scale=scale,
                                          window=window)
                flops = band_flops(B, H, N, D, window)
                t_new, t_old, ratio = paired_rates(run("new", new), run("old", old), flops,
                                                   rounds=ROUNDS, warmup=WARMUP)
                print("%-40s stop %6.1f  no stop %6.1f TFLOP/s  ratio %.3f  rel %.1e"
                      % (what, t_new, t_old, ratio, max(errs)), flush=True)
                records.append({"kernel": new.name + "_window_stop", "gpu": gpu,
                                "commit": commit, "date": date,
                                "config": {"B": B, "H": H, "N": N, "D": D, "window": window},
                                "tflops": round(t_new, 1), "baseline": "the same spec without "
                                "the loop's stop (" + args.base_spec.name + ")",
                                "baseline_tflops": round(t_old, 1), "ratio": round(ratio, 3)})
    if args.out:
        write_records(args.out, records)
    for p in problems:
        print("problem: %s" % p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

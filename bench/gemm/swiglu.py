#!/usr/bin/env python3
"""kernels-spec/gemm_swiglu.yaml, C = silu(A B1) * (A B2), checked and timed against
PyTorch (two cuBLAS products, then silu and the product) in one process.

    PYTHONPATH=python python3 bench/gemm/swiglu.py [--check-only] [--out results.json]
        [--commit ID] [--cold-l2]

Check: at ragged shapes (M, N, K of 1, 8, 100, 129, 1000, ...; N and K multiples of 8 as
TMA's 16-byte rows need) with C poisoned with NaN, C against an fp32 reference computed from
the same bf16 inputs: relative Frobenius error at most 1e-2, largest error at most 2e-2 of the
largest |C|, no NaN. Also an empty problem (M = 0: nothing launched) and K = 0 refused.

Benchmark: feed-forward shapes (tokens x hidden -> intermediate), bf16 random normal inputs
scaled by 1/sqrt(K). The baseline is torch.matmul twice and F.silu(g) * u; FLOPs are
4 M N K. 10 warm-up runs of each, then 30 paired rounds (bench/timing.py), the order swapped
every round; --cold-l2 evicts the L2 before every timed run. The ratio is the median of
baseline time / our time. Our kernel is timed through Kernel.launch on prepared pointers.
"""
import argparse
import datetime
import json
import statistics
import subprocess
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import tkc  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from timing import l2_flusher, paired_times  # noqa: E402

SPEC = ROOT / "kernels-spec" / "gemm_swiglu.yaml"
CHECK_SHAPES = ((1, 8, 8), (8, 8, 64), (100, 136, 72), (129, 264, 200), (1000, 1032, 1024),
                (256, 2048, 512), (4097, 384, 136))
BENCH_SHAPES = ((2048, 5632, 2048), (4096, 11008, 4096), (4096, 14336, 4096),
                (8192, 14336, 4096), (16384, 8192, 2048))
REL_FRO = 1e-2
REL_MAX = 2e-2
WARMUP = 10
ROUNDS = 30


def inputs(M, N, K, gen):
    scale = 1.0 / max(1.0, K) ** 0.5
    A = torch.randn(M, K, generator=gen, device="cuda").bfloat16()
    B1 = (torch.randn(K, N, generator=gen, device="cuda") * scale * 4).bfloat16()
    B2 = (torch.randn(K, N, generator=gen, device="cuda") * scale).bfloat16()
    return A, B1, B2


def reference(A, B1, B2):
    g = A.float() @ B1.float()
    return F.silu(g) * (A.float() @ B2.float())


def errors(C, ref):
    err = C.float() - ref
    fro = (err.norm() / ref.norm().clamp_min(1e-30)).item()
    mx = (err.abs().max() / ref.abs().max().clamp_min(1e-30)).item()
    return fro, mx


def check(kernel):
    gen = torch.Generator(device="cuda").manual_seed(20261127)
    failures = 0
    for M, N, K in CHECK_SHAPES:
        A, B1, B2 = inputs(M, N, K, gen)
        C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        got = kernel(A, B1, B2, out=C)
        torch.cuda.synchronize()
        fro, mx = errors(C, reference(A, B1, B2))
        nan = torch.isnan(C).any().item()
        ok = got is C and not nan and fro <= REL_FRO and mx <= REL_MAX
        failures += not ok
        print("%s %s M=%d N=%d K=%d: rel_fro=%.2e rel_max=%.2e NaN=%s"
              % ("ok  " if ok else "FAIL", kernel.name, M, N, K, fro, mx, nan), flush=True)
    # An empty problem launches nothing; K = 0 is refused.
    A, B1, B2 = inputs(0, 64, 64, gen)
    C = kernel(A, B1, B2)
    torch.cuda.synchronize()
    ok = tuple(C.shape) == (0, 64)
    failures += not ok
    print("%s %s M=0: an empty C" % ("ok  " if ok else "FAIL", kernel.name), flush=True)
    A, B1, B2 = inputs(64, 64, 0, gen)
    try:
        kernel(A, B1, B2)
        torch.cuda.synchronize()
        failures += 1
        print("FAIL %s K=0: accepted" % kernel.name, flush=True)
    except tkc.TkcError as e:
        print("ok   %s K=0 refused: %s" % (kernel.name, str(e).splitlines()[0]), flush=True)
    return failures


def bench(kernel, args):
    gpu = torch.cuda.get_device_name()
    commit = args.commit or subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short",
                                            "HEAD"], capture_output=True,
                                           text=True).stdout.strip() or "unknown"
    date = datetime.date.today().isoformat()
    flush = l2_flusher() if args.cold_l2 else None
    gen = torch.Generator(device="cuda").manual_seed(7)
    records, problems = [], []
    for M, N, K in BENCH_SHAPES:
        A, B1, B2 = inputs(M, N, K, gen)
        C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        kernel(A, B1, B2, out=C)

        def base():
            return F.silu(torch.matmul(A, B1)) * torch.matmul(A, B2)
        ref = base()
        torch.cuda.synchronize()
        fro, _ = errors(C, ref.float())
        what = "M=%d N=%d K=%d" % (M, N, K)
        if torch.isnan(C).any().item() or not fro <= REL_FRO:
            problems.append("%s: rel_fro %.2e against torch" % (what, fro))
            print("FAIL %s: rel_fro %.2e against torch; not timed" % (what, fro), flush=True)
            continue
        pointers = [t.data_ptr() for t in (A, B1, B2, C)]
        sizes = [{"M": M, "N": N, "K": K}[s] for s in kernel.info.sizes]
        stream = torch.cuda.current_stream().cuda_stream

        def ours():
            kernel.launch(pointers, sizes, stream, [])
        t_ours, t_base = paired_times(ours, base, rounds=ROUNDS, warmup=WARMUP, flush=flush)
        flops = 4.0 * M * N * K
        ours_tf = flops / statistics.median(t_ours) / 1e9
        base_tf = flops / statistics.median(t_base) / 1e9
        ratio = statistics.median(b / o for o, b in zip(t_ours, t_base))
        config = {"M": M, "N": N, "K": K}
        if args.cold_l2:
            config["cold_l2"] = True
        records.append({"kernel": "gemm_swiglu_vs_cublas", "config": config, "gpu": gpu,
                        "commit": commit, "date": date, "tflops": round(ours_tf, 1),
                        "baseline": "cublas x2 + torch silu*mul",
                        "baseline_tflops": round(base_tf, 1), "ratio": round(ratio, 3),
                        "rel_err": float("%.3e" % fro)})
        print("gemm_swiglu %-28s tkc %6.1f  torch %6.1f TFLOP/s  ratio %.3f  rel_fro %.2e"
              % (what, ours_tf, base_tf, ratio, fro), flush=True)
        del A, B1, B2, C, ref
        torch.cuda.empty_cache()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(records, f, indent=1)
            f.write("\n")
    for p in problems:
        print("problem: %s" % p)
    return len(problems)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument("--commit", default=None)
    ap.add_argument("--cold-l2", action="store_true")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    print("%s, torch %s" % (torch.cuda.get_device_name(), torch.__version__), flush=True)
    kernel = next(iter(tkc.load(SPEC).kernels.values()))
    failures = check(kernel)
    if not args.check_only:
        failures += bench(kernel, args)
    print("swiglu: %s" % ("all passed" if not failures else "%d FAILED" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

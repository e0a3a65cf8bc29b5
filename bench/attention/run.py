#!/usr/bin/env python3
"""Generated attention forward against PyTorch SDPA (cuDNN and FlashAttention-2
backends), side by side in one process, on the FlashAttention-3 protocol.

    PYTHONPATH=python python3 bench/attention/run.py [--out results.json] [--commit ID] [--quick]
        [--d 64] [--cold-l2]

Configurations: batch x sequence length = 16384 tokens, hidden 2048, so
H = 2048 / D heads (32 for D=64, 16 for D=128, 8 for D=256), N in 512 ... 16384,
B = 16384 / N, H_kv = H, causal and not. FLOPs = 4 B H N^2 D (half for
causal). bf16 random normal Q, K, V.

The kernels come from kernels-spec/attention_fwd.yaml through tkc.load (the
same cache as python/gpu_tests). For every configuration and baseline: the
outputs (poisoned with NaN) are first checked against the baseline's
(relative Frobenius error of O at most 1e-2, every row written); then 10
warm-up runs of each, then 30 rounds of one run of each, the order swapped
every round, each run bracketed by its own CUDA events, the host queueing the
rounds while the GPU sleeps so that the times are the GPU's (bench/timing.py).
TFLOP/s are from the
medians of each side; the ratio is the median of the per-round ratios
(baseline time / our time: above 1 means ours is faster). Our kernel is timed
through Kernel.launch on prepared pointers, so the Python argument checks of a
call are not timed. --cold-l2 evicts the L2 before every timed run
(bench/timing.py; the records' config then says "cold_l2": true).
"""
import argparse
import datetime
import math
import subprocess
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import tkc  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from timing import (HIDDEN, N_VALUES, QUICK_N_VALUES, ROUNDS, TOKENS,  # noqa: E402
                    WARMUP, l2_flusher, paired_rates, write_records)

SPEC = ROOT / "kernels-spec" / "attention_fwd.yaml"
N_VALUES = (512,) + N_VALUES  # the protocol's, and 512
BASELINES = (("cuDNN (torch SDPA)", SDPBackend.CUDNN_ATTENTION),
             ("FlashAttention-2 (torch SDPA)", SDPBackend.FLASH_ATTENTION))
REL_ERR_MAX = 1e-2


def head_dim(kernel):
    q = next(a for a in kernel.info.arguments if a.name == "Q")
    return q.dims[-1]


def is_causal(kernel):
    if "causal" in kernel.params:
        return kernel.params["causal"] == "true"
    return "causal" in kernel.name


def rel_err(out, ref):
    return (torch.linalg.norm(out.float() - ref.float()) / torch.linalg.norm(ref.float())).item()


def configs(n_values, d_values):
    for D in d_values:
        H = HIDDEN // D
        for causal in (False, True):
            for N in n_values:
                yield {"B": TOKENS // N, "H": H, "N": N, "D": D, "causal": causal}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="JSON file for the records")
    ap.add_argument("--commit", default=None, help="commit the kernels were generated at")
    ap.add_argument("--quick", action="store_true", help="N = 1024 and 4096 only")
    ap.add_argument("--d", type=int, action="append", choices=(64, 128, 256),
                    help="head dimension (repeat; default both)")
    ap.add_argument("--spec", default=str(SPEC))
    ap.add_argument("--cold-l2", action="store_true", help="evict the L2 before every timed run")
    args = ap.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    gpu = torch.cuda.get_device_name()
    commit = args.commit or subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short",
                                            "HEAD"], capture_output=True,
                                           text=True).stdout.strip() or "unknown"
    date = datetime.date.today().isoformat()
    print("%s, torch %s, cuDNN %s, commit %s" % (gpu, torch.__version__,
                                                torch.backends.cudnn.version(), commit),
          flush=True)
    module = tkc.load(args.spec)
    kernels = {(head_dim(k), is_causal(k)): k for k in module.kernels.values()}
    print("kernels: %s" % ", ".join("%s (D=%d, causal=%s)" % (k.name, d, c)
                                   for (d, c), k in sorted(kernels.items())), flush=True)
    torch.manual_seed(20261122)
    flush = l2_flusher() if args.cold_l2 else None

    records, rows, problems = [], [], []
    n_values = QUICK_N_VALUES if args.quick else N_VALUES
    for cfg in configs(n_values, args.d or (64, 128, 256)):
        B, H, N, D, causal = cfg["B"], cfg["H"], cfg["N"], cfg["D"], cfg["causal"]
        what = "B=%d H=%d N=%d D=%d %s" % (B, H, N, D, "causal" if causal else "non-causal")
        kernel = kernels.get((D, causal))
        if kernel is None:
            problems.append("%s: no instantiation with D=%d causal=%s" % (what, D, causal))
            print("SKIP %s: no kernel" % what, flush=True)
            continue
        flops = 4.0 * B * H * N * N * D / (2 if causal else 1)
        scale = 1 / math.sqrt(D)
        Q, K, V = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16)
                   for _ in range(3))
        O = torch.full((B, H, N, D), float("nan"), device="cuda", dtype=torch.bfloat16)
        L = torch.full((B, H, N), float("nan"), device="cuda", dtype=torch.float32)
        try:
            kernel(Q, K, V, out=(O, L), scale=scale)
            torch.cuda.synchronize()
        except tkc.TkcError as e:
            problems.append("%s: %s" % (what, e))
            print("FAIL %s: %s" % (what, e), flush=True)
            continue
        unwritten = (torch.isnan(O).any(-1) | torch.isnan(L)).sum().item()
        # The raw launcher on prepared arguments: what is timed.
        pointers = [t.data_ptr() for t in (Q, K, V, O, L)]
        sizes = [{"B": B, "H": H, "N": N, "H_kv": H}[s] for s in kernel.info.sizes]
        stream = torch.cuda.current_stream().cuda_stream

        def ours():
            kernel.launch(pointers, sizes, stream, [scale])

        for name, backend in BASELINES:
            with sdpa_kernel(backend):
                def base():
                    return F.scaled_dot_product_attention(Q, K, V, is_causal=causal, scale=scale)
                try:
                    ref = base()
                    torch.cuda.synchronize()
                except RuntimeError as e:
                    problems.append("%s: baseline %s failed: %s" % (what, name, e))
                    print("SKIP %s vs %s: %s" % (what, name, str(e).splitlines()[0]), flush=True)
                    continue
                err = rel_err(O, ref)
                if unwritten or not err <= REL_ERR_MAX:
                    problems.append("%s: rel_err %.3e against %s, %d rows unwritten"
                                    % (what, err, name, unwritten))
                    print("FAIL %s: rel_err %.3e against %s, %d rows unwritten; not timed"
                          % (what, err, name, unwritten), flush=True)
                    continue
                ours_tflops, base_tflops, ratio = paired_rates(
                    ours, base, flops, rounds=ROUNDS, warmup=WARMUP, flush=flush)
            config = dict(cfg, cold_l2=True) if args.cold_l2 else dict(cfg)
            records.append({"kernel": kernel.name, "config": config, "gpu": gpu,
                            "commit": commit, "date": date, "tflops": round(ours_tflops, 1),
                            "baseline": name, "baseline_tflops": round(base_tflops, 1),
                            "ratio": round(ratio, 3), "rel_err": float("%.3e" % err)})
            rows.append((kernel.name, what, ours_tflops, name, base_tflops, ratio, err))
            print("%-28s %-36s tkc %6.1f  %-30s %6.1f  ratio %.3f  rel_err %.2e"
                  % (kernel.name, what, ours_tflops, name, base_tflops, ratio, err), flush=True)
        del Q, K, V, O, L
        torch.cuda.empty_cache()

    if args.out:
        write_records(args.out, records)
    print("\n| kernel | config | tkc TFLOP/s | baseline | baseline TFLOP/s | ratio | rel_err |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %.1f | %s | %.1f | %.3f | %.2e |" % r)
    for p in problems:
        print("problem: %s" % p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

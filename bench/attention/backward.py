#!/usr/bin/env python3
"""The attention backward (kernels-spec/attention_bwd.yaml) against SDPA's cuDNN and
FlashAttention-2 backends' backward, side by side in one process, on the FlashAttention-3
protocol.

    PYTHONPATH=python python3 bench/attention/backward.py [--out results.json] [--commit ID]
        [--quick] [--d 64] [--causal true] [--cold-l2] [--kernel-only] [--with-forward]
        [--spec-dir DIR]

Configurations: batch x sequence length = 16384 tokens, hidden 2048, so H = 2048 / D
heads, N in 1024 ... 16384, B = 16384 / N, causal and not. Backward FLOPs = 2.5 x the
forward's 4 B H N^2 D (half for causal).

Ours is the whole backward a training step runs: Delta = rowsum(dO * O)
(attention_bwd_delta.yaml), dQ zeroed, the kernel, dQ converted to bf16. With --kernel-only, the kernel and dQ's zeroing alone. A
baseline's is torch.autograd.grad of SDPA's output with that backend, given dO (its forward
is run once, outside the timing). O and L for ours come from the fp32 reference of the same
inputs; every point first checks our dQ, dK, dV against the baseline's (relative Frobenius
error at most 2e-2, no NaN) and is timed only if they agree. Then 10 warm-up runs of each
and 30 paired rounds (bench/timing.py), the order swapped every round; --cold-l2 evicts the
L2 before every timed run. The ratio is the median of the baseline's time / ours (above 1:
ours faster).

--with-forward times a training step's attention instead: forward and backward together,
tkc.functional.attention (attention_fwd.yaml, then the backward above) against SDPA's
forward and backward with the backend, from q, k, v that require grad to their gradients
(FLOPs 3.5 x the forward's). Its records' kernel names end in `_fwd_bwd`.
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
import tkc  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from timing import (HIDDEN, N_VALUES, QUICK_N_VALUES, ROUNDS, TOKENS, WARMUP,  # noqa: E402
                    l2_flusher, paired_rates, write_records)

REL_ERR_MAX = 2e-2


def rel_err(x, ref):
    return ((x.float() - ref.float()).norm() / ref.float().norm()).item()


def forward_lse(Q, K, scale, causal):
    """L = logsumexp of the scaled scores per query, fp32, chunked over heads."""
    B, H, N, D = Q.shape
    L = torch.empty(B, H, N, device="cuda", dtype=torch.float32)
    step = max(1, (1 << 31) // (B * N * N * 4))
    for h0 in range(0, H, step):
        S = torch.matmul(Q[:, h0:h0 + step].float(), K[:, h0:h0 + step].float().transpose(-1, -2))
        S *= scale
        if causal:
            S.masked_fill_(torch.ones(N, N, dtype=torch.bool, device="cuda").triu(1), float("-inf"))
        L[:, h0:h0 + step] = torch.logsumexp(S, dim=-1)
        del S
    return L


def setup(args):
    gpu = torch.cuda.get_device_name()
    commit = args.commit or subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short",
                                            "HEAD"], capture_output=True,
                                           text=True).stdout.strip() or "unknown"
    print("%s, torch %s, commit %s%s%s%s" % (gpu, torch.__version__, commit,
                                            ", cold L2" if args.cold_l2 else "",
                                            ", kernel only" if args.kernel_only else "",
                                            ", forward and backward" if args.with_forward
                                            else ""), flush=True)
    torch.manual_seed(20261128)
    return gpu, commit, datetime.date.today().isoformat(), \
        (l2_flusher() if args.cold_l2 else None)


def finish(args, records, problems):
    """Writes the records (--out) and reports the points that were not timed; the exit code."""
    if args.out:
        write_records(args.out, records)
    for p in problems:
        print("PROBLEM", p)
    return 1 if problems else 0


def forward_backward(args):
    """--with-forward: a training step's attention, forward and backward, both sides."""
    import tkc.functional as tkf
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    gpu, commit, date, flush = setup(args)
    backends = {"cudnn": ("SDPA cuDNN forward and backward", SDPBackend.CUDNN_ATTENTION),
                "fa2": ("SDPA FlashAttention-2 forward and backward",
                        SDPBackend.FLASH_ATTENTION)}
    records, problems = [], []
    for D in args.d or (64, 128):
        H = HIDDEN // D
        for causal in [c == "true" for c in (args.causal or ("false", "true"))]:
            for N in QUICK_N_VALUES if args.quick else N_VALUES:
                B = TOKENS // N
                what = "B=%d H=%d N=%d D=%d %s" % (B, H, N, D,
                                                   "causal" if causal else "non-causal")
                flops = 3.5 * 4 * B * H * N * N * D * (0.5 if causal else 1.0)
                q, k, v = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16)
                           .requires_grad_() for _ in range(3))
                dO = torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16)

                def ours():
                    out = tkf.attention(q, k, v, causal=causal)
                    return torch.autograd.grad(out, (q, k, v), dO)

                for short in args.baseline or ("cudnn", "fa2"):
                    desc, backend = backends[short]

                    def base():
                        with sdpa_kernel(backend):
                            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        return torch.autograd.grad(out, (q, k, v), dO)

                    mine, theirs = ours(), base()
                    errs = [rel_err(a, b) for a, b in zip(mine, theirs)]
                    nans = sum(torch.isnan(t).sum().item() for t in mine)
                    if nans or not max(errs) <= REL_ERR_MAX:
                        problems.append("%s: rel_err %s, %d NaN vs %s"
                                        % (what, errs, nans, short))
                        print("FAIL %s: rel_err %s, %d NaN vs %s; not timed"
                              % (what, errs, nans, short), flush=True)
                        continue
                    del mine, theirs
                    ours_tflops, base_tflops, ratio = paired_rates(
                        ours, base, flops, rounds=ROUNDS, warmup=WARMUP, flush=flush)
                    config = {"B": B, "H": H, "N": N, "D": D, "causal": causal,
                              "forward_and_backward": True}
                    if args.cold_l2:
                        config["cold_l2"] = True
                    name = "attention_D%d%s_fwd_bwd_vs_%s" % (D, "_causal" if causal else "",
                                                              short)
                    records.append({"kernel": name, "config": config, "gpu": gpu,
                                    "commit": commit, "date": date,
                                    "tflops": round(ours_tflops, 1), "baseline": desc,
                                    "baseline_tflops": round(base_tflops, 1),
                                    "ratio": round(ratio, 3),
                                    "rel_err": float("%.3e" % max(errs))})
                    print("%-32s %-36s tkc %6.1f  %s %6.1f  ratio %.3f  rel_err %.2e"
                          % (name, what, ours_tflops, short, base_tflops, ratio, max(errs)),
                          flush=True)
                del q, k, v, dO
                torch.cuda.empty_cache()
    return finish(args, records, problems)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="JSON file for the records")
    ap.add_argument("--commit", default=None, help="commit the kernels were generated at")
    ap.add_argument("--quick", action="store_true", help="N = 1024 and 4096 only")
    ap.add_argument("--d", type=int, action="append", choices=(64, 128),
                    help="head dimension (repeat; default both)")
    ap.add_argument("--causal", action="append", choices=("false", "true"),
                    help="causal or not (repeat; default both)")
    ap.add_argument("--baseline", action="append", choices=("cudnn", "fa2"),
                    help="baselines (repeat; default both)")
    ap.add_argument("--cold-l2", action="store_true", help="evict the L2 before every timed run")
    ap.add_argument("--kernel-only", action="store_true",
                    help="time our kernel and dQ's zeroing only (Delta and the conversion not)")
    ap.add_argument("--with-forward", action="store_true",
                    help="time forward and backward together (tkc.functional.attention)")
    ap.add_argument("--spec-dir", type=Path, default=ROOT / "kernels-spec",
                    help="where attention_bwd.yaml and attention_bwd_delta.yaml are read "
                    "(another version of them, to compare; default the tree's)")
    args = ap.parse_args()
    if args.with_forward:
        return forward_backward(args)
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F

    gpu, commit, date, flush = setup(args)
    module = tkc.load(args.spec_dir / "attention_bwd.yaml")
    deltas = {int(k.params["D"]): k
              for k in tkc.load(args.spec_dir / "attention_bwd_delta.yaml").kernels.values()}
    kernels = {(int(k.params["D"]), k.params["causal"] == "true"): k
               for k in module.kernels.values() if k.params["gqa"] == "false"}
    backends = {"cudnn": ("SDPA cuDNN backward", SDPBackend.CUDNN_ATTENTION),
                "fa2": ("SDPA FlashAttention-2 backward", SDPBackend.FLASH_ATTENTION)}
    records, problems = [], []
    for D in args.d or (64, 128):
        H = HIDDEN // D
        for causal in [c == "true" for c in (args.causal or ("false", "true"))]:
            kernel = kernels[(D, causal)]
            for N in QUICK_N_VALUES if args.quick else N_VALUES:
                B = TOKENS // N
                scale = 1 / math.sqrt(D)
                what = "B=%d H=%d N=%d D=%d %s" % (B, H, N, D,
                                                   "causal" if causal else "non-causal")
                flops = 2.5 * 4 * B * H * N * N * D * (0.5 if causal else 1.0)
                Q, K, V, dO = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16)
                               for _ in range(4))
                L = forward_lse(Q, K, scale, causal)
                q, k, v = (t.detach().requires_grad_() for t in (Q, K, V))
                dQ = torch.empty(B, H, N, D, device="cuda", dtype=torch.float32)
                dK = torch.full((B, H, N, D), float("nan"), device="cuda", dtype=torch.bfloat16)
                dV = torch.full((B, H, N, D), float("nan"), device="cuda", dtype=torch.bfloat16)
                O = None
                args_named = {}
                stream = torch.cuda.current_stream().cuda_stream
                for short in args.baseline or ("cudnn", "fa2"):
                    desc, backend = backends[short]
                    with sdpa_kernel(backend):
                        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                             scale=scale)
                    grads = torch.autograd.grad(out, (q, k, v), dO, retain_graph=True)
                    if O is None:
                        O = out.detach()
                        Delta = torch.empty(B, H, N, device="cuda", dtype=torch.float32)
                        delta = deltas[D]
                        delta_named = dict(O=O, dO=dO, Delta=Delta)
                        delta_pointers = [delta_named[a.name].data_ptr()
                                          for a in delta.info.arguments]
                        delta_sizes = [{"B": B, "H": H, "N": N}[s] for s in delta.info.sizes]
                        named = dict(Q=Q, K=K, V=V, dO=dO, L=L, Delta=Delta, dQ=dQ, dK=dK, dV=dV)
                        pointers = [named[a.name].data_ptr() for a in kernel.info.arguments]
                        sizes = [{"B": B, "H": H, "N": N, "H_kv": H}[s]
                                 for s in kernel.info.sizes]
                        args_named = dict(pointers=pointers, sizes=sizes)

                    def ours_kernel():
                        dQ.zero_()
                        kernel.launch(args_named["pointers"], args_named["sizes"], stream, [scale])

                    def ours_all():
                        delta.launch(delta_pointers, delta_sizes, stream, [])
                        ours_kernel()
                        return dQ.to(torch.bfloat16)

                    def base():
                        torch.autograd.grad(out, (q, k, v), dO, retain_graph=True)

                    dq = ours_all()
                    torch.cuda.synchronize()
                    errs = [rel_err(dq, grads[0]), rel_err(dK, grads[1]), rel_err(dV, grads[2])]
                    nans = sum(torch.isnan(t).sum().item() for t in (dq, dK, dV))
                    if nans or not max(errs) <= REL_ERR_MAX:
                        problems.append("%s: rel_err dQ %.2e dK %.2e dV %.2e, %d NaN vs %s"
                                        % (what, *errs, nans, short))
                        print("FAIL %s: rel_err dQ %.2e dK %.2e dV %.2e, %d NaN vs %s; not timed"
                              % (what, *errs, nans, short), flush=True)
                        continue
                    ours = ours_kernel if args.kernel_only else ours_all
                    ours_tflops, base_tflops, ratio = paired_rates(
                        ours, base, flops, rounds=ROUNDS, warmup=WARMUP, flush=flush)
                    config = {"B": B, "H": H, "N": N, "D": D, "causal": causal}
                    if args.cold_l2:
                        config["cold_l2"] = True
                    if args.kernel_only:
                        config["kernel_only"] = True
                    records.append({"kernel": "%s_vs_%s" % (kernel.name, short),
                                    "config": config, "gpu": gpu, "commit": commit,
                                    "date": date, "tflops": round(ours_tflops, 1),
                                    "baseline": desc, "baseline_tflops": round(base_tflops, 1),
                                    "ratio": round(ratio, 3),
                                    "rel_err": float("%.3e" % max(errs))})
                    print("%-28s %-36s tkc %6.1f  %s %6.1f  ratio %.3f  rel_err %.2e"
                          % (kernel.name, what, ours_tflops, short, base_tflops, ratio,
                             max(errs)), flush=True)
                    del grads
                del Q, K, V, dO, q, k, v, dQ, dK, dV, L, O
                torch.cuda.empty_cache()
    return finish(args, records, problems)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Generated GEMM against cuBLAS (torch.matmul), side by side in one process.

    python3 bench/gemm/run.py --lib libtkcgemm.so [--out results.json] [--quick] [--cold-l2]

The library is the generated gemm.cu linked with bench/gemm/tkc_gemm_ext.cu.
Every timed kernel is first checked against an fp32 reference on the same
random inputs (output poisoned with NaN before the run). Timing: bf16 random
normal inputs; bench/timing.py's paired protocol, 200 rounds after 20 warm-up
runs of each (alternating, each run bracketed by its own CUDA events, the host
queueing the rounds while the GPU sleeps, so that the times are the GPU's);
the ratio reported is the median of the per-round ratios, the TFLOP/s the
medians of each side. --cold-l2 evicts the L2 before every timed run
(bench/timing.py), so that both sides read their operands from memory.
"""
import argparse
import ctypes
import datetime
import os
import subprocess
import sys


import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from timing import l2_flusher, paired_rates, write_records  # noqa: E402

SHAPES = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
          (8192, 8192, 28672), (16384, 4096, 4096), (4096, 14336, 4096)]


def parse_shapes(text):
    """The anchor shapes for None, else "MxNxK,..." as (M, N, K) tuples."""
    return SHAPES if not text else [tuple(int(x) for x in s.split("x")) for s in text.split(",")]


class Gemm:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.tkc_gemm.restype = ctypes.c_int
        self.lib.tkc_gemm.argtypes = [ctypes.c_char_p] + [ctypes.c_void_p] * 5 + \
            [ctypes.c_longlong] * 3 + [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        self.err = ctypes.create_string_buffer(1024)

    def __call__(self, variant, A, B, C, bias=None, R=None):
        M, K = A.shape
        N = C.shape[1]
        ptr = lambda t: ctypes.c_void_p(t.data_ptr() if t is not None else 0)
        rc = self.lib.tkc_gemm(variant.encode(), ptr(A), ptr(B), ptr(C), ptr(bias), ptr(R),
                               M, N, K, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream),
                               self.err, len(self.err))
        if rc != 0:
            raise RuntimeError(self.err.value.decode())


def reference(A, B, transpose_b, epilogue, bias, R):
    ref = A.float() @ (B.float().T if transpose_b else B.float())
    if epilogue in ("bias", "bias_gelu"):
        ref = ref + bias.float()
    if epilogue in ("gelu", "bias_gelu"):
        ref = F.gelu(ref, approximate="tanh")
    if epilogue == "residual":
        ref = ref + R.float()
    return ref


def rel_err(out, ref):
    return (torch.linalg.norm(out.float() - ref) / torch.linalg.norm(ref)).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", default=None)
    ap.add_argument("--commit", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cold-l2", action="store_true", help="evict the L2 before every timed run")
    args = ap.parse_args()
    gemm = Gemm(args.lib)
    gpu = torch.cuda.get_device_name()
    commit = args.commit or subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                           capture_output=True, text=True).stdout.strip()
    date = datetime.date.today().isoformat()
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    flush = l2_flusher() if args.cold_l2 else None
    l2 = ", cold L2" if args.cold_l2 else ""
    records = []
    shapes = SHAPES[:2] if args.quick else SHAPES
    rows = []
    for (M, N, K) in shapes:
        flops = 2.0 * M * N * K
        A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        Bt = B.t().contiguous()
        bias = torch.randn(N, device="cuda", dtype=torch.bfloat16)
        C = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        cases = [
            ("gemm_none", "C = A·B", False, "none", lambda: torch.matmul(A, B), "cuBLAS (torch.matmul)"),
            ("gemm_transpose_b_none", "C = A·Bᵀ", True, "none", lambda: torch.matmul(A, Bt.t()),
             "cuBLAS (torch.matmul, B column-major)"),
            ("gemm_gelu", "C = gelu(A·B)", False, "gelu",
             lambda: F.gelu(torch.matmul(A, B), approximate="tanh"), "cuBLAS + torch gelu(tanh)"),
        ]
        for variant, what, tb, epi, baseline, baseline_name in cases:
            Bop = Bt if tb else B
            C.fill_(float("nan"))
            gemm(variant, A, Bop, C, bias)
            torch.cuda.synchronize()
            unwritten = torch.isnan(C).sum().item()
            err = rel_err(C, reference(A, Bop, tb, epi, bias, None))
            if unwritten or not err <= 1e-2:
                raise SystemExit(f"{variant} {M}x{N}x{K}: rel_err {err:.3e}, {unwritten} unwritten")
            ours, base, ratio = paired_rates(lambda: gemm(variant, A, Bop, C, bias), baseline,
                                             flops, rounds=200, warmup=20, flush=flush)
            rec = {"kernel": variant, "config": f"{what}, M={M} N={N} K={K}, bf16 in, f32 acc, bf16 out{l2}",
                   "gpu": gpu, "commit": commit, "date": date, "tflops": round(ours, 1),
                   "baseline": baseline_name, "baseline_tflops": round(base, 1),
                   "ratio": round(ratio, 3), "rel_err": float(f"{err:.3e}")}
            records.append(rec)
            rows.append((variant, f"{M}x{N}x{K}", ours, base, ratio, err))
            print(f"{variant:24s} {M:>6}x{N:<6}x{K:<6} tkc {ours:7.1f}  base {base:7.1f}  "
                  f"ratio {ratio:.3f}  rel_err {err:.2e}", flush=True)
        del A, B, Bt, C
        torch.cuda.empty_cache()
    if args.out:
        write_records(args.out, records)
    print("\n| kernel | shape | tkc TFLOP/s | baseline TFLOP/s | ratio | rel_err |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]:.1f} | {r[3]:.1f} | {r[4]:.3f} | {r[5]:.2e} |")


if __name__ == "__main__":
    main()

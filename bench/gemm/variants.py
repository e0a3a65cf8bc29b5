#!/usr/bin/env python3
"""Generated GEMM variants, checked and timed against PyTorch in one process.

    PYTHONPATH=python python3 bench/gemm/variants.py [--variant swiglu|batched|f16|...]
        [--check-only] [--out results.json] [--commit ID] [--cold-l2]

Variants (each a spec in kernels-spec/ and the PyTorch program that computes the same):
  swiglu   gemm_swiglu.yaml, C = silu(A B1) * (A B2); baseline torch.matmul twice and
           F.silu(g) * u. FLOPs 4 M N K. Feed-forward shapes (tokens x hidden ->
           intermediate); B1 scaled by 4/sqrt(K) and B2 by 1/sqrt(K) so that silu's
           whole range is used.
  batched  gemm_batched.yaml, C[z] = A[z] B[z] on rank-3 globals; baseline torch.bmm.
           FLOPs 2 Z M N K.
  fp8, fp8_e5m2
           gemm_fp8.yaml, C = scale * A Bt^T with A [M, K] and Bt [N, K] in e4m3 (or e5m2),
           C bf16, scale 1; baseline torch._scaled_mm(A, Bt.t(), 1, 1, out_dtype=bf16)
           (cuBLASLt's fp8 GEMM; it refuses two e5m2 operands, so fp8_e5m2 is checked only).
           Inputs random normal cast to fp8. FLOPs 2 M N K.
  f16, f32out, f16_f32out
           gemm.yaml's gemm_none_half (f16 A, B and C), gemm_none_f32_out (bf16 A and B, the
           f32 accumulator as C) and gemm_none_half_f32_out; baseline torch.matmul, and for
           an f32 C torch.mm(A, B, out_dtype=torch.float32) (cuBLAS with an f32 output).
           FLOPs 2 M N K.

Check: at ragged shapes (sizes of 1, 8, 100, 129, 1000, ...; N and K multiples of 8 as TMA's
16-byte rows need) with C poisoned with NaN, C against an fp32 reference computed from the
same inputs: relative Frobenius error at most 1e-2, largest error at most 2e-2 of the
largest |C|, no NaN. Also empty problems (nothing launched, an empty C) and K = 0 refused.

Benchmark: for each shape, C is first checked against the baseline (relative Frobenius error
at most 1e-2); then 10 warm-up runs of each and 30 paired rounds (bench/timing.py), the order
swapped every round; --cold-l2 evicts the L2 before every timed run. The ratio is the median
of baseline time / our time. Our kernel is timed through Kernel.launch on prepared pointers.
"""
import argparse
import datetime
import subprocess
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import tkc  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from timing import l2_flusher, paired_rates, write_records  # noqa: E402

REL_FRO = 1e-2
REL_MAX = 2e-2
WARMUP = 10
ROUNDS = 30


class SwiGLU:
    spec = ROOT / "kernels-spec" / "gemm_swiglu.yaml"
    params = {}
    out_dtype = torch.bfloat16
    record = "gemm_swiglu_vs_cublas"
    baseline_name = "cublas x2 + torch silu*mul"
    check_shapes = ({"M": 1, "N": 8, "K": 8}, {"M": 8, "N": 8, "K": 64},
                    {"M": 100, "N": 136, "K": 72}, {"M": 129, "N": 264, "K": 200},
                    {"M": 1000, "N": 1032, "K": 1024}, {"M": 256, "N": 2048, "K": 512},
                    {"M": 4097, "N": 384, "K": 136})
    empty_shapes = ({"M": 0, "N": 64, "K": 64},)
    bench_shapes = ({"M": 2048, "N": 5632, "K": 2048}, {"M": 4096, "N": 11008, "K": 4096},
                    {"M": 4096, "N": 14336, "K": 4096}, {"M": 8192, "N": 14336, "K": 4096},
                    {"M": 16384, "N": 8192, "K": 2048})

    @staticmethod
    def inputs(s, gen):
        scale = 1.0 / max(1.0, s["K"]) ** 0.5
        A = torch.randn(s["M"], s["K"], generator=gen, device="cuda").bfloat16()
        B1 = (torch.randn(s["K"], s["N"], generator=gen, device="cuda") * scale * 4).bfloat16()
        B2 = (torch.randn(s["K"], s["N"], generator=gen, device="cuda") * scale).bfloat16()
        return [A, B1, B2]

    @staticmethod
    def output_shape(s):
        return (s["M"], s["N"])

    @staticmethod
    def reference(A, B1, B2):
        return F.silu(A.float() @ B1.float()) * (A.float() @ B2.float())

    @staticmethod
    def baseline(A, B1, B2):
        return F.silu(torch.matmul(A, B1)) * torch.matmul(A, B2)

    @staticmethod
    def flops(s):
        return 4.0 * s["M"] * s["N"] * s["K"]


class Batched:
    spec = ROOT / "kernels-spec" / "gemm_batched.yaml"
    params = {}
    out_dtype = torch.bfloat16
    record = "gemm_batched_vs_cublas_bmm"
    baseline_name = "torch.bmm (cublas)"
    check_shapes = ({"Z": 1, "M": 1, "N": 8, "K": 8}, {"Z": 2, "M": 8, "N": 8, "K": 64},
                    {"Z": 3, "M": 100, "N": 136, "K": 72}, {"Z": 5, "M": 129, "N": 264, "K": 200},
                    {"Z": 2, "M": 1000, "N": 1032, "K": 1024},
                    {"Z": 1, "M": 4097, "N": 384, "K": 136})
    empty_shapes = ({"Z": 0, "M": 64, "N": 64, "K": 64}, {"Z": 2, "M": 0, "N": 64, "K": 64})
    bench_shapes = ({"Z": 8, "M": 2048, "N": 2048, "K": 2048},
                    {"Z": 32, "M": 1024, "N": 1024, "K": 1024},
                    {"Z": 4, "M": 4096, "N": 4096, "K": 4096},
                    {"Z": 16, "M": 512, "N": 4096, "K": 4096},
                    {"Z": 64, "M": 512, "N": 512, "K": 512})

    @staticmethod
    def inputs(s, gen):
        A = torch.randn(s["Z"], s["M"], s["K"], generator=gen, device="cuda").bfloat16()
        B = torch.randn(s["Z"], s["K"], s["N"], generator=gen, device="cuda").bfloat16()
        return [A, B]

    @staticmethod
    def output_shape(s):
        return (s["Z"], s["M"], s["N"])

    @staticmethod
    def reference(A, B):
        return torch.bmm(A.float(), B.float())

    @staticmethod
    def baseline(A, B):
        return torch.bmm(A, B)

    @staticmethod
    def flops(s):
        return 2.0 * s["Z"] * s["M"] * s["N"] * s["K"]


class Types:
    """gemm.yaml without an epilogue, with f16 inputs, an f32 output or both."""
    spec = ROOT / "kernels-spec" / "gemm.yaml"
    check_shapes = SwiGLU.check_shapes
    empty_shapes = ({"M": 0, "N": 64, "K": 64},)
    bench_shapes = ({"M": 2048, "N": 2048, "K": 2048}, {"M": 4096, "N": 4096, "K": 4096},
                    {"M": 8192, "N": 8192, "K": 8192}, {"M": 4096, "N": 11008, "K": 4096},
                    {"M": 16384, "N": 8192, "K": 2048})

    def __init__(self, half, f32_out):
        self.params = {"transpose_b": False, "epilogue": "none", "half": half,
                       "f32_out": f32_out}
        self.in_dtype = torch.float16 if half else torch.bfloat16
        self.out_dtype = torch.float32 if f32_out else self.in_dtype
        self.f32_out = f32_out
        self.record = "gemm_%s%s_vs_cublas" % ("f16" if half else "bf16",
                                               "_f32out" if f32_out else "")
        self.baseline_name = ("torch.mm out_dtype=float32 (cublas)" if f32_out
                              else "torch.matmul (cublas)")

    def inputs(self, s, gen):
        A = torch.randn(s["M"], s["K"], generator=gen, device="cuda").to(self.in_dtype)
        B = torch.randn(s["K"], s["N"], generator=gen, device="cuda").to(self.in_dtype)
        return [A, B]

    @staticmethod
    def output_shape(s):
        return (s["M"], s["N"])

    @staticmethod
    def reference(A, B):
        return A.float() @ B.float()

    def baseline(self, A, B):
        if self.f32_out:
            return torch.mm(A, B, out_dtype=torch.float32)
        return torch.matmul(A, B)

    @staticmethod
    def flops(s):
        return 2.0 * s["M"] * s["N"] * s["K"]


class Fp8:
    """gemm_fp8.yaml: both operands K-major 8-bit floats."""
    spec = ROOT / "kernels-spec" / "gemm_fp8.yaml"
    out_dtype = torch.bfloat16
    scalars = [1.0]
    check_shapes = ({"M": 1, "N": 8, "K": 16}, {"M": 8, "N": 8, "K": 128},
                    {"M": 100, "N": 136, "K": 80}, {"M": 129, "N": 264, "K": 208},
                    {"M": 1000, "N": 1032, "K": 1024}, {"M": 256, "N": 2048, "K": 512})
    empty_shapes = ({"M": 0, "N": 64, "K": 64},)
    bench_shapes = Types.bench_shapes

    def __init__(self, e5m2):
        self.params = {"e5m2": e5m2}
        if e5m2:  # torch._scaled_mm refuses two e5m2 operands: checked, not timed
            self.bench_shapes = ()
        self.in_dtype = torch.float8_e5m2 if e5m2 else torch.float8_e4m3fn
        self.record = "gemm_fp8_%s_vs_cublaslt" % ("e5m2" if e5m2 else "e4m3")
        self.baseline_name = "torch._scaled_mm (cublasLt fp8)"

    def inputs(self, s, gen):
        A = torch.randn(s["M"], s["K"], generator=gen, device="cuda").to(self.in_dtype)
        Bt = torch.randn(s["N"], s["K"], generator=gen, device="cuda").to(self.in_dtype)
        return [A, Bt]

    @staticmethod
    def output_shape(s):
        return (s["M"], s["N"])

    @staticmethod
    def reference(A, Bt):
        return A.float() @ Bt.float().t()

    @staticmethod
    def baseline(A, Bt):
        one = torch.ones((), device="cuda", dtype=torch.float32)
        return torch._scaled_mm(A, Bt.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

    @staticmethod
    def flops(s):
        return 2.0 * s["M"] * s["N"] * s["K"]


VARIANTS = {"swiglu": SwiGLU, "batched": Batched, "f16": Types(True, False),
            "f32out": Types(False, True), "f16_f32out": Types(True, True),
            "fp8": Fp8(False), "fp8_e5m2": Fp8(True)}


def describe(s):
    return " ".join("%s=%d" % kv for kv in s.items())


def errors(C, ref):
    err = C.float() - ref.float()
    fro = (err.norm() / ref.float().norm().clamp_min(1e-30)).item()
    mx = (err.abs().max() / ref.float().abs().max().clamp_min(1e-30)).item()
    return fro, mx


def check(v, kernel):
    gen = torch.Generator(device="cuda").manual_seed(20261127)
    failures = 0
    for s in v.check_shapes:
        args = v.inputs(s, gen)
        C = torch.full(v.output_shape(s), float("nan"), device="cuda", dtype=v.out_dtype)
        got = kernel(*args, out=C)
        torch.cuda.synchronize()
        fro, mx = errors(C, v.reference(*args))
        nan = torch.isnan(C).any().item()
        ok = got is C and not nan and fro <= REL_FRO and mx <= REL_MAX
        failures += not ok
        print("%s %s %s: rel_fro=%.2e rel_max=%.2e NaN=%s"
              % ("ok  " if ok else "FAIL", kernel.name, describe(s), fro, mx, nan), flush=True)
    for s in v.empty_shapes:  # nothing to compute: nothing launched, an empty C
        C = kernel(*v.inputs(s, gen))
        torch.cuda.synchronize()
        ok = tuple(C.shape) == v.output_shape(s)
        failures += not ok
        print("%s %s %s: an empty C" % ("ok  " if ok else "FAIL", kernel.name, describe(s)),
              flush=True)
    s = dict(v.check_shapes[1], K=0)
    try:
        kernel(*v.inputs(s, gen))
        torch.cuda.synchronize()
        failures += 1
        print("FAIL %s K=0: accepted" % kernel.name, flush=True)
    except tkc.TkcError as e:
        print("ok   %s K=0 refused: %s" % (kernel.name, str(e).splitlines()[0]), flush=True)
    return failures


def bench(v, kernel, args):
    gpu = torch.cuda.get_device_name()
    commit = args.commit or subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short",
                                            "HEAD"], capture_output=True,
                                           text=True).stdout.strip() or "unknown"
    date = datetime.date.today().isoformat()
    flush = l2_flusher() if args.cold_l2 else None
    gen = torch.Generator(device="cuda").manual_seed(7)
    records, problems = [], []
    for s in v.bench_shapes:
        ins = v.inputs(s, gen)
        C = torch.full(v.output_shape(s), float("nan"), device="cuda", dtype=v.out_dtype)
        kernel(*ins, out=C)

        def base():
            return v.baseline(*ins)
        ref = base()
        torch.cuda.synchronize()
        fro, _ = errors(C, ref)
        what = describe(s)
        if torch.isnan(C).any().item() or not fro <= REL_FRO:
            problems.append("%s: rel_fro %.2e against torch" % (what, fro))
            print("FAIL %s: rel_fro %.2e against torch; not timed" % (what, fro), flush=True)
            continue
        pointers = [t.data_ptr() for t in ins + [C]]
        sizes = [s[name] for name in kernel.info.sizes]
        stream = torch.cuda.current_stream().cuda_stream

        def ours():
            kernel.launch(pointers, sizes, stream, getattr(v, "scalars", []))
        ours_tf, base_tf, ratio = paired_rates(ours, base, v.flops(s), rounds=ROUNDS,
                                               warmup=WARMUP, flush=flush)
        config = dict(s, cold_l2=True) if args.cold_l2 else dict(s)
        records.append({"kernel": v.record, "config": config, "gpu": gpu, "commit": commit,
                        "date": date, "tflops": round(ours_tf, 1),
                        "baseline": v.baseline_name, "baseline_tflops": round(base_tf, 1),
                        "ratio": round(ratio, 3), "rel_err": float("%.3e" % fro)})
        print("%s %-28s tkc %6.1f  torch %6.1f TFLOP/s  ratio %.3f  rel_fro %.2e"
              % (kernel.name, what, ours_tf, base_tf, ratio, fro), flush=True)
        del ins, C, ref
        torch.cuda.empty_cache()
    for p in problems:
        print("problem: %s" % p)
    return records, len(problems)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", action="append", choices=sorted(VARIANTS),
                    help="variant (repeat; default all)")
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--out", default=None, help="JSON file for the records")
    ap.add_argument("--commit", default=None)
    ap.add_argument("--cold-l2", action="store_true", help="evict the L2 before every timed run")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    print("%s, torch %s" % (torch.cuda.get_device_name(), torch.__version__), flush=True)
    failures, records = 0, []
    for name in args.variant or sorted(VARIANTS):
        v = VARIANTS[name]
        kernels = list(tkc.load(v.spec, params=v.params).kernels.values())
        if len(kernels) != 1:
            raise SystemExit("%s: %d kernels for %s" % (name, len(kernels), v.params))
        kernel = kernels[0]
        failures += check(v, kernel)
        if not args.check_only:
            got, bad = bench(v, kernel, args)
            records += got
            failures += bad
    if args.out:
        write_records(args.out, records)
    print("gemm variants: %s" % ("all passed" if not failures else "%d FAILED" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

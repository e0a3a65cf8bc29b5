#!/usr/bin/env python3
"""Two builds of tkc's kernels, "base" and "new", against each other on the GPU.

    python3 bench/ab.py --base-commit ID [--commit ID] [--only gemm|attention]
        [--rounds N] [--quick] [--cold-l2] [--out ab.json]
        --base-lib BASE.so --new-lib NEW.so   (GEMM: bench/gemm/tkc_gemm_ext.cu + a gemm.cu each)
        --base-tkc BASE/bin/tkc --new-tkc NEW/bin/tkc [--base-spec SPEC]
        [--base-include DIRS] [--new-include DIRS]   (attention, through tkc.load)

scripts/device-ab.sh prepares both sides and passes these. GEMM: gemm_none,
gemm_transpose_b_none and gemm_gelu at bench/gemm/run.py's six anchor shapes.
Attention: kernels-spec/attention_fwd.yaml, D = 64 and 128, causal and not,
N = 1024 ... 16384, bench/attention/run.py's FlashAttention-3 sizes (B * N =
16384 tokens, H = 2048 / D). Each side's output is poisoned with NaN and checked
first (GEMM against an fp32 reference, attention against torch SDPA: relative
Frobenius error <= 1e-2, every element or row written); a configuration that
fails is reported, not timed, and makes the exit status 1. Timing: bench/timing.py's
paired protocol, base and new alternating run by run into one output buffer (GEMM
200 rounds after 20 warm-ups, attention 30 after 10). TFLOP/s from each side's
median; ratio = the median of the per-round base time / new time (> 1: new faster).
Records: {kernel, config, gpu, commit, date, tflops (new), baseline
("tkc@<base commit>"), baseline_tflops, ratio}.
"""
import argparse
import concurrent.futures
import datetime
import importlib.util
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
import torch.nn.functional as F

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(BENCH))
import tkc  # noqa: E402
from timing import l2_flusher, paired_times  # noqa: E402


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gemm_run = load_module("gemm_run", BENCH / "gemm" / "run.py")
attention_run = load_module("attention_run", BENCH / "attention" / "run.py")

GEMM_VARIANTS = (("gemm_none", False, "none"), ("gemm_transpose_b_none", True, "none"),
                 ("gemm_gelu", False, "gelu"))
N_VALUES = (1024, 2048, 4096, 8192, 16384)
D_VALUES = (64, 128)
REL_ERR_MAX = 1e-2
ROUNDS = {"gemm": 200, "attention": 30}
WARMUP = {"gemm": 20, "attention": 10}
SIDES = ("base", "new")


def gemm_cases(quick, libs, problems):
    """(kernel, config, flops, [run base, run new]) for each variant and shape both sides pass."""
    for M, N, K in gemm_run.SHAPES[:2] if quick else gemm_run.SHAPES:
        A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        Bt = B.t().contiguous()
        C = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        for variant, transpose_b, epilogue in GEMM_VARIANTS:
            Bop = Bt if transpose_b else B
            what = "%s %dx%dx%d" % (variant, M, N, K)
            ref = gemm_run.reference(A, Bop, transpose_b, epilogue, None, None)
            passed = True
            for side, gemm in zip(SIDES, libs):
                C.fill_(float("nan"))
                try:
                    gemm(variant, A, Bop, C)
                    torch.cuda.synchronize()
                except RuntimeError as e:
                    problems.append("%s: %s refused: %s" % (what, side, e))
                    passed = False
                    continue
                unwritten = torch.isnan(C).sum().item()
                err = gemm_run.rel_err(C, ref)
                if unwritten or not err <= REL_ERR_MAX:
                    problems.append("%s: %s rel_err %.3e, %d unwritten" % (what, side, err, unwritten))
                    passed = False
            del ref
            if not passed:
                print("FAIL %s; not timed" % what, flush=True)
                continue
            runs = [lambda g=g, v=variant, b=Bop: g(v, A, b, C) for g in libs]
            yield variant, {"M": M, "N": N, "K": K, "variant": variant}, 2.0 * M * N * K, runs
        del A, B, Bt, C
        torch.cuda.empty_cache()


def headers(exe, explicit):
    """Header folders for one side: --*-include, else the prefix scripts/device-ab.sh
    prepare installs beside the tkc wrapper, else tkc.load's default."""
    if explicit:
        return explicit.split(os.pathsep)
    prefix = Path(exe).parent.parent / "prefix" / "include"
    return [str(prefix)] if (prefix / "kittens").is_dir() else None


def attention_kernels(args):
    """{side: {(D, causal): kernel}}, both sides compiled at once."""
    cache = Path(args.cache_dir or tempfile.mkdtemp(prefix="tkc-ab-"))
    jobs = {"base": (args.base_tkc, args.base_spec or args.spec, args.base_include),
            "new": (args.new_tkc, args.spec, args.new_include)}

    def build(side):
        exe, spec, include = jobs[side]
        module = tkc.load(spec, tkc=exe, cache_dir=str(cache / side),
                          include_dirs=headers(exe, include), params={"D": list(D_VALUES)},
                          verbose=False)
        return {(attention_run.head_dim(k), attention_run.is_causal(k)): k
                for k in module.kernels.values()}

    print("compiling the attention kernels of both sides (cache %s)" % cache, flush=True)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        futures = {side: pool.submit(build, side) for side in SIDES}
        return {side: f.result() for side, f in futures.items()}


def launcher(kernel, tensors, sizes, scale):
    """The raw launch on prepared pointers (what is timed); keeps its tensors alive."""
    pointers = [t.data_ptr() for t in tensors]
    size_args = [sizes[s] for s in kernel.info.sizes]
    scalars = [scale if s.name == "scale" else s.default for s in kernel.info.scalars]
    stream = torch.cuda.current_stream().cuda_stream

    def run():
        kernel.launch(pointers, size_args, stream, scalars)
    run.tensors = tensors
    return run


def attention_cases(quick, kernels, problems):
    """(kernel, config, flops, [run base, run new]) for each configuration both sides pass."""
    n_values = attention_run.QUICK_N_VALUES if quick else N_VALUES
    for cfg in attention_run.configs(n_values, D_VALUES):
        B, H, N, D, causal = cfg["B"], cfg["H"], cfg["N"], cfg["D"], cfg["causal"]
        what = "attention B=%d H=%d N=%d D=%d causal=%s" % (B, H, N, D, causal)
        pair = [kernels[side].get((D, causal)) for side in SIDES]
        if None in pair:
            problems.append("%s: no instantiation on the %s side" % (what, SIDES[pair.index(None)]))
            continue
        scale = 1 / math.sqrt(D)
        Q, K, V = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        O = torch.empty(B, H, N, D, device="cuda", dtype=torch.bfloat16)
        L = torch.empty(B, H, N, device="cuda", dtype=torch.float32)
        ref = F.scaled_dot_product_attention(Q, K, V, is_causal=causal, scale=scale)
        sizes = {"B": B, "H": H, "N": N, "H_kv": H}
        runs = [launcher(k, (Q, K, V, O, L), sizes, scale) for k in pair]
        passed = True
        for side, run in zip(SIDES, runs):
            O.fill_(float("nan"))
            L.fill_(float("nan"))
            try:
                run()
                torch.cuda.synchronize()
            except tkc.TkcError as e:
                problems.append("%s: %s refused: %s" % (what, side, e))
                passed = False
                continue
            unwritten = (torch.isnan(O).any(-1) | torch.isnan(L)).sum().item()
            err = attention_run.rel_err(O, ref)
            if unwritten or not err <= REL_ERR_MAX:
                problems.append("%s: %s rel_err %.3e, %d rows unwritten" % (what, side, err, unwritten))
                passed = False
        del ref
        if passed:
            yield pair[1].name, dict(cfg), 4.0 * B * H * N * N * D / (2 if causal else 1), runs
        else:
            print("FAIL %s; not timed" % what, flush=True)
        del Q, K, V, O, L, runs
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base-commit", required=True, help="what the base side was built from")
    ap.add_argument("--commit", help="what the new side was built from (default: HEAD)")
    ap.add_argument("--only", choices=("gemm", "attention"))
    ap.add_argument("--rounds", type=int, help="timed rounds (default: GEMM 200, attention 30)")
    ap.add_argument("--quick", action="store_true", help="two GEMM shapes; N = 1024 and 4096")
    ap.add_argument("--cold-l2", action="store_true", help="evict the L2 before every timed run")
    ap.add_argument("--out", help="JSON file for the records")
    ap.add_argument("--base-lib")
    ap.add_argument("--new-lib")
    ap.add_argument("--base-tkc")
    ap.add_argument("--new-tkc")
    ap.add_argument("--spec", default=str(ROOT / "kernels-spec" / "attention_fwd.yaml"))
    ap.add_argument("--base-spec", help="the base side's attention spec (default: --spec)")
    ap.add_argument("--base-include", help="the base side's kittens and runtime headers (DIR:DIR)")
    ap.add_argument("--new-include", help="the new side's kittens and runtime headers (DIR:DIR)")
    ap.add_argument("--cache-dir", help="tkc.load's cache (default: a fresh temporary folder)")
    args = ap.parse_args()
    kinds = [args.only] if args.only else ["gemm", "attention"]
    if "gemm" in kinds and not (args.base_lib and args.new_lib):
        ap.error("the GEMM part needs --base-lib and --new-lib (or --only attention)")
    if "attention" in kinds and not (args.base_tkc and args.new_tkc):
        ap.error("the attention part needs --base-tkc and --new-tkc (or --only gemm)")

    torch.backends.cuda.matmul.allow_tf32 = False
    commit = args.commit or subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                           capture_output=True, text=True).stdout.strip() or "unknown"
    meta = {"gpu": torch.cuda.get_device_name(), "commit": commit,
            "date": datetime.date.today().isoformat()}
    baseline = "tkc@" + args.base_commit
    print("%s, torch %s; base %s, new %s" % (meta["gpu"], torch.__version__, baseline, commit),
          flush=True)
    flush = l2_flusher() if args.cold_l2 else None
    torch.manual_seed(20261127)
    records, problems = [], []

    def measure(kind, kernel, config, flops, runs):
        if args.cold_l2:
            config["cold_l2"] = True
        t_base, t_new = paired_times(runs[0], runs[1], rounds=args.rounds or ROUNDS[kind],
                                     warmup=WARMUP[kind], flush=flush)
        new = flops / statistics.median(t_new) / 1e9
        base = flops / statistics.median(t_base) / 1e9
        ratio = statistics.median(b / n for b, n in zip(t_base, t_new))
        records.append(dict(kernel=kernel, config=config, **meta, tflops=round(new, 1),
                            baseline=baseline, baseline_tflops=round(base, 1),
                            ratio=round(ratio, 3)))
        text = " ".join("%s=%s" % kv for kv in config.items() if kv[0] != "variant")
        print("%-28s %-44s base %6.1f  new %6.1f TFLOP/s  new/base %.3f"
              % (kernel, text, base, new, ratio), flush=True)

    if "gemm" in kinds:
        libs = [gemm_run.Gemm(args.base_lib), gemm_run.Gemm(args.new_lib)]
        for case in gemm_cases(args.quick, libs, problems):
            measure("gemm", *case)
    if "attention" in kinds:
        try:
            kernels = attention_kernels(args)
        except tkc.TkcError as e:
            problems.append("attention: the kernels did not build: %s" % e)
        else:
            for case in attention_cases(args.quick, kernels, problems):
                measure("attention", *case)

    if args.out:
        with open(args.out, "w") as f:
            json.dump(records, f, indent=1)
            f.write("\n")
    print("\n| kernel | config | %s TFLOP/s | %s TFLOP/s | new/base |" % (baseline, commit))
    print("|---|---|---|---|---|")
    for r in records:
        text = " ".join("%s=%s" % kv for kv in r["config"].items() if kv[0] != "variant")
        print("| %s | %s | %.1f | %.1f | %.3f |"
              % (r["kernel"], text, r["baseline_tflops"], r["tflops"], r["ratio"]))
    for p in problems:
        print("problem: %s" % p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

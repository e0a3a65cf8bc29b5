"""GPU checks of the attention backward (kernels-spec/attention_bwd.yaml, its
preprocessing attention_bwd_delta.yaml, and the variants' backward specs
attention_bwd_softcap.yaml, attention_bwd_alibi.yaml and attention_bwd_sliding_window.yaml).

Every instantiation (D 64/128, causal or not, grouped-query heads or not) at N from 1 to
8191, H / H_kv in {1, 4, 8}, the default scale and another: dQ, dK and dV against fp32
torch autograd of the same attention, given the reference's L and Delta = rowsum(dO * O).
dK and dV (and the f32 dK, dV of the grouped kernels) are poisoned with NaN where the
kernel stores them; dQ, which the kernel adds into, starts at zero, so a tile it never
reaches shows as a relative error of 1. Each gradient's relative error (Frobenius) must be
at most 1e-2 (over at least an RMS of 1e-3: at N = 1 the exact dQ and dK are zero), with
no NaN. The reference runs in fp32 with TF32 off. Delta from attention_bwd_delta.yaml
(poisoned) against rowsum(dO * O) in fp32: at most 1e-4 * D off. Each variant's
instantiations the same way against the reference of its forward spec's definition (caps 2
and 30, ALiBi slopes, windows 1, 64, 100 and 1000) at N from 1 to 4096.

Run on a machine with an sm_90a GPU: python3 python/gpu_tests/test_attention_bwd.py
(--one-each: one case a kernel, N = 193, to run under compute-sanitizer; it builds serially,
so run --prebuild first outside the sanitizer).
"""

import argparse
import sys
import time
import unittest
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Results, attention_reference, begin, rel  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BWD = ROOT / "kernels-spec" / "attention_bwd.yaml"
DELTA = ROOT / "kernels-spec" / "attention_bwd_delta.yaml"
SOFTCAP = ROOT / "kernels-spec" / "attention_bwd_softcap.yaml"
ALIBI = ROOT / "kernels-spec" / "attention_bwd_alibi.yaml"
WINDOW = ROOT / "kernels-spec" / "attention_bwd_sliding_window.yaml"

N_VALUES = (1, 17, 100, 191, 193, 1000, 4096, 8191)
VARIANT_N_VALUES = (1, 17, 100, 193, 1000, 4096)
QUICK_N_VALUES = (1, 17, 193, 1000)
REL_FRO = 1e-2


def reference(Q, K, V, dO, scale, causal, window=None, softcap=None, slopes=None):
    """(O, L, dQ, dK, dV) in fp32 by autograd of common.attention_reference (the variants'
    definitions are there)."""
    q, k, v = (t.float().requires_grad_() for t in (Q, K, V))
    O, L = attention_reference(q, k, v, scale, causal, window, softcap, slopes)
    O.backward(dO.float())
    return O.detach(), L.detach(), q.grad, k.grad, v.grad


def check_case(results, kernel, B, H, H_kv, N, gen, scale=None, variant=None):
    """One case of `kernel`; `variant` (a Variant) adds its scalars and inputs and its
    definition to the reference."""
    D = int(kernel.params["D"])
    causal = kernel.params.get("causal", "true") == "true"
    gqa = kernel.params["gqa"] == "true"
    given = {} if scale is None else {"scale": scale}
    if scale is None:
        scale = next(s.default for s in kernel.info.scalars if s.name == "scale")
    Q = torch.randn(B, H, N, D, device="cuda", generator=gen).bfloat16()
    K = torch.randn(B, H_kv, N, D, device="cuda", generator=gen).bfloat16()
    V = torch.randn(B, H_kv, N, D, device="cuda", generator=gen).bfloat16()
    dO = torch.randn(B, H, N, D, device="cuda", generator=gen).bfloat16()
    inputs, ref_args, label = {}, {}, ""
    if variant is not None:
        inputs, ref_args = variant.arguments(H, gen)
        given.update(variant.scalars)
        label = " " + variant.label
    O_ref, L_ref, dQ_ref, dK_ref, dV_ref = reference(Q, K, V, dO, scale, causal, **ref_args)
    Delta = (dO.float() * O_ref).sum(-1)
    dQ = torch.zeros(B, H, N, D, device="cuda", dtype=torch.float32)
    kv_dtype = torch.float32 if gqa else torch.bfloat16
    # The grouped kernels add into dK and dV: zeros there; NaN where they are stored.
    fill = 0.0 if gqa else float("nan")
    dK = torch.full((B, H_kv, N, D), fill, device="cuda", dtype=kv_dtype)
    dV = torch.full((B, H_kv, N, D), fill, device="cuda", dtype=kv_dtype)
    what = "%s B=%d H=%d H_kv=%d N=%d scale=%.4g%s" % (kernel.name, B, H, H_kv, N, scale, label)
    outs = dict(zip(("dQ", "dK32", "dV32") if gqa else ("dQ", "dK", "dV"), (dQ, dK, dV)))
    try:
        kernel(Q=Q, K=K, V=V, dO=dO, L=L_ref, Delta=Delta, out=outs, **inputs, **given)
        torch.cuda.synchronize()
    except Exception as e:  # a refusal or a crash is a failure of this case
        results.report(False, "%s: %s: %s" % (what, type(e).__name__, e))
        return
    nans = sum(torch.isnan(t).sum().item() for t in (dQ, dK, dV))
    errs = [rel(dQ, dQ_ref), rel(dK, dK_ref), rel(dV, dV_ref)]
    ok = nans == 0 and all(e <= REL_FRO for e in errs)
    results.report(ok, "%s: rel_fro dQ=%.2e dK=%.2e dV=%.2e NaN=%d" % (what, *errs, nans))


class Variant:
    """A variant's backward spec, one setting of its knobs: the scalars it passes, the
    inputs it makes per head count, and the reference's arguments."""

    def __init__(self, spec, label, scalars=None, ref=None, slopes=False):
        self.spec, self.label = spec, label
        self.scalars = dict(scalars or {})
        self.ref = dict(ref or {})
        self.slopes = slopes

    def arguments(self, H, gen):
        if not self.slopes:
            return {}, self.ref
        # ALiBi's geometric slopes 2^(-8 (h + 1) / H), shuffled so that heads differ in order.
        slopes = torch.pow(2.0, -8.0 * torch.arange(1, H + 1, device="cuda") / H)
        slopes = slopes[torch.randperm(H, device="cuda", generator=gen)].contiguous()
        return {"slopes": slopes}, dict(self.ref, slopes=slopes)


VARIANTS = (
    [Variant(SOFTCAP, "cap=%g" % c, {"cap": c}, {"softcap": c}) for c in (2.0, 30.0)] +
    [Variant(ALIBI, "alibi", slopes=True)] +
    [Variant(WINDOW, "window=%d" % w, {"window": w}, {"window": w}) for w in (1, 64, 100, 1000)])


def check_variants(results, n_values, gen):
    """Each variant's backward spec, every instantiation, against the reference of its
    forward spec's definition, outputs poisoned as in check_case."""
    import tkc
    modules = {}
    for variant in VARIANTS:
        if variant.spec not in modules:
            modules[variant.spec] = tkc.load(variant.spec)
        for kernel in modules[variant.spec].kernels.values():
            gqa = kernel.params["gqa"] == "true"
            for N in n_values:
                if N > 1000 and variant.label not in ("cap=2", "alibi", "window=100"):
                    continue  # the long sequences once a variant
                B = 2 if N <= 1000 else 1
                check_case(results, kernel, B, 4 if gqa else 2, 1 if gqa else 2, N, gen,
                           variant=variant)
        if variant is VARIANTS[0]:  # a scale other than the default, once
            for kernel in modules[variant.spec].kernels.values():
                gqa = kernel.params["gqa"] == "true"
                check_case(results, kernel, 1, 4 if gqa else 2, 1 if gqa else 2, 193, gen,
                           scale=0.3, variant=variant)


def check_delta(results, n_values, gen):
    """attention_bwd_delta.yaml: Delta = rowsum(dO * O) against fp32 torch, Delta poisoned."""
    import tkc
    for kernel in tkc.load(DELTA).kernels.values():
        D = int(kernel.params["D"])
        for N in n_values:
            B, H = (2, 3) if N <= 1000 else (1, 2)
            O, dO = (torch.randn(B, H, N, D, device="cuda", generator=gen).bfloat16()
                     for _ in range(2))
            Delta = torch.full((B, H, N), float("nan"), device="cuda")
            what = "%s B=%d H=%d N=%d" % (kernel.name, B, H, N)
            try:
                kernel(O, dO, out=Delta)
                torch.cuda.synchronize()
            except Exception as e:
                results.report(False, "%s: %s: %s" % (what, type(e).__name__, e))
                continue
            ref = (dO.float() * O.float()).sum(-1)
            err = (Delta - ref).abs().max().item()
            nans = torch.isnan(Delta).sum().item()
            results.report(nans == 0 and err <= 1e-4 * D,
                           "%s: max_abs=%.2e NaN=%d" % (what, err, nans))


def check_refusals(results, module, gen):
    """The plain kernels refuse H_kv != H (they store dK and dV per head)."""
    for kernel in module.kernels.values():
        if kernel.params["gqa"] == "true":
            continue
        D = int(kernel.params["D"])
        Q = torch.zeros(1, 4, 64, D, device="cuda", dtype=torch.bfloat16)
        K = torch.zeros(1, 2, 64, D, device="cuda", dtype=torch.bfloat16)
        L = torch.zeros(1, 4, 64, device="cuda")
        dQ = torch.zeros(1, 4, 64, D, device="cuda")
        try:
            kernel(Q, K, K, Q, L, L, out=(dQ, K.clone(), K.clone()))
            torch.cuda.synchronize()
            results.report(False, "%s: H = 4, H_kv = 2 was not refused" % kernel.name)
        except Exception as e:
            results.report("requires H == H_kv" in str(e),
                           "%s: H = 4, H_kv = 2 refused: %s" % (kernel.name, e))


def prebuild():
    """Builds every spec this file loads at once (one nvcc each), before the checks load
    them from the cache one by one."""
    from concurrent.futures import ThreadPoolExecutor
    import tkc
    specs = (BWD, DELTA, SOFTCAP, ALIBI, WINDOW)
    with ThreadPoolExecutor(max_workers=len(specs)) as pool:
        for f in [pool.submit(tkc.build, spec) for spec in specs]:
            f.result()


def run_one_each(seed=3):
    """One case a kernel (N = 193: two tasks a head), to run under compute-sanitizer."""
    import tkc
    results = Results()
    gen = torch.Generator(device="cuda").manual_seed(seed)
    for kernel in tkc.load(BWD).kernels.values():
        gqa = kernel.params["gqa"] == "true"
        check_case(results, kernel, 1, 4 if gqa else 2, 2, 193, gen)
    for variant in (VARIANTS[0], VARIANTS[2], VARIANTS[5]):
        for kernel in tkc.load(variant.spec).kernels.values():
            gqa = kernel.params["gqa"] == "true"
            check_case(results, kernel, 1, 4 if gqa else 2, 2, 193, gen, variant=variant)
    return results.failed


def run_all(quick=False, seed=2025):
    import tkc
    results, gen = begin(seed)
    start = time.monotonic()
    prebuild()
    module = tkc.load(BWD)
    print("load: %d kernels, %.1f s" % (len(module.kernels), time.monotonic() - start), flush=True)
    n_values = QUICK_N_VALUES if quick else N_VALUES
    for kernel in module.kernels.values():
        gqa = kernel.params["gqa"] == "true"
        for N in n_values:
            B = 2 if N <= 1000 else 1
            groups = (4, 8) if gqa else (1,)
            for group in groups:
                H_kv = 1 if N >= 4096 else 2
                check_case(results, kernel, B, H_kv * group, H_kv, N, gen)
        # A scale other than the default reaches the kernel.
        check_case(results, kernel, 1, 4 if gqa else 2, 1 if gqa else 2, 193, gen, scale=0.3)
    check_refusals(results, module, gen)
    check_delta(results, n_values, gen)
    check_variants(results, QUICK_N_VALUES if quick else VARIANT_N_VALUES, gen)
    return results.summary("attention_bwd")


class AttentionBackwardOnGpu(unittest.TestCase):
    def test_every_case(self):
        failed = run_all(quick=False)
        self.assertEqual(failed, [], "\n".join(failed))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer sequence lengths")
    ap.add_argument("--seed", type=int, default=2025)
    ap.add_argument("--one-each", action="store_true",
                    help="one case a kernel (N = 193), for compute-sanitizer")
    ap.add_argument("--prebuild", action="store_true",
                    help="build every spec this file loads (in parallel) and stop")
    args = ap.parse_args()
    if args.prebuild:
        prebuild()
        return 0
    if args.one_each:
        return 1 if run_one_each() else 0
    return 1 if run_all(args.quick, args.seed) else 0


if __name__ == "__main__":
    sys.exit(main())

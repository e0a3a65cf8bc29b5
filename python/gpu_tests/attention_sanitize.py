"""Runs every instantiation of the shipped attention specs once on a small
ragged shape, for compute-sanitizer (memcheck, racecheck, synccheck):

    compute-sanitizer --tool racecheck python3 python/gpu_tests/attention_sanitize.py

N = 193 (one full 192-row task and a one-row tail; a partial last key tile),
B = 1, H = 4, H_kv = 2; the sliding-window kernels also at N = 1000 with a window
of 100 keys, where the later tasks' loops start past the first key tile; a
launcher that chooses its kernel by the sizes (`chooses` in the manifest) also
at N = 8193 with one head, where the D = 64 launchers take key tiles of 192; the
offset-causal kernels with M = 100 queries, the last of N = 193 keys; the bias-tensor
kernels at N = 200 (its rows whole 16 bytes) and the kernels that recompute attention from
a given L (test/Emit/attention-from-lse.yaml) at N = 193; and the
program that stages its store in per-warpgroup finish blocks released late
(test/Emit/finish-block.yaml) at N = 1000 with B = 2, H = 16 (256 tasks, about two a
block, so the late release and the warpgroups' meeting are exercised); the packed-sequence
kernels (attention_varlen.yaml) over sequences of 0, 5, 193, 0, 64 and 300 tokens (empty
sequences, a partial tile at every sequence's end, the last one at the tensor's end); and
the [B, N, H, D] program (test/Emit/attention-layout.yaml) and the bias per key
(test/Emit/attention-key-bias.yaml) at N = 193; the weights stored every stage
(test/Emit/attention-weights.yaml) at N = 200. The
kernels were built (and cached) by the check step. Outputs are poisoned (NaN) and
must come back finite in every row, so a run that left rows unwritten fails here
too; their values are checked by the check step (test_attention.py).
"""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_attention as ta  # noqa: E402
import tkc  # noqa: E402


def main():
    failures = 0
    for spec in (ta.ATTENTION, ta.SLIDING_WINDOW, ta.SOFTCAP):
        module = tkc.load(str(spec))
        cases = [(193, {}, (4, 2))]
        if spec == ta.SLIDING_WINDOW:
            cases.append((1000, {"window": 100.0}, (4, 2)))
        for kernel in module.kernels.values():
            more = [(8193, {}, (1, 1))] if kernel.info.chooses else []
            for N, scalars, heads in cases + more:
                failures += not run_once(kernel, N, scalars, heads)
    if ta.OFFSET_CAUSAL.exists():
        for kernel in tkc.load(str(ta.OFFSET_CAUSAL)).kernels.values():
            failures += not run_once(kernel, 193, {}, (4, 2), M=100)
    if ta.BIAS.exists():
        for kernel in tkc.load(str(ta.BIAS)).kernels.values():
            bias = torch.randn(1, 4, 200, 200, device="cuda", dtype=torch.bfloat16)
            failures += not run_once(kernel, 200, {}, (4, 2), extra=(bias,))
    for kernel in tkc.load(str(ta.FROM_LSE)).kernels.values():
        failures += not run_from_lse(kernel, 193)
    failures += not run_finish_block()
    if ta.VARLEN.exists():
        for kernel in tkc.load(str(ta.VARLEN)).kernels.values():
            failures += not run_varlen(kernel, [0, 5, 193, 0, 64, 300])
    for kernel in tkc.load(str(ta.LAYOUT)).kernels.values():
        failures += not run_layout(kernel, 193)
    for kernel in tkc.load(str(ta.WEIGHTS)).kernels.values():
        failures += not run_weights(kernel, 200)
    for kernel in tkc.load(str(ta.KEY_BIAS)).kernels.values():
        kb = torch.randn(1, 193, device="cuda")
        failures += not run_once(kernel, 193, {}, (4, 2), extra=(kb,))
    return 1 if failures else 0


def run_weights(kernel, N):
    gen = torch.Generator(device="cuda").manual_seed(7)
    Q, K, V = (torch.randn(1, 4, N, 64, device="cuda", dtype=torch.bfloat16, generator=gen)
               for _ in range(3))
    L = torch.randn(1, 4, N, device="cuda", generator=gen).abs() + 5
    O = torch.full((1, 4, N, 64), float("nan"), device="cuda", dtype=torch.bfloat16)
    P = torch.full((1, 4, N, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(Q, K, V, L, out=(O, P))
    torch.cuda.synchronize()
    ok = bool(torch.isfinite(O.float()).all() and torch.isfinite(P.float()).all())
    print(f"{'ok  ' if ok else 'FAIL'} {kernel.info.name}: N={N} O and P finite={ok}")
    return ok


def run_varlen(kernel, lengths):
    D = ta.head_dim(kernel)
    gen = torch.Generator(device="cuda").manual_seed(7)
    offsets = [0]
    for n in lengths:
        offsets.append(offsets[-1] + n)
    T, H, H_kv = offsets[-1], 4, 2
    cu = torch.tensor(offsets, dtype=torch.int32, device="cuda")
    Q = torch.randn(T, H, D, device="cuda", dtype=torch.bfloat16, generator=gen)
    K, V = (torch.randn(T, H_kv, D, device="cuda", dtype=torch.bfloat16, generator=gen)
            for _ in range(2))
    O = torch.full((T, H, D), float("nan"), device="cuda", dtype=torch.bfloat16)
    L = torch.full((H, T), float("nan"), device="cuda", dtype=torch.float32)
    kernel(Q, K, V, cu, out=(O, L))
    torch.cuda.synchronize()
    ok = bool(torch.isfinite(O.float()).all() and torch.isfinite(L).all())
    print(f"{'ok  ' if ok else 'FAIL'} {kernel.info.name}: lengths={lengths} outputs finite={ok}")
    return ok


def run_layout(kernel, N):
    gen = torch.Generator(device="cuda").manual_seed(7)
    Q = torch.randn(1, N, 4, 64, device="cuda", dtype=torch.bfloat16, generator=gen)
    K, V = (torch.randn(1, N, 2, 64, device="cuda", dtype=torch.bfloat16, generator=gen)
            for _ in range(2))
    O = torch.full((1, N, 4, 64), float("nan"), device="cuda", dtype=torch.bfloat16)
    L = torch.full((1, 4, N), float("nan"), device="cuda", dtype=torch.float32)
    kernel(Q, K, V, out=(O, L))
    torch.cuda.synchronize()
    ok = bool(torch.isfinite(O.float()).all() and torch.isfinite(L).all())
    print(f"{'ok  ' if ok else 'FAIL'} {kernel.info.name}: N={N} [B, N, H, D] outputs finite={ok}")
    return ok


def run_finish_block():
    kernel = next(iter(tkc.load(str(ta.FINISH_BLOCK)).kernels.values()))
    gen = torch.Generator(device="cuda").manual_seed(7)
    B, H, N = 2, 16, 1000  # 256 tasks: about two a block
    Q = torch.randn(B, H, N, 64, device="cuda", dtype=torch.bfloat16, generator=gen)
    K = torch.randn(B, H, N, 64, device="cuda", dtype=torch.bfloat16, generator=gen)
    V = torch.randn(B, H, N, 128, device="cuda", dtype=torch.bfloat16, generator=gen)
    O = torch.full((B, H, N, 128), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(Q, K, V, out=O)
    torch.cuda.synchronize()
    ok = bool(torch.isfinite(O.float()).all())
    print(f"{'ok  ' if ok else 'FAIL'} {kernel.info.name}: N={N} outputs finite={ok}")
    return ok


def run_from_lse(kernel, N):
    D = ta.head_dim(kernel)
    gen = torch.Generator(device="cuda").manual_seed(7)
    Q, K, V = (torch.randn(1, 4, N, D, device="cuda", dtype=torch.bfloat16, generator=gen)
               for _ in range(3))
    L = torch.randn(1, 4, N, device="cuda", generator=gen).abs() + 5
    O = torch.full((1, 4, N, D), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(Q, K, V, L, out=O)
    torch.cuda.synchronize()
    ok = bool(torch.isfinite(O.float()).all())
    print(f"{'ok  ' if ok else 'FAIL'} {kernel.info.name}: N={N} outputs finite={ok}")
    return ok


def run_once(kernel, N, scalars, heads, M=None, extra=()):
    D = ta.head_dim(kernel)
    M = N if M is None else M
    gen = torch.Generator(device="cuda").manual_seed(7)
    B, (H, H_kv) = 1, heads
    Q = torch.randn(B, H, M, D, device="cuda", dtype=torch.bfloat16, generator=gen)
    K = torch.randn(B, H_kv, N, D, device="cuda", dtype=torch.bfloat16, generator=gen)
    V = torch.randn(B, H_kv, N, D, device="cuda", dtype=torch.bfloat16, generator=gen)
    O = torch.full((B, H, M, D), float("nan"), device="cuda", dtype=torch.bfloat16)
    L = torch.full((B, H, M), float("nan"), device="cuda", dtype=torch.float32)
    kernel(Q, K, V, *extra, out=(O, L), **scalars)
    torch.cuda.synchronize()
    ok = bool(torch.isfinite(O.float()).all() and torch.isfinite(L).all())
    rows = f"M={M} N={N}" if M != N else f"N={N}"
    print(f"{'ok  ' if ok else 'FAIL'} {kernel.info.name}: {rows} {scalars} outputs finite={ok}")
    return ok


if __name__ == "__main__":
    sys.exit(main())

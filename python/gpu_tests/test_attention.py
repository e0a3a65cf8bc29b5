"""Attention forward through tkc.load on an sm_90 GPU, against an fp32 PyTorch
reference.

    PYTHONPATH=python python3 python/gpu_tests/test_attention.py [--quick] [--self-test]

For every launcher of kernels-spec/attention_fwd.yaml, at N from 1 to
16384 (ragged and tile-sized, on both sides of the N where a launcher switches kernels), with grouped-query heads (H=8 with H_kv 8, 2 and
1), causal and not: fresh random bf16 Q, K, V; O and L poisoned with NaN; the
kernel; then O against the reference (max abs error, relative Frobenius error)
and L, the natural-log log-sum-exp of each row of the scores, against the
reference's. Also: a non-default scale, outputs allocated by the call and
passed as a dict, the argument checks on real tensors (H not a multiple of
H_kv is refused by the launcher), and the sliding-window and soft-capping
variants, ALiBi (per-head slopes read from a global) and sinks (one more logit a head, read
from a global) when their specs exist (SKIP otherwise). Last, a program that stages its
store in the finish block rather than in its q tile (test/Emit/finish-block.yaml:
V and O are 128 wide, Q and K 64), whose block is released late (release_finish)
and is one per warpgroup: O against the same reference. Then a program over tensors
stored [B, N, H, D] (test/Emit/attention-layout.yaml), and the packed sequences of
attention_varlen.yaml: ragged, empty and more than 32 sequences, each against the
reference on its own tokens.

The reference upcasts the bf16 inputs to fp32 and computes, per head h (whose
K/V head is h // (H // H_kv)):
    S = scale * Q K^T              (soft-capping: S = cap * tanh(S / cap))
    S[i, j] = -inf where key j is hidden from query i
    L = logsumexp(S, -1),  O = softmax(S) V
It is checked first against a naive per-element loop on the CPU.

Prints one line per case and exits non-zero if any case fails. Run by
scripts/device-attention.sh; `python3 -m unittest gpu_tests.test_attention`
runs the same as one test.
"""
import argparse
import math
import sys
import time
import unittest
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Results  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "kernels-spec"
ATTENTION = SPECS / "attention_fwd.yaml"
SLIDING_WINDOW = SPECS / "attention_sliding_window.yaml"
SOFTCAP = SPECS / "attention_softcap.yaml"
ALIBI = SPECS / "attention_alibi.yaml"
SINK = SPECS / "attention_sink.yaml"
BIAS = SPECS / "attention_bias.yaml"
OFFSET_CAUSAL = SPECS / "attention_offset_causal.yaml"
VARLEN = SPECS / "attention_varlen.yaml"
FINISH_BLOCK = ROOT / "test" / "Emit" / "finish-block.yaml"
FROM_LSE = ROOT / "test" / "Emit" / "attention-from-lse.yaml"
LAYOUT = ROOT / "test" / "Emit" / "attention-layout.yaml"
KEY_BIAS = ROOT / "test" / "Emit" / "attention-key-bias.yaml"
WEIGHTS = ROOT / "test" / "Emit" / "attention-weights.yaml"

# O is bf16: rounding alone is up to 2^-9 of |O| (|O| < ~4 here); the bounds
# leave room for summation order and exp2 vs exp, not for wrong rows.
O_MAX_ABS = 2e-2
O_REL_FRO = 1e-2
# L is computed and stored in fp32.
L_MAX_ABS = 1e-3

# 2048 and above reach the kernels the D = 64 launchers choose from N = 2048
# (`select` in the spec; key tiles of 192, so each ends in a partial tile);
# 2047 is the longest N the other kernel takes.
N_VALUES = (1, 17, 64, 100, 191, 192, 193, 1000, 2047, 2048, 4096, 8193, 16384)
QUICK_N_VALUES = (1, 17, 100, 192, 193, 1000)
HEADS = ((8, 8), (8, 2), (8, 1))  # (H, H_kv)

# Bytes of fp32 scores the reference materialises at once (it goes head by head
# past that).
REFERENCE_CHUNK_BYTES = 1 << 31


# ----------------------------------------------------------------------------
# Reference
# ----------------------------------------------------------------------------

def visible(n, causal=False, window=None, device="cpu", keys=None):
    """[n, keys] bool (keys = n by default): key j is visible from query i, query i being
    key position i + keys - n (the queries the last n positions). Causal: j <= that
    position. Sliding window of `window` keys: position - window < j <= position."""
    keys = n if keys is None else keys
    i = torch.arange(n, device=device)[:, None] + (keys - n)
    j = torch.arange(keys, device=device)[None, :]
    keep = torch.ones(n, keys, dtype=torch.bool, device=device)
    if causal or window is not None:
        keep &= j <= i
    if window is not None:
        keep &= j > i - window
    return keep


def reference(Q, K, V, scale, causal=False, window=None, softcap=None, slopes=None, sinks=None,
              bias=None):
    """(O, L) in fp32 for bf16 Q [B, H, M, D], K and V [B, H_kv, N, D], M <= N: query i is
    position i + N - M (the masks and ALiBi's j - i count in positions)."""
    B, H, M, D = Q.shape
    H_kv, N = K.shape[1], K.shape[2]
    assert H % H_kv == 0 and K.shape == V.shape == (B, H_kv, N, D) and M <= N
    group = H // H_kv
    O = torch.empty(B, H, M, D, dtype=torch.float32, device=Q.device)
    L = torch.empty(B, H, M, dtype=torch.float32, device=Q.device)
    keep = visible(M, causal, window, Q.device, keys=N)
    chunk = max(1, REFERENCE_CHUNK_BYTES // (B * M * N * 4))
    for h0 in range(0, H, chunk):
        h1 = min(H, h0 + chunk)
        kv = torch.arange(h0, h1, device=Q.device) // group
        q = Q[:, h0:h1].float()
        k = K[:, kv].float()
        v = V[:, kv].float()
        S = torch.matmul(q, k.transpose(-1, -2)) * scale
        if softcap is not None:
            S = torch.tanh(S / softcap) * softcap
        if slopes is not None:  # ALiBi: slopes[h] * (j - i)
            pos = torch.arange(N, device=Q.device, dtype=torch.float32)
            S += slopes[h0:h1].float()[None, :, None, None] * (pos[None, :] - pos[N - M:, None])
        if bias is not None:  # an additive bias tensor [B, H, M, N]
            S += bias[:, h0:h1].float()
        S.masked_fill_(~keep, float("-inf"))
        if sinks is not None:  # one more logit a head, with no value
            col = sinks[h0:h1].float()[None, :, None, None].expand(B, h1 - h0, M, 1)
            S = torch.cat([S, col], dim=-1)
            v = torch.cat([v, torch.zeros_like(v[:, :, :1])], dim=2)
        lse = torch.logsumexp(S, dim=-1)
        P = torch.exp(S - lse[..., None])
        O[:, h0:h1] = torch.matmul(P, v)
        L[:, h0:h1] = lse
        del S, P
    return O, L


def naive_reference(Q, K, V, scale, causal=False, window=None, softcap=None, slopes=None,
                    sinks=None, bias=None):
    """The same, one element at a time in Python floats (tiny sizes only)."""
    B, H, M, D = Q.shape
    N = K.shape[2]
    group = H // K.shape[1]
    q, k, v = Q.float().tolist(), K.float().tolist(), V.float().tolist()
    O = [[[[0.0] * D for _ in range(M)] for _ in range(H)] for _ in range(B)]
    L = [[[0.0] * M for _ in range(H)] for _ in range(B)]
    for b in range(B):
        for h in range(H):
            g = h // group
            for r in range(M):
                i = r + N - M  # the query's position among the keys
                scores = {}
                for j in range(N):
                    if (causal or window is not None) and j > i:
                        continue
                    if window is not None and j <= i - window:
                        continue
                    s = scale * sum(q[b][h][r][d] * k[b][g][j][d] for d in range(D))
                    if softcap is not None:
                        s = softcap * math.tanh(s / softcap)
                    if slopes is not None:
                        s += float(slopes[h]) * (j - i)
                    if bias is not None:
                        s += float(bias[b][h][r][j])
                    scores[j] = s
                logits = list(scores.values())
                if sinks is not None:
                    logits.append(float(sinks[h]))
                m = max(logits)
                total = sum(math.exp(s - m) for s in logits)
                L[b][h][r] = m + math.log(total)
                for d in range(D):
                    O[b][h][r][d] = sum(math.exp(s - m) / total * v[b][g][j][d]
                                        for j, s in scores.items())
    return torch.tensor(O), torch.tensor(L)


def self_test():
    """The reference against the naive loop on the CPU, for every mask and
    soft-capping, with grouped heads and a reference that goes head by head.
    Returns the number of failures."""
    global REFERENCE_CHUNK_BYTES
    gen = torch.Generator().manual_seed(7)
    failures = 0
    saved = REFERENCE_CHUNK_BYTES
    try:
        for chunk_bytes in (saved, 1):  # all heads at once; one head at a time
            REFERENCE_CHUNK_BYTES = chunk_bytes
            for N in (1, 5, 9):
                Q = torch.randn(2, 4, N, 3, generator=gen).bfloat16()
                K = torch.randn(2, 2, N, 3, generator=gen).bfloat16()
                V = torch.randn(2, 2, N, 3, generator=gen).bfloat16()
                slopes = torch.tensor([0.5, 0.25, -0.3, 1.0])
                sinks = torch.tensor([0.0, 2.0, -3.0, 40.0])
                bias = torch.randn(2, 4, N, N, generator=gen).bfloat16()
                for kw in ({}, {"causal": True}, {"window": 1}, {"window": 3},
                           {"bias": bias}, {"bias": bias, "causal": True},
                           {"softcap": 0.7}, {"softcap": 0.7, "causal": True},
                           {"slopes": slopes}, {"slopes": slopes, "causal": True},
                           {"sinks": sinks}, {"sinks": sinks, "causal": True}):
                    # All N queries, and the last N // 2 + 1 of them (aligned to the end).
                    for M in sorted({N, N // 2 + 1}):
                        q = Q[:, :, N - M:]
                        kwm = dict(kw)
                        if "bias" in kwm:
                            kwm["bias"] = kwm["bias"][:, :, N - M:]
                        got = reference(q, K, V, 1.3, **kwm)
                        want = naive_reference(q, K, V, 1.3, **kwm)
                        err = max((got[0] - want[0]).abs().max().item(),
                                  (got[1] - want[1]).abs().max().item())
                        ok = err < 1e-5
                        failures += not ok
                        shown = {k: (v.tolist() if torch.is_tensor(v) else v)
                                 for k, v in kw.items()}
                        print("%s reference self-test M=%d N=%d %s chunk=%d: max error %.1e"
                              % ("ok  " if ok else "FAIL", M, N, shown or "full", chunk_bytes,
                                 err), flush=True)
    finally:
        REFERENCE_CHUNK_BYTES = saved
    # The masks themselves, spelled out.
    expected = torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]],
                            dtype=torch.bool)
    # Two queries, the last of five keys: each sees the keys up to its own position.
    offset = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    ok = torch.equal(visible(4, window=2), expected) and \
        torch.equal(visible(4, causal=True), torch.ones(4, 4).tril().bool()) and \
        bool(visible(3).all()) and torch.equal(visible(2, causal=True, keys=5), offset)
    failures += not ok
    print("%s reference self-test masks" % ("ok  " if ok else "FAIL"), flush=True)
    return failures


# ----------------------------------------------------------------------------
# The kernels
# ----------------------------------------------------------------------------

def head_dim(kernel):
    """D of an instantiation: the constant last dimension of Q."""
    q = next(a for a in kernel.info.arguments if a.name == "Q")
    assert isinstance(q.dims[-1], int), "Q's last dimension should be a constant: %s" % (q.dims,)
    return q.dims[-1]


def is_causal(kernel):
    """From a `causal` parameter when the spec has one, else from the name."""
    params = kernel.params
    if "causal" in params:
        return params["causal"] == "true"
    return "causal" in kernel.name


def scalar_default(kernel, name):
    for s in kernel.info.scalars:
        if s.name == name:
            return s.default
    return None


def knob(kernel, names):
    """Where an instantiation takes one of `names`: ("scalar", name, default)
    or ("param", name, value), else None."""
    for s in kernel.info.scalars:
        if s.name in names:
            return ("scalar", s.name, s.default)
    for p, value in kernel.params.items():
        if p in names:
            return ("param", p, float(value))
    return None


def errors(O, L, O_ref, L_ref):
    """(O max abs, O relative Frobenius, L max abs, rows with NaN) of a result."""
    nan_rows = (torch.isnan(O).any(-1) | torch.isnan(L)).sum().item()
    dO = O.float() - O_ref
    o_max = dO.abs().max().item()
    o_fro = (dO.norm() / O_ref.norm()).item()
    l_max = (L - L_ref).abs().max().item()
    return o_max, o_fro, l_max, nan_rows


def check_case(results, kernel, B, H, H_kv, N, gen, scalars=None, causal=False, window=None,
               softcap=None, scale=None, label="", slopes=None, sinks=None, M=None, bias=None):
    """One launch with poisoned outputs against the reference; M queries (N by default),
    the last M of the N key positions."""
    M = N if M is None else M
    D = head_dim(kernel)
    scalars = dict(scalars or {})
    if scale is None:
        scale = scalars.get("scale", scalar_default(kernel, "scale"))
    if scale is None:
        results.report(False, "%s: no scale given and no default for it" % kernel.name)
        return
    Q = torch.randn(B, H, M, D, device="cuda", generator=gen).bfloat16()
    K = torch.randn(B, H_kv, N, D, device="cuda", generator=gen).bfloat16()
    V = torch.randn(B, H_kv, N, D, device="cuda", generator=gen).bfloat16()
    O = torch.full((B, H, M, D), float("nan"), device="cuda", dtype=torch.bfloat16)
    L = torch.full((B, H, M), float("nan"), device="cuda", dtype=torch.float32)
    what = "%s B=%d H=%d H_kv=%d %sN=%d scale=%.4g%s" % (
        kernel.name, B, H, H_kv, "M=%d " % M if M != N else "", N, scale, label)
    try:
        inputs = tuple(t for t in (slopes, sinks, bias) if t is not None)
        got = kernel(Q, K, V, *inputs, out=(O, L), **scalars)
        torch.cuda.synchronize()
    except Exception as e:  # a refusal or a crash is a failure of this case
        results.report(False, "%s: %s: %s" % (what, type(e).__name__, e))
        return
    O_ref, L_ref = reference(Q, K, V, scale, causal=causal, window=window, softcap=softcap,
                             slopes=slopes, sinks=sinks, bias=bias)
    o_max, o_fro, l_max, nan_rows = errors(O, L, O_ref, L_ref)
    ok = (got[0] is O and got[1] is L and nan_rows == 0 and o_max <= O_MAX_ABS
          and o_fro <= O_REL_FRO and l_max <= L_MAX_ABS)
    results.report(ok, "%s: O max_abs=%.2e rel_fro=%.2e  L max_abs=%.2e  unwritten/NaN rows=%d"
                   % (what, o_max, o_fro, l_max, nan_rows))
    del Q, K, V, O, L, O_ref, L_ref


def shapes(n_values):
    """(B, H, H_kv, N) of the grid: B=2 up to N=4096, B=1 beyond."""
    for N in n_values:
        B = 2 if N <= 4096 else 1
        for H, H_kv in HEADS:
            yield B, H, H_kv, N
    yield 1, 1, 1, 193  # one head alone
    yield 2, 4, 1, 100  # a group of 4


def check_forward(results, module, n_values, gen):
    kernels = list(module.kernels.values())
    found = sorted((head_dim(k), is_causal(k)) for k in kernels)
    print("kernels: %s" % ", ".join("%s (D=%d, causal=%s)" % (k.name, head_dim(k), is_causal(k))
                                   for k in kernels), flush=True)
    for D in (64, 128, 256):
        for causal in (False, True):
            results.report((D, causal) in found, "an instantiation with D=%d causal=%s"
                           % (D, causal))
    for kernel in kernels:
        D, causal = head_dim(kernel), is_causal(kernel)
        default = scalar_default(kernel, "scale")
        results.report(default is not None and abs(default - 1 / math.sqrt(D)) <= 1e-15,
                       "%s: default scale %r is 1/sqrt(%d)" % (kernel.name, default, D))
        for B, H, H_kv, N in shapes(n_values):
            check_case(results, kernel, B, H, H_kv, N, gen, causal=causal)
        # A scale other than the default reaches the kernel.
        check_case(results, kernel, 2, 8, 2, 193, gen, scalars={"scale": 0.3}, causal=causal,
                   label=" (given)")


def check_outputs_and_errors(results, module, gen):
    """Allocated outputs, out= as a dict, and the argument checks."""
    import tkc
    kernel = next(k for k in module.kernels.values() if not is_causal(k))
    D = head_dim(kernel)
    B, H, H_kv, N = 2, 8, 2, 300
    Q = torch.randn(B, H, N, D, device="cuda", generator=gen).bfloat16()
    K = torch.randn(B, H_kv, N, D, device="cuda", generator=gen).bfloat16()
    V = torch.randn(B, H_kv, N, D, device="cuda", generator=gen).bfloat16()
    O_ref, L_ref = reference(Q, K, V, 1 / math.sqrt(D))

    O, L = kernel(Q, K, V)
    torch.cuda.synchronize()
    shapes_ok = ((tuple(O.shape), O.dtype, tuple(L.shape), L.dtype)
                 == ((B, H, N, D), torch.bfloat16, (B, H, N), torch.float32))
    o_max, o_fro, l_max, nan_rows = errors(O, L, O_ref, L_ref)
    results.report(shapes_ok and nan_rows == 0 and o_max <= O_MAX_ABS and l_max <= L_MAX_ABS,
                   "%s: allocated O %s %s and L %s %s; O max_abs=%.2e L max_abs=%.2e"
                   % (kernel.name, list(O.shape), O.dtype, list(L.shape), L.dtype, o_max, l_max))

    L2 = torch.full((B, H, N), float("nan"), device="cuda")
    O2, L2b = kernel(Q, K, V, out={"L": L2})
    torch.cuda.synchronize()
    o_max, _, l_max, nan_rows = errors(O2, L2, O_ref, L_ref)
    results.report(L2b is L2 and nan_rows == 0 and o_max <= O_MAX_ABS and l_max <= L_MAX_ABS,
                   "%s: out={'L': L} fills L, allocates O" % kernel.name)

    def refused(exc, pattern, *args, **kwargs):
        expect_refused(results, kernel, exc, pattern, *args, **kwargs)

    K3 = torch.randn(B, 3, N, D, device="cuda").bfloat16()
    refused(tkc.LaunchError, r"H_kv|H ", Q, K3, K3.clone())
    refused(ValueError, r"input 'K' has N=299", Q, K[:, :, :299].contiguous(), V)
    refused(ValueError, r"input 'Q' has size %d in dimension 3; expected %d" % (2 * D, D),
            torch.randn(B, H, N, 2 * D, device="cuda").bfloat16(), K, V)
    refused(TypeError, r"input 'V' has dtype torch.float16", Q, K, V.half())
    refused(TypeError, r"unexpected keyword argument 'sacle'", Q, K, V, sacle=0.1)
    refused(TypeError, r"scalar 'scale' must be a real number", Q, K, V, scale="0.1")
    # The spec's check (scale > 0), which lets the compiler scale row maxima once per row.
    refused(tkc.LaunchError, r"scale must be > 0, got -0\.1", Q, K, V, scale=-0.1)
    refused(tkc.LaunchError, r"scale must be > 0, got 0\.0", Q, K, V, scale=0.0)
    # N = 0 empties both outputs: success without a launch.
    try:
        O0, L0 = kernel(Q[:, :, :0], K[:, :, :0], V[:, :, :0])
        results.report(tuple(O0.shape) == (B, H, 0, D) and tuple(L0.shape) == (B, H, 0),
                       "%s: N = 0 gives empty O %s and L %s" % (kernel.name, list(O0.shape),
                                                                 list(L0.shape)))
    except Exception as e:
        results.report(False, "%s: N = 0 raised %s: %s" % (kernel.name, type(e).__name__, e))


def expect_refused(results, kernel, exc, pattern, *args, **kwargs):
    """Calling `kernel` raises `exc` with a message matching `pattern`."""
    import re
    try:
        kernel(*args, **kwargs)
    except exc as e:
        results.report(re.search(pattern, str(e)) is not None,
                       "%s refuses with %s: %s" % (kernel.name, exc.__name__, e))
        return
    except Exception as e:
        results.report(False, "%s: expected %s matching %r, got %s: %s"
                       % (kernel.name, exc.__name__, pattern, type(e).__name__, e))
        return
    torch.cuda.synchronize()
    results.report(False, "%s: expected %s matching %r, nothing was raised"
                   % (kernel.name, exc.__name__, pattern))


def expect_scalar_refused(results, kernel, name, value, pattern):
    """The launcher refuses scalar `name` = `value` (its spec's check) with `pattern`."""
    import tkc
    Q, K, V = (torch.randn(1, 2, 64, int(kernel.params.get("D", 64)), device="cuda").bfloat16()
               for _ in range(3))
    expect_refused(results, kernel, tkc.LaunchError, "%s %s" % (name, pattern), Q, K, V,
                   **{name: value})


def check_sliding_window(results, n_values, gen):
    if not SLIDING_WINDOW.exists():
        results.skip("sliding window: %s does not exist" % SLIDING_WINDOW.relative_to(ROOT))
        return
    import tkc
    module = tkc.load(SLIDING_WINDOW)
    for kernel in module.kernels.values():
        where = knob(kernel, ("window", "window_size"))
        if where is None:
            results.report(False, "%s: neither a scalar nor a parameter named window"
                           % kernel.name)
            continue
        kind, name, value = where
        windows = [int(value)] if kind == "param" else [1, 64, 100, 1000]
        if kind == "scalar" and value is not None:
            windows.append(int(value))
        cases = [(2, 8, 2, 100), (2, 8, 8, 193), (2, 8, 1, 1000)]
        if 4096 in n_values:
            cases.append((1, 8, 2, 4096))
        for window in sorted(set(windows)):
            scalars = {name: window} if kind == "scalar" else {}
            for B, H, H_kv, N in cases:
                check_case(results, kernel, B, H, H_kv, N, gen, scalars=scalars, window=window,
                           label=" window=%d" % window)
        if kind == "scalar":  # a window below 1 would hide every key
            expect_scalar_refused(results, kernel, name, 0.5, r"must be >= 1, got 0\.5")


def check_softcap(results, n_values, gen):
    if not SOFTCAP.exists():
        results.skip("soft-capping: %s does not exist" % SOFTCAP.relative_to(ROOT))
        return
    import tkc
    module = tkc.load(SOFTCAP)
    for kernel in module.kernels.values():
        causal = is_causal(kernel)
        where = knob(kernel, ("cap", "softcap", "soft_cap", "logit_cap"))
        if where is None:
            results.report(False, "%s: neither a scalar nor a parameter named cap or softcap"
                           % kernel.name)
            continue
        kind, name, value = where
        caps = [value] if kind == "param" else [5.0, 30.0] + ([value] if value else [])
        for cap in sorted(set(caps)):
            for scale in (None, 1.0):  # the default, and one that makes the cap bite
                scalars = {name: cap} if kind == "scalar" else {}
                if scale is not None:
                    scalars["scale"] = scale
                for B, H, H_kv, N in ((2, 8, 2, 193), (1, 8, 8, 1000)):
                    check_case(results, kernel, B, H, H_kv, N, gen, scalars=scalars,
                               causal=causal, softcap=cap, label=" cap=%g" % cap)
        if kind == "scalar":  # a cap of 0 would divide by zero
            expect_scalar_refused(results, kernel, name, 0.0, r"must be > 0, got 0\.0")


def check_per_head(results, n_values, gen, spec, what, key, typical, extreme):
    """A variant that reads one number per head from a global [H] (`key`, the reference's
    argument of that name): `typical(H)` at every case, then `extreme` = (values for H = 8,
    scalars, label) once per kernel."""
    if not spec.exists():
        results.skip("%s: %s does not exist" % (what, spec.relative_to(ROOT)))
        return
    import tkc
    module = tkc.load(spec)
    cases = [(1, 8, 8, 1), (2, 8, 2, 17), (2, 8, 1, 100), (2, 8, 2, 193), (1, 8, 8, 1000),
             (2, 8, 1, 2048)]
    if 4096 in n_values:
        cases.append((1, 8, 2, 4096))
    for kernel in module.kernels.values():
        causal = is_causal(kernel)
        for B, H, H_kv, N in cases:
            values, label = typical(H)
            check_case(results, kernel, B, H, H_kv, N, gen, causal=causal, label=label,
                       **{key: values})
        values, scalars, label = extreme
        check_case(results, kernel, 2, 8, 2, 300, gen, causal=causal, scalars=scalars,
                   label=label, **{key: values})


def check_alibi(results, n_values, gen):
    """ALiBi: the paper's slopes (2^(-8 (h + 1) / H)), and random ones of either sign with a
    scale of 1."""
    def paper(H):
        return (torch.tensor([2.0 ** (-8.0 * (h + 1) / H) for h in range(H)], device="cuda"),
                " slopes=paper")
    uniform = torch.rand(8, device="cuda", generator=gen) * 2 - 1
    check_per_head(results, n_values, gen, ALIBI, "ALiBi", "slopes", paper,
                   (uniform, {"scale": 1.0}, " slopes=U(-1,1)"))


def check_sink(results, n_values, gen):
    """Sinks: random normal ones, and large ones of either sign (a sink far above every score
    takes nearly all the weight; far below, none)."""
    def normal(H):
        return torch.randn(H, device="cuda", generator=gen), " sinks=N(0,1)"
    big = torch.tensor([30.0, -30.0, 0.0, 5.0, -5.0, 60.0, -60.0, 1.0], device="cuda")
    check_per_head(results, n_values, gen, SINK, "sinks", "sinks", normal,
                   (big, {}, " sinks=+-30,+-60"))


def check_offset_causal(results, n_values, gen):
    """Causal with M queries, the last M positions of N keys: M = N (attention_fwd's mask),
    M < N across tile and task edges, one query; M > N refused by the launcher."""
    if not OFFSET_CAUSAL.exists():
        results.skip("offset causal: %s does not exist" % OFFSET_CAUSAL.relative_to(ROOT))
        return
    import tkc
    module = tkc.load(OFFSET_CAUSAL)
    cases = [(2, 8, 2, 1, 1), (2, 8, 2, 1, 17), (2, 8, 1, 17, 100), (2, 8, 8, 100, 100),
             (2, 8, 2, 191, 193), (1, 8, 2, 192, 1000), (2, 8, 1, 193, 2048),
             (1, 8, 8, 1000, 1000), (2, 8, 2, 64, 2047), (1, 4, 1, 383, 385)]
    if 4096 in n_values:
        cases += [(1, 8, 2, 2048, 4096), (1, 8, 8, 4096, 8193)]
    for kernel in module.kernels.values():
        for B, H, H_kv, M, N in cases:
            check_case(results, kernel, B, H, H_kv, N, gen, causal=True, M=M)
        D = head_dim(kernel)
        Q = torch.randn(1, 2, 65, D, device="cuda").bfloat16()
        K, V = (torch.randn(1, 2, 64, D, device="cuda").bfloat16() for _ in range(2))
        expect_refused(results, kernel, tkc.LaunchError, r"requires M <= N; got M = 65, N = 64",
                       Q, K, V)


def check_bias(results, n_values, gen):
    """An additive bias tensor [B, H, N, N] streamed beside K and V: random normal, and one
    with -inf on a random half of each row's keys (a mask given as a tensor; every row keeps
    at least its first key)."""
    if not BIAS.exists():
        results.skip("bias: %s does not exist" % BIAS.relative_to(ROOT))
        return
    import tkc
    module = tkc.load(BIAS)
    # N a multiple of 8: TMA needs the bias's rows (N bf16) in whole 16 bytes.
    cases = [(2, 8, 2, 8), (2, 8, 1, 24), (2, 8, 8, 104), (2, 4, 2, 200), (1, 8, 2, 1000),
             (1, 4, 4, 2048)] + ([(1, 4, 2, 4096)] if 4096 in n_values else [])
    for kernel in module.kernels.values():
        causal = is_causal(kernel)
        for B, H, H_kv, N in cases:
            bias = torch.randn(B, H, N, N, device="cuda", generator=gen).bfloat16()
            check_case(results, kernel, B, H, H_kv, N, gen, causal=causal, bias=bias,
                       label=" bias=N(0,1)")
        B, H, H_kv, N = 2, 4, 2, 296
        drop = torch.rand(B, H, N, N, device="cuda", generator=gen) < 0.5
        drop[..., 0] = False
        bias = torch.zeros(B, H, N, N, device="cuda").masked_fill(drop, float("-inf")).bfloat16()
        check_case(results, kernel, B, H, H_kv, N, gen, causal=causal, bias=bias,
                   label=" bias=-inf on half the keys")
        D = head_dim(kernel)
        Q, K, V = (torch.randn(1, 2, 100, D, device="cuda").bfloat16() for _ in range(3))
        expect_refused(results, kernel, tkc.LaunchError, "Bias", Q, K, V,
                       torch.zeros(1, 2, 100, 100, device="cuda").bfloat16())


def check_from_lse(results, n_values, gen):
    """O = exp(scale S - L) V from the reference's own L (the backward's recomputation of P):
    L read one value per row. Ragged N, causal or not; O poisoned."""
    import tkc
    module = tkc.load(FROM_LSE)
    sizes = [1, 17, 100, 193, 1000, 2047] + ([4096] if 4096 in n_values else [])
    for kernel in module.kernels.values():
        D, causal = head_dim(kernel), is_causal(kernel)
        scale = 1 / math.sqrt(D)
        for N in sizes:
            B, H = (2, 4) if N <= 2048 else (1, 4)
            Q, K, V = (torch.randn(B, H, N, D, device="cuda", generator=gen).bfloat16()
                       for _ in range(3))
            O_ref, L_ref = reference(Q, K, V, scale, causal=causal)
            O = torch.full((B, H, N, D), float("nan"), device="cuda", dtype=torch.bfloat16)
            what = "%s B=%d H=%d N=%d" % (kernel.name, B, H, N)
            try:
                got = kernel(Q, K, V, L_ref, out=O)
                torch.cuda.synchronize()
            except Exception as e:
                results.report(False, "%s: %s: %s" % (what, type(e).__name__, e))
                continue
            nan_rows = torch.isnan(O).any(-1).sum().item()
            dO = O.float() - O_ref
            o_max = dO.abs().max().item()
            o_fro = (dO.norm() / O_ref.norm()).item()
            ok = got is O and nan_rows == 0 and o_max <= O_MAX_ABS and o_fro <= O_REL_FRO
            results.report(ok, "%s: O max_abs=%.2e rel_fro=%.2e unwritten/NaN rows=%d"
                           % (what, o_max, o_fro, nan_rows))


def check_finish_block(results, n_values, gen):
    """O = softmax(scale Q K^T) V with V wider than Q: the store stages in the finish block."""
    import tkc
    kernel = next(iter(tkc.load(FINISH_BLOCK).kernels.values()))
    scale = scalar_default(kernel, "scale")
    for N in n_values:
        B, H = (2, 4) if N <= 4096 else (1, 2)
        Q = torch.randn(B, H, N, 64, device="cuda", generator=gen).bfloat16()
        K = torch.randn(B, H, N, 64, device="cuda", generator=gen).bfloat16()
        V = torch.randn(B, H, N, 128, device="cuda", generator=gen).bfloat16()
        O = torch.full((B, H, N, 128), float("nan"), device="cuda", dtype=torch.bfloat16)
        what = "%s B=%d H=%d N=%d (Q, K 64 wide; V, O 128)" % (kernel.name, B, H, N)
        try:
            kernel(Q, K, V, out=O)
            torch.cuda.synchronize()
        except Exception as e:
            results.report(False, "%s: %s: %s" % (what, type(e).__name__, e))
            continue
        S = torch.matmul(Q.float(), K.float().transpose(-1, -2)) * scale
        O_ref = torch.matmul(torch.softmax(S, dim=-1), V.float())
        nan_rows = torch.isnan(O).any(-1).sum().item()
        dO = O.float() - O_ref
        o_max, o_fro = dO.abs().max().item(), (dO.norm() / O_ref.norm()).item()
        results.report(nan_rows == 0 and o_max <= O_MAX_ABS and o_fro <= O_REL_FRO,
                       "%s: O max_abs=%.2e rel_fro=%.2e  unwritten/NaN rows=%d"
                       % (what, o_max, o_fro, nan_rows))
        del Q, K, V, O, S, O_ref, dO


def check_layout(results, n_values, gen):
    """Q, K, V and O stored [B, N, H, D] (test/Emit/attention-layout.yaml's `layout`), L
    [B, H, N]: against the reference on the [B, H, N, D] views. Ragged N, GQA, causal or not;
    O and L poisoned."""
    import tkc
    module = tkc.load(LAYOUT)
    sizes = [1, 17, 100, 193, 1000, 2047] + ([4096] if 4096 in n_values else [])
    for kernel in module.kernels.values():
        causal = is_causal(kernel)
        scale = scalar_default(kernel, "scale")
        for N in sizes:
            for H, H_kv in ((4, 4), (4, 2)):
                B = 2
                Q = torch.randn(B, N, H, 64, device="cuda", generator=gen).bfloat16()
                K, V = (torch.randn(B, N, H_kv, 64, device="cuda", generator=gen).bfloat16()
                        for _ in range(2))
                O = torch.full((B, N, H, 64), float("nan"), device="cuda", dtype=torch.bfloat16)
                L = torch.full((B, H, N), float("nan"), device="cuda", dtype=torch.float32)
                what = "%s B=%d H=%d H_kv=%d N=%d (stored [B, N, H, D])" % (kernel.name, B, H,
                                                                           H_kv, N)
                try:
                    kernel(Q, K, V, out=(O, L))
                    torch.cuda.synchronize()
                except Exception as e:
                    results.report(False, "%s: %s: %s" % (what, type(e).__name__, e))
                    continue
                O_ref, L_ref = reference(Q.transpose(1, 2), K.transpose(1, 2), V.transpose(1, 2),
                                         scale, causal=causal)
                o_max, o_fro, l_max, nan_rows = errors(O.transpose(1, 2), L, O_ref, L_ref)
                ok = (nan_rows == 0 and o_max <= O_MAX_ABS and o_fro <= O_REL_FRO
                      and l_max <= L_MAX_ABS)
                results.report(ok, "%s: O max_abs=%.2e rel_fro=%.2e  L max_abs=%.2e  "
                               "unwritten/NaN rows=%d" % (what, o_max, o_fro, l_max, nan_rows))


def check_key_bias(results, n_values, gen):
    """A bias per key read per column of each stage (test/Emit/attention-key-bias.yaml):
    random normal, and -inf past each batch's own length (a key padding mask); ragged N, GQA,
    causal or not, O and L poisoned."""
    import tkc
    module = tkc.load(KEY_BIAS)
    sizes = [1, 17, 100, 193, 1000, 2047] + ([4096] if 4096 in n_values else [])
    for kernel in module.kernels.values():
        D, causal = head_dim(kernel), is_causal(kernel)
        scale = 1 / math.sqrt(D)
        for N in sizes:
            B, H, H_kv = 2, 4, 2
            Q = torch.randn(B, H, N, D, device="cuda", generator=gen).bfloat16()
            K, V = (torch.randn(B, H_kv, N, D, device="cuda", generator=gen).bfloat16()
                    for _ in range(2))
            kb = torch.randn(B, N, device="cuda", generator=gen)
            kb[1, max(1, N - N // 3):] = float("-inf")  # batch 1's last keys are padding
            O = torch.full((B, H, N, D), float("nan"), device="cuda", dtype=torch.bfloat16)
            L = torch.full((B, H, N), float("nan"), device="cuda", dtype=torch.float32)
            what = "%s B=%d H=%d H_kv=%d N=%d (a bias per key, padding in batch 1)" % (
                kernel.name, B, H, H_kv, N)
            try:
                kernel(Q, K, V, kb, out=(O, L))
                torch.cuda.synchronize()
            except Exception as e:
                results.report(False, "%s: %s: %s" % (what, type(e).__name__, e))
                continue
            bias = kb[:, None, None, :].expand(B, H, N, N)
            O_ref, L_ref = reference(Q, K, V, scale, causal=causal, bias=bias)
            o_max, o_fro, l_max, nan_rows = errors(O, L, O_ref, L_ref)
            ok = (nan_rows == 0 and o_max <= O_MAX_ABS and o_fro <= O_REL_FRO
                  and l_max <= L_MAX_ABS)
            results.report(ok, "%s: O max_abs=%.2e rel_fro=%.2e  L max_abs=%.2e  unwritten/NaN "
                           "rows=%d" % (what, o_max, o_fro, l_max, nan_rows))


def check_weights(results, n_values, gen):
    """The weights P = softmax(scale Q K^T), stored every stage from compute, and O = P V,
    given the reference's L (test/Emit/attention-weights.yaml); N a multiple of 8 (P's rows
    are TMA rows), causal or not; O and P poisoned, so that a tile left unstored shows."""
    import tkc
    module = tkc.load(WEIGHTS)
    sizes = [8, 200, 1000, 2048]
    for kernel in module.kernels.values():
        causal = is_causal(kernel)
        scale = scalar_default(kernel, "scale")
        for N in sizes:
            B, H = 2, 2
            Q, K, V = (torch.randn(B, H, N, 64, device="cuda", generator=gen).bfloat16()
                       for _ in range(3))
            O_ref, L_ref = reference(Q, K, V, scale, causal=causal)
            O = torch.full((B, H, N, 64), float("nan"), device="cuda", dtype=torch.bfloat16)
            P = torch.full((B, H, N, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            what = "%s B=%d H=%d N=%d (P stored every stage)" % (kernel.name, B, H, N)
            try:
                kernel(Q, K, V, L_ref, out=(O, P))
                torch.cuda.synchronize()
            except Exception as e:
                results.report(False, "%s: %s: %s" % (what, type(e).__name__, e))
                continue
            S = torch.matmul(Q.float(), K.float().transpose(-1, -2)) * scale
            if causal:
                S.masked_fill_(~visible(N, True, device="cuda"), float("-inf"))
            P_ref = torch.softmax(S, dim=-1)
            p_nan = torch.isnan(P).sum().item()
            p_max = (P.float() - P_ref).abs().max().item()
            o_max, o_fro, _, nan_rows = errors(O, L_ref, O_ref, L_ref)
            ok = (p_nan == 0 and p_max <= 1e-2 and nan_rows == 0 and o_max <= O_MAX_ABS
                  and o_fro <= O_REL_FRO)
            results.report(ok, "%s: P max_abs=%.2e NaN=%d  O max_abs=%.2e rel_fro=%.2e  "
                           "unwritten/NaN rows=%d" % (what, p_max, p_nan, o_max, o_fro, nan_rows))
            del S, P_ref, P


def varlen_lengths(quick):
    """Sequence lengths of the packed batches check_varlen runs: ragged, empty sequences
    among them, one sequence alone, more than 32 sequences (the device's lookup reads 32
    offsets a pass), and one long sequence beside short ones."""
    cases = [[1], [17, 100, 193], [0, 5, 0, 64, 191, 192, 193, 0], [1000, 3, 2047, 1],
             [7] * 40 + [300], [64] * 33]
    if not quick:
        cases += [[4096, 1, 500], [8192]]
    return cases


def check_varlen(results, quick, gen):
    """Sequences packed end to end (attention_varlen.yaml): Q, K, V, O [T, H, D] and the
    offsets cu_seqlens; each sequence against the reference on its own tokens, causal or
    not, GQA; O and L poisoned, so that a row left unwritten or a store into a neighbour
    shows. Also the launcher's refusal of a single offset."""
    if not VARLEN.exists():
        results.report(False, "attention_varlen.yaml is missing")
        return
    import tkc
    module = tkc.load(VARLEN)
    for kernel in module.kernels.values():
        D, causal = head_dim(kernel), is_causal(kernel)
        scale = 1 / math.sqrt(D)
        for lengths in varlen_lengths(quick):
            for H, H_kv in ((4, 4), (4, 1)):
                offsets = [0]
                for n in lengths:
                    offsets.append(offsets[-1] + n)
                T = offsets[-1]
                cu = torch.tensor(offsets, dtype=torch.int32, device="cuda")
                Q = torch.randn(T, H, D, device="cuda", generator=gen).bfloat16()
                K, V = (torch.randn(T, H_kv, D, device="cuda", generator=gen).bfloat16()
                        for _ in range(2))
                O = torch.full((T, H, D), float("nan"), device="cuda", dtype=torch.bfloat16)
                L = torch.full((H, T), float("nan"), device="cuda", dtype=torch.float32)
                shown = lengths if len(lengths) <= 8 else "%d sequences" % len(lengths)
                what = "%s H=%d H_kv=%d lengths=%s" % (kernel.name, H, H_kv, shown)
                try:
                    got = kernel(Q, K, V, cu, out=(O, L))
                    torch.cuda.synchronize()
                except Exception as e:
                    results.report(False, "%s: %s: %s" % (what, type(e).__name__, e))
                    continue
                worst = [0.0, 0.0, 0.0]
                nan_rows = (torch.isnan(O).any(-1).any(-1) | torch.isnan(L).any(0)).sum().item()
                for s in range(len(lengths)):
                    a, b = offsets[s], offsets[s + 1]
                    if a == b:
                        continue
                    def view(x):
                        return x[a:b].transpose(0, 1).unsqueeze(0)
                    O_ref, L_ref = reference(view(Q), view(K), view(V), scale, causal=causal)
                    o_max, o_fro, l_max, _ = errors(view(O), L[:, a:b].unsqueeze(0), O_ref, L_ref)
                    worst = [max(worst[0], o_max), max(worst[1], o_fro), max(worst[2], l_max)]
                ok = (got[0] is O and nan_rows == 0 and worst[0] <= O_MAX_ABS
                      and worst[1] <= O_REL_FRO and worst[2] <= L_MAX_ABS)
                results.report(ok, "%s: worst sequence O max_abs=%.2e rel_fro=%.2e  L max_abs="
                               "%.2e  unwritten/NaN rows=%d" % (what, worst[0], worst[1],
                                                                 worst[2], nan_rows))
        # One offset cannot cover the tokens.
        Q = torch.randn(5, 4, D, device="cuda", generator=gen).bfloat16()
        K = V = torch.randn(5, 4, D, device="cuda", generator=gen).bfloat16()
        one = torch.zeros(1, dtype=torch.int32, device="cuda")
        expect_refused(results, kernel, tkc.LaunchError, "cu_seqlens has S = 1 offsets", Q, K,
                       V, one)


def run_all(quick=False, seed=2024):
    """Every check; returns the failed cases' descriptions."""
    import tkc
    torch.backends.cuda.matmul.allow_tf32 = False  # a true fp32 reference
    torch.backends.cudnn.allow_tf32 = False
    results = Results()
    failures = self_test()
    if failures:
        return ["the reference disagrees with the naive loop"]
    print("%s, torch %s" % (torch.cuda.get_device_name(), torch.__version__), flush=True)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    n_values = QUICK_N_VALUES if quick else N_VALUES
    start = time.monotonic()
    module = tkc.load(ATTENTION)
    print("load: %d kernels, from_cache=%s, %.1f s" % (len(module.kernels), module.from_cache,
                                                      time.monotonic() - start), flush=True)
    check_forward(results, module, n_values, gen)
    check_outputs_and_errors(results, module, gen)
    check_sliding_window(results, n_values, gen)
    check_softcap(results, n_values, gen)
    check_alibi(results, n_values, gen)
    check_sink(results, n_values, gen)
    check_offset_causal(results, n_values, gen)
    check_from_lse(results, n_values, gen)
    check_bias(results, n_values, gen)
    check_finish_block(results, n_values, gen)
    check_layout(results, n_values, gen)
    check_varlen(results, quick, gen)
    check_key_bias(results, n_values, gen)
    check_weights(results, n_values, gen)
    return results.summary("attention")


class AttentionOnGpu(unittest.TestCase):
    def test_every_case(self):
        failed = run_all(quick=False)
        self.assertEqual(failed, [], "\n".join(failed))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer sequence lengths")
    ap.add_argument("--self-test", action="store_true",
                    help="only check the reference against the naive loop (CPU, no GPU)")
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args()
    if args.self_test:
        return 1 if self_test() else 0
    return 1 if run_all(args.quick, args.seed) else 0


if __name__ == "__main__":
    sys.exit(main())

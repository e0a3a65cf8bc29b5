#!/usr/bin/env python3
"""Generated attention variants against FlexAttention, side by side in one
process, on the FlashAttention-3 protocol.

    PYTHONPATH=python python3 bench/attention/variants.py [--out results.json] [--commit ID]
        [--quick] [--d 64] [--variant alibi] [--cold-l2] [--spec-dir DIR ...]

Variants (each a spec in kernels-spec/ and the FlexAttention program that
computes the same):
  alibi  attention_alibi.yaml: scores + slopes[h] * (j - i); FlexAttention with
         the ALiBi score_mod (and the causal block mask when causal).
  sink   attention_sink.yaml: one more logit per head, sinks[h] (random normal),
         with no value; FlexAttention over N + 1 keys, the last one's score
         sinks[h] and its value zero, visible to every query.
  bias   attention_bias.yaml: scores + Bias[b, h, i, j], a bf16 tensor [B, H, N, N]
         (random normal); FlexAttention with a score_mod that reads it (and the
         causal block mask when causal). Memory-bound: the bias is most of the bytes.
         Its own protocol: B x N = 4096, H = 8, N 1024 ... 4096.
  offset attention_offset_causal.yaml: M = N / 2 queries, the last M positions
         of the N keys (query i sees keys j <= i + N - M); causal only.
         FlexAttention with that block mask, and SDPA with causal_lower_right
         (a second baseline, recorded on its own).
  keybias test/Emit/attention-key-bias.yaml: scores + kb[b, j], a bias per key (random
         normal), read per column of each stage; FlexAttention with a score_mod that
         reads it (and the causal block mask when causal).
  varlen attention_varlen.yaml: the 16384 tokens split into B = 16384 / N sequences
         of random lengths (B - 1 cut points drawn uniformly, seeded), packed
         [T, H, D] with cu_seqlens; FlexAttention over one packed sequence of T
         tokens with the document block mask (and causal within each document),
         its Q, K, V given [1, H, T, D] contiguous. FLOPs count each sequence's
         own: sum of 4 H len^2 D (half for causal).

Configurations: batch x sequence length = 16384 tokens, hidden 2048, so H =
2048 / D heads, N in 1024 ... 16384, B = 16384 / N, causal and not. FLOPs =
4 B H N^2 D (half for causal; for offset 4 B H D (M N - M^2 / 2), the
scores left of the shifted diagonal). bf16 random normal Q, K, V; slopes 2^(-8 (h+1) / H)
(the ALiBi paper's). FlexAttention is torch.compile(flex_attention) compiled
for each shape (dynamo's recompile limit raised so that no point runs eager).

For every point: our outputs (poisoned with NaN) against each baseline's
(relative Frobenius error of O at most 1e-2, every row written), then 10
warm-up runs of each and 30 paired rounds (bench/timing.py), the order
swapped every round; --cold-l2 evicts the L2 before every timed run. The
ratio is the median of the baseline's time / our time (above 1: ours faster).
Our kernel is timed through Kernel.launch on prepared pointers.
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

REL_ERR_MAX = 1e-2


def alibi_slopes(H):
    """The ALiBi paper's slopes for H heads: 2^(-8 (h + 1) / H)."""
    return torch.tensor([2.0 ** (-8.0 * (h + 1) / H) for h in range(H)], dtype=torch.float32,
                        device="cuda")


def causal_mask(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


FLEX = ("flex", "flex_attention (torch.compile)")


class Variant:
    """A spec, our globals after Q, K, V, O, L (extra) and the calls that compute the same O
    (baselines: (short name, description, function), the first the one the variant is
    measured against first). Queries and keys are both N long, causal or not."""
    causal_values = (False, True)
    tokens = TOKENS  # B x N
    max_n = max(N_VALUES)

    def __init__(self, B, H, N, D):
        pass

    @staticmethod
    def heads(D):
        return HIDDEN // D

    @staticmethod
    def queries(N):
        return N

    @staticmethod
    def causal(kernel):
        return kernel.params.get("causal") == "true"

    @staticmethod
    def flops(B, H, M, N, D, causal):
        return 4.0 * B * H * N * N * D / (2 if causal else 1)

    def extra(self):
        return []


class Alibi(Variant):
    spec = ROOT / "kernels-spec" / "attention_alibi.yaml"

    def __init__(self, B, H, N, D):
        self.slopes = alibi_slopes(H)

    def extra(self):
        return [self.slopes]

    def baselines(self, flex, create_block_mask, Q, K, V, scale, causal):
        slopes = self.slopes
        N = Q.shape[2]

        def alibi(score, b, h, q_idx, kv_idx):
            return score + slopes[h] * (kv_idx - q_idx)
        mask = create_block_mask(causal_mask, None, None, N, N) if causal else None
        return [FLEX + (lambda: flex(Q, K, V, score_mod=alibi, block_mask=mask, scale=scale),)]


class Sink(Variant):
    """gpt-oss's sinks: FlexAttention over one more key column, N, whose score is sinks[h]
    and whose value is zero."""
    spec = ROOT / "kernels-spec" / "attention_sink.yaml"

    def __init__(self, B, H, N, D):
        self.sinks = torch.randn(H, device="cuda", dtype=torch.float32)

    def extra(self):
        return [self.sinks]

    def baselines(self, flex, create_block_mask, Q, K, V, scale, causal):
        sinks = self.sinks
        B, H, N, D = Q.shape
        zero = torch.zeros(B, H, 1, D, device="cuda", dtype=Q.dtype)
        K1, V1 = torch.cat([K, zero], dim=2), torch.cat([V, zero], dim=2)

        def sink(score, b, h, q_idx, kv_idx):
            return torch.where(kv_idx == N, sinks[h], score)

        def causal_or_sink(b, h, q_idx, kv_idx):
            return (q_idx >= kv_idx) | (kv_idx == N)
        mask = create_block_mask(causal_or_sink if causal else (lambda b, h, q, kv: kv >= 0),
                                 None, None, N, N + 1)
        return [FLEX + (lambda: flex(Q, K1, V1, score_mod=sink, block_mask=mask, scale=scale),)]


class Bias(Variant):
    """The bias is B H N^2 elements: 4096 tokens and 8 heads, N up to 4096, keep it below 2^27
    (FlexAttention's generated kernel failed to compile, an index past int32, at 2^29)."""
    spec = ROOT / "kernels-spec" / "attention_bias.yaml"
    tokens = 4096
    max_n = 4096

    @staticmethod
    def heads(D):
        return 8

    def __init__(self, B, H, N, D):
        self.bias = torch.randn(B, H, N, N, device="cuda", dtype=torch.bfloat16)

    def extra(self):
        return [self.bias]

    def baselines(self, flex, create_block_mask, Q, K, V, scale, causal):
        bias = self.bias
        N = Q.shape[2]

        def add_bias(score, b, h, q_idx, kv_idx):
            return score + bias[b, h, q_idx, kv_idx]
        mask = create_block_mask(causal_mask, None, None, N, N) if causal else None
        return [FLEX + (lambda: flex(Q, K, V, score_mod=add_bias, block_mask=mask, scale=scale),)]


class Offset(Variant):
    """Causal with M = N / 2 queries aligned to the keys' end (chunked prefill)."""
    spec = ROOT / "kernels-spec" / "attention_offset_causal.yaml"
    causal_values = (True,)

    @staticmethod
    def queries(N):
        return N // 2

    @staticmethod
    def causal(kernel):
        return True

    @staticmethod
    def flops(B, H, M, N, D, causal):
        return 4.0 * B * H * D * (M * N - M * M / 2)

    def baselines(self, flex, create_block_mask, Q, K, V, scale, causal):
        from torch.nn.attention.bias import causal_lower_right
        M, N = Q.shape[2], K.shape[2]
        shift = N - M

        def lower_right(b, h, q_idx, kv_idx):
            return q_idx + shift >= kv_idx
        mask = create_block_mask(lower_right, None, None, M, N)
        bias = causal_lower_right(M, N)
        sdpa = torch.nn.functional.scaled_dot_product_attention
        return [FLEX + (lambda: flex(Q, K, V, block_mask=mask, scale=scale),),
                ("sdpa", "scaled_dot_product_attention (causal_lower_right)",
                 lambda: sdpa(Q, K, V, attn_mask=bias, scale=scale))]


class KeyBias(Variant):
    """A bias per key, kb[b, j] (random normal), read per column of each stage
    (test/Emit/attention-key-bias.yaml); FlexAttention with a score_mod that reads it."""
    spec = ROOT / "test" / "Emit" / "attention-key-bias.yaml"

    def __init__(self, B, H, N, D):
        self.kb = torch.randn(B, N, device="cuda", dtype=torch.float32)

    def extra(self):
        return [self.kb]

    def baselines(self, flex, create_block_mask, Q, K, V, scale, causal):
        kb = self.kb
        N = Q.shape[2]

        def key_bias(score, b, h, q_idx, kv_idx):
            return score + kb[b, kv_idx]
        mask = create_block_mask(causal_mask, None, None, N, N) if causal else None
        return [FLEX + (lambda: flex(Q, K, V, score_mod=key_bias, block_mask=mask,
                                     scale=scale),)]


class Varlen(Variant):
    """Packed sequences of random lengths; run by run_varlen, not the common loop."""
    spec = ROOT / "kernels-spec" / "attention_varlen.yaml"


VARIANTS = {"alibi": Alibi, "sink": Sink, "offset": Offset, "bias": Bias, "varlen": Varlen,
            "keybias": KeyBias}


def random_lengths(tokens, count, gen):
    """`count` lengths summing to `tokens`: the gaps between count - 1 uniform cut points."""
    if count == 1:
        return [tokens]
    cuts = sorted(torch.randint(1, tokens, (count - 1,), generator=gen).tolist())
    edges = [0] + cuts + [tokens]
    return [b - a for a, b in zip(edges, edges[1:])]


def run_varlen(flex, create_block_mask, args, n_values, flush, meta, records, rows, problems):
    """The varlen variant: ours on [T, H, D] with cu_seqlens, FlexAttention's document mask
    on [1, H, T, D]."""
    gpu, commit, date = meta
    module = tkc.load(Varlen.spec)
    kernels = {(head_dim(k), Variant.causal(k)): k for k in module.kernels.values()}
    gen = torch.Generator().manual_seed(20261128)
    for D in args.d or (64, 128):
        H = HIDDEN // D
        scale = 1 / math.sqrt(D)
        for causal in (False, True):
            kernel = kernels.get((D, causal))
            for N in n_values:
                B = TOKENS // N
                lengths = random_lengths(TOKENS, B, gen)
                what = "varlen B=%d H=%d mean N=%d max %d D=%d %s" % (
                    B, H, N, max(lengths), D, "causal" if causal else "non-causal")
                if kernel is None:
                    problems.append("%s: no kernel" % what)
                    continue
                offsets = [0]
                for n in lengths:
                    offsets.append(offsets[-1] + n)
                T = offsets[-1]
                cu = torch.tensor(offsets, dtype=torch.int32, device="cuda")
                Q, K, V = (torch.randn(T, H, D, device="cuda", dtype=torch.bfloat16)
                           for _ in range(3))
                O = torch.full((T, H, D), float("nan"), device="cuda", dtype=torch.bfloat16)
                L = torch.full((H, T), float("nan"), device="cuda", dtype=torch.float32)
                try:
                    kernel(Q, K, V, cu, out=(O, L), scale=scale)
                    torch.cuda.synchronize()
                except tkc.TkcError as e:
                    problems.append("%s: %s" % (what, e))
                    print("FAIL %s: %s" % (what, e), flush=True)
                    continue
                unwritten = (torch.isnan(O).any(-1).any(-1) | torch.isnan(L).any(0)).sum().item()
                named = {"Q": Q, "K": K, "V": V, "O": O, "L": L, "cu_seqlens": cu}
                pointers = [named[a.name].data_ptr() for a in kernel.info.arguments]
                sizes = [{"H": H, "T": T, "H_kv": H, "S": len(offsets)}[s]
                         for s in kernel.info.sizes]
                stream = torch.cuda.current_stream().cuda_stream

                def ours():
                    kernel.launch(pointers, sizes, stream, [scale])

                doc = torch.repeat_interleave(torch.arange(B, device="cuda"),
                                              torch.tensor(lengths, device="cuda"))

                def same_doc(b, h, q_idx, kv_idx):
                    keep = doc[q_idx] == doc[kv_idx]
                    return keep & (q_idx >= kv_idx) if causal else keep
                mask = create_block_mask(same_doc, None, None, T, T)
                Qf, Kf, Vf = (x.transpose(0, 1).unsqueeze(0).contiguous() for x in (Q, K, V))

                def base():
                    return flex(Qf, Kf, Vf, block_mask=mask, scale=scale)

                flops = sum(4.0 * H * n * n * D / (2 if causal else 1) for n in lengths)
                ref = base()
                torch.cuda.synchronize()
                err = rel_err(O, ref[0].transpose(0, 1))
                if unwritten or not err <= REL_ERR_MAX:
                    problems.append("%s: rel_err %.3e against flex, %d rows unwritten"
                                    % (what, err, unwritten))
                    print("FAIL %s: rel_err %.3e against flex, %d rows unwritten; not timed"
                          % (what, err, unwritten), flush=True)
                    continue
                ours_tflops, base_tflops, ratio = paired_rates(ours, base, flops, rounds=ROUNDS,
                                                               warmup=WARMUP, flush=flush)
                config = {"B": B, "H": H, "N": N, "D": D, "causal": causal, "T": T,
                          "max_len": max(lengths), "min_len": min(lengths)}
                if args.cold_l2:
                    config["cold_l2"] = True
                records.append({"kernel": "%s_vs_flex" % kernel.name, "config": config,
                                "gpu": gpu, "commit": commit, "date": date,
                                "tflops": round(ours_tflops, 1), "baseline": FLEX[1] +
                                " with a document block mask",
                                "baseline_tflops": round(base_tflops, 1),
                                "ratio": round(ratio, 3), "rel_err": float("%.3e" % err)})
                rows.append((kernel.name, what, "flex", ours_tflops, base_tflops, ratio, err))
                print("%-24s %-50s tkc %6.1f  flex %6.1f  ratio %.3f  rel_err %.2e"
                      % (kernel.name, what, ours_tflops, base_tflops, ratio, err), flush=True)
                del Q, K, V, O, L, Qf, Kf, Vf, ref, mask
                torch.cuda.empty_cache()


def head_dim(kernel):
    return next(a for a in kernel.info.arguments if a.name == "Q").dims[-1]


def rel_err(out, ref):
    return (torch.linalg.norm(out.float() - ref.float()) / torch.linalg.norm(ref.float())).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="JSON file for the records")
    ap.add_argument("--commit", default=None, help="commit the kernels were generated at")
    ap.add_argument("--quick", action="store_true", help="N = 1024 and 4096 only")
    ap.add_argument("--d", type=int, action="append", choices=(64, 128),
                    help="head dimension (repeat; default both)")
    ap.add_argument("--variant", action="append", choices=sorted(VARIANTS),
                    help="variant (repeat; default all)")
    ap.add_argument("--cold-l2", action="store_true", help="evict the L2 before every timed run")
    ap.add_argument("--spec-dir", action="append", type=Path,
                    help="take the variants' specs from this folder (repeat: each folder's "
                         "kernels are timed at every point, an A/B in one process; not varlen)")
    args = ap.parse_args()

    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    import torch._dynamo
    torch._dynamo.config.cache_size_limit = 1000
    if hasattr(torch._dynamo.config, "recompile_limit"):
        torch._dynamo.config.recompile_limit = 1000
    flex = torch.compile(flex_attention, dynamic=False)

    gpu = torch.cuda.get_device_name()
    commit = args.commit or subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short",
                                            "HEAD"], capture_output=True,
                                           text=True).stdout.strip() or "unknown"
    date = datetime.date.today().isoformat()
    print("%s, torch %s, commit %s%s" % (gpu, torch.__version__, commit,
                                        ", cold L2" if args.cold_l2 else ""), flush=True)
    torch.manual_seed(20261127)
    flush = l2_flusher() if args.cold_l2 else None
    records, rows, problems = [], [], []
    n_values = QUICK_N_VALUES if args.quick else N_VALUES

    for vname in args.variant or sorted(VARIANTS):
        cls = VARIANTS[vname]
        if cls is Varlen:
            run_varlen(flex, create_block_mask, args, n_values, flush, (gpu, commit, date),
                       records, rows, problems)
            continue
        # One side per --spec-dir (the shipped specs without one): each side's kernel is
        # checked and paired against the same baselines at every point.
        sides = []
        for d in args.spec_dir or [cls.spec.parent]:
            module = tkc.load(Path(d) / cls.spec.name)
            sides.append((Path(d).name if args.spec_dir and len(args.spec_dir) > 1 else None,
                          {(head_dim(k), cls.causal(k)): k for k in module.kernels.values()}))
        for D in args.d or (64, 128):
            H = cls.heads(D)
            for causal, (side, kernels) in ((c, s) for c in cls.causal_values for s in sides):
                kernel = kernels.get((D, causal))
                for N in (n for n in n_values if n <= cls.max_n):
                    B = cls.tokens // N
                    M = cls.queries(N)
                    what = "%s B=%d H=%d %sN=%d D=%d %s%s" % (
                        vname, B, H, "M=%d " % M if M != N else "", N, D,
                        "causal" if causal else "non-causal", " [%s]" % side if side else "")
                    if kernel is None:
                        problems.append("%s: no kernel" % what)
                        continue
                    variant = cls(B, H, N, D)
                    flops = cls.flops(B, H, M, N, D, causal)
                    scale = 1 / math.sqrt(D)
                    Q = torch.randn(B, H, M, D, device="cuda", dtype=torch.bfloat16)
                    K, V = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16)
                            for _ in range(2))
                    O = torch.full((B, H, M, D), float("nan"), device="cuda",
                                   dtype=torch.bfloat16)
                    L = torch.full((B, H, M), float("nan"), device="cuda", dtype=torch.float32)
                    try:
                        kernel(Q, K, V, *variant.extra(), out=(O, L), scale=scale)
                        torch.cuda.synchronize()
                    except tkc.TkcError as e:
                        problems.append("%s: %s" % (what, e))
                        print("FAIL %s: %s" % (what, e), flush=True)
                        continue
                    unwritten = (torch.isnan(O).any(-1) | torch.isnan(L)).sum().item()
                    # In the launcher's order of the globals (the spec's).
                    inputs = [a for a in kernel.info.arguments if not a.is_output]
                    named = dict(zip([a.name for a in inputs], [Q, K, V] + variant.extra()))
                    named.update(O=O, L=L)
                    pointers = [named[a.name].data_ptr() for a in kernel.info.arguments]
                    sizes = [{"B": B, "H": H, "N": N, "M": M, "H_kv": H}[s]
                             for s in kernel.info.sizes]
                    stream = torch.cuda.current_stream().cuda_stream

                    def ours():
                        kernel.launch(pointers, sizes, stream, [scale])

                    for short, desc, base in variant.baselines(flex, create_block_mask, Q, K, V,
                                                               scale, causal):
                        ref = base()
                        torch.cuda.synchronize()
                        err = rel_err(O, ref)
                        if unwritten or not err <= REL_ERR_MAX:
                            problems.append("%s: rel_err %.3e against %s, %d rows unwritten"
                                            % (what, err, short, unwritten))
                            print("FAIL %s: rel_err %.3e against %s, %d rows unwritten; not "
                                  "timed" % (what, err, short, unwritten), flush=True)
                            continue
                        ours_tflops, base_tflops, ratio = paired_rates(
                            ours, base, flops, rounds=ROUNDS, warmup=WARMUP, flush=flush)
                        config = {"B": B, "H": H, "N": N, "D": D, "causal": causal}
                        if M != N:
                            config["M"] = M
                        if side:
                            config["spec_dir"] = side
                        if args.cold_l2:
                            config["cold_l2"] = True
                        records.append({"kernel": "%s_vs_%s" % (kernel.name, short),
                                        "config": config, "gpu": gpu, "commit": commit,
                                        "date": date, "tflops": round(ours_tflops, 1),
                                        "baseline": desc,
                                        "baseline_tflops": round(base_tflops, 1),
                                        "ratio": round(ratio, 3), "rel_err": float("%.3e" % err)})
                        rows.append((kernel.name, what, short, ours_tflops, base_tflops, ratio,
                                     err))
                        print("%-24s %-50s tkc %6.1f  %s %6.1f  ratio %.3f  rel_err %.2e"
                              % (kernel.name, what, ours_tflops, short, base_tflops, ratio, err),
                              flush=True)
                        del ref
                    del Q, K, V, O, L
                    torch.cuda.empty_cache()

    if args.out:
        write_records(args.out, records)
    print("\n| kernel | config | baseline | tkc TFLOP/s | baseline TFLOP/s | ratio | rel_err |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %.1f | %.1f | %.3f | %.2e |" % r)
    for p in problems:
        print("problem: %s" % p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

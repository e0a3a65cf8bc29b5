"""Trains a GPT-style model twice from the same initialisation and data order, once with
tkc's attention (tkc.functional.attention, forward and backward specs) and once with
PyTorch's SDPA, and records both loss curves, tokens/s and peak memory.

    PYTHONPATH=python python3 bench/train/train_gpt.py [--steps 500] [--compile]
        [--out bench/results/train_gpt_h100_<date>_<commit>.json] [--commit ID]

Model: 12 layers, hidden 768, 12 query heads of D = 64 sharing 4 key/value heads (GQA),
learned positions, pre-LayerNorm, GELU MLP, tied byte embeddings (vocabulary 256); bf16
autocast over f32 weights, AdamW, warm-up then cosine decay, gradient clipping at 1.
Data: the Python standard library's source files read as bytes (nothing downloaded),
sequences of --seq bytes at offsets drawn from one seeded generator, so both runs see the
same batches in the same order. `final_loss_rel_diff` is |mean(tkc) - mean(sdpa)| / mean(sdpa)
over the last 50 steps' losses.
"""

import argparse
import datetime
import json
import math
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import tkc.functional as tkf  # noqa: E402


def stdlib_bytes(limit):
    """The standard library's .py files, concatenated in sorted path order (up to `limit`
    bytes), as a uint8 tensor."""
    root = Path(sysconfig.get_paths()["stdlib"])
    chunks, total = [], 0
    for path in sorted(root.rglob("*.py")):
        if "site-packages" in path.parts:
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        chunks.append(data)
        total += len(data)
        if total >= limit:
            break
    return torch.frombuffer(bytearray(b"".join(chunks)[:limit]), dtype=torch.uint8)


class Attention(torch.nn.Module):
    def __init__(self, dim, heads, kv_heads, backend):
        super().__init__()
        self.heads, self.kv_heads, self.d, self.backend = heads, kv_heads, dim // heads, backend
        self.qkv = torch.nn.Linear(dim, (heads + 2 * kv_heads) * self.d, bias=False)
        self.proj = torch.nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        B, N, _ = x.shape
        q, k, v = self.qkv(x).view(B, N, -1, self.d).transpose(1, 2).split(
            [self.heads, self.kv_heads, self.kv_heads], dim=1)
        if self.backend == "tkc":
            o = tkf.attention(q, k, v, causal=True)
        else:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.proj(o.transpose(1, 2).reshape(B, N, -1))


class Block(torch.nn.Module):
    def __init__(self, dim, heads, kv_heads, backend):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.attn = Attention(dim, heads, kv_heads, backend)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(),
                                       torch.nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(torch.nn.Module):
    def __init__(self, layers, dim, heads, kv_heads, seq, backend, vocab=256):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, dim)
        self.pos = torch.nn.Parameter(torch.zeros(seq, dim))
        self.blocks = torch.nn.ModuleList(Block(dim, heads, kv_heads, backend)
                                          for _ in range(layers))
        self.ln = torch.nn.LayerNorm(dim)
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                std = 0.02 / math.sqrt(2 * layers) if name.endswith(("proj.weight",
                                                                      "mlp.2.weight")) else 0.02
                torch.nn.init.normal_(p, std=std)

    def forward(self, ids, targets):
        x = self.tok(ids) + self.pos[:ids.shape[1]]
        for block in self.blocks:
            x = block(x)
        logits = self.ln(x) @ self.tok.weight.t()
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.reshape(-1))


def train(args, backend, init_state, data, compiled):
    torch.manual_seed(args.seed)
    model = GPT(args.layers, args.dim, args.heads, args.kv_heads, args.seq, backend).cuda()
    model.load_state_dict(init_state)
    step_fn = torch.compile(model) if compiled else model
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95),
                            weight_decay=0.1, fused=True)
    gen = torch.Generator().manual_seed(args.seed + 1)  # the data order, the same every run
    losses, times = [], []
    torch.cuda.reset_peak_memory_stats()
    prof = None
    for step in range(args.steps):
        if args.profile and step == args.steps - 5:
            prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                      torch.profiler.ProfilerActivity.CUDA])
            prof.__enter__()
        lr = args.lr * min(1.0, (step + 1) / args.warmup) * (
            0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, step / args.steps))))
        for group in opt.param_groups:
            group["lr"] = lr
        starts = torch.randint(0, data.numel() - args.seq - 1, (args.batch,), generator=gen)
        chunk = torch.stack([data[s:s + args.seq + 1] for s in starts.tolist()]).cuda(
            non_blocking=True).long()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = step_fn(chunk[:, :-1], chunk[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
        if step % 50 == 0 or step == args.steps - 1:
            print("  %s%s step %4d loss %.4f  %.1f ms" % (
                backend, " compiled" if compiled else "", step, losses[-1], 1e3 * times[-1]),
                flush=True)
        if not math.isfinite(losses[-1]):
            raise RuntimeError("%s: the loss is %r at step %d" % (backend, losses[-1], step))
    if prof is not None:
        prof.__exit__(None, None, None)
        for key in ("self_cpu_time_total", "self_cuda_time_total"):
            print(prof.key_averages().table(sort_by=key, row_limit=20, max_name_column_width=60))
    measured = times[min(args.skip_timing, len(times) - 1):]
    tokens_per_s = args.batch * args.seq * len(measured) / sum(measured)
    return {"losses": losses, "tokens_per_s": tokens_per_s,
            "peak_memory_gib": torch.cuda.max_memory_allocated() / 2 ** 30}


def sdpa_kernel_names(args):
    """The CUDA kernels SDPA runs for one forward and backward of this model's attention
    shape: which backend PyTorch chose."""
    q = torch.randn(args.batch, args.heads, args.seq, args.dim // args.heads, device="cuda",
                    dtype=torch.bfloat16, requires_grad=True)
    k, v = (torch.randn(args.batch, args.kv_heads, args.seq, args.dim // args.heads,
                        device="cuda", dtype=torch.bfloat16, requires_grad=True)
            for _ in range(2))
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True).sum().backward()
        torch.cuda.synchronize()
    names = {e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA}
    return sorted(n[:80] for n in names if any(w in n.lower() for w in (
        "flash", "cudnn", "fmha", "attention", "efficient", "bmm", "gemm", "softmax")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--skip-timing", type=int, default=20,
                    help="first steps left out of tokens/s (compilation, warm-up)")
    ap.add_argument("--data-bytes", type=int, default=64 << 20)
    ap.add_argument("--compile", action="store_true", help="torch.compile the model")
    ap.add_argument("--profile", action="store_true",
                    help="print torch.profiler's tables of the last 5 steps of each run")
    ap.add_argument("--out", default=None, help="JSON file for the record")
    ap.add_argument("--commit", default=None, help="commit the kernels were generated at")
    args = ap.parse_args()

    gpu = torch.cuda.get_device_name()
    commit = args.commit or subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short",
                                            "HEAD"], capture_output=True,
                                           text=True).stdout.strip() or "unknown"
    data = stdlib_bytes(args.data_bytes)
    print("%s, torch %s, commit %s; %.1f MB of standard-library source; %d steps of %d x %d "
          "tokens%s" % (gpu, torch.__version__, commit, data.numel() / 1e6, args.steps,
                        args.batch, args.seq, ", compiled" if args.compile else ""), flush=True)
    torch.manual_seed(args.seed)
    init_state = {k: v.clone() for k, v in GPT(args.layers, args.dim, args.heads, args.kv_heads,
                                                args.seq, "sdpa").state_dict().items()}
    built = tkf.prebuild(head_dims=(args.dim // args.heads,), causal=(True,),
                         gqa=(args.heads != args.kv_heads,))
    print("tkc kernels ready: %d" % built, flush=True)
    sdpa_kernels = sdpa_kernel_names(args)
    print("SDPA runs: %s" % "; ".join(sdpa_kernels), flush=True)
    runs = {}
    for backend in ("tkc", "sdpa"):
        runs[backend] = train(args, backend, init_state, data, args.compile)
        torch._dynamo.reset()
    last = lambda b: sum(runs[b]["losses"][-50:]) / len(runs[b]["losses"][-50:])  # noqa: E731
    rel_diff = abs(last("tkc") - last("sdpa")) / last("sdpa")
    record = {
        "kernel": "train_gpt_tkc_vs_sdpa" + ("_compiled" if args.compile else ""),
        "gpu": gpu, "commit": commit, "date": datetime.date.today().isoformat(),
        "torch": torch.__version__,
        "config": {"layers": args.layers, "hidden": args.dim, "heads": args.heads,
                   "kv_heads": args.kv_heads, "D": args.dim // args.heads, "seq": args.seq,
                   "batch": args.batch, "steps": args.steps, "lr": args.lr,
                   "compile": args.compile, "data": "python stdlib sources, bytes",
                   "data_bytes": int(data.numel())},
        "baseline": "torch SDPA (enable_gqa=True), backend chosen by PyTorch",
        "baseline_kernels": sdpa_kernels,
        "final_loss_tkc": round(last("tkc"), 5), "final_loss_sdpa": round(last("sdpa"), 5),
        "final_loss_rel_diff": round(rel_diff, 5),
        "tokens_per_s_tkc": round(runs["tkc"]["tokens_per_s"]),
        "tokens_per_s_sdpa": round(runs["sdpa"]["tokens_per_s"]),
        "peak_memory_gib_tkc": round(runs["tkc"]["peak_memory_gib"], 3),
        "peak_memory_gib_sdpa": round(runs["sdpa"]["peak_memory_gib"], 3),
        "loss_tkc": [round(x, 5) for x in runs["tkc"]["losses"]],
        "loss_sdpa": [round(x, 5) for x in runs["sdpa"]["losses"]],
    }
    print("final loss (mean of the last 50 steps): tkc %.4f, sdpa %.4f, rel diff %.4f; "
          "tokens/s tkc %d, sdpa %d; peak memory tkc %.2f GiB, sdpa %.2f GiB" % (
              last("tkc"), last("sdpa"), rel_diff, record["tokens_per_s_tkc"],
              record["tokens_per_s_sdpa"], record["peak_memory_gib_tkc"],
              record["peak_memory_gib_sdpa"]), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1)
            f.write("\n")
    return 0 if rel_diff <= 0.01 else 1


if __name__ == "__main__":
    sys.exit(main())

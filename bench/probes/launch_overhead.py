"""Host time of one tkc launch from Python, by layer: the raw launcher (Kernel.launch on
device addresses), the checked call (Kernel.__call__), and tkc.functional.attention forward
and backward, on a problem small enough that the GPU never holds the host back. Also
whether a launch waits for the GPU: the host time of a call queued behind a long kernel.

    PYTHONPATH=python python3 bench/probes/launch_overhead.py
"""
import cProfile
import pstats
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import tkc  # noqa: E402
import tkc.functional as tkf  # noqa: E402


def host_us(fn, n=200):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return 1e6 * (t1 - t0) / n


def main():
    fwd = tkc.load(ROOT / "kernels-spec" / "attention_fwd.yaml", D=64, causal=True)
    k = next(iter(fwd.kernels.values()))
    Q = torch.randn(1, 2, 128, 64, device="cuda", dtype=torch.bfloat16)
    O = torch.empty_like(Q)
    L = torch.empty(1, 2, 128, device="cuda")
    ptrs = [t.data_ptr() for t in (Q, Q, Q, O, L)]
    stream = torch.cuda.current_stream().cuda_stream
    print("raw Kernel.launch:        %7.1f us" % host_us(
        lambda: k.launch(ptrs, [1, 2, 128, 2], stream, [0.125])))
    print("Kernel.__call__ (out=):   %7.1f us" % host_us(lambda: k(Q, Q, Q, out=(O, L))))
    print("Kernel.__call__ (alloc):  %7.1f us" % host_us(lambda: k(Q, Q, Q)))
    print("torch.empty_like:         %7.1f us" % host_us(lambda: torch.empty_like(Q)))
    q = Q.clone().requires_grad_()
    with torch.no_grad():
        print("attention forward:        %7.1f us" % host_us(lambda: tkf.attention(q, Q, Q,
                                                                                  causal=True)))
    g = torch.randn_like(Q)

    def step():
        tkf.attention(q, Q, Q, causal=True).backward(g)
    print("attention fwd + bwd:      %7.1f us" % host_us(step, 50))
    import torch.nn.functional as F

    def sdpa_step():
        F.scaled_dot_product_attention(q, Q, Q, is_causal=True).backward(g)
    print("SDPA fwd + bwd:           %7.1f us" % host_us(sdpa_step, 50))
    print("SDPA fwd, grad on:        %7.1f us" % host_us(
        lambda: F.scaled_dot_product_attention(q, Q, Q, is_causal=True), 50))
    print("attention fwd, grad on:   %7.1f us" % host_us(
        lambda: tkf.attention(q, Q, Q, causal=True), 50))
    # Time spent inside the registered backward formula and setup_context.
    spent = {"backward formula": 0.0, "setup_context": 0.0}

    def timed(name, fn):
        def wrapper(*a, **kw):
            t0 = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                spent[name] += time.perf_counter() - t0
        return wrapper
    op = tkf.attention_forward
    orig = (op._backward_fn, op._setup_context_fn)
    op._backward_fn = timed("backward formula", orig[0])
    op._setup_context_fn = timed("setup_context", orig[1])
    total = host_us(step, 50)
    op._backward_fn, op._setup_context_fn = orig
    print("fwd + bwd %.1f us, of which %s" % (total, ", ".join(
        "%s %.1f us" % (k, 1e6 * v / 51) for k, v in spent.items())))
    # Queued behind ~50 ms of GPU work: a call that returns at once does not wait for it.
    big = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for name, fn in (("raw launch", lambda: k.launch(ptrs, [1, 2, 128, 2], stream, [0.125])),
                     ("fwd + bwd", step)):
        fn()
        torch.cuda.synchronize()
        for _ in range(50):
            big @ big
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        print("%-10s behind 50 products: %8.1f us host" % (name, 1e6 * (t1 - t0)))
    with torch.no_grad():
        O2, L2 = tkf.attention(q, Q, Q, causal=True, return_lse=True)
    args = (g, None, Q, Q, Q, O2, L2, None, True, 0.125, 0, 0.0)
    print("backward op, this thread: %7.1f us" % host_us(
        lambda: torch.ops.tkc.attention_backward(*args), 100))
    print("backward body, no op:     %7.1f us" % host_us(
        lambda: tkf.attention_backward._init_fn(*args), 100))
    delta = tkf._kernels.get("attention_bwd_delta.yaml", D=64)
    print("delta kernel call:        %7.1f us" % host_us(lambda: delta(O2, g)))
    print("kernel lookup (get):      %7.1f us" % host_us(
        lambda: tkf._kernels.get("attention_bwd_delta.yaml", D=64)))
    # The same calls from autograd's device thread, where the backward runs.
    timings = {}

    class InBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, grad):
            timings["backward op"] = host_us(
                lambda: torch.ops.tkc.attention_backward(*args), 100)
            timings["backward body, no op"] = host_us(
                lambda: tkf.attention_backward._init_fn(*args), 100)
            timings["delta kernel call"] = host_us(lambda: delta(O2, g))
            timings["raw Kernel.launch"] = host_us(
                lambda: k.launch(ptrs, [1, 2, 128, 2], stream, [0.125]))
            timings["torch.zeros"] = host_us(lambda: torch.zeros_like(O2))
            return grad

    x = torch.zeros(4, device="cuda", requires_grad=True)
    InBackward.apply(x).sum().backward()
    for name, us in timings.items():
        print("in autograd's thread, %-22s %7.1f us" % (name + ":", us))
    for sort in ("tottime", "cumulative"):
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(50):
            torch.ops.tkc.attention_backward(*args)
        prof.disable()
        torch.cuda.synchronize()
        pstats.Stats(prof).sort_stats(sort).print_stats(14)


if __name__ == "__main__":
    main()

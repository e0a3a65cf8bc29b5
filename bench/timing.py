"""Paired timing of a generated kernel against its baseline, shared by the benchmarks.

    from timing import paired_times, paired_rates, write_records
    t_ours, t_base = paired_times(ours, base, rounds=30, warmup=10)
    ours_tflops, base_tflops, ratio = paired_rates(ours, base, flops, rounds=30, warmup=10)

Both callables enqueue work on the current CUDA stream. After the warm-up they
run alternately, one run of each per round, which goes first swapping round by
round, each run bracketed by its own CUDA events, so that both sides see the
same clock changes of a power-limited card. Before the timed rounds the GPU is
given a sleep of about 0.1 s, during which the host queues every round: the
events then time the GPU's work alone. Without it, a kernel of a few tens of
microseconds is timed together with the host's launch path whenever the GPU
has drained its queue before the next launch (Python, ctypes, a launcher's
checks: measured at 2048^3, the generated GEMM read 0.88-0.92 of cuBLAS without
the sleep and 0.97-0.98 with it, while 4096^3 read the same either way).

Cold L2: with `flush=l2_flusher()` every timed run is preceded, outside its events,
by a write of 256 MiB (five times an H100's L2, as triton.testing.do_bench does),
so that each run reads its operands from memory. By default the runs find in L2
whatever the previous run left there, as back-to-back calls in a model do.
"""
import torch

# The FlashAttention-3 protocol the attention benchmarks share: batch x sequence length =
# TOKENS, hidden HIDDEN (so H = HIDDEN / D heads), N over N_VALUES (QUICK_N_VALUES with
# --quick), WARMUP runs of each side, then ROUNDS paired rounds.
TOKENS = 16384
HIDDEN = 2048
N_VALUES = (1024, 2048, 4096, 8192, 16384)
QUICK_N_VALUES = (1024, 4096)
WARMUP = 10
ROUNDS = 30

# Cycles of the pre-roll sleep: ~0.1 s at the H100's clocks, far more than the
# host needs to queue a few hundred runs.
SLEEP_CYCLES = 200_000_000


def l2_flusher(mib=256):
    """A callable that evicts the L2 by writing `mib` MiB on the current stream."""
    return torch.empty(mib << 20, dtype=torch.int8, device="cuda").zero_


def paired_times(ours, base, rounds, warmup, flush=None):
    """Milliseconds of `ours` and `base`, one list entry per round; `flush`, if
    given, runs before each timed run, outside its events."""
    for _ in range(warmup):
        ours()
        base()
    events = [[torch.cuda.Event(enable_timing=True) for _ in range(4)] for _ in range(rounds)]
    torch.cuda.synchronize()
    torch.cuda._sleep(SLEEP_CYCLES)
    for r in range(rounds):
        order = ((0, ours), (1, base)) if r % 2 == 0 else ((1, base), (0, ours))
        for side, fn in order:
            start, end = events[r][2 * side], events[r][2 * side + 1]
            if flush is not None:
                flush()
            start.record()
            fn()
            end.record()
    torch.cuda.synchronize()
    t_ours = [e[0].elapsed_time(e[1]) for e in events]
    t_base = [e[2].elapsed_time(e[3]) for e in events]
    return t_ours, t_base


def paired_rates(ours, base, flops, rounds, warmup, flush=None):
    """paired_times, as (our TFLOP/s, the baseline's TFLOP/s, ratio): the rates from each
    side's median time, the ratio the median over rounds of baseline time / our time (above
    1: ours is faster)."""
    import statistics
    t_ours, t_base = paired_times(ours, base, rounds=rounds, warmup=warmup, flush=flush)
    return (flops / statistics.median(t_ours) / 1e9, flops / statistics.median(t_base) / 1e9,
            statistics.median(b / o for o, b in zip(t_ours, t_base)))


def write_records(path, records):
    """The JSON records of a run (bench/README.md), one file."""
    import json
    with open(path, "w") as f:
        json.dump(records, f, indent=1)
        f.write("\n")
